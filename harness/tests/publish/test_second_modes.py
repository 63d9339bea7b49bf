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
    faster = table.parity(Interval(0.93, 0.88, 0.98, 0.96, (20, 20)))
    assert faster.startswith("yes") and "after is the faster" in faster


def test_upper_runs_are_the_upper_modes() -> None:
    """table.upper_runs on samples with a known answer."""
    table = _table()
    assert table.upper_runs([]) == []
    assert table.upper_runs([1.0, 1.01, 0.99, 1.0, 1.02, 0.98]) == []
    assert table.upper_runs([1.0, 1.01, 0.99, 1.0, 1.95, 2.0]) == [1.95, 2.0]


def test_the_quiet_rounds_have_one_mode_at_1m() -> None:
    """The Done-when on a quiet machine: 20 runs or more of the changed chain at
    1M in each machine's quiet rounds, their peak RSS one mode, none near twice
    the usual."""
    from harness.analyse.modes import bimodal
    table = _table()
    for folder, workload, (after, _) in table.ROUNDS_QUIET.values():
        peaks = [float(r.peak_rss_bytes) for r in table.rows(folder, workload)
                 if r.impl == after and r.n == 1_000_000 and r.peak_rss_bytes]
        assert len(peaks) >= 20, (folder, len(peaks))
        assert bimodal(peaks) is None, folder
        assert max(peaks) < 1.5 * statistics.median(peaks), (folder, max(peaks))


def test_every_two_modes_of_the_default_runs_is_in_a_readme() -> None:
    """Each configuration the newest default run's page lists under "Two modes",
    and the AMD run's before it, has its modes block (table.SPLIT, from that
    run's rows) and a study run again beside this (table.STUDIED) in its
    language's README."""
    from harness.analyse.analysis import analyse
    from harness.analyse.modes import bimodal_groups
    from harness.record.rundir import RunDir
    table = _table()
    metric = {"cold": "first_iter_s", "warm": "warm_iter_s"}
    studied = {(*s.config, metric[s.by]) for s in table.STUDIED.values()}
    named = set()
    for run in (table.AMD_RUN, table.DEFAULT_RUN):
        found = {(b.group.impl, b.group.workload, b.group.n, b.group.buffer, b.metric)
                 for b in bimodal_groups(analyse(RunDir(run)).groups)}
        split = {(*config, metric[by]) for _, at, config, by, *_ in table.SPLIT.values()
                 if at == run}
        assert len(found) == 4, (run.name, found)
        assert found == split, run.name
        named |= found
    assert named == studied


def test_each_study_ran_its_sides_20_times() -> None:
    """About 20 runs a side, as the issue asks to see the modes."""
    table = _table()
    for name, s in table.STUDIED.items():
        found = table.study_rows(s)
        for label in s.sides:
            runs = table.values(found, label, s.config[2], table.PASSES[s.by])
            assert len(runs) >= 20, (name, label, len(runs))
