"""The second-modes study's tables (README.md here), from the rows committed
beside this file: each block of csharp/README.md between
`<!-- second-modes NAME -->` and `<!-- /second-modes -->` is what this writes.

    .venv/bin/python docs/studies/second-modes/table.py          # print the blocks
    .venv/bin/python docs/studies/second-modes/table.py --write  # rewrite csharp/README.md

harness/tests/publish/test_second_modes.py checks that the committed blocks are
what it writes now.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from harness.core.formatting import fmt_bytes, fmt_interval, fmt_ratio_bound, fmt_seconds  # noqa: E402
from harness.core.schema import Row  # noqa: E402
from harness.core.stats import Interval, median_interval, ratio_interval  # noqa: E402
from harness.record.rundir import read_runs  # noqa: E402

STUDY = Path(__file__).resolve().parent
README = ROOT / "csharp" / "README.md"
MARK = re.compile(r"(<!-- second-modes ([\w-]+) -->)(.*?)(<!-- /second-modes -->)", re.S)
# A run is in a second mode when its figure is this many times its
# configuration's median or more (the two clusters "more than 1.5x apart").
MODE_FACTOR = 1.5
# (block, rows' folder, workload, the sides in the table's order, the side the others are divided by)
BLOCKS = {"chain": ("chain", "chain", ("csharp-async-before", "csharp-async", "csharp-article"))}
SIDE_NAMES = {"csharp-async-before": "before: arrays + join", "csharp-async": "after",
              "csharp-article": "the article's program"}
FIGURES: tuple[tuple[str, Callable[[Row], float | None], Callable[[float], str]], ...] = (
    ("cold", lambda r: r.first_iter_s, fmt_seconds),
    ("warm", lambda r: r.warm_iter_s, fmt_seconds),
    ("peak RSS", lambda r: r.peak_rss_bytes, fmt_bytes),
    # the whole process's user + system CPU time, which other work on the machine inflates
    # far less than it does the passes' wall-clock times
    ("CPU, whole process", lambda r: None if r.cpu_user_s is None or r.cpu_sys_s is None
     else r.cpu_user_s + r.cpu_sys_s, fmt_seconds))


def rows(folder: str, workload: str) -> list[Row]:
    """The ok rows of a workload in every run directory of the folder."""
    return [r for path in sorted((STUDY / folder).glob("*/runs.csv"))
            for r in read_runs(path).rows if r.workload == workload and r.status == "ok"]


def values(found: list[Row], impl: str, n: int, figure: Callable[[Row], float | None]) -> list[float]:
    return [float(v) for r in found if r.impl == impl and r.n == n
            for v in [figure(r)] if v is not None]


def second_modes(xs: list[float]) -> int:
    """How many runs lie MODE_FACTOR times or more above the median, or as far below."""
    if not xs:
        return 0
    mid = statistics.median(xs)
    return sum(x >= MODE_FACTOR * mid or x * MODE_FACTOR <= mid for x in xs)


def _ratio(iv: Interval | None) -> str:
    if iv is None:
        return "(no interval)"
    return f"{iv.estimate:.3f} {fmt_interval(iv, 0, fmt_ratio_bound)}"


def table(name: str) -> str:
    """One block: per N and figure, each side's median [95% interval], then
    after / before and after / article with their intervals."""
    folder, workload, sides = BLOCKS[name]
    found = rows(folder, workload)
    head = ["N", "figure", *(f"{SIDE_NAMES[s]}" for s in sides), "after / before", "after / article"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for n in sorted({r.n for r in found if r.n is not None}):
        for label, figure, fmt in FIGURES:
            xs = {s: values(found, s, n, figure) for s in sides}
            cells = [f"{fmt(statistics.median(xs[s]))} {fmt_interval(median_interval(xs[s]), len(xs[s]), fmt)}"
                     if xs[s] else "" for s in sides]
            before, after, article = (xs[s] for s in sides)
            lines.append(f"| {n:,} | {label} | " + " | ".join(cells) +
                         f" | {_ratio(ratio_interval(before, after))} | {_ratio(ratio_interval(article, after))} |")
    largest = max(r.n or 0 for r in found)
    rss = {s: values(found, s, largest, lambda r: r.peak_rss_bytes) for s in sides}
    said = "; ".join(f"{SIDE_NAMES[s]} {second_modes(rss[s])} of {len(rss[s])}" for s in sides)
    return ("\n" + "\n".join(lines) + "\n\nRuns at the largest N whose peak RSS is "
            f"{MODE_FACTOR}× its side's median or more (or as far below): {said}.\n")


def rewritten(text: str) -> str:
    """The README's text with every marked block as generated now."""
    return MARK.sub(lambda m: f"{m[1]}{table(m[2])}{m[4]}", text)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        README.write_text(rewritten(README.read_text()))
    elif sys.argv[1:]:
        print("usage: table.py [--write]", file=sys.stderr)
        sys.exit(2)
    else:
        for block in BLOCKS:
            print(f"<!-- second-modes {block} -->{table(block)}<!-- /second-modes -->")
