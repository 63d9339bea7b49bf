"""summary.csv and results.json carry each figure's and ratio's confidence
interval (synthetic run of known answers: test_report.synthetic_run)."""

import csv
import json

import pytest

from harness.present import exports, outputs
from harness.core.metrics import METRICS
from harness.tests.present.test_report import synthetic_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run = synthetic_run(tmp_path_factory.mktemp("exports"))
    outputs.write_report(run, draw=False)
    return run


def _summary(run) -> dict:
    with (run / "summary.csv").open() as f:
        return {(r["impl"], r["workload"], r["n"]): r for r in csv.DictReader(f)}


def test_summary_csv_keeps_its_columns_and_adds_the_intervals():
    old = (["impl", "language", "runtime", "workload", "n", "buffer"])
    assert exports.SUMMARY_FIELDS[:len(old)] == old
    for m in METRICS:
        for part in ("median", "min", "max", "mean", "stdev", "count",
                     "ci_low", "ci_high", "ci_level"):
            assert f"{m}_{part}" in exports.SUMMARY_FIELDS
    # the earlier columns keep their places: the new ones come after "outliers"
    assert exports.SUMMARY_FIELDS.index("outliers") < exports.SUMMARY_FIELDS.index("wall_s_ci_low")


def test_summary_csv_intervals(run):
    rows = _summary(run)
    fast = rows[("fast", "chain", "1000")]
    assert float(fast["warm_iter_s_median"]) == pytest.approx(1e-3)
    assert (float(fast["warm_iter_s_ci_low"]), float(fast["warm_iter_s_ci_high"])) == \
        pytest.approx((0.98e-3, 1.02e-3))
    assert float(fast["warm_iter_s_ci_level"]) == pytest.approx(1 - 2 / 64)
    slow = rows[("slow", "chain", "1000")]
    assert float(slow["time_ratio_to_best"]) == pytest.approx(2.0)
    assert float(slow["time_ratio_to_best_ci_low"]) <= 2.0 <= float(slow["time_ratio_to_best_ci_high"])
    assert float(slow["time_ratio_to_best_ci_level"]) >= 0.95
    lone = rows[("lone", "chain", "2000")]  # one run: no interval, empty cells
    assert lone["warm_iter_s_median"] and lone["warm_iter_s_ci_low"] == "" \
        and lone["warm_iter_s_ci_level"] == ""
    flat, grows = rows[("flat", "sleep", "101000")], rows[("grows", "sleep", "101000")]
    assert flat["mem_per_task_bytes"] == "" and flat["mem_per_task_note"] == "below resolution"
    assert float(grows["mem_per_task_ci_low"]) > 0 and grows["mem_per_task_note"] == ""
    assert float(grows["mem_per_task_ci_level"]) == pytest.approx((1 - 2 / 64) ** 2)


def test_results_json_intervals(run):
    data = json.loads((run / "results.json").read_text())
    groups = {(g["impl"], g["workload"], g["n"]): g for g in data["groups"]}
    iv = groups[("fast", "chain", 1000)]["metrics"]["warm_iter_s"]["interval"]
    assert iv["low"] == pytest.approx(0.98e-3) and iv["high"] == pytest.approx(1.02e-3)
    assert iv["confidence"] == pytest.approx(1 - 2 / 64) and iv["settled"] is True
    assert groups[("lone", "chain", 2000)]["metrics"]["warm_iter_s"]["interval"] is None
    slow = groups[("slow", "chain", 1000)]
    assert slow["ratio_intervals"]["time"]["low"] <= 2.0 <= slow["ratio_intervals"]["time"]["high"]
    assert groups[("fast", "chain", 1000)]["settled_best"] == {"time": True, "rss": False}
    assert groups[("flat", "sleep", 101000)]["mem_per_task_below_resolution"] is True
    assert "noisy_width" in data["rules"] and "interval" in data["rules"]


def test_summary_csv_carries_every_ok_value(tmp_path) -> None:
    """The values behind each figure, so that a ratio of any two
    configurations (harness/publish/claims.py) can be given its interval."""
    import csv
    import shutil
    from pathlib import Path

    from harness.present import exports
    from harness.analyse.analysis import analyse
    from harness.record.rundir import RunDir
    run = tmp_path / "v2"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "formats" / "v2", run)
    results = analyse(RunDir(run))
    exports.write_exports(results)
    rows = list(csv.DictReader((run / "summary.csv").open()))
    for g, row in zip(results.groups, rows):
        for metric, s in g.metrics.items():
            assert tuple(float(v) for v in row[f"{metric}_values"].split()) == pytest.approx(s.values)
