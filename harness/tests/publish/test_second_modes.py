"""The second-modes study's tables in the language READMEs are recomputed
here from committed rows: csharp/README.md's before and after from the rows in
docs/studies/second-modes/, rust's and java's two modes from the default run
they name. Each marked block must be what docs/studies/second-modes/table.py
writes now."""

from __future__ import annotations

import importlib.util
import statistics

from ..conftest import ROOT

STUDY = ROOT / "docs" / "studies" / "second-modes"


def _table():
    spec = importlib.util.spec_from_file_location("second_modes_table", STUDY / "table.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_blocks_are_what_the_study_writes() -> None:
    table = _table()
    for path, names in table.readmes().items():
        text = path.read_text()
        marked = {m[2] for m in table.MARK.finditer(text)}
        assert marked == names, f"{path.name} marks {marked}, table.py writes {names} there"
        stale = f"{path.relative_to(ROOT)} is stale: run .venv/bin/python {STUDY.relative_to(ROOT)}"
        assert table.rewritten(text) == text, f"{stale}/table.py --write"


def test_the_chain_has_no_second_mode_after_the_change() -> None:
    """The Done-when of the change: 20 runs or more at 1M, their peak RSS one
    mode as the pages judge it, and no single run near twice the usual peak
    (one run is too few for modes.py to call a mode)."""
    from harness.analyse.modes import bimodal
    table = _table()
    peaks = [float(r.peak_rss_bytes) for r in table.rows("chain", "chain")
             if r.impl == "csharp-async" and r.n == 1_000_000 and r.peak_rss_bytes]
    assert len(peaks) >= 20, len(peaks)
    assert bimodal(peaks) is None
    usual = statistics.median(peaks)
    assert max(peaks) < 1.5 * usual, (max(peaks), usual)


def test_parity_says_what_the_interval_shows() -> None:
    from harness.core.stats import Interval
    table = _table()
    assert table.parity(None).startswith("not settled")
    assert table.parity(Interval(1.0, 0.99, 1.01, 0.96, (6, 6))).startswith("yes")
    assert table.parity(Interval(1.08, 1.05, 1.12, 0.96, (6, 6))).startswith("no")
    assert table.parity(Interval(1.03, 0.84, 1.25, 0.96, (6, 6))).startswith("not settled: ")
    assert table.parity(Interval(1.0, 0.99, 1.01, 0.80, (3, 3))).startswith("not settled (")


def test_upper_runs_are_the_upper_modes() -> None:
    """table.upper_runs on samples with a known answer."""
    table = _table()
    assert table.upper_runs([]) == []
    assert table.upper_runs([1.0, 1.01, 0.99, 1.0, 1.02, 0.98]) == []
    assert table.upper_runs([1.0, 1.01, 0.99, 1.0, 1.95, 2.0]) == [1.95, 2.0]
