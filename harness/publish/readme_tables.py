"""A run's results as a page of docs/results, generated, never typed:

    .venv/bin/python -m harness.publish.readme_tables RUN_DIR [--out docs/results] [--name NAME]
    .venv/bin/python -m harness.publish.readme_tables --index [--out docs/results]

From RUN_DIR's summary.csv and env.json (run `python -m harness report
RUN_DIR` first if it has no summary.csv), and runs.csv's load column, it writes

    OUT/<date>-<machine>.md             the tables (sleep, chain, bounded, skynet,
                                        core scaling and http where the run has them,
                                        the articles' claims, the performance goals)
    OUT/<date>-<machine>/summary.csv    the files every figure on the page comes from
    OUT/<date>-<machine>/env.json
    OUT/<date>-<machine>/load.csv       from runs.csv: each configuration's ok runs, and
                                        how many ran under load (summary.csv lacks it)
    OUT/README.md                       the index of every page in OUT

and rewrites the headline sentence of the repository's README.md (between
its `<!-- headline -->` markers) from the newest page whose run measured the floor. <date> is env.json's
started_at, <machine> a slug of the CPU model and core count.

Because a page is a function of the files committed beside it,
harness/tests/publish/test_docs.py regenerates every page and the index and checks
that they are what is committed. Numbers are formatted here, not by the
harness, so that a page reads the same for as long as its files exist.

Each figure is the median of the configuration's ok runs with its confidence
interval (harness/core/stats.py, docs/statistics.md, from the ok values summary.csv
carries): "[7.1–8.3 ms], 3 runs, 75%" (the confidence printed below 95%), or
"(1 run, no interval)"; a cell that names a status ("1 crashed") had no ok run. ×floor is the multiple of the floor
implementation (env.json's floor_impls, the C++ coroutines) at the same
configuration: memory per task for sleep, the iteration time elsewhere.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable

from . import calibration, claims as claims_module
from .published import (COLD, CPUS, DELAY_MS, MACHINE, MEDIAN_RESPONSE, POOL_THREADS, REQUESTS,
                        RPS, RSS, SPAWN, STYLE, THREADS, USERS, WALL, WARM, Run, load_run,
                        write_load)
from ..analyse import verdicts
from ..analyse.analysis import Group, Summary
from ..analyse.standings import (Standing, judged, settled_share, standings,
                                 summary as standings_summary, unjudged_note)
from ..core.metrics import METRICS, fmt_metric
from ..core.schema import ConfigKey, Env
from ..core.stats import ratio_interval
from ..execute.machineload import LOADED_FRAC
from ..present.report import headline_ratio, headline_word, md_text
from ..record.rundir import RunDir, read_env

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "docs" / "results"


MIB = 1 << 20
MEMORY_WORKLOADS = {"sleep"}  # read for memory, not time (the harness's time_ratio=False)
STYLES = ("sync", "sync-over-async", "parallel", "async", "when-all")
HEADLINE_START, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"


# --- numbers as they read --------------------------------------------------

def fmt_seconds(value: float) -> str:
    mag = abs(value)
    for limit, scale, unit in ((1e-6, 1e9, "ns"), (1e-3, 1e6, "µs"), (1.0, 1e3, "ms")):
        if mag < limit:
            return f"{value * scale:.3g} {unit}"
    return f"{value:.3g} s"


def fmt_bytes(value: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def fmt_mib(value: float) -> str:
    return f"{value / MIB:,.0f} MiB"


def fmt_count(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def fmt_ratio(ratio: float) -> str:
    return f"{ratio:.2f}×" if ratio >= 0.1 else f"{ratio:.2g}×"


def span(low: str, high: str) -> str:
    """'29–31 MiB' where both ends have the same unit, else '812 µs–1.2 ms'."""
    lo, _, lo_unit = low.rpartition(" ")
    hi, _, hi_unit = high.rpartition(" ")
    if lo and hi and lo_unit == hi_unit:
        return f"{lo}–{hi} {hi_unit}"
    return f"{low}–{high}"


def runs_label(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"


def interval_notes(s: Summary, fmt: Callable[[float], str]) -> list[str]:
    """'[7.1–8.3 ms]', '3 runs', '75%' (the interval's confidence, below 95%);
    '1 run', 'no interval' for one run."""
    iv = s.interval
    if iv is None:
        return [runs_label(s.count), "no interval"] if s.count == 1 else [runs_label(s.count)]
    low, high = fmt(iv.low), fmt(iv.high)
    notes = [f"[{span(low, high) if low != high else low}]", runs_label(s.count)]
    return notes if iv.settled else notes + [f"{iv.confidence:.0%}"]


def failures(g: Group) -> str:
    """The runs that were not ok, as Group.statuses counts them: '1 crashed, 1 oom'."""
    counts = g.status_counts
    return ", ".join(f"{c} {s}" for s, c in sorted(counts.items(), key=lambda sc: (-sc[1], sc[0]))
                     if s != "ok")


def cell(run: Run, g: Group | None, metric: str, fmt: Callable[[float], str],
         unit: str = "") -> str:
    """The median with its interval and runs: '7.2 ms ([7.1–8.3 ms], 3 runs,
    75%)', '94 MiB (1 run, no interval)'; the statuses where no run was ok."""
    if g is None:
        return ""
    s = g.metrics.get(metric)
    if s is None:
        return g.statuses if not g.ok else ""
    notes = interval_notes(s, fmt)
    if loaded := run.under_load(g):
        notes.append(f"{loaded} under load")
    if failed := failures(g):
        notes.append(f"also {failed}")
    return f"{fmt(s.median)}{unit} ({', '.join(notes)})"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


# --- the tables ------------------------------------------------------------

def pick(groups: list[Group], workload: str, n: int | None, buffer: int | None = None
         ) -> dict[str, Group]:
    """The plain (unpinned, single-machine) configurations of one size."""
    return {g.impl: g for g in groups if g.workload == workload and g.n == n
            and g.buffer == buffer and not g.params}


def sizes(groups: list[Group], workload: str) -> list[int]:
    return sorted({g.n for g in groups if g.workload == workload and g.n and not g.params})


def floor_ratios(run: Run) -> dict[ConfigKey, float]:
    """×floor per configuration: memory per task for a workload read for
    memory, else the iteration time (warm where every measured implementation
    of the set has one, else cold), over the floor implementation's."""
    floors = set(run.env.floor_impls)
    sets: dict[tuple, list[Group]] = {}
    for g in run.groups:
        sets.setdefault((g.workload, g.n, g.buffer, g.params), []).append(g)
    out: dict[ConfigKey, float] = {}
    for (workload, *_), members in sets.items():
        base = next((g for g in members if g.impl in floors), None)
        if base is None:
            continue
        if workload in MEMORY_WORKLOADS:
            def value(g: Group) -> float | None:
                return g.mem_per_task_bytes
        else:
            measured = [g for g in members if g.metrics]
            metric = (WARM if measured and all(WARM in g.metrics
                                                        for g in measured) else COLD)

            def value(g: Group, metric: str = metric) -> float | None:
                return g.median(metric)
        unit = value(base)
        if not unit or unit <= 0:
            continue
        for g in members:
            if (v := value(g)) is not None:
                out[g.key] = v / unit
    return out


def sleep_section(run: Run, floor: dict[ConfigKey, float]) -> str:
    ns = sizes(run.groups, "sleep")
    by_n = {n: pick(run.groups, "sleep", n) for n in ns}
    top = ns[-1]
    rows = []
    for impl in sorted({i for m in by_n.values() for i in m}):
        row = [impl] + [cell(run, by_n[n].get(impl), RSS, fmt_mib) for n in ns]
        g = by_n[top].get(impl)
        row.append(cell(run, g, SPAWN, fmt_seconds) if g and g.ok else "")
        row.append(fmt_bytes(g.mem_per_task_bytes) if g and g.mem_per_task_bytes else "")
        row.append(fmt_ratio(floor[g.key]) if g and g.key in floor else "")
        rows.append(row)
    return ("## sleep: peak RSS\n\n"
            + table(["implementation"] + [f"N={n:,}" for n in ns]
                    + [f"start {top:,} tasks", f"memory per task at {top:,}", "×floor"], rows)
            + "\n\nMemory per task is the slope of the median peak RSS over N (the harness's "
            "analysis; shown only where the growth exceeds the readings' spread and 1 MiB). "
            "×floor divides it by the floor's. The language's README says why a row that "
            "names a status at the largest N had no ok run there.\n")


def iter_cell(run: Run, g: Group | None) -> str:
    if g is None:
        return ""
    if not g.ok:
        return g.statuses
    cold, warm, rss = (g.metrics.get(m) for m in (COLD, WARM, RSS))

    def figure(st: Summary | None, fmt: Callable[[float], str]) -> str:
        if st is None:
            return "—"
        iv = st.interval
        return fmt(st.median) + (f" [{span(fmt(iv.low), fmt(iv.high))}]" if iv else "")
    stats = [st for st in (cold, warm, rss) if st]
    count = min(st.count for st in stats)
    confidence = min((st.interval.confidence for st in stats if st.interval), default=None)
    tail = (runs_label(count) + (", no interval" if count == 1 else "")
            + (f", {confidence:.0%}" if confidence is not None and confidence < 0.95 else "")
            + (f", {loaded} under load" if (loaded := run.under_load(g)) else "")
            + (f", also {failed}" if (failed := failures(g)) else ""))
    return (f"{figure(cold, fmt_seconds)} / {figure(warm, fmt_seconds)}, "
            f"{figure(rss, fmt_mib)} ({tail})")


def chain_section(run: Run) -> str:
    n = max(sizes(run.groups, "chain") + sizes(run.groups, "chain-await"))
    chain, awaits = pick(run.groups, "chain", n), pick(run.groups, "chain-await", n)
    rows = [[impl, iter_cell(run, chain.get(impl)), iter_cell(run, awaits.get(impl))]
            for impl in sorted(set(chain) | set(awaits))]
    return (f"## chain and chain-await at N = {n:,}: cold / warm iteration, peak RSS\n\n"
            + table(["implementation", "chain", "chain-await"], rows)
            + "\n\nCold is the process's first pass, warm the median of the later ones "
            "(Yakunin 2017's first and second pass).\n")


def bounded_section(run: Run) -> str:
    ns = sizes(run.groups, "bounded")
    n = ns[-1]
    buffers = sorted({g.buffer for g in run.groups if g.workload == "bounded" and g.n == n
                      and not g.params and g.buffer is not None})
    cells = {b: pick(run.groups, "bounded", n, b) for b in buffers}
    small = ns[0] if len(ns) > 1 else None
    few = pick(run.groups, "bounded", small, 1) if small else {}
    rows = []
    for impl in sorted({i for m in cells.values() for i in m} | set(few)):
        row = [impl]
        for b in buffers:
            g = cells[b].get(impl)
            text = cell(run, g, WARM, fmt_seconds)
            go = cells[b].get("go")
            base, mine = (go.median(WARM) if go else None,
                          g.median(WARM) if g else None)
            if base and mine and impl != "go":
                text += f" {mine / base:.2f}× go"
            row.append(text)
        if small:
            row.append(cell(run, few.get(impl), WARM, fmt_seconds))
        rows.append(row)
    header = (["implementation"] + [f"B={b}" for b in buffers]
              + ([f"{small:,} producers, B=1"] if small else []))
    return (f"## bounded: warm iteration, {n:,} producers\n\n" + table(header, rows)
            + "\n\nThe median of the timed iterations after the warm-up; × go is the ratio "
            "of the medians to Go's at the same buffer.\n")


def skynet_section(run: Run, floor: dict[ConfigKey, float]) -> str:
    n = sizes(run.groups, "skynet")[-1]
    rows = [[impl, cell(run, g, COLD, fmt_seconds), cell(run, g, WARM, fmt_seconds),
             cell(run, g, RSS, fmt_mib), fmt_ratio(floor[g.key]) if g.key in floor else ""]
            for impl, g in sorted(pick(run.groups, "skynet", n).items())]
    return (f"## skynet: {n:,} leaves\n\n"
            + table(["implementation", "cold", "warm", "peak RSS", "×floor"], rows) + "\n")


def scaling_section(run: Run) -> str:
    """Warm iteration per CPU count (run --cpus), and the speed-up from the
    fewest CPUs to the most."""
    pinned = [g for g in run.groups if g.param(CPUS) is not None and g.n
              and g.param(MACHINE) is None]
    out = ["## Core scaling (`run --cpus`): warm iteration against CPUs\n"]
    for workload, n, buffer in sorted({(g.workload, g.n, g.buffer or 0) for g in pinned}):
        members = [g for g in pinned if (g.workload, g.n, g.buffer or 0) == (workload, n, buffer)]
        cpus = sorted({g.param(CPUS) for g in members})
        by = {(g.impl, g.param(CPUS)): g for g in members}
        rows = []
        for impl in sorted({g.impl for g in members}):
            lo, hi = by.get((impl, cpus[0])), by.get((impl, cpus[-1]))
            a = lo.median(WARM) if lo else None
            b = hi.median(WARM) if hi else None
            rows.append([impl] + [cell(run, by.get((impl, c)), WARM, fmt_seconds)
                                  for c in cpus]
                        + [fmt_ratio(a / b) if a and b and len(cpus) > 1 else ""])
        title = f"{workload}, N = {n:,}" + (f", B = {buffer}" if buffer else "")
        out.append(f"### {title}\n\n" + table(
            ["implementation"] + [f"{c} CPU{'s' if c > 1 else ''}" for c in cpus]
            + [f"speed-up {cpus[0]} → {cpus[-1]}"], rows) + "\n")
    return "\n".join(out)


def http_cell(run: Run, g: Group | None) -> str:
    if g is None:
        return ""
    rps = g.metrics.get(RPS)
    if rps is None:
        return f"**{g.statuses}**" if not g.ok else ""
    text = cell(run, g, RPS, fmt_count, " req/s")
    p50, threads = g.metrics.get(MEDIAN_RESPONSE), g.metrics.get(THREADS)
    if p50:
        text += f", median response {fmt_seconds(p50.median)}"
    if threads:
        text += f", {fmt_count(threads.median)} thread{'s' if threads.median != 1 else ''}"
    return text


def http_section(run: Run) -> str:
    http = [g for g in run.groups if g.workload == "http" and g.param(CPUS) is None
            and g.param(MACHINE) is None]
    loads = sorted({(g.param(USERS), g.param(REQUESTS), g.param(DELAY_MS),
                     g.param(POOL_THREADS)) for g in http},
                   key=lambda t: tuple(-1 if v is None else v for v in t))
    by = {(g.impl, g.param(STYLE), (g.param(USERS), g.param(REQUESTS), g.param(DELAY_MS),
                                      g.param(POOL_THREADS))): g for g in http}
    pairs = sorted({(g.impl, g.param(STYLE)) for g in http},
                   key=lambda p: (p[0], STYLES.index(p[1]) if p[1] in STYLES else 99, p[1]))
    rows = [[impl, style] + [http_cell(run, by.get((impl, style, load))) for load in loads]
            for impl, style in pairs]

    def title(load: tuple) -> str:
        users, requests, delay, threads = load
        return (f"{users} users × {requests} requests, D = {delay} ms"
                + (f", {threads} threads" if threads else ""))
    return ("## http: throughput, median response, peak threads\n\n"
            + table(["implementation", "style"] + [title(load) for load in loads], rows)
            + "\n\nThroughput counts the right answers a second. The floor of a response is "
            "3·D (sync, sync-over-async, async) or 2·D (parallel, when-all); a server that "
            "answers one request at a time cannot finish a large load inside its timeout "
            "(docs/protocol.md, http).\n")


def claims_section(run: Run) -> str | None:
    by_key = {g.key: g for g in run.groups}
    rows = []
    for c in claims_module.CLAIMS:
        num, den = by_key.get(c.num.key()), by_key.get(c.den.key())
        if num is None or den is None:
            continue  # this run did not measure one of the claim's configurations
        rows.append([c.article, c.text, c.published] + claims_module.judge(c, by_key))
    if not rows:
        return None
    return ("## What the articles claimed, and what this run measured\n\n"
            "From `harness/publish/claims.py` (docs/articles.md names the articles). A ratio is "
            "the Hodges–Lehmann estimate of numerator / denominator with its confidence "
            "interval, from both sides' runs ([docs/statistics.md](../statistics.md)). A claim "
            "*holds* when its 95% interval lies wholly on the claimed side, *does not hold* "
            "when wholly on the other or when the two are level (the interval within the "
            "figure's margin: ±5% for times, ±2% for memory), and is *not settled* otherwise, "
            "with its reason: an interval holding the threshold and reaching past the margin, "
            "too few runs for 95% (4 a side; the interval's confidence is printed), or one run "
            "(no interval: the ratio of the two figures is shown, and nothing is claimed from "
            "it). Where the article gave a size, it is judged too: inside the interval (for "
            "\"> X\", the interval wholly above X) its size holds, outside it does not. "
            "Claims whose configurations this run did not measure are left out.\n\n"
            + table(["article", "claim", "article's figure", "this run: numerator / denominator",
                     "verdict"], rows) + "\n")


# Performance goals (issue 13): benchmarks, never timed tests.
@dataclass(frozen=True)
class Goal:
    text: str
    # on the run's configurations by key, and the run (its env.json, its load)
    check: Callable[[dict[ConfigKey, Group], Run], tuple[str, str] | None]


def _g(groups: dict[ConfigKey, Group], impl: str, workload: str, n: int,
       buffer: int | None = None) -> Group | None:
    return groups.get(ConfigKey(impl, workload, n, buffer))


def against(st: Summary, low: float | None = None, high: float | None = None) -> str:
    """A goal on one figure: "holds" when its settled (95%) interval lies
    within [low, high], "**missed**" when wholly outside it; otherwise not
    settled, saying on which side the median falls: a verdict never rests
    on one run or on fewer runs than 95% needs."""
    def inside(v: float) -> bool:
        return (low is None or v >= low) and (high is None or v <= high)
    iv = st.interval
    if iv is None or not iv.settled:
        why = "1 run" if st.count == 1 else f"{iv.confidence:.0%} with {st.count} runs" if iv \
            else f"{st.count} runs"
        return f"not settled ({why}): the median {'meets' if inside(st.median) else 'misses'} it"
    if inside(iv.low) and inside(iv.high):
        return "holds"
    if (high is not None and iv.low > high) or (low is not None and iv.high < low):
        return "**missed**"
    return "not settled: the interval reaches across the limit"


def figure_within(impl: str, workload: str, n: int, metric: str, fmt: Callable[[float], str],
                  low: float | None = None, high: float | None = None):
    """A goal on one configuration's figure: its cell, and `against` [low, high]."""
    def check(groups, run):
        g = _g(groups, impl, workload, n)
        if g is None:
            return None
        if g.median(metric) is None:
            return g.statuses, "**missed**"
        return cell(run, g, metric, fmt), against(g.metrics[metric], low, high)
    return check


def rss_at_most(impl: str, workload: str, n: int, limit_mib: float):
    return figure_within(impl, workload, n, RSS, fmt_mib, high=limit_mib * MIB)


def runs_ok(impl: str, workload: str, n: int):
    def check(groups, run):
        g = _g(groups, impl, workload, n)
        if g is None:
            return None
        return g.statuses, "holds" if g.ok == len(g.rows) else "**missed**"
    return check


def within_go(impl: str, n: int, buffers: tuple[int, ...], limit: float):
    """impl's warm iteration over Go's at each buffer, by its ratio interval
    (both sides' runs): holds when every settled interval is at most limit."""
    def check(groups, run):
        texts, verdicts = [], []
        for b in buffers:
            g, go = _g(groups, impl, "bounded", n, b), _g(groups, "go", "bounded", n, b)
            if g is None or go is None:
                return None
            a, base = g.metrics.get(WARM), go.metrics.get(WARM)
            if a is None or base is None:
                texts.append(f"B = {b}: no ok run")
                verdicts.append("**missed**")
                continue
            iv = ratio_interval(base.values, a.values)  # new / old: impl over Go
            if iv is None:
                texts.append(f"B = {b}: {a.median / base.median:.2f}× (1 run, no interval)")
                verdicts.append("not settled")
                continue
            texts.append(f"B = {b}: {iv.estimate:.2f}× [{iv.low:.2f}–{iv.high:.2f}]"
                         + (f" ({iv.confidence:.0%})" if not iv.settled else ""))
            verdicts.append("not settled" if not iv.settled else "holds" if iv.high <= limit
                            else "**missed**" if iv.low > limit else "not settled")
        verdict = ("**missed**" if "**missed**" in verdicts else "not settled" if
                   "not settled" in verdicts else "holds")
        return "; ".join(texts), verdict
    return check


def suite_minutes(limit: float):
    def check(groups, run):
        env = run.env
        if env.settings.get("suite") != "default":
            return None
        start, end = env.started_at, env.finished_at
        if not start or not end:
            return None
        seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
        total = sum(len(g.rows) for g in groups.values())
        return (f"{int(seconds // 60)} min {int(seconds % 60)} s, {total:,} process runs",
                "holds" if seconds <= limit * 60 else "**missed**")
    return check



def settled_at_least(share: float):
    def check(groups, run):
        if run.env.settings.get("suite") != "default":
            return None
        settled, total = settled_share(run_standings(groups.values(), run.env))
        if not total:
            return None
        return (f"{settled:,} of {total:,} ({settled / total:.0%})",
                "holds" if settled >= share * total else "**missed**")
    return check


M = 1_000_000
GOALS = [
    Goal("go sleep 1M: ok, wall 10–20 s",
         figure_within("go", "sleep", M, WALL, fmt_seconds, 10, 20)),
    Goal("rust-tokio sleep 1M ≤ 450 MiB", rss_at_most("rust-tokio", "sleep", M, 450)),
    Goal("rust-futures sleep 1M ≤ 215 MiB", rss_at_most("rust-futures", "sleep", M, 215)),
    Goal("rust-tokio chain 1M warm < 1 s",
         figure_within("rust-tokio", "chain", M, WARM, fmt_seconds, high=1.0)),
    Goal("csharp-async sleep 1M < 250 MiB", rss_at_most("csharp-async", "sleep", M, 250)),
    Goal("csharp-async chain 1M ok", runs_ok("csharp-async", "chain", M)),
    Goal("csharp-async chain-await 1M ok", runs_ok("csharp-async", "chain-await", M)),
    Goal("java-virtual sleep 1M ≤ 1,060 MiB", rss_at_most("java-virtual", "sleep", M, 1060)),
    Goal("java-virtual chain 1M ok", runs_ok("java-virtual", "chain", M)),
    Goal("nodejs sleep 1M < 620 MiB", rss_at_most("nodejs", "sleep", M, 620)),
] + [Goal(f"{impl} chain 1M ok", runs_ok(impl, "chain", M)) for impl in ("nodejs", "bun", "deno")
     ] + [
    Goal("python-asyncio sleep 1M ≤ 1,280 MiB", rss_at_most("python-asyncio", "sleep", M, 1280)),
    Goal("python-asyncio chain 1M ok", runs_ok("python-asyncio", "chain", M)),
    Goal("rust-tokio bounded, 10k producers, within 1.5× of Go at B = 1, 100, 1000",
         within_go("rust-tokio", 10_000, (1, 100, 1000), 1.5)),
    Goal("java-virtual bounded, 10k producers, B = 1, within 5× of Go",
         within_go("java-virtual", 10_000, (1,), 5.0)),
    Goal("the default suite in 45 minutes on 2 cores", suite_minutes(45)),
    Goal("the default suite settles at least 90% of its verdicts", settled_at_least(0.9)),
]


def goals_section(run: Run) -> str | None:
    by_key = {g.key: g for g in run.groups + run.skipped}
    rows = [[goal.text, *result] for goal in GOALS
            if (result := goal.check(by_key, run)) is not None]
    if not rows:
        return None
    return ("## Performance goals\n\n"
            "The project's goals (issue 13), judged on this run's medians; they are "
            "benchmarks, never timed tests. Goals whose configurations this run did not "
            "measure are left out.\n\n" + table(["goal", "measured", ""], rows) + "\n")


# --- the page --------------------------------------------------------------

def machine_slug(env: Env) -> str:
    if env.machines:
        return f"{len(env.machines)}-machines"
    host = env.host
    model = str(host.get("cpu_model") or "").lower()
    model = re.sub(r"\((r|tm)\)|\bprocessor\b|\bcpu\b|@.*$|\d+-core", " ", model)
    slug = re.sub(r"[^a-z0-9]+", "-", model).strip("-") or "unknown-cpu"
    return f"{slug}-{host.get('cores', 0)}c"


def page_name(env: Env) -> str:
    return f"{str(env.started_at)[:10]}-{machine_slug(env)}"


def is_measurement(env: Env) -> bool:
    """A finished run of a suite larger than quick (or of chosen options)."""
    suite = env.settings.get("suite")
    return bool(env.finished_at) and suite not in ("quick", "smoke")


def duration(env: Env) -> str:
    start, end = env.started_at, env.finished_at
    if not start or not end:
        return "not finished when summarised"
    seconds = int((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds())
    return f"{seconds // 60} min {seconds % 60} s"


def describe(run: Run, name: str) -> str:
    env = run.env
    host, git, settings = env.host, env.git, env.settings
    total = sum(len(g.rows) for g in run.groups + run.skipped)
    statuses: Counter = Counter()
    for g in run.groups + run.skipped:
        statuses.update(g.status_counts)
    status_text = ", ".join(f"{c:,} {s}" for s, c in sorted(statuses.items(),
                                                            key=lambda sc: (sc[0] != "ok", -sc[1])))
    ram = host.get("ram_bytes")
    commit = str(git.get("commit") or "unknown")[:7] + (" (dirty tree)" if git.get("dirty") else "")
    suite = settings.get("suite")
    if not run.load_recorded:
        load_text = ("Whether a run ran under load is not recorded beside this page (no "
                     "load.csv).")
    else:
        under = sum(run.under_load(g) or 0 for g in run.groups)
        load_text = (f"{under:,} of {statuses['ok']:,} ok runs ran **under load**: other "
                     f"processes used more than {LOADED_FRAC:.0%} of the cores while they ran "
                     "(load.csv); the cells say how many of their runs did"
                     + (", and their figures are less reliable than the others." if under
                        else "."))
    lines = [
        f"Run `{env.run_id}`"
        + (f", the `{suite}` suite" if suite else "")
        + f", started {env.started_at}, {duration(env)}; {total:,} process runs "
        f"({status_text}); the programs of commit {commit}.",
        "",
        f"Machine: {host.get('cpu_model', 'unknown CPU')}, {host.get('cores', '?')} cores"
        + (f", {ram / (1 << 30):.0f} GiB" if ram else "")
        + f", {host.get('os', 'unknown OS')}, kernel {host.get('kernel', '?')}.",
        "",
        load_text,
    ]
    if env.machines:
        lines += ["", "Machines: " + "; ".join(
            f"{m}: {Env(v).host.get('cpu_model', '?')}"
            for m, v in sorted(env.machines.items()))]
    tools = env.toolchains
    if tools:
        lines += ["", "Toolchains: " + "; ".join(f"{k} {v}" for k, v in sorted(tools.items()) if v)
                  + "."]
    if run.skipped:
        skipped = sorted({f"{g.impl} {g.workload}" + (f" {g.param(STYLE)}" if g.param(STYLE)
                                                       else "") for g in run.skipped})
        lines += ["", "Skipped (a toolchain missing or refused, or a style a server does not "
                  "have; its language's README says why): " + ", ".join(skipped) + "."]
    return "\n".join(lines)


def run_standings(groups: Iterable[Group], env: Env) -> list[Standing]:
    """The run's verdicts (harness/analyse/standings.py: each implementation against
    its set's leader on each headline figure, decided as one family)."""
    return standings(judged_groups(groups, env))


def judged_groups(groups: Iterable[Group], env: Env) -> list[Group]:
    """The run's groups its verdicts are about (standings.judged)."""
    return judged(list(groups), env.settings)


def settled_line(run: Run) -> str:
    """The verdicts' summary as Markdown: the names in it (the unjudged
    workloads) come from env.json, so it is escaped."""
    found = run_standings(run.groups, run.env)
    note = unjudged_note(run.env.settings)
    return md_text(standings_summary(found) + (f" {note}" if note else ""))


def render_page(run: Run, name: str) -> str:
    env = run.env
    host = env.host
    present = {g.workload for g in run.groups if not g.params}
    floor = floor_ratios(run)
    recorded_load = run.load_recorded
    parts = [
        f"# Results: {str(env.started_at)[:10]}, "
        f"{host.get('cpu_model', 'unknown CPU')}, {host.get('cores', '?')} cores\n",
        f"Generated by `harness/publish/readme_tables.py` from this run's "
        f"[summary.csv]({name}/summary.csv) and [env.json]({name}/env.json)"
        + (f" (and [load.csv]({name}/load.csv): how many of each configuration's ok runs "
           "ran under load, from its runs.csv)" if recorded_load else "") + "; "
        "do not edit it by hand. How the figures are measured: "
        "[docs/methodology.md](../methodology.md).\n",
    ]
    if not is_measurement(env):
        parts.append("> **A check, not a measurement.** This run is the quick suite (small N, "
                     "one run each) or did not finish: it shows that every implementation "
                     "runs and answers right, not how fast or how large it is.\n")
    parts.append(f"**{settled_line(run)}** How they are decided: "
                 "[docs/statistics.md](../statistics.md#verdicts-a-runs-standings-decided-as-a-family).\n")
    parts.append(describe(run, name) + "\n")
    parts.append("Each figure is the median of the configuration's ok runs, followed by its "
                 "confidence interval in brackets and how many runs there were; the interval's "
                 "confidence is printed where it is below 95% (fewer than 6 runs), and one run "
                 "has none ([docs/statistics.md](../statistics.md)); "
                 "\"also 1 timeout\" counts the runs that were not ok, and a cell that only "
                 "names statuses had no ok run. ×floor is the multiple of the floor "
                 f"implementation ({', '.join(env.floor_impls or ['none in this run'])}) "
                 "at the same configuration.\n")
    if "sleep" in present:
        parts.append(sleep_section(run, floor))
    if present & {"chain", "chain-await"}:
        parts.append(chain_section(run))
    if "bounded" in present:
        parts.append(bounded_section(run))
    if "skynet" in present:
        parts.append(skynet_section(run, floor))
    if any(g.param(CPUS) is not None for g in run.groups):
        parts.append(scaling_section(run))
    if any(g.workload == "http" for g in run.groups):
        parts.append(http_section(run))
    for section in (claims_section(run), goals_section(run), calibration.section(run.groups)):
        if section:
            parts.append(section)
    return "\n".join(parts)


def headline(run: Run, name: str, link_prefix: str = "docs/results/") -> str | None:
    """One sentence for the repository's README: peak RSS of the largest
    sleep, the floor beside the lightest and the heaviest runtime."""
    ns = sizes(run.groups, "sleep")
    if not ns:
        return None
    top = pick(run.groups, "sleep", ns[-1])
    ok = {i: g for i, g in top.items() if g.median(RSS) is not None}
    floors = set(run.env.floor_impls)
    others = sorted((i for i in ok if i not in floors), key=lambda i: ok[i].median(RSS))
    if len(others) < 2:
        return None

    def say(impl: str) -> str:
        s, loaded = ok[impl].metrics[RSS], run.under_load(ok[impl])
        return (f"{impl} {fmt_mib(s.median)} ({', '.join(interval_notes(s, fmt_mib))}"
                + (f", {loaded} under load" if loaded else "") + ")")
    floor_text = "".join(f"the floor, {say(f)}; " for f in sorted(floors) if f in ok)
    host = run.env.host
    check = "" if is_measurement(run.env) else " (a quick check at small N, not a measurement)"
    settled, total = settled_share(run_standings(run.groups, run.env))
    verdicts = (f" The run ({duration(run.env)}) settled {settled:,} of its {total:,} verdicts "
                f"({settled / total:.0%}; false discovery rate 5%)." if total and check == "" else "")
    return (f"Peak memory of {ns[-1]:,} sleeping tasks{check}: {floor_text}"
            f"the runtimes from {say(others[0])} to {say(others[-1])}; "
            f"{host.get('cpu_model', 'unknown CPU')}, {host.get('cores', '?')} cores "
            f"([{name}]({link_prefix}{name}.md#sleep-peak-rss)).{verdicts}")


# --- the folder -------------------------------------------------------------

def pages(out: Path) -> list[str]:
    """The pages in OUT, newest first (by started_at, then name)."""
    names = [p.stem for p in out.glob("*.md") if p.name != "README.md"
             and (out / p.stem / "env.json").is_file()]
    return sorted(names, key=lambda n: (read_env(out / n / "env.json").started_at or "", n),
                  reverse=True)


def headline_page(out: Path) -> str:
    """The page README's headline comes from: the newest whose run measured
    the floor (a run of every implementation, not a suite of a few, such as
    the claims suite's), else the newest."""
    names = pages(out)
    for name in names:
        if read_env(out / name / "env.json").floor_impls:
            return name
    return names[0]


def load_page(out: Path, name: str) -> Run:
    return load_run(out / name / "summary.csv", out / name / "env.json", out / name / "load.csv")


def render_index(out: Path) -> str:
    lines = ["# Results\n",
             "One page per published run, newest first, each generated by "
             "`harness/publish/readme_tables.py` from the run's summary.csv and env.json (and "
             "load.csv, which of its runs ran under load), which sit in the folder of the same "
             "name beside it: every figure can be traced to its run. "
             "This index is generated too. How to publish a run: "
             "[docs/usage.md](../usage.md#publishing-a-run). How the figures are measured: "
             "[docs/methodology.md](../methodology.md).\n"]
    rows = []
    for name in pages(out):
        run = load_page(out, name)
        env, host = run.env, run.env.host
        suite = env.settings.get("suite") or "chosen options"
        kind = "measurement" if is_measurement(env) else "**check only**"
        ok = sum(g.ok for g in run.groups)
        load = ("not recorded" if not run.load_recorded
                else f"{sum(run.under_load(g) or 0 for g in run.groups):,} of {ok:,} ok runs")
        rows.append([f"[{name}]({name}.md)", str(env.run_id), suite, kind, load,
                     f"{host.get('cpu_model', '?')}, {host.get('cores', '?')} cores",
                     str(env.git.get("commit", ""))[:7]])
    lines.append(table(["page", "run", "suite", "", "under load", "machine", "commit"], rows)
                 if rows
                 else "No page yet.")
    lines.append("\nFigures published before these pages (in the README, from run directories "
                 "that no longer exist) are in the project's history: "
                 "`git show e14bc3e:README.md`, section \"Figures\".\n")
    return "\n".join(lines)


def readme_block(run: Run, name: str) -> str | None:
    """README's block between its headline markers: the headline sentence,
    then the run's first-screen verdicts, compact (report.md's table has the
    leader's interval and the runs): one row per workload and headline figure."""
    sentence = headline(run, name)
    if sentence is None:
        return None
    groups = judged_groups(run.groups, run.env)
    rows = [compact_cells(h) for h in verdicts.headlines(groups, standings(groups))]
    if not rows or not is_measurement(run.env):
        return sentence
    return (sentence + "\n\n"
            + table(["workload", "figure", "leader", "runner-up, × leader (95%)", "verdict"],
                    rows))


def compact_cells(h: verdicts.Headline) -> list[str]:
    """A first-screen row for README: report.md's, without the leader's
    interval and the runs (the page has them)."""
    return [md_text(h.workload), md_text(f"{METRICS[h.metric].label}, {h.where}"),
            f"{md_text(h.leader.impl)} {fmt_metric(h.metric, h.leader.median(h.metric))}",
            f"{md_text(h.runner.impl)} {headline_ratio(h)}" if h.runner else "—",
            headline_word(h)]


def readme_with_headline(readme: str, sentence: str) -> str:
    start, end = readme.index(HEADLINE_START), readme.index(HEADLINE_END)
    return readme[:start + len(HEADLINE_START)] + "\n" + sentence + "\n" + readme[end:]


def publish(run_dir: Path, out: Path, name: str | None = None,
            readme: Path | None = None) -> Path:
    """Writes the page, its two files and the index; and README's headline
    when `readme` is given (main gives it when OUT is docs/results)."""
    source = RunDir(run_dir)
    summary, env_path = run_dir / "summary.csv", source.env_path
    if not summary.is_file():
        raise SystemExit(f"{summary} is missing: run `python -m harness report {run_dir}` first")
    name = name or page_name(source.env())
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(summary, folder / "summary.csv")
    shutil.copyfile(env_path, folder / "env.json")
    if source.runs_path.is_file():
        write_load(run_dir, folder / "load.csv")
    run = load_page(out, name)
    (out / f"{name}.md").write_text(render_page(run, name))
    (out / "README.md").write_text(render_index(out))
    newest = headline_page(out)
    if readme is not None and readme.is_file():
        sentence = readme_block(load_page(out, newest), newest)
        text = readme.read_text()
        if sentence and HEADLINE_START in text:
            readme.write_text(readme_with_headline(text, sentence))
    return out / f"{name}.md"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.publish.readme_tables",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", nargs="?", type=Path, help="a run directory with summary.csv")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: docs/results")
    parser.add_argument("--name", help="the page's name (default: <date>-<machine>)")
    parser.add_argument("--index", action="store_true", help="only rewrite OUT/README.md")
    args = parser.parse_args(argv)
    if args.index:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "README.md").write_text(render_index(args.out))
        return 0
    if args.run_dir is None:
        parser.error("give a run directory, or --index")
    readme = ROOT / "README.md" if args.out.resolve() == DEFAULT_OUT else None
    print(publish(args.run_dir, args.out, args.name, readme))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
