"""`run`'s defaults are plan/settings.py's: the Makefile's variables and
docs/usage.md, which quote them, are checked against its constants here (the
CLI's help reads them), so that none can drift alone."""

from __future__ import annotations

import re
import tomllib

from harness.plan.settings import DEFAULT_MAX_REPEAT, DEFAULTS, GATE_BUDGET_S, GATE_MAX_REPEAT
from harness.plan.suites import SUITES_PATH

from ..conftest import ROOT

USAGE = ROOT / "docs" / "usage.md"
STATISTICS = ROOT / "docs" / "statistics.md"


def _listed(values: list[int]) -> str:
    return ",".join(map(str, values))


# make's variables as `run`'s defaults (docs/usage.md's table): the
# implementations ("all", --impl's word for them) and what settings declares.
MAKE_DEFAULTS = {"IMPL": "all", "N": _listed(DEFAULTS["n"]), "BUF": _listed(DEFAULTS["buffers"]),
                 "REPEAT": str(DEFAULTS["repeat"]), "DURATION": str(DEFAULTS["duration_ms"])}
# The Makefile's ?= variables that are not run's options.
MAKE_OWN = {"PYTHON"}

# Where docs/usage.md's prose quotes a default (its spaces and line breaks
# read as one space): each phrase appears, and says the constant's value.
PHRASES = {
    r"uses its own defaults \(N = ([\d,]+), \d+ repeats\)": _listed(DEFAULTS["n"]),
    r"uses its own defaults \(N = [\d,]+, (\d+) repeats\)": str(DEFAULTS["repeat"]),
    r"\(with `--max-repeat M`, default (\d+)\)": str(DEFAULT_MAX_REPEAT),
    r"`--max-repeat` runs each \(default (\d+), or `--repeat` when higher": str(DEFAULT_MAX_REPEAT),
    r"two more runs at a time up to `--max-repeat` \(default (\d+)\)": str(DEFAULT_MAX_REPEAT),
    r"`--budget` \(default (\d+) minutes": f"{GATE_BUDGET_S / 60:g}",
    r"at `--max-repeat` runs a side \(default (\d+)\)": str(GATE_MAX_REPEAT),
}


def _make_defaults() -> dict[str, str]:
    text = (ROOT / "Makefile").read_text()
    return {m[1]: m[2].strip() for m in re.finditer(r"^(\w+) \?= (.*)$", text, re.M)}


def _usage_table() -> dict[str, str]:
    """docs/usage.md's table of make's variables: variable -> default."""
    rows = re.findall(r"^\| (`\w+`(?: or `\w+`)*) \|.*\| (.+?) \|$", USAGE.read_text(), re.M)
    return {name: default.strip("`") for names, default in rows
            for name in re.findall(r"`(\w+)`", names)}


def test_the_makefile_defaults_are_settings() -> None:
    found = _make_defaults()
    assert set(found) - MAKE_OWN <= set(MAKE_DEFAULTS), \
        f"a Makefile default not checked here: {set(found) - MAKE_OWN - set(MAKE_DEFAULTS)}"
    differ = {name: (value, MAKE_DEFAULTS[name]) for name, value in found.items()
              if name not in MAKE_OWN and value != MAKE_DEFAULTS[name]}
    assert not differ, f"the Makefile's defaults differ from settings' (found, declared): {differ}"


def test_the_usage_table_quotes_settings() -> None:
    table = _usage_table()
    assert set(MAKE_DEFAULTS) <= set(table), f"not in docs/usage.md's table: " \
                                             f"{set(MAKE_DEFAULTS) - set(table)}"
    differ = {name: (table[name], value) for name, value in MAKE_DEFAULTS.items()
              if table[name] != value}
    assert not differ, f"docs/usage.md's table differs from settings (found, declared): {differ}"


def test_the_usage_prose_quotes_settings() -> None:
    text = " ".join(USAGE.read_text().split())
    for phrase, value in PHRASES.items():
        found = re.findall(phrase, text)
        assert found, f"docs/usage.md no longer says {phrase!r}: reword this test with it"
        assert set(found) == {value}, f"docs/usage.md: {phrase!r} says {found}, settings {value}"


def test_the_usage_example_quotes_the_default_suite() -> None:
    """usage.md's `--suite default` line gives the suite's minimum, its
    ceilings (the suite's, and its parts' own where they differ) and its
    budget."""
    suite = tomllib.loads(SUITES_PATH.read_text())["default"]
    caps = {p["max_repeat"] for p in suite["part"] if "max_repeat" in p} - {suite["max_repeat"]}
    found = re.search(r"--suite default +# --until-settled from (\d+) runs?, up to (\d+)"
                      r"(?: \((\d+) where a claim needs it\))?, --budget (\w+)", USAGE.read_text())
    assert found, "docs/usage.md no longer quotes the default suite: reword this test with it"
    assert (int(found[1]), int(found[2]), found[4]) == (
        suite["repeat"], suite["max_repeat"], suite["budget"])
    assert ({int(found[3])} if found[3] else set()) == caps


def test_statistics_quotes_the_default_suite() -> None:
    suite = tomllib.loads(SUITES_PATH.read_text())["default"]
    text = " ".join(STATISTICS.read_text().split())
    found = re.search(r"The default suite runs `--until-settled` from (\d+) runs?, up to (\d+), "
                      r"within a budget of \d+ minutes of runs \(`--budget (\w+)`\)", text)
    assert found, "docs/statistics.md no longer quotes the default suite: reword this test with it"
    assert (int(found[1]), int(found[2]), found[3]) == (
        suite["repeat"], suite["max_repeat"], suite["budget"])


def test_the_docs_quote_seed004s_budget() -> None:
    """usage.md and statistics.md give seed004's budget in minutes, as
    suites.toml has it."""
    budget = tomllib.loads(SUITES_PATH.read_text())["seed004"]["budget"]
    assert re.fullmatch(r"\d+m", budget), budget
    usage = " ".join(USAGE.read_text().split())
    statistics = " ".join(STATISTICS.read_text().split())
    said = re.findall(r"(?:\*\*seed004\*\*.*?within a budget of (\d+) minutes)", usage)
    said += re.findall(r"seed004's (\d+) minutes", statistics)
    assert len(said) == 2, "usage.md or statistics.md no longer quotes seed004's budget"
    assert set(said) == {budget[:-1]}, said
