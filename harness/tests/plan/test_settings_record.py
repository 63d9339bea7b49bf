"""The settings' one record (core/schema.py RecordedSettings): env.json's
`settings` is written byte for byte as before the record was typed (a
golden file), read back typed from every run format, its types checked by
the reader; suites.toml is read into typed suites, a wrong key refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import UsageError
from harness.core.schema import SETTINGS, Env, Part, RecordedSettings, env_problem
from harness.plan import suites as suites_module
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.plan.suites import load_suites
from harness.record.rundir import invocation, read_env

from ..conftest import ROOT

FIXTURES = ROOT / "harness" / "tests" / "fixtures" / "settings"
FORMATS = ROOT / "harness" / "tests" / "fixtures" / "formats"
# Each case's options; the suites are FIXTURES/suites.toml's (every key a
# suite and a part may set), so that the golden file stays put when the
# project's suites change.
CASES: dict[str, dict[str, Any]] = {
    "every": dict(suite="every"),
    "ci": dict(suite="ci"),
    "every-overridden": dict(suite="every", repeat=4, n="7", timeout=5.0, warmup_ms=3),
    "options": dict(impl="go[GOGC=off],rust-tokio", workload="chain,bounded", n="10,20",
                    buffer="0,5", repeat=2, until_ci="5%", timeout=30.0, max_rss="2G",
                    sample_interval_ms=20.0, iterations=3, duration_ms=500,
                    inherit_env="HOME", counters=True, no_build=True),
    "http": dict(workload="http", users="5,10", style="async,sync", pool_threads="4",
                 repeat=1, until_settled=True, budget="1h"),
    "gate": dict(workload="chain", n="100", gate="5%", adaptive_sleep=True),
}


@pytest.fixture
def fixture_suites(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suites_module, "SUITES_PATH", FIXTURES / "suites.toml")


def recorded(options: dict[str, Any]) -> dict[str, Any]:
    """The settings an invocation records for these options (masked)."""
    s = settings_from(Options.from_record(options), ram_bytes=16 << 30)
    return invocation([], False, {}, [], s.record(), None)["settings"]


def test_the_record_is_written_byte_for_byte_as_the_golden_file(fixture_suites: None) -> None:
    written = {name: recorded(options) for name, options in CASES.items()}
    assert json.dumps(written, indent=2) + "\n" == (FIXTURES / "records.json").read_text()


def test_the_record_reads_back_what_it_wrote(fixture_suites: None) -> None:
    for options in CASES.values():
        data = recorded(options)
        record = RecordedSettings.of(data)
        assert record.as_json() == data and RecordedSettings.of(record.as_json()) == record
        assert all(isinstance(p, Part) for p in record.parts)


@pytest.mark.parametrize("version", sorted(p.name for p in FORMATS.iterdir()))
def test_every_format_reads_typed(version: str) -> None:
    """v1..v11's settings (and each invocation's) read as the record, keys an
    older format lacks at their defaults."""
    env = read_env(FORMATS / version / "env.json")
    raw = env.data.get("settings") or {}
    s = env.settings
    assert isinstance(s, RecordedSettings)
    assert s.suite == raw.get("suite") and s.repeat == raw.get("repeat")
    assert [p.workloads for p in s.parts] == [p["workloads"] for p in raw.get("parts") or []]
    assert all(p.judged == (p_raw.get("judged") is not False)
               for p, p_raw in zip(s.parts, raw.get("parts") or []))
    for inv in env.invocations:
        assert RecordedSettings.of(inv.get("settings")).impls == inv.get("settings", {}).get(
            "impls", [])


def test_an_absent_record_reads_as_the_defaults() -> None:
    s = Env({}).settings
    assert s == RecordedSettings() and s.suite is None and s.parts == [] and s.build


def test_the_readers_types_are_the_records_fields() -> None:
    """env_problem checks each field the record declares (its JSON type)."""
    assert list(SETTINGS) == [f for f in RecordedSettings.__dataclass_fields__]
    assert env_problem({"settings": {"repeat": "4"}}) == 'settings.repeat must be an integer, not "4"'
    assert env_problem({"settings": {"parts": [{"judged": 1}]}}) == \
        "settings.parts[0].judged must be true or false, not 1"


def test_a_record_is_set_on_env_as_its_json() -> None:
    env = Env({})
    env.settings = RecordedSettings(suite="quick", parts=[Part(["chain"], [10], [1])])
    assert env.data["settings"]["suite"] == "quick"
    assert env.data["settings"]["parts"][0]["ns"] == [10] and env.settings.parts[0].ns == [10]


# ---------------------------------------------------------------- suites.toml

def test_the_projects_suites_read_typed() -> None:
    suites = load_suites()
    assert {"default", "quick"} <= set(suites)
    assert all(s.parts and all(p.workloads for p in s.parts) for s in suites.values())
    assert suites["default"].budget == "45m" and suites["quick"].overlap_builds


@pytest.mark.parametrize("toml, message", [
    ('[x]\nrepeats = 2\n[[x.part]]\nworkloads = ["chain"]\n',
     r"^suites.toml: x: unknown key 'repeats' \(known: description, "),
    ('[x]\n[[x.part]]\nworkloads = ["chain"]\nnn = [3]\n',
     r"^suites.toml: x.part\[0\]: unknown key 'nn' \(known: workloads, n, "),
    ('[x]\n[[x.part]]\nworkloads = ["chain"]\nn = [0]\n',
     r"^suites.toml: x.part\[0\]: n \[0\] must be a list of positive integers$"),
    ('[x]\n[[x.part]]\nworkloads = ["chian"]\n',
     r"^suites.toml: x.part\[0\]: workloads \['chian'\] must be a list of workloads \("),
    ('[x]\nuntil_settled = "yes"\n[[x.part]]\nworkloads = ["chain"]\n',
     r"^suites.toml: x: until_settled 'yes' must be true or false$"),
    ('[x]\n[[x.part]]\nworkloads = ["chain"]\nwarmup_ms = -1\n',
     r"^suites.toml: x.part\[0\]: warmup_ms -1 must be an integer >= 0$"),
    ('[x]\n[[x.part]]\nn = [3]\n', r"^suites.toml: x.part\[0\]: name its workloads"),
    ('[x]\nrepeat = 2\n', r"^suites.toml: x: give it at least one \[\[x.part\]\]$"),
    ('[x\n', r"^suites.toml: "),
])
def test_a_wrong_suite_is_one_line_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   toml: str, message: str) -> None:
    path = tmp_path / "suites.toml"
    path.write_text(toml)
    monkeypatch.setattr(suites_module, "SUITES_PATH", path)
    with pytest.raises(UsageError, match=message) as caught:
        load_suites()
    assert "\n" not in str(caught.value)
