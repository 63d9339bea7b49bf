"""Statistics against hand-computed values (fixture: tests/fixtures/run)."""

import math
from pathlib import Path

import numpy as np
import pytest

from harness import analysis, rundir
from harness.rundir import ConfigKey

FIXTURE = Path(__file__).parent / "fixtures" / "run"


@pytest.fixture(scope="module")
def groups() -> dict:
    return {(g.impl, g.workload, g.n, g.buffer): g for g in analysis.group_runs(rundir.read_runs(FIXTURE / "runs.csv").rows)}


def test_summarize_by_hand():
    s = analysis.summarize([4.0, 1.0, 3.0, 2.0])
    assert (s.count, s.median, s.min, s.max, s.mean) == (4, 2.5, 1.0, 4.0, 2.5)
    assert s.stdev == pytest.approx(math.sqrt(5 / 3))  # sample stdev: 5 / (4 - 1)
    assert s.cv == pytest.approx(math.sqrt(5 / 3) / 2.5)
    assert s.noisy


def test_single_value_has_no_spread():
    s = analysis.summarize([7.0])
    assert s.stdev is None and s.cv is None and not s.noisy
    assert analysis.summarize([]) is None


def test_noisy_threshold_is_ten_percent_of_median():
    assert not analysis.summarize([90, 100, 110]).noisy  # stdev exactly 10: not above
    assert analysis.summarize([85, 100, 115]).noisy  # stdev 15


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
    assert g.noisy == ["cpu_s"]  # 0.25 / 0.75 = 33%
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


def test_memory_per_task_below_the_resolution_is_not_printed():
    rows = [{"impl": "x", "workload": "sleep", "n": n, "buffer": None, "rep": rep, "status": "ok",
             "peak_rss_bytes": rss} for n, rep, rss in (
                 (10, 1, 5_000_000), (10, 2, 5_100_000), (1000, 1, 5_050_000),
                 (1000, 2, 5_080_000), (100000, 1, 9_000_000), (100000, 2, 9_500_000))]
    by = {g.n: g for g in analysis.group_runs(rows)}
    assert by[1000].mem_per_task_bytes is None  # 15 kB of growth: noise, not memory per task
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
    flags = {r["rep"]: r["outliers"] for r in g.rows}
    assert flags == {1: [], 2: [], 3: ["first_iter_s"]}
    assert g.outliers == 1
    assert g.metrics["first_iter_s"].count == 3  # kept in the statistics too
    # 2.0, 2.0, 2.1 MB: 5% off is within the floor
    assert all(not r["outliers"] for r in groups[("go", "sleep", 1, None)].rows)


def test_ratios_and_iteration_metric(groups):
    chain = [g for g in groups.values() if g.workload == "chain" and g.n == 5000]
    assert analysis.iter_metric(chain) == "warm_iter_s"
    ratios = analysis.ratios_to_best(chain, "warm_iter_s")
    assert ratios[ConfigKey("rust-tokio", "chain", 5000, None)] == 1.0
    assert ratios[ConfigKey("go", "chain", 5000, None)] == pytest.approx(750e-6 / 600e-6)
    assert ("csharp", "chain", 5000, None) not in ratios  # skipped: no figure
    sleep = [g for g in groups.values() if g.workload == "sleep"]
    assert analysis.iter_metric(sleep) == "first_iter_s"
