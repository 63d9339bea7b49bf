"""What a run's rows say: group statistics, ratios to the best, warnings.

Pure functions over the rows rundir reads: no rendering, no files written.
Every raw row is kept; only rows with status ``ok`` feed the statistics, and
the other statuses are counted per group so failures stay visible.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .machineload import LOADED_FRAC
from .metrics import METRICS, fmt_metric
from .presentation import PRESENTATIONS, TIME_HEADLINE
from .rundir import ConfigKey, RunDir
from .stats import Interval, median_interval
from .workloads import Param, workload_rank

# A group's stdev above this fraction of its median makes the figure noisy.
NOISY_CV = 0.10
# Outlier rule: a value is an outlier when it lies outside
# median ± OUTLIER_K · max(1.4826 · MAD, MAD_FLOOR · |median|).
# 1.4826 · MAD estimates the stdev of normal data without being pulled by the
# outlier itself; the floor keeps identical repeats (MAD = 0, common for peak
# RSS) from turning a small wobble into an "outlier": a value must be at
# least 15% off the median to be flagged.
OUTLIER_K = 3.0
MAD_SCALE = 1.4826
MAD_FLOOR = 0.05


def is_loaded(row: dict[str, Any]) -> bool:
    frac = row.get("other_cpu_frac")
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
    def cv(self) -> float | None:
        """Relative spread: stdev / median."""
        if self.stdev is None or self.median == 0:
            return None
        return self.stdev / abs(self.median)

    @property
    def noisy(self) -> bool:
        return self.cv is not None and self.cv > NOISY_CV


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
    rows: list[dict[str, Any]]  # every raw row of the group, failures included
    params: tuple[Param, ...] = ()  # the workload's own dimensions (ConfigKey.params)
    metrics: dict[str, Summary] = field(default_factory=dict)
    mem_per_task_bytes: float | None = None
    mem_points: tuple[int, ...] = ()  # the N the slope was fitted over

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
        cpus, machine = self.param("cpus"), self.param("machine")
        return (self.impl + (f" ({cpus} CPU{'s' if cpus != 1 else ''})" if cpus else "")
                + (f" @{machine}" if machine else ""))

    @property
    def status_counts(self) -> Counter[str]:
        return Counter(r["status"] for r in self.rows)

    @property
    def ok(self) -> int:
        return self.status_counts["ok"]

    @property
    def statuses(self) -> str:
        """e.g. "2 ok, 1 oom": ok first, then the failures by frequency."""
        counts = self.status_counts
        order = sorted(counts, key=lambda s: (s != "ok", -counts[s], s))
        return ", ".join(f"{counts[s]} {s}" for s in order)

    @property
    def failure(self) -> str | None:
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
        return sum(1 for r in self.rows if r["status"] == "ok" and is_loaded(r))

    @property
    def outliers(self) -> int:
        return sum(1 for r in self.rows if r.get("outliers"))

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


def group_sort_key(key: ConfigKey) -> tuple:
    """Reading order: workload (declaration order), N, buffer, the
    workload's own dimensions, impl."""
    return (workload_rank(key.workload), key.sort_key, key.impl)


def group_runs(rows: list[dict[str, Any]]) -> list[Group]:
    """Groups by (impl, workload, n, buffer) with statistics, outlier flags
    (each row gets ``outliers``: the metrics it is an outlier in) and memory
    per task. Rows are annotated in place, never dropped."""
    by_key: dict[ConfigKey, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_key[ConfigKey.of(row)].append(row)

    groups = []
    for key in sorted(by_key, key=group_sort_key):
        members = by_key[key]
        first = members[0]
        group = Group(key.impl, key.workload, key.n, key.buffer, language=first.get("language") or "",
                      runtime=first.get("runtime") or "", rows=members, params=key.params)
        for row in members:
            row["outliers"] = []
        ok_rows = [r for r in members if r["status"] == "ok"]
        for metric in METRICS:
            have = [r for r in ok_rows if r.get(metric) is not None]
            summary = summarize(r[metric] for r in have)
            if summary is None:
                continue
            group.metrics[metric] = summary
            for row, out in zip(have, outlier_mask([r[metric] for r in have])):
                if out:
                    row["outliers"].append(metric)
        groups.append(group)
    _memory_per_task(groups)
    return groups


# Memory per task is printed only when the RSS growth it rests on exceeds
# both this floor and the spread of the readings it was fitted to.
MEM_RESOLUTION_BYTES = 1 << 20


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y over x."""
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    return (sum((x - mx) * (y - my) for x, y in points)
            / sum((x - mx) ** 2 for x, _ in points))


def _memory_per_task(groups: list[Group]) -> None:
    """Bytes per task: the least-squares slope of the median peak RSS over N,
    for the same impl, workload and buffer (a channel's buffer is memory
    too), fitted over every N of the run up to this one. A difference at a
    single small N is mostly noise (it gave negative bytes per task), so the
    figure is kept only when the growth over the fitted N exceeds
    MEM_RESOLUTION_BYTES and the min–max spread of every reading used."""
    series: dict[tuple, list[Group]] = defaultdict(list)
    for g in groups:
        if g.n is not None and g.median("peak_rss_bytes") is not None:
            series[(g.impl, g.workload, g.buffer, g.params)].append(g)
    for members in series.values():
        members.sort(key=lambda g: g.n)
        for i in range(1, len(members)):
            used = members[:i + 1]
            per_task = slope([(g.n, g.median("peak_rss_bytes")) for g in used])
            growth = per_task * (used[-1].n - used[0].n)
            spread = max(g.metrics["peak_rss_bytes"].max - g.metrics["peak_rss_bytes"].min
                         for g in used)
            if growth > max(MEM_RESOLUTION_BYTES, spread):
                members[i].mem_per_task_bytes = per_task
                members[i].mem_points = tuple(g.n for g in used)


def iter_metric(groups: Iterable[Group]) -> str:
    """The per-iteration time to rank by: warm when every measured group has
    one (K > 1), else cold, so a comparison never mixes the two."""
    measured = [g for g in groups if g.metrics]
    if measured and all("warm_iter_s" in g.metrics for g in measured):
        return "warm_iter_s"
    return "first_iter_s"


def ratios_to_best(groups: list[Group], metric: str) -> dict[ConfigKey, float]:
    """Median / best median among groups (lower is better); groups without the
    metric get no entry."""
    values = {g.key: g.median(metric) for g in groups if g.median(metric) is not None}
    if not values:
        return {}
    best = min(values.values())
    if best <= 0:
        return {}
    return {k: v / best for k, v in values.items()}


SetKey = tuple[str, int | None, int | None, tuple[Param, ...]]


def comparable_sets(groups: list[Group]) -> dict[SetKey, list[Group]]:
    """Groups that compete: same workload, n, buffer and the workload's own
    dimensions, different impls."""
    sets: dict[SetKey, list[Group]] = defaultdict(list)
    for g in groups:
        sets[(g.workload, g.n, g.buffer, g.params)].append(g)
    return dict(sets)


Ranks = dict[ConfigKey, dict[str, float]]
SETUP_STATUSES = ("skipped", "build-failed")  # failures of the language, not of one run


def ratios(groups: list[Group], floor: Iterable[str] = ()) -> Ranks:
    """Per group: time ("time") and peak RSS ("rss") relative to the best
    implementation at the same workload, N and buffer; a time ratio only
    where the workload's presentation ranks by time. Where the set has a
    floor implementation (impls.toml `floor = true`), "floor" is the
    group's iteration time (the same multiple per hop or per task) or, for a
    workload read for memory, its memory per task, over the floor's."""
    out: Ranks = defaultdict(dict)
    floors = set(floor)
    for (workload, *_), members in comparable_sets(groups).items():
        presented = PRESENTATIONS.get(workload)
        timed = presented is None or presented.time_ratio
        if timed:
            metric = iter_metric(members)
            for key, r in ratios_to_best(members, metric).items():
                out[key]["time"] = r
        for key, r in ratios_to_best(members, "peak_rss_bytes").items():
            out[key]["rss"] = r
        base = next((g for g in members if g.impl in floors), None)
        if base is None:
            continue
        value: Callable[[Group], float | None] = (
            (lambda g: g.median(iter_metric(members))) if timed else (lambda g: g.mem_per_task_bytes))
        unit = value(base)
        if unit is None or unit <= 0:
            continue
        for g in members:
            if (v := value(g)) is not None:
                out[g.key]["floor"] = v / unit
    return out


def headline(workload: str) -> tuple[str, ...]:
    """The metrics a workload is read for (its presentation's)."""
    presented = PRESENTATIONS.get(workload)
    return presented.headline if presented else TIME_HEADLINE


def capacity_note(g: Group) -> str | None:
    """A rendezvous asked for (B = 0) but run at another capacity, which the
    program reports (docs/protocol.md): say so next to the figure."""
    caps = {r.get("capacity") for r in g.rows if r["status"] == "ok"} - {None, g.buffer}
    if g.buffer is None or not caps:
        return None
    return f"ran at capacity {', '.join(str(c) for c in sorted(caps))}"


def warnings(groups: list[Group], env: dict[str, Any], notes: Iterable[str] = ()) -> list[str]:
    """What a reader must know before trusting the tables, most important first."""
    out: list[str] = list(notes)
    if env and not env.get("finished_at"):
        out.append("The run did not finish (env.json has no finished_at): figures are partial.")
    if (env.get("git") or {}).get("dirty"):
        out.append("The working tree was dirty: the code measured is not exactly the commit shown.")

    # Languages that never ran: one line per impl, not one per group.
    setup: dict[tuple[str, str], str] = {}
    for g in groups:
        for r in g.rows:
            if r["status"] in SETUP_STATUSES:
                setup.setdefault((g.impl, r["status"]), r.get("error") or "no reason recorded")
    for (impl, status), error in sorted(setup.items()):
        out.append(f"{impl}: {status} ({error}).")

    methods = Counter(r.get("peak_rss_method") for g in groups for r in g.rows
                      if r["status"] == "ok" and r.get("peak_rss_method"))
    if len(methods) > 1:
        usual = methods.most_common(1)[0][0]
        for g in groups:
            odd = {r["peak_rss_method"] for r in g.rows if r["status"] == "ok"
                   and r.get("peak_rss_method") and r["peak_rss_method"] != usual}
            if odd:
                out.append(f"{g.label}: peak RSS measured by {', '.join(sorted(odd))}, not {usual}.")

    ok_rows = [r for g in groups for r in g.rows if r["status"] == "ok"]
    loaded = [r for r in ok_rows if is_loaded(r)]
    if loaded:
        worst = max(loaded, key=lambda r: r["other_cpu_frac"])
        out.append(f"{len(loaded)} of {len(ok_rows)} ok runs ran under load (other processes "
                   f"used over {LOADED_FRAC:.0%} of the CPU; the most: "
                   f"{worst['other_cpu_frac']:.0%} during {ConfigKey.of(worst).label} rep "
                   f"{worst['rep']}): their timings are marked in the tables.")
    for g in groups:
        if (note := capacity_note(g)) is not None:
            out.append(f"{g.label}: {note} (the runtime has no channel of capacity {g.buffer}).")

    # groups come in reading order (group_sort_key); failures first: they matter most
    for g in groups:
        failed = [r for r in g.rows if r["status"] not in ("ok",) + SETUP_STATUSES]
        if failed:
            errors = sorted({r.get("error") or "no reason recorded" for r in failed})
            out.append(f"{g.label}: {g.statuses} — {'; '.join(errors)}.")
    # Noise and outliers in the figures each workload is read for, one line
    # per workload; the tables mark every other noisy cell with ⚠.
    by_workload: dict[str, list[str]] = {}
    totals: Counter[str] = Counter(g.workload for g in groups if g.ok)
    for g in groups:
        noisy = [m for m in g.noisy if m in headline(g.workload)]
        if noisy:
            spread = ", ".join(f"{METRICS[m].label} {g.metrics[m].cv * 100:.0f}%" for m in noisy)
            by_workload.setdefault(g.workload, []).append(f"{_short(g)} ({spread})")
    for workload, entries in by_workload.items():
        out.append(f"{workload}: {len(entries)} of {totals[workload]} groups are noisy "
                   f"(stdev above 10% of the median): {'; '.join(entries)}.")
    outliers: dict[str, list[str]] = {}
    for g in groups:
        for r in g.rows:
            marked = [m for m in r.get("outliers") or [] if m in headline(g.workload)]
            if marked:
                values = ", ".join(f"{METRICS[m].label} {fmt_metric(m, r[m])} "
                                   f"(median {fmt_metric(m, g.median(m))})"
                                   for m in marked)
                outliers.setdefault(g.workload, []).append(f"{_short(g)} rep {r['rep']}: {values}")
    for workload, entries in outliers.items():
        out.append(f"{workload}: {len(entries)} outlier runs, kept: {'; '.join(entries)}.")
    return out


def _short(g: Group) -> str:
    """A group's label without its workload (for lines grouped by workload)."""
    return f"{g.impl} {g.key.settings}".strip()


@dataclass
class Results:
    """One run directory, analysed: what every output (report, exports,
    plots, compare) starts from."""
    run: RunDir
    groups: list[Group]
    env: dict[str, Any]
    ranks: Ranks
    notes: list[str]  # what the reader found (a torn row, rows retried by --resume)


def analyse(run: RunDir, leave_out: Iterable[str] = ()) -> Results:
    """Read and analyse a run directory; rows whose status is in leave_out
    are not part of the groups (plots leave out languages that never ran)."""
    table = run.runs()
    notes = [table.torn] if table.torn else []
    if run.retried_path.exists():
        notes.append("Some failed rows were run again by --resume; the earlier attempts are "
                     "in retried.csv.")
    rows = [r for r in table.rows if r["status"] not in set(leave_out)]
    groups = group_runs(rows)
    env = run.env()
    return Results(run, groups, env, ratios(groups, env.get("floor_impls") or ()), notes)
