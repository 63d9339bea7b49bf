"""Group statistics over a run's raw rows.

Pure functions over runs.csv: no plotting, no I/O beyond reading the CSV.
Every raw row is kept; only rows with status ``ok`` feed the statistics, and
the other statuses are counted per group so failures stay visible.
"""

from __future__ import annotations

import csv
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

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

INT_FIELDS = (
    "n", "buffer", "rep", "exit_code", "signal", "peak_rss_bytes",
    "sampled_peak_rss_bytes", "max_threads", "result", "expected", "iterations",
)
FLOAT_FIELDS = (
    "wall_s", "cpu_user_s", "cpu_sys_s", "first_iter_s", "warm_iter_s", "spawn_s",
)

# Metrics summarised per group: name -> (label, unit kind).
METRICS: dict[str, tuple[str, str]] = {
    "wall_s": ("wall time", "s"),
    "cpu_s": ("CPU time", "s"),
    "first_iter_s": ("cold iteration", "s"),
    "warm_iter_s": ("warm iteration", "s"),
    "spawn_s": ("spawn time", "s"),
    "peak_rss_bytes": ("peak RSS", "bytes"),
}

GroupKey = tuple[str, str, int | None, int | None]  # impl, workload, n, buffer

# Reading order: the seeds' order, unknown workloads after them.
WORKLOAD_ORDER = ("sleep", "chain", "chain-await", "bounded")


def _parse_int(text: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return int(float(text))  # tolerate "1e6"-style writers


def _parse_float(text: str) -> float | None:
    text = text.strip()
    return float(text) if text else None


def parse_run(raw: dict[str, str]) -> dict[str, Any]:
    """One runs.csv row with numeric fields typed (None when empty) and cpu_s added."""
    row: dict[str, Any] = dict(raw)
    for name in INT_FIELDS:
        if name in row:
            row[name] = _parse_int(row[name] or "")
    for name in FLOAT_FIELDS:
        if name in row:
            row[name] = _parse_float(row[name] or "")
    user, system = row.get("cpu_user_s"), row.get("cpu_sys_s")
    row["cpu_s"] = user + system if user is not None and system is not None else None
    return row


def read_runs(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="") as f:
        return [parse_run(raw) for raw in csv.DictReader(f)]


def read_samples(path: Path) -> list[dict[str, Any]]:
    """samples.csv rows, typed; an absent file means no samples."""
    if not path.exists():
        return []
    rows = []
    with path.open(newline="") as f:
        for raw in csv.DictReader(f):
            rows.append({
                "run_id": raw["run_id"],
                "impl": raw["impl"],
                "workload": raw["workload"],
                "n": _parse_int(raw["n"]),
                "buffer": _parse_int(raw["buffer"]),
                "rep": _parse_int(raw["rep"]),
                "t_s": float(raw["t_s"]),
                "rss_bytes": _parse_int(raw["rss_bytes"]),
                "threads": _parse_int(raw["threads"]),
            })
    return rows


@dataclass(frozen=True)
class Summary:
    count: int
    median: float
    min: float
    max: float
    mean: float
    stdev: float | None  # sample stdev; None with a single value

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
    metrics: dict[str, Summary] = field(default_factory=dict)
    mem_per_task_bytes: float | None = None
    mem_base_n: int | None = None  # the N memory per task is measured from

    @property
    def key(self) -> GroupKey:
        return (self.impl, self.workload, self.n, self.buffer)

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
    def outliers(self) -> int:
        return sum(1 for r in self.rows if r.get("outliers"))

    def median(self, metric: str) -> float | None:
        s = self.metrics.get(metric)
        return s.median if s else None


def workload_rank(workload: str) -> tuple[int, str]:
    known = workload in WORKLOAD_ORDER
    return (WORKLOAD_ORDER.index(workload) if known else len(WORKLOAD_ORDER), workload)


def group_sort_key(key: GroupKey) -> tuple:
    impl, workload, n, buffer = key
    return (workload_rank(workload), n is None, n or 0, buffer is None, buffer or 0, impl)


def group_runs(rows: list[dict[str, Any]]) -> list[Group]:
    """Groups by (impl, workload, n, buffer) with statistics, outlier flags
    (each row gets ``outliers``: the metrics it is an outlier in) and memory
    per task. Rows are annotated in place, never dropped."""
    by_key: dict[GroupKey, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_key[(row["impl"], row["workload"], row.get("n"), row.get("buffer"))].append(row)

    groups = []
    for key in sorted(by_key, key=group_sort_key):
        members = by_key[key]
        first = members[0]
        group = Group(*key, language=first.get("language", ""),
                      runtime=first.get("runtime", ""), rows=members)
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


def _memory_per_task(groups: list[Group]) -> None:
    """(peak RSS at N − peak RSS at the smallest N) / (N − smallest N), in bytes.

    The baseline is the same impl and workload (and buffer: a bounded channel's
    buffer is memory too) at the smallest N of the run that has an ok median.
    """
    series: dict[tuple, list[Group]] = defaultdict(list)
    for g in groups:
        if g.n is not None and g.median("peak_rss_bytes") is not None:
            series[(g.impl, g.workload, g.buffer)].append(g)
    for members in series.values():
        base = min(members, key=lambda g: g.n)
        base_rss = base.median("peak_rss_bytes")
        for g in members:
            if g.n > base.n:
                g.mem_per_task_bytes = (g.median("peak_rss_bytes") - base_rss) / (g.n - base.n)
                g.mem_base_n = base.n


def iter_metric(groups: Iterable[Group]) -> str:
    """The per-iteration time to rank by: warm when every measured group has
    one (K > 1), else cold, so a comparison never mixes the two."""
    measured = [g for g in groups if g.metrics]
    if measured and all("warm_iter_s" in g.metrics for g in measured):
        return "warm_iter_s"
    return "first_iter_s"


def ratios_to_best(groups: list[Group], metric: str) -> dict[GroupKey, float]:
    """Median / best median among groups (lower is better); groups without the
    metric get no entry."""
    values = {g.key: g.median(metric) for g in groups if g.median(metric) is not None}
    if not values:
        return {}
    best = min(values.values())
    if best <= 0:
        return {}
    return {k: v / best for k, v in values.items()}


def comparable_sets(groups: list[Group]) -> dict[tuple[str, int | None, int | None], list[Group]]:
    """Groups that compete: same workload, n and buffer, different impls."""
    sets: dict[tuple[str, int | None, int | None], list[Group]] = defaultdict(list)
    for g in groups:
        sets[(g.workload, g.n, g.buffer)].append(g)
    return dict(sets)
