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

import json
import re
import statistics
import sys
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from harness.core.formatting import (fmt_bytes, fmt_interval, fmt_ratio_bound,  # noqa: E402
                                     fmt_seconds)
from harness.core.schema import Row, Status  # noqa: E402
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
# The default runs whose "Two modes" lists name the configurations studied here: the AMD
# EPYC's of 2026-12-02 later, then the newest, the Intel Xeon's of 2026-12-02.
AMD_RUN = ROOT / "docs" / "results" / "2026-12-02-amd-epyc-2c-later"
DEFAULT_RUN = ROOT / "docs" / "results" / "2026-12-02-intel-xeon-2c"
SPLIT = {"smol-bounded": (ROOT / "rust" / "README.md", QUIET_RUN,
                         ("rust-smol", "bounded", 10000, 1), "warm"),
         "java-chain-await": (ROOT / "java" / "README.md", QUIET_RUN,
                              ("java-virtual", "chain-await", 1000000, None), "warm"),
         "go-bounded": (ROOT / "go" / "README.md", QUIET_RUN,
                        ("go", "bounded", 10000, 10000), "cold"),
         # the AMD default run's four, as its "Two modes" list names them (and,
         # beside elixir's, the quiet run's elixir and erlang: one VM, two programs)
         "tokio-chain": (ROOT / "rust" / "README.md", AMD_RUN,
                         ("rust-tokio", "chain", 20000, None), "cold",
                         ("system CPU", "minor faults")),
         "node-chain": (ROOT / "node" / "README.md", AMD_RUN,
                        ("nodejs", "chain", 20000, None), "cold", ("system CPU",)),
         "node-bounded": (ROOT / "node" / "README.md", AMD_RUN,
                          ("nodejs", "bounded", 10000, 1), "warm", ("system CPU",)),
         "elixir-bounded": (ROOT / "elixir" / "README.md", AMD_RUN,
                            ("elixir", "bounded", 10000, 10000), "warm"),
         "elixir-bounded-quiet": (ROOT / "elixir" / "README.md", QUIET_RUN,
                                  ("elixir", "bounded", 10000, 10000), "warm"),
         "erlang-bounded-quiet": (ROOT / "elixir" / "README.md", QUIET_RUN,
                                  ("erlang", "bounded", 10000, 10000), "warm"),
         # the newest default run's four
         "java-chain-await-20k": (ROOT / "java" / "README.md", DEFAULT_RUN,
                                  ("java-virtual", "chain-await", 20000, None), "warm"),
         "deno-bounded": (ROOT / "node" / "README.md", DEFAULT_RUN,
                          ("deno", "bounded", 10, 10000), "cold", ("system CPU",)),
         "tokio-glibc-bounded": (ROOT / "rust" / "README.md", DEFAULT_RUN,
                                 ("rust-tokio-glibc", "bounded", 10, 10000), "cold",
                                 ("system CPU",)),
         "smol-bounded-cold": (ROOT / "rust" / "README.md", DEFAULT_RUN,
                               ("rust-smol", "bounded", 10000, 1), "cold")}
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
            for r in read_runs(path).rows if r.workload == workload and r.status == Status.OK]


def side(r: Row) -> str:
    """A row's side in a study: its impl label, and its --cpus where it was pinned."""
    return r.impl if r.cpus is None else f"{r.impl} --cpus {r.cpus}"


def values(found: list[Row], impl: str, n: int,
           figure: Callable[[Row], float | None]) -> list[float]:
    return [float(v) for r in found if side(r) == impl and r.n == n
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
    return ("\n" + "\n".join(lines) + f"\n\nAfter at most {PARITY}× the article's program, "
            f"warm, at N = {largest:,}: {parity(warm)}.\n\nPeak RSS at N = {largest:,}, its modes "
            f"as the results pages flag them (harness/analyse/modes.py): {said}."
            f"{_floors(folder, sides, largest)}\n")


# The goal for a program against its article's: at most this factor slower.
PARITY = 1.02


def parity(iv: Interval | None) -> str:
    """Whether a ratio's 95% interval shows it at most PARITY (after no more than
    2% slower than the article's program), beyond it, or neither."""
    if iv is None or not iv.settled:
        return "not settled (too few runs for a 95% interval)"
    bounds = f"[{iv.low:.3f}, {iv.high:.3f}]"
    if iv.high <= PARITY:
        faster = ", wholly below 1: after is the faster" if iv.high < 1 else ""
        return f"yes, the 95% interval {bounds} lies below {PARITY}{faster}"
    if iv.low > PARITY:
        return f"no, the 95% interval {bounds} lies beyond it"
    return (f"not settled: the estimate is {iv.estimate:.3f}, but its 95% interval "
            f"{bounds} reaches past {PARITY}×")


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
            if r.status != Status.OK or r.n != n or r.impl not in sides or not r.peak_rss_bytes:
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
    _, run, (impl, workload, n, buffer), by, *more = SPLIT[name]
    extra = {k: SHOWN[k] for k in (more[0] if more else ())}
    found = [r for r in read_runs(run / "runs.csv").rows if r.status == Status.OK and r.impl == impl
             and r.workload == workload and r.n == n and r.buffer == buffer and PASSES[by](r)]
    found.sort(key=lambda r: PASSES[by](r) or 0.0)
    two = bimodal([PASSES[by](r) or 0.0 for r in found])
    if two is None:
        raise ValueError(f"second-modes {name}: the {by} passes are one mode now; "
                         "reword the README")
    head = ["mode", "runs", "cold pass", "warm pass", "user CPU", *extra, "voluntary switches",
            "peak RSS"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    fast, slow = found[:two.lower.runs], found[two.lower.runs:]
    for label, side in (("fast", fast), ("slow", slow)):
        def of(figure: Callable[[Row], float | None]) -> list[float]:
            return [float(v) for r in side for v in [figure(r)] if v is not None]
        lines.append(f"| {label} | {len(side)} | "
                     f"{_range(of(lambda r: r.first_iter_s), fmt_seconds)} | "
                     f"{_range(of(lambda r: r.warm_iter_s), fmt_seconds)} | "
                     f"{_range(of(lambda r: r.cpu_user_s), fmt_seconds)} | "
                     + "".join(f"{_range(of(f), fmt)} | " for f, fmt in extra.values()) +
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
            + "".join(f"{k} {times(f)}, " for k, (f, _) in extra.items()) +
            f"voluntary switches {times(lambda r: r.ctx_switches_voluntary)}, peak RSS "
            f"{times(lambda r: r.peak_rss_bytes)}; the gap between the modes' nearest {by} passes "
            f"{gap:.1f}×. Load average (1 minute) at the runs' start: "
            f"{min(loads):.1f}–{max(loads):.1f}, median {statistics.median(loads):.1f}.\n")




class Study(NamedTuple):
    """A configuration the default run found bimodal, run again beside this
    file: its README, the rows' folder, the configuration, the pass whose modes
    the default run showed, the sides run in turn (the rows' impl label: its
    name in the table) and what else each side's row shows."""
    readme: Path
    folder: str
    config: tuple[str, str, int, int | None]  # impl, workload, N, B
    by: str
    sides: dict[str, str]
    shown: tuple[str, ...]


SHOWN: dict[str, tuple[Callable[[Row], float | None], Callable[[float], str]]] = {
    "other pass": (lambda r: None, fmt_seconds),  # the pass that is not `by` (filled per study)
    "user CPU": (lambda r: r.cpu_user_s, fmt_seconds),
    "system CPU": (lambda r: r.cpu_sys_s, fmt_seconds),
    "minor faults": (lambda r: r.minor_faults, lambda v: f"{v:,.0f}"),
    "voluntary switches": (lambda r: r.ctx_switches_voluntary, lambda v: f"{v:,.0f}"),
    "peak RSS": (lambda r: r.peak_rss_bytes, fmt_bytes)}
STUDIED: dict[str, Study] = {
    "tokio-chain-runs": Study(
        ROOT / "rust" / "README.md", "tokio-chain", ("rust-tokio", "chain", 20000, None), "cold",
        {"rust-tokio": "rust-tokio", "rust-tokio[MIMALLOC_ALLOW_THP=0]":
         "rust-tokio, `MIMALLOC_ALLOW_THP=0`", "rust-tokio-glibc": "rust-tokio-glibc"},
        ("other pass", "system CPU", "minor faults")),
    "node-chain-runs": Study(
        ROOT / "node" / "README.md", "node-chain", ("nodejs", "chain", 20000, None), "cold",
        {"nodejs": "nodejs", "nodejs[--single-threaded]": "nodejs, `--single-threaded`"},
        ("other pass", "user CPU", "system CPU")),
    "node-bounded-runs": Study(
        ROOT / "node" / "README.md", "node-bounded", ("nodejs", "bounded", 10000, 1), "warm",
        {"nodejs": "nodejs", "nodejs[BENCH_COLLECT=0]": "nodejs, `BENCH_COLLECT=0`",
         "nodejs[--single-threaded]": "nodejs, `--single-threaded`"},
        ("other pass", "user CPU", "system CPU")),
    "elixir-bounded-runs": Study(
        ROOT / "elixir" / "README.md", "elixir-bounded", ("elixir", "bounded", 10000, 10000),
        "warm", {"elixir": "elixir", "elixir[ERL_FLAGS=+sbwt very_long]":
                 "elixir, `+sbwt very_long`", "elixir[ERL_FLAGS=+S 1]": "elixir, `+S 1`"},
        ("other pass", "voluntary switches", "user CPU")),
    # the newest default run's four: the JIT's, V8's background threads, tokio's workers and
    # allocator, smol's executor threads at one core and at two (--cpus 1,2)
    "java-chain-await-20k-runs": Study(
        ROOT / "java" / "README.md", "java-chain-await-20k",
        ("java-virtual", "chain-await", 20000, None), "warm",
        {"java-virtual": "java-virtual", "java-virtual[-Xbatch]": "java-virtual, `-Xbatch`",
         "java-virtual[-XX:TieredStopAtLevel=1]": "java-virtual, `-XX:TieredStopAtLevel=1`"},
        ("other pass", "user CPU", "voluntary switches")),
    "deno-bounded-runs": Study(
        ROOT / "node" / "README.md", "deno-bounded", ("deno", "bounded", 10, 10000), "cold",
        {"deno": "deno", "deno[--v8-flags=--single-threaded]": "deno, `--single-threaded`"},
        ("other pass", "user CPU", "system CPU")),
    "tokio-glibc-bounded-runs": Study(
        ROOT / "rust" / "README.md", "tokio-glibc-bounded",
        ("rust-tokio-glibc", "bounded", 10, 10000), "cold",
        {"rust-tokio-glibc": "rust-tokio-glibc",
         "rust-tokio-glibc[TOKIO_WORKER_THREADS=1]": "rust-tokio-glibc, one worker",
         "rust-tokio": "rust-tokio (mimalloc)"},
        ("other pass", "user CPU", "system CPU")),
    "smol-bounded-cold-runs": Study(
        ROOT / "rust" / "README.md", "smol-bounded-cold", ("rust-smol", "bounded", 10000, 1),
        "cold", {"rust-smol --cpus 2": "rust-smol, 2 cores",
                 "rust-smol --cpus 1": "rust-smol, 1 core"},
        ("other pass", "voluntary switches", "user CPU"))}


def study_rows(s: Study) -> list[Row]:
    """The study's ok rows of its configuration, every run directory of its folder."""
    _, workload, n, buffer = s.config
    return [r for path in sorted((STUDY / s.folder).glob("*/runs.csv"))
            for r in read_runs(path).rows
            if r.status == Status.OK and r.workload == workload and r.n == n and r.buffer == buffer]


def study(name: str) -> str:
    """A study block: per side, its runs, the pass's median [95% interval] and
    modes, its ratio to the first side, and the medians of what else it shows."""
    s = STUDIED[name]
    found = study_rows(s)
    other = "warm" if s.by == "cold" else "cold"
    shown = {k: (PASSES[other], fmt_seconds) if k == "other pass" else SHOWN[k] for k in s.shown}
    names = [other + " pass" if k == "other pass" else k for k in s.shown]
    head = ["side", "runs", f"{s.by} pass [95%]", "its modes", f"/ {list(s.sides.values())[0]}",
            *names]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    first = values(found, next(iter(s.sides)), s.config[2], PASSES[s.by])
    for label, called in s.sides.items():
        xs = values(found, label, s.config[2], PASSES[s.by])
        if not xs:
            raise ValueError(f"second-modes {name}: no rows of {label}")
        medians = [fmt(statistics.median(v)) if (v := values(found, label, s.config[2], f)) else ""
                   for f, fmt in shown.values()]
        ratio = "" if label == next(iter(s.sides)) else _ratio(ratio_interval(first, xs))
        lines.append(f"| {called} | {len(xs)} | {fmt_seconds(statistics.median(xs))} "
                     f"{fmt_interval(median_interval(xs), len(xs), fmt_seconds)} | "
                     f"{_modes(bimodal(xs), fmt_seconds)} | {ratio} | "
                     + " | ".join(medians) + " |")
    runs = sorted({r.run_id for r in found})
    loads = [r.load_avg_1m for r in found if r.load_avg_1m is not None]
    slow = "; ".join(_slow_runs(found, label, called, s) for label, called in s.sides.items())
    others = "; ".join(
        f"{called} {_modes(bimodal(values(found, label, s.config[2], PASSES[other])), fmt_seconds)}"
        for label, called in s.sides.items())
    return (f"\nRun directories {', '.join(f'`{r}`' for r in runs)} in "
            f"docs/studies/second-modes/{s.folder}/; load average (1 minute) at the runs' start "
            f"{min(loads):.1f}–{max(loads):.1f}, median {statistics.median(loads):.1f}. Each "
            f"side's median [95% interval], its modes (harness/analyse/modes.py), its ratio to "
            f"the first side (Hodges–Lehmann, 95% interval) and the medians of the rest:\n\n"
            + "\n".join(lines) + f"\n\nThe {other} pass: {others}.\n\nRuns whose {s.by} "
            f"pass took more than {SLOW}× their side's median: {slow}.\n")


SLOW = 2  # a run this many times its side's median is a slow run, whether or not a mode


def _slow_runs(found: list[Row], label: str, called: str, s: Study) -> str:
    """How many of a side's runs are slow, and the medians of the study's first shown
    figure but the other pass (what differs) for those runs and the others."""
    mine = [r for r in found if side(r) == label and PASSES[s.by](r) is not None]
    usual = statistics.median(PASSES[s.by](r) or 0.0 for r in mine)
    slow = [r for r in mine if (PASSES[s.by](r) or 0.0) > SLOW * usual]
    if not slow:
        return f"{called} none of {len(mine)}"
    name = next(k for k in s.shown if k != "other pass")
    figure, fmt = SHOWN[name]
    rest = [r for r in mine if r not in slow]
    return (f"{called} {len(slow)} of {len(mine)}, their {name} "
            f"{fmt(statistics.median(float(figure(r) or 0.0) for r in slow))} against "
            f"{fmt(statistics.median(float(figure(r) or 0.0) for r in rest))}")


# The quiet rounds: after and the article's program only, at 1M, each round holding
# /tmp/bench.lock on a machine whose other work waited for it (README.md here).
ROUNDS_QUIET = {"chain-quiet": ("chain-quiet", "chain", ("csharp-async", "csharp-article")),
                # the same on the 2-core Intel Xeon of 2026-12-02 (issue 68 found the gap there)
                "chain-quiet-intel": ("chain-quiet-intel", "chain",
                                      ("csharp-async", "csharp-article"))}


def quiet(name: str) -> str:
    """A quiet block: per figure, each side's median [95% interval] and after /
    article with its interval; whether warm is within PARITY; the peak RSS's modes."""
    folder, workload, (after, article) = ROUNDS_QUIET[name]
    found = rows(folder, workload)
    head = ["N", "figure", "after", "the article's program", "after / article"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    (n,) = {r.n for r in found if r.n is not None}
    for label, figure, fmt in FIGURES:
        xs = [values(found, s, n, figure) for s in (after, article)]
        cells = [f"{fmt(statistics.median(x))} {fmt_interval(median_interval(x), len(x), fmt)}"
                 for x in xs]
        lines.append(f"| {n:,} | {label} | " + " | ".join(cells) +
                     f" | {_ratio(paired(found, article, after, n, figure))} |")
    warm = paired(found, article, after, n, lambda r: r.warm_iter_s)
    rss = {s: values(found, s, n, lambda r: r.peak_rss_bytes) for s in (after, article)}
    said = "; ".join(f"{SIDE_NAMES[s]} ({len(x)} runs) {_modes(bimodal(x), fmt_bytes)}, "
                     f"the highest {fmt_bytes(max(x))}" for s, x in rss.items())
    loads = [r.load_avg_1m for r in found if r.load_avg_1m is not None]
    rounds = len({r.run_id for r in found})
    return (f"\n{rounds} rounds, load average (1 minute) at the runs' start "
            f"{min(loads):.1f}–{max(loads):.1f}, median {statistics.median(loads):.1f}:\n\n"
            + "\n".join(lines) + f"\n\nAfter at most {PARITY}× the article's program, warm, "
            f"at N = {n:,}: {parity(warm)}.\n\nPeak RSS at N = {n:,}, its modes as the results "
            f"pages flag them (harness/analyse/modes.py): {said}.\n")


# What the harness does not record, each file written by the script beside it
# (diagnosis/): JSON lines, one per process (or per pass), grouped by a key.
DIAGNOSIS = STUDY / "diagnosis"
GROUPED = {
    # rust-tokio's chain at 20k run directly, /proc/vmstat's counters around each process
    "tokio-vmstat": ("tokio-vmstat.jsonl", "the kernel's direct compactions (`compact_stall`)",
                     lambda d: "none" if d["compact_stall"] == 0 else "one or more",
                     ("cold pass", lambda d: d["iter_ms"][0] / 1e3, fmt_seconds),
                     ("cold pass", lambda d: d["iter_ms"][0] / 1e3, fmt_seconds, max),
                     ("system CPU", lambda d: d["sys_s"], fmt_seconds),
                     ("2 MiB pages faulted in (`thp_fault_alloc`)", lambda d: d["thp_fault_alloc"],
                      lambda v: f"{v:,.0f}")),
    # nodejs's chain at 20k with --trace-opt --trace-deopt: on-stack replacements per process
    # (--trace-opt writes 3 lines an OSR compilation: compiling, completed compiling, completed
    # optimizing; in the first run's trace, node-chain-trace-first-run.txt, both are `chain`'s)
    "node-chain-trace": ("node-chain-trace.jsonl", "OSR compilations",
                         lambda d: str(d["osr"] // 3),
                         ("optimizations completed", lambda d: d["opt_done"], lambda v: f"{v:g}"),
                         ("cold pass", lambda d: d["iter_ms"][0] / 1e3, fmt_seconds),
                         ("warm pass", lambda d: d["iter_ms"][1] / 1e3, fmt_seconds)),
    # nodejs's bounded at 10k, B = 1 with --trace-gc, pass by pass (the first 5 of each
    # process left out: the JIT's warm-up), by the scavenges that ran during the pass
    "node-bounded-gc": ("node-bounded-gc.jsonl", "scavenges during the pass",
                        lambda d: "none" if d["scavenge"] == 0 else "one or more",
                        ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds, min),
                        ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds),
                        ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds, max),
                        ("full collections during the pass", lambda d: d["major"],
                         lambda v: f"{v:,.0f}", sum)),
    # the same passes in 3 processes with V8's own flags and without --no-concurrent-sweeping
    "node-bounded-sweep": ("node-bounded-sweep.jsonl", "V8's flags",
                           lambda d: f"`{d['flags']}`" if d["flags"] else "as stock",
                           ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds, min),
                           ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds),
                           ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds, max),
                           ("collections during the pass", lambda d: d["major"] + d["scavenge"],
                            lambda v: f"{v:,.0f}", sum))}
# the same passes in 3 processes with --trace-opt --trace-deopt (optpass.py): the functions
# TurboFan finished optimizing during each pass
GROUPED["node-bounded-opt"] = (
    "node-bounded-opt.jsonl", "functions optimized during the pass",
    lambda d: "0–2" if d["optimized"] <= 2 else "3–5" if d["optimized"] <= 5 else "6 or more",
    ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds, min),
    ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds),
    ("the pass", lambda d: d["ms"] / 1e3, fmt_seconds, max),
    ("deoptimizations during the pass", lambda d: d["deoptimized"], lambda v: f"{v:,.0f}", sum))
AGGREGATE = {min: "shortest", max: "longest", sum: "total"}


GROUPED_IN = {"tokio-vmstat": ROOT / "rust" / "README.md",
              "node-chain-trace": ROOT / "node" / "README.md",
              "node-bounded-gc": ROOT / "node" / "README.md",
              "node-bounded-sweep": ROOT / "node" / "README.md",
              "node-bounded-opt": ROOT / "node" / "README.md"}


def grouped(name: str) -> str:
    """A diagnosis block: the file's lines grouped by the key, each group's count
    and the medians of the figures."""
    file, key_name, key, *figures = GROUPED[name]
    found = [json.loads(line) for line in (DIAGNOSIS / file).read_text().splitlines()]
    if name.startswith("node-bounded"):  # the JIT's warm-up left out
        found = [d for d in found if d["pass"] >= 5]
    head = [key_name, "count",
            *(f"{f[0]}, {AGGREGATE[f[3]] if f[3:] else 'median'}" for f in figures)]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for k in sorted({key(d) for d in found}):
        side = [d for d in found if key(d) == k]
        lines.append(f"| {k} | {len(side)} | " + " | ".join(
            fmt((of[0] if of else statistics.median)([f(d) for d in side]))
            for _, f, fmt, *of in figures) + " |")
    return f"\nFrom diagnosis/{file} ({len(found)} lines):\n\n" + "\n".join(lines) + "\n"


def block(name: str) -> str:
    if name in GROUPED:
        return grouped(name)
    if name in ROUNDS_QUIET:
        return quiet(name)
    if name in COMPARED:
        return table(name)
    return study(name) if name in STUDIED else modes(name)


def readmes() -> dict[Path, set[str]]:
    """Each README this writes, with the blocks it holds."""
    found: dict[Path, set[str]] = {ROOT / "csharp" / "README.md": {*COMPARED, *ROUNDS_QUIET}}
    for name, (readme, *_) in SPLIT.items():
        found.setdefault(readme, set()).add(name)
    for name, s in STUDIED.items():
        found.setdefault(s.readme, set()).add(name)
    for name, readme in GROUPED_IN.items():
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
        for name in [*COMPARED, *ROUNDS_QUIET, *SPLIT, *STUDIED, *GROUPED]:
            print(f"<!-- second-modes {name} -->{block(name)}<!-- /second-modes -->")
