"""docs/releases.md is written by hand; its grid table's figures are
checked against the run committed beside it (docs/results/2026-11-25-releases/grid):
each warm iteration's median and each ratio to Go with its interval, as
core/formatting.py and the harness's ratio interval give them."""

from __future__ import annotations

from pathlib import Path

from harness.core.formatting import fmt_seconds
from harness.core.stats import ratio_interval
from harness.publish import published

ROOT = Path(__file__).resolve().parents[3]
GRID = ROOT / "docs" / "results" / "2026-11-25-releases" / "grid" / "summary.csv"
# The table's columns after B: medians, then two ratios to the baseline, then medians.
MEDIANS = ("go", "rust-tokio-glibc@1.5.0", "rust-tokio-glibc")
RATIOS = ("rust-tokio-glibc@1.5.0", "rust-tokio-glibc")
AFTER = ("rust-async-std@1.9.0", "rust-async-std")
METRIC = "warm_iter_s"


def grid_rows(summary: Path) -> list[str]:
    by = {(g.impl, g.buffer): g for g in published.read_summary(summary)}
    rows = []
    for b in sorted({buffer for _, buffer in by}):
        base = by[(MEDIANS[0], b)]
        cells = [fmt_seconds(by[(impl, b)].median(METRIC)) for impl in MEDIANS]
        for impl in RATIOS:
            iv = ratio_interval(base.values(METRIC), by[(impl, b)].values(METRIC))
            cells.append(f"{iv.estimate:.2f} [{iv.low:.2f}–{iv.high:.2f}]")
        cells += [fmt_seconds(by[(impl, b)].median(METRIC)) for impl in AFTER]
        rows.append(f"| {b} | " + " | ".join(cells) + " |")
    return rows


def test_the_grid_table_is_what_its_committed_run_gives():
    text = (ROOT / "docs" / "releases.md").read_text()
    missing = [row for row in grid_rows(GRID) if row not in text]
    assert not missing, "docs/releases.md's grid table differs from its run:\n" + "\n".join(missing)
