"""Statistics against hand-computed values (fixture: tests/fixtures/run)."""

import math
from pathlib import Path

import numpy as np
import pytest

from harness.analyse import analysis
from harness.record import rundir
from harness.core.schema import ConfigKey, Env, Row

FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"


@pytest.fixture(scope="module")
def groups() -> dict:
    rows = rundir.read_runs(FIXTURE / "runs.csv").rows
    return {(g.impl, g.workload, g.n, g.buffer): g for g in analysis.group_runs(rows)}


def test_summarize_by_hand():
    s = analysis.summarize([4.0, 1.0, 3.0, 2.0])
    assert (s.count, s.median, s.min, s.max, s.mean) == (4, 2.5, 1.0, 4.0, 2.5)
    assert s.stdev == pytest.approx(math.sqrt(5 / 3))  # sample stdev: 5 / (4 - 1)
    assert s.stdev == pytest.approx(math.sqrt(5 / 3))
    # 4 runs: the sign test's widest interval, [min, max], covers 1 - 2/16
    assert (s.interval.low, s.interval.high) == (1.0, 4.0)
    assert s.interval.confidence == pytest.approx(0.875) and not s.interval.settled
    assert s.noisy  # reaches 1.5 from 2.5: 60%


def test_single_value_has_no_spread_and_no_interval():
    s = analysis.summarize([7.0])
    assert s.stdev is None and not s.noisy
    assert s.interval is None
    assert analysis.summarize([]) is None


def test_six_close_runs_give_a_settled_interval():
    s = analysis.summarize([100.0, 101.0, 99.0, 100.5, 99.5, 100.0])
    iv = s.interval
    assert iv.settled and iv.confidence == pytest.approx(1 - 2 / 64)  # [min, max] of 6: 96.9%
    assert (iv.low, iv.estimate, iv.high) == (99.0, 100.0, 101.0)
    assert not s.noisy


def test_noisy_threshold_is_the_intervals_reach_over_ten_percent_of_median():
    assert not analysis.summarize([90, 100, 110]).noisy  # reaches exactly 10%: not above
    assert analysis.summarize([89, 100, 110]).noisy  # 11% below
    assert analysis.summarize([85, 100, 115]).noisy
    # the stdev no longer decides: eight equal runs and one far one have a
    # stdev of 33% of the median, but the interval of 9 is [x(2), x(8)] =
    # [100, 100] at 96.1%; the far run is the outlier rule's to flag
    s = analysis.summarize([100] * 8 + [200])
    assert s.stdev / s.median > 0.3 and (s.interval.low, s.interval.high) == (100, 100) \
        and not s.noisy


def test_outlier_rule():
    # median 10.2, MAD 0.2 -> spread max(0.2965, 0.51) = 0.51; 30 is 19.8 away
    assert analysis.outlier_mask([10.0, 10.2, 30.0]) == [False, False, True]
    # MAD 0: the 5% floor needs 15% off the median
    assert analysis.outlier_mask([100.0, 100.0, 105.0]) == [False, False, False]
    assert analysis.outlier_mask([100.0, 100.0, 120.0]) == [False, False, True]
    assert analysis.outlier_mask([1.0, 50.0]) == [False, False]  # too few to judge


def test_group_metrics_by_hand(groups):
    g = groups[("go", "sleep", 10000, None)]
    rss = g.metrics["peak_rss_bytes"]
    assert (rss.count, rss.median, rss.min, rss.max, rss.mean) == (3, 31e6, 30e6, 32e6, 31e6)
    assert rss.stdev == pytest.approx(1e6)
    wall = g.metrics["wall_s"]
    assert wall.median == pytest.approx(10.2) and wall.stdev == pytest.approx(0.1)
    cpu = g.metrics["cpu_s"]  # user + sys: 0.75, 0.5, 1.0
    assert (cpu.median, cpu.min, cpu.max) == pytest.approx((0.75, 0.5, 1.0))
    assert cpu.stdev == pytest.approx(0.25)
    assert g.noisy == ["cpu_s"]  # [0.5, 1.0] reaches 0.25 from 0.75: 33%
    assert "warm_iter_s" not in g.metrics  # sleep runs one iteration


def test_noisy_group(groups):
    warm = groups[("rust-tokio", "bounded", 10000, 1)].metrics["warm_iter_s"]
    assert warm.median == pytest.approx(0.012)
    assert warm.mean == pytest.approx(0.037 / 3)
    assert warm.stdev == pytest.approx(math.sqrt(19 / 3) * 1e-3)  # sum of squares 38/3e-6, / 2
    assert warm.noisy


def test_memory_per_task_is_a_slope_over_the_n_points(groups):
    g = groups[("go", "sleep", 10000, None)]
    # two points: go sleep at N = 1 (median 2.0 MB) and 10000 (median 31 MB)
    assert g.mem_points == (1, 10000)
    assert g.mem_per_task_bytes == pytest.approx((31e6 - 2e6) / (10000 - 1))
    assert groups[("go", "sleep", 1, None)].mem_per_task_bytes is None  # no slope from one point
    big = groups[("go", "sleep", 1000000, None)]
    ns = [1, 10000, 100000, 1000000]
    medians = [groups[("go", "sleep", n, None)].median("peak_rss_bytes") for n in ns]
    assert big.mem_points == tuple(ns)
    assert big.mem_per_task_bytes == pytest.approx(np.polyfit(ns, medians, 1)[0])


def test_memory_per_task_interval_from_the_medians_intervals(groups):
    g = groups[("go", "sleep", 10000, None)]
    low = groups[("go", "sleep", 1, None)].interval("peak_rss_bytes")  # [2.0, 2.1] MB, 75%
    high = g.interval("peak_rss_bytes")  # [30, 32] MB, 75%
    iv = g.mem_interval
    assert (iv.low, iv.high) == pytest.approx(((30e6 - 2.1e6) / 9999, (32e6 - 2.0e6) / 9999))
    assert iv.low < g.mem_per_task_bytes < iv.high
    assert iv.confidence == pytest.approx(low.confidence * high.confidence) == pytest.approx(0.5625)
    assert not iv.settled and iv.runs == (3, 3)


def test_slope_interval_by_hand():
    from harness.core.stats import Interval
    # three N, weights (x - 2) / 2: -1/2, 0, +1/2
    points = [(1, Interval(10, 9, 11, 0.9, (4,))), (2, Interval(20, 18, 21, 0.9, (4,))),
              (3, Interval(30, 29, 33, 0.9, (4,)))]
    iv = analysis.slope_interval(points, 10.0)
    assert (iv.low, iv.high) == pytest.approx(((29 - 11) / 2, (33 - 9) / 2))
    assert iv.confidence == pytest.approx(0.9 ** 3)
    assert analysis.slope_interval([(1, None), (2, points[1][1])], 1.0) is None


def _sleep_rows(impl: str, readings: dict[int, list[float]]) -> list[Row]:
    return [Row(impl=impl, workload="sleep", n=n, buffer=None, rep=rep + 1,
                status="ok", peak_rss_bytes=rss)
            for n, values in readings.items() for rep, rss in enumerate(values)]


def test_memory_per_task_below_resolution_is_not_ranked_and_says_so():
    # "a" grows 4 MiB over its N: measured. "b" grows 100 kB: below the 1 MiB
    # resolution. "c" grows 2 MiB between medians but its readings overlap: its
    # interval reaches below zero.
    mib = 1 << 20
    rows = (_sleep_rows("a", {10: [10 * mib, 10 * mib + 1000], 10010: [14 * mib, 14 * mib + 1000]})
            + _sleep_rows("b", {10: [10 * mib, 10 * mib], 10010: [10 * mib + 1e5, 10 * mib + 1e5]})
            + _sleep_rows("c", {10: [10 * mib, 13 * mib], 10010: [12 * mib, 15 * mib]}))
    groups = {(g.impl, g.n): g for g in analysis.group_runs(rows)}
    a, b, c = groups[("a", 10010)], groups[("b", 10010)], groups[("c", 10010)]
    assert a.mem_per_task_bytes == pytest.approx(4 * mib / 10000) and not a.mem_below_resolution
    assert a.mem_interval.low > 0
    for g in (b, c):
        assert g.mem_per_task_bytes is None and g.mem_below_resolution
    assert c.median("peak_rss_bytes") - groups[("c", 10)].median("peak_rss_bytes") == 2 * mib
    # the floor ratio (sleep: memory per task) ranks only the measured slope
    ranks = analysis.ratios(list(groups.values()), floor=["a"])
    assert ranks[a.key]["floor"] == 1.0
    assert "floor" not in ranks[b.key] and "floor" not in ranks[c.key]


def test_memory_per_task_below_the_resolution_is_not_printed():
    rows = [Row(impl="x", workload="sleep", n=n, buffer=None, rep=rep, status="ok",
                peak_rss_bytes=rss) for n, rep, rss in (
                 (10, 1, 5_000_000), (10, 2, 5_100_000), (1000, 1, 5_050_000),
                 (1000, 2, 5_080_000), (100000, 1, 9_000_000), (100000, 2, 9_500_000))]
    by = {g.n: g for g in analysis.group_runs(rows)}
    assert by[1000].mem_per_task_bytes is None  # 15 kB of growth: noise, not memory per task
    assert by[1000].mem_below_resolution
    assert by[100000].mem_per_task_bytes == pytest.approx(
        np.polyfit([10, 1000, 100000], [5_050_000, 5_065_000, 9_250_000], 1)[0])


def test_failures_are_counted_not_dropped(groups):
    oom = groups[("node", "sleep", 1000000, None)]
    assert oom.statuses == "3 oom" and oom.failure == "oom" and oom.ok == 0
    assert oom.metrics == {} and oom.mem_per_task_bytes is None
    partial = groups[("rust-tokio", "chain", 1000000, None)]
    assert partial.statuses == "2 ok, 1 crashed" and partial.failure is None
    assert partial.metrics["first_iter_s"].count == 2
    assert sum(len(g.rows) for g in groups.values()) == 120  # every raw row kept


def test_outliers_flagged_on_rows(groups):
    g = groups[("go", "chain", 20000, None)]
    flags = {r.rep: marks for r, marks in zip(g.rows, g.row_outliers)}
    assert flags == {1: [], 2: [], 3: ["first_iter_s"]}
    assert g.outliers == 1
    assert g.metrics["first_iter_s"].count == 3  # kept in the statistics too
    # 2.0, 2.0, 2.1 MB: 5% off is within the floor
    assert all(not marks for marks in groups[("go", "sleep", 1, None)].row_outliers)


def test_ratios_and_iteration_metric(groups):
    chain = [g for g in groups.values() if g.workload == "chain" and g.n == 5000]
    assert analysis.iter_metric(chain) == "warm_iter_s"
    ratios = analysis.ratios_to_best(chain, "warm_iter_s")
    assert ratios[ConfigKey("rust-tokio", "chain", 5000, None)] == 1.0
    assert ratios[ConfigKey("go", "chain", 5000, None)] == pytest.approx(750e-6 / 600e-6)
    assert ("csharp", "chain", 5000, None) not in ratios  # skipped: no figure
    sleep = [g for g in groups.values() if g.workload == "sleep"]
    assert analysis.iter_metric(sleep) == "first_iter_s"


def _chain_rows(impl: str, values: list[float], n: int = 1000) -> list[Row]:
    return [Row(impl=impl, workload="chain", n=n, buffer=None, rep=rep + 1,
                status="ok", first_iter_s=v, warm_iter_s=v, peak_rss_bytes=1e7)
            for rep, v in enumerate(values)]


def test_x_best_of_two_groups_twice_apart_holds_two_and_is_settled():
    fast = [1.00, 1.02, 0.98, 1.01]
    rows = _chain_rows("fast", fast) + _chain_rows("slow", [2 * v for v in reversed(fast)])
    groups = {g.impl: g for g in analysis.group_runs(rows)}
    ranks = analysis.ratios(list(groups.values()))
    iv = ranks.interval(groups["slow"].key, "time")
    assert iv.runs == (4, 4) and iv.settled  # 4 a side reach 95% (97.1%)
    assert iv.low <= 2.0 <= iv.high and iv.side(1.0) == "above"
    assert ranks[groups["slow"].key]["time"] == iv.estimate == pytest.approx(2.0)
    assert ranks[groups["fast"].key]["time"] == 1.0
    assert ranks.winner(groups["fast"].key, "time") is True  # the settled best
    assert ranks.winner(groups["slow"].key, "time") is None
    # the same RSS on both sides: a tie, so no winner is settled
    assert ranks.winner(groups["fast"].key, "rss") is False
    assert ranks.interval(groups["slow"].key, "rss").side(1.0) == "within"


def test_x_best_with_three_runs_a_side_is_not_settled():
    rows = _chain_rows("fast", [1.0, 1.01, 0.99]) + _chain_rows("slow", [2.0, 2.02, 1.98])
    groups = {g.impl: g for g in analysis.group_runs(rows)}
    ranks = analysis.ratios(list(groups.values()))
    iv = ranks.interval(groups["slow"].key, "time")
    assert iv.confidence == pytest.approx(0.9) and not iv.settled  # 1 - 2/20
    assert ranks.winner(groups["fast"].key, "time") is False


def test_a_ratio_with_one_run_a_side_has_no_interval():
    rows = _chain_rows("fast", [1.0]) + _chain_rows("slow", [2.0, 2.1, 1.9])
    groups = {g.impl: g for g in analysis.group_runs(rows)}
    ranks = analysis.ratios(list(groups.values()))
    assert ranks.interval(groups["slow"].key, "time") is None
    assert ranks[groups["slow"].key]["time"] == pytest.approx(2.0)  # the medians' ratio
    assert ranks.winner(groups["fast"].key, "time") is False


def test_until_ci_flags_headline_figures_wider_than_the_target():
    rows = (_chain_rows("tight", [1.0, 1.001, 0.999, 1.0, 1.0005, 0.9995])
            + _chain_rows("wide", [1.0, 1.2, 0.8, 1.0, 1.1, 0.9])
            + _chain_rows("few", [1.0, 1.0]) + _chain_rows("one", [1.0]))
    groups = analysis.group_runs(rows)
    assert analysis.until_ci_warnings(groups, Env({"settings": {}})) == []  # not set: no check
    [line] = analysis.until_ci_warnings(groups, Env({"settings": {"until_ci": 0.05}}))
    assert line.startswith("chain: 3 of 4 groups did not reach the run's --until-ci 5%")
    assert "tight" not in line
    assert "wide N=1000 (cold iteration ±20.0%, warm iteration ±20.0%)" in line
    assert "few N=1000 (cold iteration: not settled (50%)" in line
    assert "one N=1000 (cold iteration: 1 run, no interval" in line
    assert line in analysis.warnings(groups, Env({"settings": {"until_ci": 0.05},
                                                      "finished_at": "x"}))


def test_a_group_without_a_measured_rival_is_neither_winner_nor_loser():
    rows = _chain_rows("only", [1.0, 1.01, 0.99, 1.0]) + [
        Row(impl="broken", workload="chain", n=1000, buffer=None, rep=1, status="invalid")]
    groups = {g.impl: g for g in analysis.group_runs(rows)}
    ranks = analysis.ratios(list(groups.values()))
    assert ranks[groups["only"].key]["time"] == 1.0
    assert ranks.winner(groups["only"].key, "time") is None  # nothing to beat


def test_until_ci_of_a_suite_part_applies_to_its_workloads():
    groups = analysis.group_runs(_chain_rows("wide", [1.0, 1.2, 0.8, 1.0, 1.1, 0.9]))
    env = Env({"settings": {"parts": [{"workloads": ["sleep"], "ns": [1000], "until_ci": 0.01},
                                      {"workloads": ["chain"], "ns": [1000], "until_ci": 0.3}]}})
    assert analysis.until_ci_warnings(groups, env) == []  # ±20% is within chain's 30%
    env.data["settings"]["parts"][1]["until_ci"] = 0.1
    [line] = analysis.until_ci_warnings(groups, env)
    assert "--until-ci 10%" in line


def test_a_run_is_read_once_for_its_report_and_again_once_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's two analyses (the plots' leaves out the skipped rows) read
    runs.csv once and, where nothing is left out, share its groups; a
    changed runs.csv is read again, and a new RunDir reads for itself."""
    import shutil
    from harness.core.schema import Status
    shutil.copytree(FIXTURE, tmp_path / "run")
    reads = []
    real = rundir.RunDir.runs
    monkeypatch.setattr(rundir.RunDir, "runs", lambda self: reads.append(1) or real(self))
    run = rundir.RunDir(tmp_path / "run")
    first = analysis.analyse(run)
    plotted = analysis.analyse(run, leave_out=(Status.SKIPPED,))
    assert len(reads) == 1
    skipped = any(r.status == Status.SKIPPED for g in first.groups for r in g.rows)
    assert (plotted.groups is first.groups) == (not skipped)
    lines = (run.runs_path).read_text().splitlines(keepends=True)
    run.runs_path.write_text("".join(lines[:-1]))
    assert sum(len(g.rows) for g in analysis.analyse(run).groups) == len(lines) - 2
    assert len(reads) == 2
    analysis.analyse(rundir.RunDir(tmp_path / "run"))
    assert len(reads) == 3
