"""docs/studies/allocation.md's table of the default runs of 2026-11-28 and
2026-11-29 is recomputed here from the rows committed beside it (and beside the
published page), so that its figures cannot drift from the data."""

from __future__ import annotations

import re

from harness.analyse.analysis import group_runs
from harness.present.report import ask_run
from harness.record.rundir import read_env, read_runs
from harness.sequential import spent_before

from ..conftest import ROOT

STUDY = ROOT / "docs" / "studies" / "allocation.md"
RUNS = {"morning": ROOT / "docs" / "results" / "2026-11-28-intel-xeon-2c",
        "evening": ROOT / "docs" / "studies" / "allocation" / "20261128-190332",
        "night": ROOT / "docs" / "studies" / "allocation" / "20261128-221945",
        "next day": ROOT / "docs" / "results" / "2026-11-29-amd-epyc-2c",
        "next afternoon": ROOT / "docs" / "results" / "2026-11-29-amd-epyc-2c-afternoon"}


def _row(label: str) -> list[str]:
    found = re.search(rf"^\| {re.escape(label)} \|(.+)\|$", STUDY.read_text(), re.M)
    assert found, f"allocation.md has no row {label!r}: reword this test with it"
    return [cell.strip() for cell in found[1].split("|")]


def test_the_runs_table_is_the_committed_rows() -> None:
    minimum, runs, pairs, claims, goals = [], [], [], [], []
    for folder in RUNS.values():
        rows = read_runs(folder / "runs.csv").rows
        minimum.append(f"{spent_before(r for r in rows if r.rep == 1):,.0f} s")
        runs.append(f"{len(rows):,}")
        families = {name: f"{settled} of {total}" for name, settled, total in
                    ask_run(group_runs(rows), read_env(folder / "env.json")).families()}
        pairs.append(families["rankings"])
        claims.append(families["claims"])
        goals.append(families["goals"])
    assert _row("runs in the 45 minutes") == runs
    assert _row("neighbour pairs settled") == pairs
    assert _row("claims settled") == claims
    assert _row("goals settled") == goals
    assert [cell.removesuffix(" of runs") for cell in
            _row("the minimum, one run of each configuration (248; from the night on, 252)")
            ] == minimum


def test_the_javascript_runs_at_10_producers_are_the_rows() -> None:
    """The last section: bounded at 10 producers on a JavaScript runtime took
    5-9 s a run the night before, under a second without the collection."""
    def walls(label: str) -> list[float]:
        return [r.wall_s for r in read_runs(RUNS[label] / "runs.csv").rows
                if r.workload == "bounded" and r.n == 10 and r.status == "ok"
                and r.impl in ("nodejs", "bun", "deno") and r.wall_s is not None]
    night, next_day = walls("night"), walls("next day")
    assert 5 <= min(night) and max(night) <= 9, (min(night), max(night))
    assert max(next_day) < 1, max(next_day)
    assert "JavaScript runtime had taken 5–9 s" in " ".join(STUDY.read_text().split())
