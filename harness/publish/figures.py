"""The figures README.md and the docs quote from published runs, generated
into them: each sits between `<!-- figure NAME -->` and `<!-- /figure -->`
(invisible where Markdown is shown), and `readme_tables` rewrites it from
the pages of docs/results, so that a quoted time or count is the one its
page gives. harness/tests/publish/test_docs.py checks that every marked
figure is what this module writes."""

from __future__ import annotations

import csv
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Callable

from . import calibration
from .page import elapsed, machine
from .published import ENV, Run, load_run
from ..analyse import questions, ranks, standings
from ..core.formatting import (fmt_bytes, fmt_count, fmt_elapsed, fmt_fixed, fmt_seconds, fmt_share,
                               fmt_share_fine, fmt_share_tenths, fmt_sig, fmt_whole)
from ..core import ladder
from ..core.metrics import METRICS
from ..core.variants import base_of
from ..core.workloads import RATE
from ..core.schema import Row, Status
from ..execute import loadgen
from ..plan.settings import duration
from ..plan.suites import load_suites
from ..present.report import ask_run, md_text
from ..record.rundir import read_env, read_runs

DOCS = ("README.md", "docs/usage.md", "docs/statistics.md", "docs/releases.md", "docs/protocol.md")
MARK = re.compile(r"<!-- figure ([\w-]+) -->(.*?)<!-- /figure -->", re.S)
RESULTS = Path("docs") / "results"
# Each first `./run.sh --quick` on a new machine that benchmarks/first_run.sh
# timed, a line each (it prints the line): the study's data. NEXT_RUNS: the
# same for a second `./run.sh --quick` in that clone (its builds and caches
# kept), timed with `/usr/bin/time -f "%e %U %S"`.
FIRST_RUNS = Path("docs") / "studies" / "first-run.tsv"
NEXT_RUNS = Path("docs") / "studies" / "next-run.tsv"
# The load generator's ceiling (docs/protocol.md): run directories of a
# rate ladder against a server that does next to nothing, the newest read.
CEILING_RUNS = Path("docs") / "studies" / "generator-ceiling"
# The generator this project used before (docs/protocol.md), measured the
# same way on the same machine, for comparison.
PREVIOUS_CEILING_RUNS = Path("docs") / "studies" / "generator-ceiling-previous"
# The generator alone on a quiet machine: where the seed004 ladder's top comes from.
QUIET_CEILING_RUNS = Path("docs") / "studies" / "generator-ceiling-quiet"
# The collection between passes at bounded's smallest N (docs/protocol.md):
# each collected runtime with and without it (IMPL[BENCH_COLLECT=0]),
# interleaved, the newest run read.
COLLECTION_RUNS = Path("docs") / "studies" / "collection"
# The sleeps' start times by size (run --adaptive-sleep's first runs,
# docs/usage.md): run directories of every runtime's sleeps, all read.
START_RUNS = Path("docs") / "studies" / "sleep-duration" / "start-growth"
DEFAULT_SUITE, CALIBRATE_SUITE, SEED004_SUITE = "default", "calibrate", "seed004"


def newest(root: Path, suite: str) -> Run | None:
    """The newest published run of a suite (pages by started_at)."""
    found = []
    for env_path in (root / RESULTS).glob(f"*/{ENV}"):
        env = read_env(env_path)
        if env.settings.suite == suite and (root / RESULTS / f"{env_path.parent.name}.md"
                                                   ).is_file():
            found.append((env.started_at or "", env_path.parent))
    return load_run(max(found)[1]) if found else None


def _standings(run: Run) -> str:
    settled, total = standings.settled_share(standings.standings(
        standings.judged(run.groups, run.env.settings)))
    return f"{settled:,} of {total:,}"


def _beyond_minimum(run: Run) -> str:
    """The runs --until-settled added to the suite's minimum (its repeat)."""
    least = int(run.env.settings.repeat or 0)
    extra = [len(g.rows) - least for g in standings.judged(run.groups, run.env.settings)
             if len(g.rows) > least]
    return f"{sum(extra):,} runs after the minimum of {least}, in {len(extra):,} configurations"


def _family(name: str) -> Callable[[Run], str]:
    """A family's settled verdicts, "193 of 460", as the page's summary counts them."""
    def settled(run: Run) -> str:
        asked = ask_run(run.groups, run.env)
        found = {family: (n, total) for family, n, total in asked.families()} if asked else {}
        n, total = found.get(name, (0, 0))
        return f"{n:,} of {total:,}"
    return settled


def _called_different(run: Run) -> str:
    found = calibration.comparisons(run.groups)
    different = sum(c.different for c in found)
    return f"{different} of {len(found)} ({fmt_share_fine(different / len(found) if found else 0.0)})"


def _ladder_top_kept(run: Run) -> str:
    """At the seed004 ladders' two highest rates (their suite parts', the
    bisected ones aside; every ladder's, at either wait): how many measured
    attempts the load generator kept its schedule in (every attempt is a
    row: ladder.GENERATOR_RETRIES)."""
    rates = {rate for p in load_suites()[SEED004_SUITE].parts
             for rate in p.params.get(RATE.name, [])}
    said = []
    for rate in sorted(rates)[-2:]:
        tried = [r for g in run.groups for r in g.rows
                 if r.rate == rate and r.status in (Status.OK, Status.INVALID)]
        late = sum(ladder.generator_limited(r) for r in tried)
        said.append(f"{len(tried) - late} of {len(tried)} attempts at {fmt_whole(rate)}")
    return md_text(f"{machine(run.env)}: ") + " and ".join(said)


# name -> (the suite whose newest published run it is read from, the figure)
FIGURES: dict[str, tuple[str, Callable[[Run], str]]] = {
    "default-date": (DEFAULT_SUITE, lambda run: str(run.env.started_at)[:10]),
    "default-elapsed": (DEFAULT_SUITE, lambda run: elapsed(run.env)),
    "default-machine": (DEFAULT_SUITE, lambda run: md_text(machine(run.env))),
    "default-standings": (DEFAULT_SUITE, _standings),
    "default-beyond-minimum": (DEFAULT_SUITE, _beyond_minimum),
    "default-pairs": (DEFAULT_SUITE, _family(questions.RANKINGS)),
    "default-claims": (DEFAULT_SUITE, _family(questions.CLAIMS_FAMILY)),
    "calibration-run": (CALIBRATE_SUITE, lambda run: md_text(
        f"{machine(run.env)}, run {run.env.run_id} of {str(run.env.started_at)[:10]}")),
    "calibration-different": (CALIBRATE_SUITE, _called_different),
    "seed004-top-kept": (SEED004_SUITE, _ladder_top_kept),
}


def _newest_measurements(root: Path, path: Path,
                         figure: str) -> list[tuple[str, dict[str, str], int]]:
    """Each machine's `./run.sh --quick` at the newest commit measured on it:
    (machine, its newest line, the slowest of that commit's seconds), newest
    machine first."""
    with open(root / path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        raise ValueError(f"figure {figure}: no measurement in {path}")
    newest_row: dict[str, dict[str, str]] = {}
    for row in rows:  # in the order measured: the last of a machine is its newest
        newest_row[row["machine"]] = row
    return [(machine_name, last, max(int(r["seconds"]) for r in rows if r["machine"] ==
                                     machine_name and r["commit"] == last["commit"]))
            for machine_name, last in sorted(newest_row.items(), key=lambda kv: kv[1]["date"],
                                             reverse=True)]


def first_run(root: Path) -> str:
    """The first `./run.sh --quick` on a new machine (FIRST_RUNS), with the
    day and commit measured."""
    said = []
    for machine_name, last, slowest in _newest_measurements(root, FIRST_RUNS, "first-run"):
        cpu, _, cores = machine_name.rpartition(", ")
        # the machine's name is a run's data (env.json): escaped, as the pages do
        said.append(md_text(f"{fmt_elapsed(slowest)} on a new {cores.removesuffix(' cores')}"
                            f"-core {cpu} ({last['date']}, commit {last['commit']})"))
    return " and ".join(said)


def next_run(root: Path) -> str:
    """The second, in the same clone (NEXT_RUNS): the machines only (the
    study gives days and commits)."""
    return " and ".join(
        md_text(f"{fmt_elapsed(slowest)} on the {machine_name.rpartition(', ')[0]}")
        for machine_name, _, slowest in _newest_measurements(root, NEXT_RUNS, "next-run"))


def _ceiling_steps(root: Path, folder: Path = CEILING_RUNS) -> tuple[str, list[Row]]:
    """The newest ceiling run: its machine and day, and its measured steps
    (those past a ladder's end were not run), by repeat and rate."""
    runs = sorted((root / folder).glob("*/runs.csv"))
    if not runs:
        raise ValueError(f"figure generator-ceiling: no run in {folder}")
    env = read_env(runs[-1].parent / ENV)
    steps = sorted((r for r in read_runs(runs[-1]).rows if r.status in (Status.OK, Status.INVALID)),
                   key=lambda r: (r.rep, r.rate or 0))
    return md_text(f"{machine(env)}, {str(env.started_at)[:10]}"), steps


def generator_ceiling(root: Path, folder: Path = CEILING_RUNS) -> str:
    """Each measured step of the newest ceiling run, a table row each."""
    said, steps = _ceiling_steps(root, folder)

    def late(row: Row) -> str:
        # to the generator's clock, interpolated: 10.01 ms is past the 10 ms limit
        return "" if row.gen_lag_p99_s is None else f"{fmt_sig(row.gen_lag_p99_s * 1000, 4)} ms"
    lines = [f"Measured on {said}:", "",
             "| ladder | offered (req/s) | answered (req/s) | generator busy | generator late, p99 | step |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r.rep} | {fmt_count(r.rate)} | {fmt_count(round(r.rps or 0))}"
              f"{f' ({fmt_count(r.dropped)} dropped)' if r.dropped else ''} | "
              f"{fmt_share(r.gen_busy) if r.gen_busy is not None else ''} | {late(r)} | "
              f"{r.status}{' (generator)' if r.status == Status.INVALID else ''} |" for r in steps]
    return "\n" + "\n".join(lines) + "\n"


def kept_rates(root: Path, folder: Path = CEILING_RUNS) -> tuple[set[int], list[int], list[int]]:
    """Of the newest ceiling run: the rates the generator kept in some
    ladder, those it kept in every one (ascending), and those it missed."""
    _, steps = _ceiling_steps(root, folder)
    kept = {r.rate for r in steps if r.status == Status.OK and r.rate is not None}
    every = [rate for rate in sorted(kept) if all(
        any(r.rep == rep and r.rate == rate and r.status == Status.OK for r in steps)
        for rep in {r.rep for r in steps})]
    missed = [r.rate for r in steps if r.status == Status.INVALID and r.rate is not None]
    return kept, every, missed


def generator_kept(root: Path, folder: Path = CEILING_RUNS) -> str:
    """The highest rate the generator kept in every ladder of the newest ceiling run,
    and the lowest it did not."""
    kept, every, missed = kept_rates(root, folder)
    if not missed:
        return f"every step, up to {fmt_count(max(kept))} requests a second" if kept else "no step"
    if not kept:
        return f"at no rate tried, missing it from {fmt_count(min(missed))} requests a second"
    if every and max(every) == max(kept):
        return (f"up to {fmt_count(max(kept))} requests a second in every ladder, and missed it "
                f"from {fmt_count(min(missed))}")
    return (f"up to {fmt_count(max(kept, default=0))} requests a second in some ladders, "
            f"{f'up to {fmt_count(max(every))} in every one' if every else 'no rate in every one'}"
            f", and missed it from {fmt_count(min(missed))}")


Medians = dict[tuple[str, int | None, int | None], tuple[tuple[float, float], tuple[float, float]]]


def _collection_medians(root: Path) -> tuple[str, Medians]:
    """The collection runs (COLLECTION_RUNS): the newest's machine and day,
    and per (runtime, N, buffer) the medians of the warm pass and of the
    peak RSS, (with the collection, without), from every run."""
    runs = sorted((root / COLLECTION_RUNS).glob("*/runs.csv"))
    if not runs:
        raise ValueError(f"figure collection: no run in {COLLECTION_RUNS}")
    env = read_env(runs[-1].parent / ENV)
    by: dict[tuple[str, int | None, int | None, bool], list[Row]] = {}
    for path in runs:
        for r in read_runs(path).rows:
            if r.status == Status.OK:
                base = base_of(r.impl)
                by.setdefault((base, r.n, r.buffer, r.impl != base), []).append(r)

    def medians(rows: list[Row]) -> tuple[float, float]:
        return (statistics.median(r.warm_iter_s or 0.0 for r in rows),
                statistics.median(r.peak_rss_bytes or 0 for r in rows))
    out: Medians = {}
    for impl, n, buffer, off in by:
        if off and (impl, n, buffer, False) in by:
            (warm_on, rss_on), (warm_off, rss_off) = (medians(by[(impl, n, buffer, False)]),
                                                      medians(by[(impl, n, buffer, True)]))
            out[(impl, n, buffer)] = ((warm_on, warm_off), (rss_on, rss_off))
    return md_text(f"{machine(env)}, {str(env.started_at)[:10]}"), out


def collection_table(root: Path) -> str:
    """Each runtime at N = 10, B = 1 with and without the collection."""
    said, medians = _collection_medians(root)
    runs = sorted((root / COLLECTION_RUNS).glob("*/runs.csv"))
    at_10 = [r for path in runs for r in read_runs(path).rows
             if (r.n, r.buffer, r.status) == (10, 1, "ok")]
    per_side = min(Counter(r.impl for r in at_10).values())
    passes = min(r.iterations or 0 for r in at_10)
    lines = [f"Measured on {said}, bounded at N = 10, B = 1, medians of {per_side} runs of "
             f"{passes} passes:",
             "", "| runtime | warm pass, collected before | not collected | × | "
             "peak RSS, collected | not collected |", "| --- | --- | --- | --- | --- | --- |"]
    for (impl, n, buffer), ((warm_on, warm_off), (rss_on, rss_off)) in sorted(medians.items()):
        if (n, buffer) == (10, 1):
            lines.append(f"| {md_text(impl)} | {fmt_seconds(warm_on)} | {fmt_seconds(warm_off)} | "
                         f"{fmt_fixed(warm_on / warm_off, 1)}× | {fmt_bytes(rss_on)} | "
                         f"{fmt_bytes(rss_off)} |")
    return "\n" + "\n".join(lines) + "\n"


def _ratio_range(medians: Medians, n: int, impls: set[str] | None = None,
                 rss: bool = False) -> str:
    """The runtimes' range at N of the warm pass with the collection over
    without it, or (rss) of the peak RSS without it over with it."""
    ratios = [off / on if rss else on / off
              for (impl, at, _), figures in medians.items()
              if at == n and (impls is None or impl in impls)
              for on, off in [figures[1 if rss else 0]]]
    return f"{fmt_fixed(min(ratios), 1)}-{fmt_fixed(max(ratios), 1)}×"


def collection_range(root: Path) -> str:
    """How much slower the warm pass was with the collection at N = 10,
    both buffers: the runtimes' range."""
    return _ratio_range(_collection_medians(root)[1], 10)


def collection_larger(root: Path) -> str:
    """The same at the larger sizes the runs measured (V8's apart), and the
    peak RSS without the collection over with it."""
    medians = _collection_medians(root)[1]
    v8 = {"nodejs", "deno"}
    return "; ".join(f"at N = {n:,}, {_ratio_range(medians, n)} (Node.js and Deno "
                     f"{_ratio_range(medians, n, v8)}), and the peak RSS without it "
                     f"{_ratio_range(medians, n, rss=True)} with it"
                     for n in sorted({n for _, n, _ in medians if n is not None and n != 10}))


def start_growth(root: Path) -> str:
    """The most the tasks' start time grew faster than the tasks from one
    size to the next tenfold, over the runtimes and runs of START_RUNS
    (each size's longest start): what workloads.FIRST_START_GROWTH covers."""
    runs = sorted((root / START_RUNS).glob("*/runs.csv"))
    if not runs:
        raise ValueError(f"figure start-growth: no run in {START_RUNS}")
    starts: dict[tuple[str, str, int], float] = {}
    for path in runs:
        for r in read_runs(path).rows:
            if r.status == Status.OK and r.n and r.spawn_s:  # the folder holds sleeps alone
                key = (r.run_id, r.impl, r.n)
                starts[key] = max(starts.get(key, 0.0), r.spawn_s)
    growth = [(start / (starts[(run, impl, n // 10)] * 10), impl, n)
              for (run, impl, n), start in starts.items()
              if n % 10 == 0 and (run, impl, n // 10) in starts]
    if not growth:
        raise ValueError(f"figure start-growth: no runtime at two sizes a tenfold apart "
                         f"in {START_RUNS}")
    ratio, impl, n = max(growth)
    env = read_env(runs[-1].parent / ENV)
    return (f"{fmt_fixed(ratio, 2)} times faster than the tasks per tenfold ({md_text(impl)}'s, "
            f"from {n // 10:,} to {n:,} tasks; {len(growth)} steps of {len({i for _, i, _ in growth})} "
            f"runtimes on {md_text(machine(env))}, {str(env.started_at)[:10]})")


# statistics.md's resampled A/A of the borrowed test: every committed run
# directory with its runs, pooled per figure.
AA_FOLDERS = (RESULTS, Path("docs") / "studies" / "allocation")
AA_WORST_LEAST = 100  # splits a directory needs for its worst-run column


def resampled_aa(root: Path) -> str:
    """ranks.resampled_aa over every committed run directory with runs.csv,
    pooled per figure at 1, 2 and 3 runs a side, and the worst directory at
    2 a side among those with AA_WORST_LEAST splits or more."""
    dirs = [d for folder in AA_FOLDERS if (root / folder).is_dir()
            for d in sorted((root / folder).iterdir()) if (d / "runs.csv").is_file()]
    pooled: dict[tuple[str, int], list[int]] = {}
    worst: dict[str, tuple[float, int, int]] = {}
    for d in dirs:
        groups = load_run(d).groups
        for n in (1, 2, 3):
            for f in ranks.resampled_aa(groups, n, trials=5):
                tally = pooled.setdefault((f.metric, n), [0, 0])
                tally[0], tally[1] = tally[0] + f.ahead, tally[1] + f.comparisons
                if n == 2 and f.comparisons >= AA_WORST_LEAST and f.rate > worst.get(
                        f.metric, (0.0, 0, 0))[0]:
                    worst[f.metric] = (f.rate, f.ahead, f.comparisons)

    def cell(ahead: int, of: int) -> str:
        return f"{ahead} of {fmt_whole(of)} ({fmt_share_tenths(ahead / of)})" if of else "none"
    lines = [f"{len(dirs)} committed run directories with runs.csv (docs/results and",
             "docs/studies/allocation), the share of splits called ahead:", "",
             "| figure | 1 run a side | 2 runs a side | 3 runs a side | worst run, 2 a side |",
             "| --- | --- | --- | --- | --- |"]
    # the figures some split asked, in their declaration's order (core/metrics.py)
    for metric in [m for m in METRICS if any(pooled.get((m, n), [0, 0])[1] for n in (1, 2, 3))]:
        rate, ahead, of = worst.get(metric, (0.0, 0, 0))
        # no directory with AA_WORST_LEAST splits at 2 a side: no worst to name
        lines.append(f"| {METRICS[metric].label} | " + " | ".join(
            cell(*pooled.get((metric, n), [0, 0])) for n in (1, 2, 3))
            + (f" | {fmt_share_tenths(rate)} ({ahead} of {of}) |" if of else " | none |"))
    return "\n" + "\n".join(lines) + "\n"


def default_budget(root: Path) -> str:
    """The default suite's budget of runs, as suites.toml gives it (45m)."""
    budget = load_suites()[DEFAULT_SUITE].budget
    duration(budget, "suites.toml: default: budget")  # one the suite's reader takes
    return str(budget)


# name -> the figure, from the repository's committed data other than a run
# (or its declarations: the default suite's budget, the load generator's version)
STUDIES: dict[str, Callable[[Path], str]] = {"first-run": first_run, "next-run": next_run,
                                             "generator-ceiling": generator_ceiling,
                                             "generator-kept": generator_kept,
                                             "generator-ceiling-previous": lambda root:
                                             generator_ceiling(root, PREVIOUS_CEILING_RUNS),
                                             "generator-kept-previous": lambda root:
                                             generator_kept(root, PREVIOUS_CEILING_RUNS),
                                             "generator-ceiling-quiet": lambda root:
                                             generator_ceiling(root, QUIET_CEILING_RUNS),
                                             "generator-kept-quiet": lambda root:
                                             generator_kept(root, QUIET_CEILING_RUNS),
                                             "collection-small": collection_table,
                                             "collection-range": collection_range,
                                             "collection-larger": collection_larger,
                                             "start-growth": start_growth,
                                             "default-budget": default_budget,
                                             "resampled-aa": resampled_aa,
                                             "loadgen-version": lambda root: loadgen.VERSION}


def values(root: Path, names: set[str]) -> dict[str, str]:
    """Each named figure as the newest published run of its suite gives it
    (or, for a study's, its data)."""
    unknown = names - set(FIGURES) - set(STUDIES)
    if unknown:
        raise ValueError(f"no such figure: {', '.join(sorted(unknown))} (figures.FIGURES, "
                         "figures.STUDIES)")
    runs: dict[str, Run | None] = {}
    out = {name: STUDIES[name](root) for name in names & set(STUDIES)}
    for name in sorted(names - set(STUDIES)):
        suite, figure = FIGURES[name]
        if suite not in runs:
            runs[suite] = newest(root, suite)
        run = runs[suite]
        if run is None:
            raise ValueError(f"figure {name}: no published run of the {suite} suite")
        out[name] = figure(run)
    return out


def rewritten(root: Path) -> dict[Path, str]:
    """Every doc of DOCS with its marked figures as generated (those that
    have a marker)."""
    texts = {root / doc: (root / doc).read_text() for doc in DOCS if (root / doc).is_file()}
    found = values(root, {m[1] for text in texts.values() for m in MARK.finditer(text)})
    return {path: MARK.sub(lambda m: f"<!-- figure {m[1]} -->{found[m[1]]}<!-- /figure -->", text)
            for path, text in texts.items() if MARK.search(text)}
