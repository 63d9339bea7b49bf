"""The second-modes study's tables (README.md here), from committed rows: each
block of a language README between `<!-- second-modes NAME -->` and
`<!-- /second-modes -->` is what this writes. Before-and-after blocks read the
rows beside this file; mode blocks split a configuration of a committed run
into its two modes.

    .venv/bin/python docs/studies/second-modes/table.py          # print the blocks
    .venv/bin/python docs/studies/second-modes/table.py --write  # rewrite the READMEs

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

from harness.core.formatting import (fmt_bytes, fmt_interval, fmt_ratio_bound,  # noqa: E402
                                     fmt_seconds)
from harness.core.schema import Row  # noqa: E402
from harness.analyse.modes import Modes, bimodal  # noqa: E402
from harness.core.stats import Interval, median_interval, ratio_interval  # noqa: E402
from harness.record.rundir import read_runs, read_samples  # noqa: E402

STUDY = Path(__file__).resolve().parent
MARK = re.compile(r"(<!-- second-modes ([\w-]+) -->)(.*?)(<!-- /second-modes -->)", re.S)
# before-and-after blocks of csharp/README.md: (rows' folder, workload, the sides: before, after,
# article; the before side's name in the table)
SIDES = ("csharp-async-before", "csharp-async", "csharp-article")
COMPARED = {"chain": ("chain", "chain", SIDES, "before: arrays + join"),
            "chain-await": ("chain-await", "chain-await", SIDES, "before: an async wrapper")}
# mode blocks: the README, a committed run, the configuration (impl, workload, N, B), and the
# pass whose two modes split the runs
QUIET_RUN = ROOT / "docs" / "studies" / "allocation" / "20261129-190906"
SPLIT = {"smol-bounded": (ROOT / "rust" / "README.md", QUIET_RUN,
                         ("rust-smol", "bounded", 10000, 1), "warm"),
         "java-chain-await": (ROOT / "java" / "README.md", QUIET_RUN,
                              ("java-virtual", "chain-await", 1000000, None), "warm"),
         "go-bounded": (ROOT / "go" / "README.md", QUIET_RUN,
                        ("go", "bounded", 10000, 10000), "cold")}
PASSES: dict[str, Callable[[Row], float | None]] = {"warm": lambda r: r.warm_iter_s,
                                                    "cold": lambda r: r.first_iter_s}
SIDE_NAMES = {"csharp-async": "after", "csharp-article": "the article's program"}
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


def values(found: list[Row], impl: str, n: int,
           figure: Callable[[Row], float | None]) -> list[float]:
    return [float(v) for r in found if r.impl == impl and r.n == n
            for v in [figure(r)] if v is not None]


def paired(found: list[Row], old: str, new: str, n: int,
           figure: Callable[[Row], float | None]) -> Interval | None:
    """new / old from the rounds (run directories) that ran both: the study's
    first rounds ran before and after only."""
    both = {r.run_id for r in found if r.impl == old} & {r.run_id for r in found if r.impl == new}
    kept = [r for r in found if r.run_id in both]
    return ratio_interval(values(kept, old, n, figure), values(kept, new, n, figure))


def upper_runs(xs: list[float]) -> list[float]:
    """The runs of the upper of two modes (harness/analyse/modes.py, as the results
    pages flag them); none where the runs are one mode."""
    found = bimodal(xs)
    return sorted(xs)[len(xs) - found.upper.runs:] if found else []


def _modes(found: Modes | None, fmt: Callable[[float], str]) -> str:
    return found.text(fmt) if found else "one mode"


def _ratio(iv: Interval | None) -> str:
    if iv is None:
        return "(no interval)"
    return f"{iv.estimate:.3f} {fmt_interval(iv, 0, fmt_ratio_bound)}"


def table(name: str) -> str:
    """One block: per N and figure, each side's median [95% interval] over all
    its runs, then after / before and after / article with their intervals, each
    from the rounds that ran both sides."""
    folder, workload, sides, before = COMPARED[name]
    names = {**SIDE_NAMES, sides[0]: before}
    found = rows(folder, workload)
    head = ["N", "figure", *(names[s] for s in sides), "after / before", "after / article"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for n in sorted({r.n for r in found if r.n is not None}):
        for label, figure, fmt in FIGURES:
            xs = {s: values(found, s, n, figure) for s in sides}
            cells = [f"{fmt(statistics.median(xs[s]))} "
                     f"{fmt_interval(median_interval(xs[s]), len(xs[s]), fmt)}" if xs[s] else ""
                     for s in sides]
            lines.append(f"| {n:,} | {label} | " + " | ".join(cells) +
                         f" | {_ratio(paired(found, sides[0], sides[1], n, figure))} | "
                         f"{_ratio(paired(found, sides[2], sides[1], n, figure))} |")
    largest = max(r.n or 0 for r in found)
    rss = {s: values(found, s, largest, lambda r: r.peak_rss_bytes) for s in sides}
    said = "; ".join(f"{names[s]} ({len(rss[s])} runs) {_modes(bimodal(rss[s]), fmt_bytes)}"
                     for s in sides)
    warm = paired(found, sides[2], sides[1], largest, lambda r: r.warm_iter_s)
    return ("\n" + "\n".join(lines) + f"\n\nAfter within {PARITY}× of the article's program, "
            f"warm, at N = {largest:,}: {parity(warm)}.\n\nPeak RSS at N = {largest:,}, its modes "
            f"as the results pages flag them (harness/analyse/modes.py): {said}."
            f"{_floors(folder, sides, largest)}\n")


# The goal for a program against its article's: a ratio within this factor either way.
PARITY = 1.02


def parity(iv: Interval | None) -> str:
    """Whether a ratio's 95% interval shows it within PARITY of 1, beyond it, or neither."""
    if iv is None or not iv.settled:
        return "not settled (too few runs for a 95% interval)"
    if 1 / PARITY <= iv.low and iv.high <= PARITY:
        return (f"yes, the 95% interval [{iv.low:.3f}, {iv.high:.3f}] lies inside "
                f"[{1 / PARITY:.3f}, {PARITY}]")
    if iv.low > PARITY or iv.high < 1 / PARITY:
        return f"no, the 95% interval [{iv.low:.3f}, {iv.high:.3f}] lies beyond it"
    return (f"not settled: the estimate is {iv.estimate:.3f}, but its 95% interval "
            f"[{iv.low:.3f}, {iv.high:.3f}] reaches past {PARITY}× either way")


def _floors(folder: str, sides: tuple[str, ...], n: int) -> str:
    """RSS over time (samples.csv): the lowest RSS sampled once a run has first
    reached 90% of its side's median peak, i.e. after the first pass and the
    collection, for the runs in an upper mode against the others."""
    found: dict[bool, list[float]] = {True: [], False: []}
    peaks: dict[str, float] = {}
    upper: dict[str, list[float]] = {}
    for path in sorted((STUDY / folder).glob("*/runs.csv")):
        samples = read_samples(path.parent / "samples.csv")
        for r in read_runs(path).rows:
            if r.status != "ok" or r.n != n or r.impl not in sides or not r.peak_rss_bytes:
                continue
            if r.impl not in peaks:
                xs = values(rows(folder, r.workload), r.impl, n, lambda x: x.peak_rss_bytes)
                peaks[r.impl], upper[r.impl] = statistics.median(xs), upper_runs(xs)
            usual = peaks[r.impl]
            series = [x.rss_bytes for x in sorted(samples, key=lambda x: x.t_s)
                      if (x.impl, x.n, x.rep) == (r.impl, r.n, r.rep) and x.rss_bytes is not None]
            reached = next((i for i, v in enumerate(series) if v >= 0.9 * usual), None)
            if reached is not None:
                in_upper = float(r.peak_rss_bytes) in upper[r.impl]
                found[in_upper].append(min(series[reached:]) / usual)
    if not found[True]:
        return ""
    return (" RSS over time: once a run first reached 90% of its side's usual peak, its RSS "
            f"fell to {_range(found[False], lambda v: f'{v:.2f}')} of that peak in the other runs "
            f"(the first pass's memory freed by the collection) and only to "
            f"{_range(found[True], lambda v: f'{v:.2f}')} in the upper mode's runs.")


def _range(xs: list[float], fmt: Callable[[float], str]) -> str:
    if not xs:
        return ""
    return fmt(min(xs)) if fmt(min(xs)) == fmt(max(xs)) else f"{fmt(min(xs))}–{fmt(max(xs))}"


def modes(name: str) -> str:
    """A mode block: the configuration's ok runs split into the two modes of
    one pass (harness/analyse/modes.py), each mode's runs and ranges of what
    they spent."""
    _, run, (impl, workload, n, buffer), by = SPLIT[name]
    found = [r for r in read_runs(run / "runs.csv").rows if r.status == "ok" and r.impl == impl
             and r.workload == workload and r.n == n and r.buffer == buffer and PASSES[by](r)]
    found.sort(key=lambda r: PASSES[by](r) or 0.0)
    two = bimodal([PASSES[by](r) or 0.0 for r in found])
    if two is None:
        raise ValueError(f"second-modes {name}: the {by} passes are one mode now; "
                         "reword the README")
    lines = ["| mode | runs | cold pass | warm pass | user CPU | voluntary switches | peak RSS |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    fast, slow = found[:two.lower.runs], found[two.lower.runs:]
    for label, side in (("fast", fast), ("slow", slow)):
        def of(figure: Callable[[Row], float | None]) -> list[float]:
            return [float(v) for r in side for v in [figure(r)] if v is not None]
        lines.append(f"| {label} | {len(side)} | "
                     f"{_range(of(lambda r: r.first_iter_s), fmt_seconds)} | "
                     f"{_range(of(lambda r: r.warm_iter_s), fmt_seconds)} | "
                     f"{_range(of(lambda r: r.cpu_user_s), fmt_seconds)} | "
                     f"{_range(of(lambda r: r.ctx_switches_voluntary), lambda v: f'{v:,.0f}')} | "
                     f"{_range(of(lambda r: r.peak_rss_bytes), fmt_bytes)} |")

    def times(figure: Callable[[Row], float | None]) -> str:
        """The slow mode's median over the fast mode's."""
        medians = [statistics.median(float(v) for r in side for v in [figure(r)] if v is not None)
                   for side in (slow, fast)]
        return f"{medians[0] / medians[1]:.1f}×"
    loads = [r.load_avg_1m for r in found if r.load_avg_1m is not None]
    gap = min(PASSES[by](r) or 0.0 for r in slow) / max(PASSES[by](r) or 0.0 for r in fast)
    return ("\n" + "\n".join(lines) + "\n\nThe slow mode's medians over the fast one's: warm "
            f"pass {times(lambda r: r.warm_iter_s)}, user CPU {times(lambda r: r.cpu_user_s)}, "
            f"voluntary switches {times(lambda r: r.ctx_switches_voluntary)}, peak RSS "
            f"{times(lambda r: r.peak_rss_bytes)}; the gap between the modes' nearest {by} passes "
            f"{gap:.1f}×. Load average (1 minute) at the runs' start: "
            f"{min(loads):.1f}–{max(loads):.1f}, median {statistics.median(loads):.1f}.\n")


def block(name: str) -> str:
    return table(name) if name in COMPARED else modes(name)


def readmes() -> dict[Path, set[str]]:
    """Each README this writes, with the blocks it holds."""
    found: dict[Path, set[str]] = {ROOT / "csharp" / "README.md": set(COMPARED)}
    for name, (readme, _, _, _) in SPLIT.items():
        found.setdefault(readme, set()).add(name)
    return found


def rewritten(text: str) -> str:
    """A README's text with every marked block as generated now."""
    return MARK.sub(lambda m: f"{m[1]}{block(m[2])}{m[4]}", text)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        for path in readmes():
            path.write_text(rewritten(path.read_text()))
    elif sys.argv[1:]:
        print("usage: table.py [--write]", file=sys.stderr)
        sys.exit(2)
    else:
        for name in [*COMPARED, *SPLIT]:
            print(f"<!-- second-modes {name} -->{block(name)}<!-- /second-modes -->")
