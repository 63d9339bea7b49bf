"""A workload is one declaration: its protocol (workloads.py), its
presentation (presentation.py) and its figures (metrics.py); no other module
of the harness names a workload or a figure only some workloads fill."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from harness.present import plots, report
from harness.core.metrics import METRICS
from harness.core.presentation import PRESENTATIONS
from harness.core.workloads import COMMON_DIMENSIONS, WORKLOADS

HARNESS = Path(__file__).resolve().parents[2]
# The declarations themselves (presentation.py's include the project's
# goals), and the run format's frozen schema. claims.py declares the
# articles' claims, each on the workload it names. The publish stage is held
# to the rule like every other: its pages name workloads only through these.
DECLARING = {"workloads.py", "metrics.py", "presentation.py", "schema.py", "claims.py"}
UNITS = {"s", "bytes", "count", "rps"}  # formatting.fmt_value's kinds
# Literals that stay, each with its reason; a stale entry fails, so the list only shrinks.
ALLOWED: dict[str, set[str]] = {
    # fmt_value's unit kind, which has the throughput metric's name
    "formatting.py": {"rps"},
}


def _own_names() -> set[str]:
    """Workload names, the columns only some workloads fill, the workloads'
    own dimensions (the harness's, cpus and machine, every workload has) and
    their choices (http's STYLES)."""
    common = {d.name for d in COMMON_DIMENSIONS}
    return (set(WORKLOADS) | {m.name for m in METRICS.values() if not m.common}
            | {name for w in WORKLOADS.values() for name, _ in w.row_columns}
            | {d.name for w in WORKLOADS.values() for d in w.dimensions} - common
            | {c for w in WORKLOADS.values() for d in w.dimensions for c in d.choices})


def _string_literals(path: Path) -> list[tuple[int, str]]:
    """(line, value) of every string literal that is not a docstring (a
    string standing alone as a statement), and of every quoted word inside
    an f-string (row['rps']); comments are not read."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
              if t.type not in (tokenize.NL, tokenize.COMMENT)]
    found = []
    for i, t in enumerate(tokens):
        if t.type != tokenize.STRING:
            continue
        if "f" in re.match(r"[a-zA-Z]*", t.string)[0].lower():  # an f-string's prefix
            found += [(t.start[0], m[2]) for m in re.finditer(r"(['\"])([\w-]+)\1", t.string)]
            continue
        before = tokens[i - 1].type if i else tokenize.NEWLINE
        after = tokens[i + 1].type if i + 1 < len(tokens) else tokenize.NEWLINE
        standalone = (before in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                 tokenize.ENCODING) and after == tokenize.NEWLINE)
        value = ast.literal_eval(t.string)
        if not standalone and isinstance(value, str):
            found.append((t.start[0], value))
    return found


def test_every_workload_has_exactly_one_presentation_and_no_other() -> None:
    assert list(PRESENTATIONS) == list(WORKLOADS)  # the same names, in reading order
    # a key written twice in the dict literal would silently replace the first
    tree = ast.parse((HARNESS / "core" / "presentation.py").read_text())
    literal = next(node.value for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                   and getattr(node.target, "id", "") == "PRESENTATIONS")
    keys = [k.value for k in literal.keys]
    assert sorted(keys) == sorted(set(keys))


def test_presentations_name_only_what_exists() -> None:
    for name, p in PRESENTATIONS.items():
        assert set(p.headline) <= set(METRICS), name
        assert set(p.columns) <= set(report.COLUMNS), name
        assert set(p.plots) <= set(plots.PLOTS), name
        assert p.panel is None or p.panel.figure in plots.SUMMARY_FIGURES, name


def test_metrics_name_only_what_exists() -> None:
    for m in METRICS.values():
        assert m.unit in UNITS, m.name
        assert m.common or set(m.workloads or ()) <= set(WORKLOADS), m.name


def test_no_other_module_names_a_workload_or_its_own_figures() -> None:
    own = _own_names()
    assert {"sleep", "http", "spawn_s", "rps", "requests_done", "users", "style",
            "when-all"} <= own  # checks
    assert not own & {"wall_s", "cpu_s", "first_iter_s", "warm_iter_s", "peak_rss_bytes",
                      "max_threads"}
    found = [(path.name, line, value)
             for path in sorted(p for p in HARNESS.rglob("*.py") if "tests" not in p.parts)
             if path.name not in DECLARING
             for line, value in _string_literals(path) if value in own]
    named = [f"harness/{name}:{line}: {value!r}" for name, line, value in found
             if value not in ALLOWED.get(name, set())]
    assert not named, "named outside the declarations:\n" + "\n".join(named)
    stale = {name: values - {v for n, _, v in found if n == name}
             for name, values in ALLOWED.items()}
    assert not any(stale.values()), f"no longer there, drop from ALLOWED: {stale}"
