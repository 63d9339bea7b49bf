"""What a run's rows say: group statistics, ratios to the best, warnings.

Pure functions over the rows rundir reads: no rendering, no files written.
Every raw row is kept; only rows with status ``ok`` feed the statistics, and
the other statuses are counted per group so failures stay visible.
"""

from __future__ import annotations

import math
import os
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable
from weakref import WeakKeyDictionary

from ..core.envinfo import instability
from ..core.ladder import CEILING_SERVERS, ceilings, ladder_rows, past_end, whole
from ..core.formatting import fmt_count, fmt_duration, fmt_percent, fmt_share, fmt_share_tenths
from ..execute.machineload import LOADED_FRAC
from ..core.metrics import COLD, METRICS, RSS, SUSTAINED, WARM
from ..core.formatting import fmt_metric
from ..core.presentation import PRESENTATIONS, TIME_HEADLINE
from ..record.rundir import RunDir, Table
from ..core.schema import ConfigKey, Env, Row, Status
from ..core.stats import Block, Interval, blocked_ratio_interval, median_interval
from ..core.workloads import CPUS, MACHINE, WORKLOADS, Param, workload_rank

# A figure is noisy when its confidence interval's larger half-width
# (Interval.relative_width) exceeds this fraction of its median. The
# interval, not the stdev: it is what the report prints, its width does not
# assume normal data, and with few runs it is the min-max range.
NOISY_WIDTH = 0.10
# Outlier rule: a value is an outlier when it lies outside
# median ± OUTLIER_K · max(1.4826 · MAD, MAD_FLOOR · |median|).
# 1.4826 · MAD estimates the stdev of normal data without being pulled by the
# outlier itself; the floor keeps identical repeats (MAD = 0, common for peak
# RSS) from turning a small wobble into an "outlier": a value must be at
# least 15% off the median to be flagged.
OUTLIER_K = 3.0
MAD_SCALE = 1.4826
MAD_FLOOR = 0.05


def is_loaded(row: Row) -> bool:
    frac = row.other_cpu_frac
    return frac is not None and frac > LOADED_FRAC


@dataclass(frozen=True)
class Summary:
    count: int
    median: float
    min: float
    max: float
    mean: float
    stdev: float | None  # sample stdev; None with a single value
    values: tuple[float, ...] = ()  # the ok runs' values, in run order
    interval: Interval | None = None  # the median's confidence interval (stats.py); None: 1 run

    @property
    def noisy(self) -> bool:
        """The median's interval reaches further than NOISY_WIDTH of it."""
        return self.interval is not None and self.interval.relative_width > NOISY_WIDTH


def summarize(values: Iterable[float]) -> Summary | None:
    vals = [float(v) for v in values]
    if not vals:
        return None
    return Summary(
        count=len(vals),
        median=statistics.median(vals),
        min=min(vals),
        max=max(vals),
        mean=statistics.fmean(vals),
        stdev=statistics.stdev(vals) if len(vals) > 1 else None,
        values=tuple(vals),
        interval=median_interval(vals),
    )


def outlier_mask(values: list[float]) -> list[bool]:
    """Which values lie outside median ± OUTLIER_K · robust spread (see top)."""
    if len(values) < 3:
        return [False] * len(values)  # two points cannot outvote each other
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    spread = max(MAD_SCALE * mad, MAD_FLOOR * abs(med))
    return [abs(v - med) > OUTLIER_K * spread for v in values]


@dataclass
class Group:
    impl: str
    workload: str
    n: int | None
    buffer: int | None
    language: str
    runtime: str
    rows: list[Row]  # every raw row of the group, failures included
    params: tuple[Param, ...] = ()  # the workload's own dimensions (ConfigKey.params)
    # per row (in the order of rows): the figures it is an outlier in
    row_outliers: list[list[str]] = field(default_factory=list)
    metrics: dict[str, Summary] = field(default_factory=dict)
    mem_per_task_bytes: float | None = None  # None: not fitted, or below resolution
    mem_points: tuple[int, ...] = ()  # the N the slope was fitted over
    mem_interval: Interval | None = None  # the slope's interval (slope_interval); None: a 1-run N
    mem_below_resolution: bool = False  # a slope was fitted but is not a measurement

    @property
    def key(self) -> ConfigKey:
        return ConfigKey(self.impl, self.workload, self.n, self.buffer, self.params)

    @property
    def label(self) -> str:
        return self.key.label

    def param(self, name: str) -> Any:
        return self.key.param(name)

    @property
    def series(self) -> str:
        """The implementation as a plot's line or a summary's bar: its id,
        with the CPU count and machine where the run set them (--cpus,
        harness merge)."""
        cpus, machine = self.param(CPUS.name), self.param(MACHINE.name)
        return (self.impl + (f" ({cpus} CPU{'s' if cpus != 1 else ''})" if cpus else "")
                + (f" @{machine}" if machine else ""))

    @property
    def status_counts(self) -> Counter[Status]:
        return Counter(r.status for r in self.rows)

    @property
    def ok(self) -> int:
        return self.status_counts[Status.OK]

    @property
    def statuses(self) -> str:
        """e.g. "2 ok, 1 oom": ok first, then the failures by frequency."""
        counts = self.status_counts
        order = sorted(counts, key=lambda s: (s != Status.OK, -counts[s], s))
        return ", ".join(f"{counts[s]} {s}" for s in order)

    @property
    def failure(self) -> Status | None:
        """The most frequent non-ok status, when the group has no ok row."""
        if self.ok:
            return None
        counts = self.status_counts
        return max(counts, key=lambda s: (counts[s], s)) if counts else None

    @property
    def noisy(self) -> list[str]:
        return [name for name, s in self.metrics.items() if s.noisy]

    @property
    def loaded(self) -> int:
        """ok rows that ran while other processes held the CPU."""
        return sum(1 for r in self.rows if r.status == Status.OK and is_loaded(r))

    @property
    def outliers(self) -> int:
        return sum(1 for marked in self.row_outliers if marked)

    def median(self, metric: str) -> float | None:
        s = self.metrics.get(metric)
        return s.median if s else None

    def interval(self, metric: str) -> Interval | None:
        """The median's confidence interval; None with fewer than two ok runs."""
        s = self.metrics.get(metric)
        return s.interval if s else None

    def values(self, metric: str) -> tuple[float, ...]:
        s = self.metrics.get(metric)
        return s.values if s else ()

    def by_node(self, metric: str) -> dict[str | None, tuple[float, ...]]:
        """The ok runs' values of metric by the node that ran them (runs.csv
        `node`; None outside a cluster run), in run order."""
        out: dict[str | None, list[float]] = defaultdict(list)
        for r in self.rows:
            if r.status == Status.OK and (value := r.figure(metric)) is not None:
                out[r.node].append(float(value))
        return {node: tuple(values) for node, values in out.items()}

    @property
    def nodes(self) -> set[str | None]:
        """The nodes its ok runs ran on ({None} outside a cluster run)."""
        return {r.node for r in self.rows if r.status == Status.OK}


def group_sort_key(key: ConfigKey) -> tuple:
    """Reading order: workload (declaration order), N, buffer, the
    workload's own dimensions, impl."""
    return (workload_rank(key.workload), key.sort_key, key.impl)


def group_runs(rows: list[Row]) -> list[Group]:
    """Groups by (impl, workload, n, buffer) with statistics, outlier flags
    (Group.row_outliers: the metrics each row is an outlier in) and memory
    per task. Rows are never dropped; a rate ladder's steps add a group per
    ladder (core/ladder.py: its sustained rate and knee, a value a repeat)."""
    by_key: dict[ConfigKey, list[Row]] = defaultdict(list)
    for row in rows + ladder_rows(rows):
        by_key[ConfigKey.of(row)].append(row)

    groups = []
    for key in sorted(by_key, key=group_sort_key):
        members = by_key[key]
        first = members[0]
        group = Group(key.impl, key.workload, key.n, key.buffer, language=first.language or "",
                      runtime=first.runtime or "", rows=members, params=key.params)
        group.row_outliers = [[] for _ in members]
        marks = {id(row): marked for row, marked in zip(members, group.row_outliers)}
        ok_rows = [r for r in members if r.status == Status.OK]
        for metric in METRICS:
            have = [r for r in ok_rows if r.figure(metric) is not None]
            summary = summarize(r.figure(metric) for r in have)
            if summary is None:
                continue
            group.metrics[metric] = summary
            for row, out in zip(have, outlier_mask([r.figure(metric) for r in have])):
                if out:
                    marks[id(row)].append(metric)
        groups.append(group)
    _memory_per_task(groups)
    return groups


# Memory per task is printed only when the RSS growth it rests on exceeds
# this floor and its interval lies wholly above zero (docs/statistics.md).
MEM_RESOLUTION_BYTES = 1 << 20
BELOW_RESOLUTION = "below resolution"


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y over x."""
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    return (sum((x - mx) * (y - my) for x, y in points)
            / sum((x - mx) ** 2 for x, _ in points))


def slope_interval(points: list[tuple[float, Interval | None]], estimate: float) -> Interval | None:
    """The least-squares slope's interval when each y (a median) ranges over
    its own interval: the slope is sum(w_i * y_i) with w_i = (x_i - mean x) /
    Sxx, so its extremes take each y's low bound where w_i > 0 and its high
    bound where w_i < 0 (the reverse for the high end). If every median's
    interval holds its true median, this holds the true slope; the groups'
    runs are independent, so its confidence is the product of theirs. None
    when a y has no interval (one run)."""
    if any(iv is None for _, iv in points):
        return None
    mx = statistics.fmean(x for x, _ in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    low = high = 0.0
    for x, iv in points:
        w = (x - mx) / sxx
        low += w * (iv.low if w > 0 else iv.high)
        high += w * (iv.high if w > 0 else iv.low)
    return Interval(estimate, low, high, math.prod(iv.confidence for _, iv in points),
                    tuple(iv.runs[0] for _, iv in points))


def _memory_per_task(groups: list[Group]) -> None:
    """Bytes per task: the least-squares slope of the median peak RSS over N,
    for the same impl, workload and buffer (a channel's buffer is memory
    too), fitted over every N of the run up to this one, with its interval
    (slope_interval). A difference at a single small N is mostly noise (it
    gave negative bytes per task), so the figure is kept only when the
    growth over the fitted N exceeds MEM_RESOLUTION_BYTES and the slope's
    interval lies wholly above zero; otherwise the group is marked
    mem_below_resolution and has no figure to rank."""
    series: dict[tuple, list[Group]] = defaultdict(list)
    for g in groups:
        if g.n is not None and g.median(RSS) is not None:
            series[(g.impl, g.workload, g.buffer, g.params)].append(g)
    for members in series.values():
        members.sort(key=lambda g: g.n)
        for i in range(1, len(members)):
            used = members[:i + 1]
            per_task = slope([(g.n, g.median(RSS)) for g in used])
            growth = per_task * (used[-1].n - used[0].n)
            iv = slope_interval([(g.n, g.interval(RSS)) for g in used], per_task)
            if growth > MEM_RESOLUTION_BYTES and (iv is None or iv.low > 0):
                members[i].mem_per_task_bytes = per_task
                members[i].mem_points = tuple(g.n for g in used)
                members[i].mem_interval = iv
            else:
                members[i].mem_below_resolution = True


def node_blocks(old: Group, new: Group, metric: str) -> list[Block] | None:
    """The two groups' runs of metric paired node by node (the blocks of
    stats.blocked_ratio_interval), where their runs carry more than one
    node: a node that is slower slows both sides of its block alike, and
    the within-node ratios cancel it. None where the runs carry one node
    (or none: not a cluster run), whose runs are pooled as ever, or where
    the two share no node, whose effect then nothing can cancel. A node
    that ran one side only pairs nothing."""
    a, b = old.by_node(metric), new.by_node(metric)
    if len(a.keys() | b.keys()) < 2 or not a.keys() & b.keys():
        return None
    return [(a[node], b[node]) for node in a if node in b]


def ratio_of(old: Group, new: Group, metric: str) -> tuple[float, Interval | None]:
    """new / old for metric: the Hodges–Lehmann estimate with its exact
    interval, within nodes where the runs carry several (node_blocks); the
    ratio of the medians where a side has a single run (no interval)."""
    blocks = node_blocks(old, new, metric) or [(old.values(metric), new.values(metric))]
    iv = blocked_ratio_interval(blocks)
    return (iv.estimate if iv is not None else new.median(metric) / old.median(metric)), iv


def several_nodes(groups: Iterable[Group], metric: str) -> bool:
    """Whether the groups' runs of metric ran on more than one node."""
    return len({node for g in groups for node in g.by_node(metric)}) > 1


def iter_metric(groups: Iterable[Group]) -> str:
    """The per-iteration time to rank by: warm when every measured group has
    one (K > 1), else cold, so a comparison never mixes the two."""
    measured = [g for g in groups if g.metrics]
    if measured and all(g.median(WARM) is not None for g in measured):
        return WARM
    return COLD


@dataclass(frozen=True)
class Ranking:
    """Every group of a comparable set against the best one (the lowest
    median) for one metric, lower is better."""
    ratios: dict[ConfigKey, float]  # the ratio's estimate (its interval's where it has one)
    intervals: dict[ConfigKey, Interval | None]  # None: the best itself, or a side of one run
    best: ConfigKey | None
    settled: bool  # every other group's interval lies wholly above 1: the best is the best


def rank(groups: list[Group], metric: str) -> Ranking:
    """Each group's ok values against the best group's (ratio_of: the
    Hodges-Lehmann ratio with its exact interval, within nodes where the
    runs carry several). The best is the lowest median; with several nodes,
    the lowest ratio to that one: a median carries the effect of the nodes
    its runs fell on, a within-node ratio does not."""
    measured = [g for g in groups if g.median(metric) is not None]
    if not measured:
        return Ranking({}, {}, None, False)
    best = min(measured, key=lambda g: (g.median(metric), g.impl))
    if best.median(metric) <= 0:
        return Ranking({}, {}, None, False)
    if several_nodes(measured, metric):
        lowest = best
        best = min(measured, key=lambda g: (
            1.0 if g is lowest else ratio_of(lowest, g, metric)[0], g.impl))
    ratios: dict[ConfigKey, float] = {best.key: 1.0}
    intervals: dict[ConfigKey, Interval | None] = {best.key: None}
    for g in measured:
        if g is not best:
            ratios[g.key], intervals[g.key] = ratio_of(best, g, metric)
    others = [iv for key, iv in intervals.items() if key != best.key]
    settled = bool(others) and all(iv is not None and iv.side(1.0) == "above" for iv in others)
    return Ranking(ratios, intervals, best.key, settled)


def ratios_to_best(groups: list[Group], metric: str) -> dict[ConfigKey, float]:
    """Ratio to the best median's group (lower is better; rank's estimates);
    groups without the metric get no entry."""
    return rank(groups, metric).ratios


def _quotient_interval(num: Interval | None, den: Interval | None) -> Interval | None:
    """num / den for two independent positive intervals (two memory-per-task
    slopes): the quotient of the estimates, [num.low / den.high, num.high /
    den.low], at the product of their confidences."""
    if num is None or den is None or num.low <= 0 or den.low <= 0:
        return None
    return Interval(num.estimate / den.estimate, num.low / den.high, num.high / den.low,
                    num.confidence * den.confidence, num.runs + den.runs)


SetKey = tuple[str, int | None, int | None, tuple[Param, ...]]


def comparable_sets(groups: list[Group]) -> dict[SetKey, list[Group]]:
    """Groups that compete: same workload, n, buffer and the workload's own
    dimensions, different impls."""
    sets: dict[SetKey, list[Group]] = defaultdict(list)
    for g in groups:
        sets[(g.workload, g.n, g.buffer, g.params)].append(g)
    return dict(sets)


SETUP_STATUSES = (Status.SKIPPED, Status.BUILD_FAILED)  # failures of the language, not of one run


class Ranks(defaultdict):
    """Per group (ConfigKey), each kind of ratio ("time", "rss", "floor") as
    its estimate, a float: ranks[key].get("time"). Beside it, the same keys
    in `intervals` (kind -> Interval, or None: no interval) and in `best`
    (kind -> whether this group's win is settled, for the best group of its
    set only)."""

    def __init__(self) -> None:
        super().__init__(dict)
        self.intervals: defaultdict[ConfigKey, dict[str, Interval | None]] = defaultdict(dict)
        self.best: defaultdict[ConfigKey, dict[str, bool]] = defaultdict(dict)

    def interval(self, key: ConfigKey, kind: str) -> Interval | None:
        return self.intervals.get(key, {}).get(kind)

    def winner(self, key: ConfigKey, kind: str) -> bool | None:
        """True: the settled best of its set; False: the best, not settled;
        None: not the best (or alone in its set)."""
        return self.best.get(key, {}).get(kind)

    def _add(self, kind: str, ranking: Ranking) -> None:
        for key, r in ranking.ratios.items():
            self[key][kind] = r
            self.intervals[key][kind] = ranking.intervals.get(key)
        if ranking.best is not None and len(ranking.ratios) > 1:  # a winner needs a rival
            self.best[ranking.best][kind] = ranking.settled


def ratios(groups: list[Group], floor: Iterable[str] = ()) -> Ranks:
    """Per group: time ("time") and peak RSS ("rss") relative to the best
    implementation at the same workload, N and buffer, each with its
    interval (rank); a time ratio only where the workload's presentation
    ranks by time. Where the set has a floor implementation (impls.toml
    `floor = true`), "floor" is the group's iteration time (the same
    multiple per hop or per task) over the floor's (ratio_of), or, for a
    workload read for memory, its memory per task over the
    floor's (_quotient_interval); a slope below resolution gets none."""
    out = Ranks()
    floors = set(floor)
    for (workload, *_), members in comparable_sets(groups).items():
        presented = PRESENTATIONS.get(workload)
        timed = presented is None or presented.time_ratio
        if timed:
            out._add("time", rank(members, iter_metric(members)))
        out._add("rss", rank(members, RSS))
        base = next((g for g in members if g.impl in floors), None)
        if base is None:
            continue
        if timed:
            metric = iter_metric(members)
            unit = base.median(metric)
            if unit is None or unit <= 0:
                continue
            for g in members:
                if g.median(metric) is None:
                    continue
                out[g.key]["floor"], out.intervals[g.key]["floor"] = (
                    (1.0, None) if g is base else ratio_of(base, g, metric))
        else:
            unit = base.mem_per_task_bytes
            if unit is None or unit <= 0:
                continue
            for g in members:
                if g.mem_per_task_bytes is None:
                    continue
                iv = None if g is base else _quotient_interval(g.mem_interval, base.mem_interval)
                out[g.key]["floor"] = 1.0 if g is base else (
                    iv.estimate if iv is not None else g.mem_per_task_bytes / unit)
                out.intervals[g.key]["floor"] = iv
    return out


def headline(workload: str) -> tuple[str, ...]:
    """The metrics a workload is read for (its presentation's)."""
    presented = PRESENTATIONS.get(workload)
    return presented.headline if presented else TIME_HEADLINE


def capacity_note(g: Group) -> str | None:
    """A rendezvous asked for (B = 0) but run at another capacity, which the
    program reports (docs/protocol.md): say so next to the figure."""
    caps = {r.capacity for r in g.rows if r.status == Status.OK} - {None, g.buffer}
    if g.buffer is None or not caps:
        return None
    return f"ran at capacity {', '.join(str(c) for c in sorted(caps))}"


def _by_workload(groups: list[Group]) -> dict[str, list[Group]]:
    out: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        out[g.workload].append(g)
    return out


def choice_params(g: Group) -> tuple:
    """The workload's own text dimensions (http's style)."""
    declared = {d.name: d for d in WORKLOADS[g.workload].dimensions} \
        if g.workload in WORKLOADS else {}
    return tuple((name, v) for name, v in g.params
                 if name in declared and declared[name].choices and v is not None)


def by_design(g: Group, workload_groups: Iterable[Group]) -> bool:
    """A skipped configuration of an implementation that ran this workload
    in other configurations: one it cannot have by design (a server's
    style it lacks, its README says why), not a failure; nor one not run for
    a smaller size's failure (Row.outgrown_at)."""
    return (all(r.status == Status.SKIPPED and not not_run_by_rule(r) for r in g.rows)
            and any(o.impl == g.impl and o.ok for o in workload_groups))


def not_run_by_rule(r: Row) -> bool:
    """A row the run chose not to run: a ladder's step past its end, or a
    size after a smaller one's failure (counted in the notes, not a skip)."""
    return past_end(r) or r.outgrown_at is not None or r.expected_s is not None


def design_notes(groups: list[Group]) -> list[str]:
    """One line per implementation on what it skipped by design: a note for
    the reader, not a warning (warnings() leaves these out)."""
    designed: dict[str, list[str]] = defaultdict(list)
    for members in _by_workload(groups).values():
        for g in members:
            if by_design(g, members):
                choice = " ".join(f"{k}={v}" for k, v in choice_params(g))
                designed[g.impl].append(f"{g.workload} {choice or g.key.settings}".strip())
    return [f"{impl} has no {' or '.join(sorted(set(where)))}, by design "
            f"(skipped; its README says why)." for impl, where in sorted(designed.items())
            ] + outgrown_notes(groups) + dear_notes(groups) + ladder_notes(groups)


def outgrown_at(g: Group) -> str | None:
    """The smaller size whose failure kept g from running (Row.outgrown_at)."""
    return next((r.outgrown_at for r in g.rows if r.outgrown_at is not None), None)


def too_dear_s(g: Group) -> float | None:
    """The seconds g's first run was expected to take when the budget's rule
    kept it from running (Row.expected_s)."""
    return next((r.expected_s for r in g.rows if r.expected_s is not None), None)


def dear_notes(groups: list[Group]) -> list[str]:
    """One line per configuration whose first run was not started for its
    expected cost (Row.expected_s, sequential.Budgeted.too_dear)."""
    return [f"{g.impl} {g.workload} {g.key.settings} not run: expected to take at least "
            f"{fmt_duration(expected)} a run, more than its share of the budget (--budget)."
            for g in groups if not g.ok and (expected := too_dear_s(g)) is not None]


def outgrown_notes(groups: list[Group]) -> list[str]:
    """One line per configuration family whose larger sizes were not run
    for a smaller one's failure (Row.outgrown_at, sequential.outgrown)."""
    after: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for g in groups:
        smaller = outgrown_at(g)
        if smaller is not None and not g.ok:
            after[(g.impl, g.workload, smaller)].append(g.key.settings)
    return [f"{impl} {workload} not run at {', '.join(sizes)}: it failed at {smaller}, by a "
            f"limit that grows with size (--until-settled; the runs' errors say how)."
            for (impl, workload, smaller), sizes in sorted(after.items())]


def bound_from_below(g: Group, metric: str) -> bool:
    """Whether a repeat's value of this figure is a bound from below, not
    the server's: a ladder's sustained rate at its top step or below a step
    the generator could not keep (core/ladder.py). Such a value may be
    beaten by the server, so it can show a lead over it but no lead of it
    over another, nor a tie."""
    return metric == SUSTAINED and any(r.status == Status.OK and r.ladder_top for r in g.rows)


def ladder_notes(groups: list[Group]) -> list[str]:
    """Where the rate ladders stopped measuring: the steps not run past a
    saturated or failed one, the generator's ceilings the run measured
    (ladder.ceilings), and the ladders sustained up to their top step
    or to a step the generator could not keep, whose sustained rate is then
    a bound from below, not the server's."""
    out = []
    for workload, members in _by_workload(groups).items():
        skipped = sum(past_end(r) for g in members for r in g.rows)
        topped = sorted({_short(g) for g in members for r in g.rows
                         if r.status == Status.OK and r.ladder_top})
        if skipped:
            out.append(f"{workload}: {skipped} rate ladder step{'s' if skipped != 1 else ''} not "
                       f"run: a ladder stops, in each repeat, at its first saturated or failed "
                       f"step, or at the generator's ceiling the run measured (the rows of "
                       f"the steps above are kept, skipped, and name why); "
                       f"latency past saturation is not measured.")
        for load, ceiling in sorted(ceilings(r for g in members for r in g.rows).items(),
                                    key=lambda c: c[0].sort_key):
            out.append(f"{workload} {load.settings}: the load generator's ceiling in this run, "
                       f"{fmt_count(ceiling)} requests a second: it could not keep that rate, "
                       f"or one below, in any attempt in the ladders of {CEILING_SERVERS} "
                       f"servers or more, so no later ladder under this load ran a step there "
                       f"or above (each refined up to it instead, its sustained rate a bound "
                       f"from below).")
        if topped:
            out.append(f"{workload}: sustained up to the ladder's top step, or to the step "
                       f"below one where the load generator could not keep its schedule, so "
                       f"the sustained rate is a bound from below (no higher rate measured "
                       f"the server): {'; '.join(topped)}.")
    return out


def warnings(groups: list[Group], env: Env, notes: Iterable[str] = ()) -> list[str]:
    """What a reader must know before trusting the tables, most important first."""
    return (list(notes) + _env_warnings(env) + _setup_warnings(groups)
            + _rss_method_warnings(groups) + _load_warnings(groups) + _failure_warnings(groups)
            + _noise_warnings(groups) + until_ci_warnings(groups, env)
            + _outlier_warnings(groups))


def _env_warnings(env: Env) -> list[str]:
    """An unfinished run, a dirty tree, a machine state that makes timings less stable."""
    out = []
    if env and not env.finished_at:
        out.append("The run did not finish (env.json has no finished_at): figures are partial.")
    if env.git.get("dirty"):
        out.append("The working tree was dirty: the code measured is not exactly the commit shown.")
    # pyperf's checks of the machine (envinfo.machine_state), named only where they apply
    invocations = env.invocations or [{}]
    for reason in instability(env.machine_state, invocations[-1].get("steal_frac")):
        out.append(f"The machine's state makes timings less stable: {reason}.")
    return out


def _setup_warnings(groups: list[Group]) -> list[str]:
    """Languages that never ran: one line per impl, not one per group. A skip
    by design (design_notes) is not among them: nothing to act on."""
    setup: dict[tuple[str, str], str] = {}
    sets = _by_workload(groups)
    for g in groups:
        if by_design(g, sets[g.workload]):
            continue
        for r in g.rows:
            if r.status in SETUP_STATUSES and not not_run_by_rule(r):
                setup.setdefault((g.impl, r.status), r.error or "no reason recorded")
    return [f"{impl}: {status} ({error})." for (impl, status), error in sorted(setup.items())]


def _rss_method_warnings(groups: list[Group]) -> list[str]:
    """The groups whose peak RSS was measured otherwise than the run's usual way."""
    methods = Counter(r.peak_rss_method for g in groups for r in g.rows
                      if r.status == Status.OK and r.peak_rss_method)
    if len(methods) < 2:
        return []
    out = []
    usual = methods.most_common(1)[0][0]
    for g in groups:
        odd = {r.peak_rss_method for r in g.rows if r.status == Status.OK
               and r.peak_rss_method and r.peak_rss_method != usual}
        if odd:
            out.append(f"{g.label}: peak RSS measured by {', '.join(sorted(odd))}, not {usual}.")
    return out


def _load_warnings(groups: list[Group]) -> list[str]:
    """The ok runs that ran under load; the groups whose capacity a runtime lacks."""
    out = []
    ok_rows = [r for g in groups for r in g.rows if r.status == Status.OK and not whole(r)]
    loaded = [r for r in ok_rows if is_loaded(r)]
    if loaded:
        worst = max(loaded, key=lambda r: r.other_cpu_frac)
        out.append(f"{len(loaded)} of {len(ok_rows)} ok runs ran under load (other processes "
                   f"used over {fmt_share(LOADED_FRAC)} of the CPU; the most: "
                   f"{fmt_share(worst.other_cpu_frac)} during {ConfigKey.of(worst).label} rep "
                   f"{worst.rep}): their timings are marked in the tables.")
    for g in groups:
        if (note := capacity_note(g)) is not None:
            out.append(f"{g.label}: {note} (the runtime has no channel of capacity {g.buffer}).")
    return out


def _failure_warnings(groups: list[Group]) -> list[str]:
    """Each group's failed runs and their errors (groups come in reading
    order, group_sort_key; failures first: they matter most)."""
    out = []
    for g in groups:
        failed = [r for r in g.rows if r.status not in (Status.OK, *SETUP_STATUSES)]
        if failed:
            errors = sorted({r.error or "no reason recorded" for r in failed})
            out.append(f"{g.label}: {g.statuses} — {'; '.join(errors)}.")
    return out


def _noise_warnings(groups: list[Group]) -> list[str]:
    """Noise in the figures each workload is read for, one line per
    workload; the tables mark every other noisy cell with ⚠."""
    by_workload: dict[str, list[str]] = {}
    totals: Counter[str] = Counter(g.workload for g in groups if g.ok)
    for g in groups:
        noisy = [m for m in g.noisy if m in headline(g.workload)]
        if noisy:
            spread = ", ".join(
                f"{METRICS[m].label} ±{fmt_share(g.metrics[m].interval.relative_width)}"
                for m in noisy)
            by_workload.setdefault(g.workload, []).append(f"{_short(g)} ({spread})")
    return [f"{workload}: {len(entries)} of {totals[workload]} groups are noisy "
            f"(confidence interval reaching over {fmt_share(NOISY_WIDTH)} from the median): "
            f"{'; '.join(entries)}." for workload, entries in by_workload.items()]


def _outlier_warnings(groups: list[Group]) -> list[str]:
    """The outlier runs in the figures each workload is read for, one line per workload."""
    outliers: dict[str, list[str]] = {}
    for g in groups:
        for r, marks in zip(g.rows, g.row_outliers):
            marked = [m for m in marks if m in headline(g.workload)]
            if marked:
                values = ", ".join(f"{METRICS[m].label} {fmt_metric(m, r.figure(m))} "
                                   f"(median {fmt_metric(m, g.median(m))})"
                                   for m in marked)
                outliers.setdefault(g.workload, []).append(f"{_short(g)} rep {r.rep}: {values}")
    return [f"{workload}: {len(entries)} outlier runs, kept: {'; '.join(entries)}."
            for workload, entries in outliers.items()]


def until_ci(env: Env, g: Group | None = None) -> float | None:
    """The `run --until-ci PCT` target (a fraction) a group was run to: its
    suite part's own (env.json settings.parts[].until_ci) where the part
    holds its workload and N, else the run's; None when neither was set."""
    settings = env.settings
    if g is not None:
        for part in settings.parts:
            if (part.until_ci and g.workload in part.workloads
                    and (g.n is None or g.n in (part.ns or (g.n,)))):
                return float(part.until_ci)
    return float(settings.until_ci) if settings.until_ci else None


def wide_figures(g: Group, target: float) -> list[str]:
    """The headline figures of a group whose interval is wider than target
    (its larger half-width over the median), not settled, or missing."""
    out = []
    for m in headline(g.workload):
        s = g.metrics.get(m)
        if s is None:
            continue
        iv = s.interval
        if iv is None:
            out.append(f"{METRICS[m].label}: {s.count} run, no interval")
        elif not iv.settled:
            out.append(f"{METRICS[m].label}: not settled ({fmt_share(iv.confidence)})")
        elif iv.relative_width > target:
            out.append(f"{METRICS[m].label} ±{fmt_share_tenths(iv.relative_width)}")
    return out


def until_ci_warnings(groups: list[Group], env: Env) -> list[str]:
    """With `run --until-ci PCT`: one line per workload naming the headline
    figures whose interval did not get within PCT of the median."""
    by_workload: dict[tuple[str, float], list[str]] = {}
    totals: Counter[tuple[str, float]] = Counter()
    for g in groups:
        target = until_ci(env, g)
        if target is None or not g.ok:
            continue
        totals[(g.workload, target)] += 1
        if wide := wide_figures(g, target):
            by_workload.setdefault((g.workload, target), []).append(
                f"{_short(g)} ({', '.join(wide)})")
    return [f"{workload}: {len(entries)} of {totals[(workload, target)]} groups did not reach "
            f"the run's --until-ci {fmt_percent(target)} (a settled interval within "
            f"{fmt_percent(target)} of the median): {'; '.join(entries)}."
            for (workload, target), entries in by_workload.items()]


def _short(g: Group) -> str:
    """A group's label without its workload (for lines grouped by workload)."""
    return f"{g.impl} {g.key.settings}".strip()


@dataclass
class Results:
    """One run directory, analysed: what every output (report, exports,
    plots, compare) starts from."""
    run: RunDir
    groups: list[Group]
    env: Env
    ranks: Ranks
    notes: list[str]  # what the reader found (a torn row, rows retried by --resume)


def analyse(run: RunDir, leave_out: Iterable[Status] = ()) -> Results:
    """Read and analyse a run directory; rows whose status is in leave_out
    are not part of the groups (plots leave out languages that never ran)."""
    read = _read(run)
    table = read.table
    notes = [table.torn] if table.torn else []
    if run.retried_path.exists():
        notes.append("Some failed rows were run again by --resume; the earlier attempts are "
                     "in retried.csv.")
    rows = [r for r in table.rows if r.status not in set(leave_out)]
    if len(rows) < len(table.rows):
        groups = group_runs(rows)
    else:  # nothing left out: the groups of every row, formed once per read
        groups = read.groups = read.groups or group_runs(rows)
    env = run.env()
    return Results(run, groups, env, ratios(groups, env.floor_impls), notes)


@dataclass
class _Read:
    """A RunDir's runs.csv as read (and its groups of every row, once
    formed), with the identities of the files it was read from."""
    seen: tuple[int, ...]
    table: Table
    groups: list[Group] | None = None


# What each RunDir read last: `report` analyses a run twice (its plots leave
# out the skipped rows; where there are none, the same groups), and a large
# runs.csv takes seconds to read and group. Per RunDir object (one
# command's), and read again when either file has changed since.
_READS: WeakKeyDictionary[RunDir, _Read] = WeakKeyDictionary()


def _read(run: RunDir) -> _Read:
    """run.runs(), read once while runs.csv and env.json (its format) stay the same."""
    try:
        seen = tuple(x for p in (run.runs_path, run.env_path) for st in [os.stat(p)]
                     for x in (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    except OSError:  # the reader says why, in its words
        return _Read((), run.runs())
    cached = _READS.get(run)
    if cached is None or cached.seen != seen:
        cached = _READS[run] = _Read(seen, run.runs())
    return cached
