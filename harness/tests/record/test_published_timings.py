"""The plan's estimate on a machine with no earlier run: the suite's newest
published page's medians (record.published_timings), borrowed by
plan.runplan.plan_run for what OUT never timed, and named in its basis."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from harness.core.registry import resolve
from harness.core.schema import ConfigKey
from harness.plan.runplan import plan_run
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.record.published_timings import newest

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "docs" / "results"


def test_the_newest_page_of_the_suite_gives_its_medians(tmp_path: Path) -> None:
    found = newest(RESULTS, "default")
    assert found is not None and found.source.startswith("docs/results/")
    page = ROOT / found.source
    with (page / "summary.csv").open(newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["workload"] == "chain" and r["wall_s_median"])
    key = ConfigKey(row["impl"], "chain", int(row["n"]), None)
    assert found.times[key] == float(row["wall_s_median"])
    assert newest(RESULTS, "no-such-suite") is None and newest(tmp_path / "none", "default") is None
    # a page whose files cannot be read is passed over, not a traceback
    broken = tmp_path / "9999-broken"
    shutil.copytree(page, broken)
    (broken / "env.json").write_text("{not json")
    assert newest(tmp_path, "default") is None


def test_the_plan_borrows_only_what_out_never_timed() -> None:
    s = settings_from(Options(impl="go", workload="chain", n="20000", repeat=2),
                      ram_bytes=1 << 30)
    impls = resolve(s.impls)
    key = ConfigKey("go", "chain", 20000, None)
    planned = plan_run(impls, s, [], Path("/nonexistent"), None, ({key: 123.0}, "docs/results/x"))
    assert all(e == 123.0 for e in planned.estimates.values())
    assert "(2 of them from docs/results/x, the suite's newest published run)" in planned.basis
    alone = plan_run(impls, s, [], Path("/nonexistent"))
    assert "of them from" not in alone.basis


def test_the_first_line_estimates_the_passes_a_budget_allows() -> None:
    """A budgeted --until-settled run's first line gives the runs' time with
    the passes it expects (they fill the budget), not the minimum alone:
    the default run of 2026-11-28 evening printed 19:31 for 45:00 of runs.
    Where the minimum outlasts the budget it runs whole, and a run without
    a budget or passes is its minimum."""
    key = ConfigKey("go", "chain", 20000, None)

    def first_line(**options: object) -> str:
        s = settings_from(Options(impl="go", workload="chain", n="20000", **options),
                          ram_bytes=1 << 30)
        return plan_run(resolve(s.impls), s, [], Path("/nonexistent"), None,
                        ({key: 60.0}, "docs/results/x")).dry_run[0]

    assert first_line(repeat=1, until_settled=True, budget="10m").startswith(
        "1 runs, estimated 10:00 for the runs with the passes within the budget (the minimum 1:00)")
    assert first_line(repeat=20, until_settled=True, budget="10m").startswith(
        "20 runs, estimated 20:00 for the runs;")
    assert first_line(repeat=2).startswith("2 runs, estimated 2:00 for the runs;")
    # at most 12 runs of 60 s: the passes cannot fill a budget of an hour
    assert first_line(repeat=1, until_settled=True, max_repeat=12, budget="1h").startswith(
        "1 runs, estimated 12:00 for the runs with the passes within the budget")
