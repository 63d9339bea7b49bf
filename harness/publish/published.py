"""A published run, read: the summary.csv, env.json and load.csv committed
beside a page of docs/results (readme_tables.py writes them there), as the
configurations the pages and the claims are made from. A page is a function
of those files alone, so it is read from them, not from runs.csv (which is
not published); load.csv is made from runs.csv by the harness's reader and
groups (write_load).

Shared by readme_tables.py and claims.py, which import this module and
never each other.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..analyse import analysis
from ..core.formatting import csv_number
from ..core.schema import escape_cell, unescape_cell
from ..core.stats import Interval, median_interval
from ..record.rundir import RunDir

# summary.csv's columns that are part of a configuration besides impl,
# workload, n and buffer (the harness's DIMENSIONS), with their types.
PARAMS: dict[str, Callable[[str], Any]] = {
    "users": int, "requests": int, "delay_ms": int, "pool_threads": int, "style": str,
    "cpus": int, "machine": str}
STATS = ("median", "min", "max", "count")


@dataclass(frozen=True)
class Stat:
    median: float
    min: float
    max: float
    count: int
    values: tuple[float, ...] = ()  # the ok runs' values ({metric}_values), where recorded

    @property
    def interval(self) -> Interval | None:
        return median_interval(self.values) if len(self.values) == self.count else None


@dataclass
class Group:
    """One configuration's row of summary.csv."""
    impl: str
    workload: str
    n: int | None
    buffer: int | None
    params: tuple[tuple[str, Any], ...]
    runs: int
    status_counts: Counter
    metrics: dict[str, Stat] = field(default_factory=dict)
    mem_per_task_bytes: float | None = None
    loaded: int | None = None  # ok runs under load (load.csv); None: not recorded

    @property
    def key(self) -> tuple:
        return (self.impl, self.workload, self.n, self.buffer, self.params)

    @property
    def ok(self) -> int:
        return self.status_counts["ok"]

    @property
    def statuses(self) -> str:
        counts = self.status_counts
        order = sorted(counts, key=lambda s: (s != "ok", -counts[s], s))
        return ", ".join(f"{counts[s]} {s}" for s in order)

    @property
    def failures(self) -> str:
        return ", ".join(f"{c} {s}" for s, c in sorted(self.status_counts.items(),
                                                       key=lambda sc: (-sc[1], sc[0]))
                         if s != "ok")

    @property
    def failure(self) -> str | None:
        """The most frequent status, when the group has no ok run (claims.py)."""
        if self.ok or not self.status_counts:
            return None
        return max(self.status_counts, key=lambda s: (self.status_counts[s], s))

    def param(self, name: str) -> Any:
        return dict(self.params).get(name)

    def median(self, metric: str) -> float | None:
        s = self.metrics.get(metric)
        return s.median if s else None


def config_key(impl: str, workload: str, n: int | None, buffer: int | None,
               params: Iterable[tuple[str, Any]] = ()) -> tuple:
    """The one identity of a configuration: unset dimensions left out, sorted."""
    return (impl, workload, n, buffer,
            tuple(sorted((k, v) for k, v in params if v is not None and v != "")))


def _number(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def _int(text: str) -> int | None:
    return int(float(text)) if text not in ("", None) else None


def parse_statuses(text: str) -> Counter:
    counts: Counter = Counter()
    for part in filter(None, (p.strip() for p in text.split(","))):
        count, status = part.split(" ", 1)
        counts[status] = int(count)
    return counts


def row_key(row: dict[str, str]) -> tuple:
    """The configuration of a summary.csv, runs.csv or load.csv row."""
    params = [(name, kind(row[name]) if kind is str else _int(row[name]))
              for name, kind in PARAMS.items() if row.get(name)]
    return config_key(row["impl"], row["workload"], _int(row["n"]), _int(row["buffer"]), params)


def read_summary(path: Path, loaded: dict[tuple, int] | None = None) -> list[Group]:
    groups = []
    with path.open(newline="") as f:
        for raw in csv.DictReader(f):
            row = {k: unescape_cell(v) for k, v in raw.items()}  # the ' before a formula-like text
            key = row_key(row)
            g = Group(*key, loaded=(loaded or {}).get(key, 0) if loaded is not None else None, runs=int(row["runs"]), status_counts=parse_statuses(row["statuses"]),
                      mem_per_task_bytes=_number(row.get("mem_per_task_bytes", "")))
            metrics = {c[:-len("_median")] for c in row if c.endswith("_median")}
            for metric in sorted(metrics):
                values = [row.get(f"{metric}_{part}", "") for part in STATS]
                if all(v != "" for v in values):
                    ok_values = tuple(float(v) for v in row.get(f"{metric}_values", "").split())
                    g.metrics[metric] = Stat(float(values[0]), float(values[1]),
                                             float(values[2]), int(float(values[3])), ok_values)
            groups.append(g)
    return groups


@dataclass
class Run:
    env: dict[str, Any]
    groups: list[Group]  # every configuration that had a run other than skipped
    skipped: list[Group]  # configurations only skipped (toolchain missing, no such style)


LOAD_COLUMNS = ["impl", "workload", "n", "buffer", *PARAMS, "ok_runs", "ok_runs_under_load"]


def write_load(run_dir: Path, out: Path) -> None:
    """load.csv: per configuration, its ok runs and how many of them ran under
    load. summary.csv does not carry that, and runs.csv is too large to
    publish; this is the one thing a page needs from it. The run is read and
    grouped by the harness (RunDir, analysis.analyse): a run is "under load"
    by the harness's rule (analysis.is_loaded, machineload.LOADED_FRAC)."""
    found: dict[tuple, tuple[dict[str, Any], int, int]] = {}
    for g in analysis.analyse(RunDir(run_dir)).groups:
        ok = [r for r in g.rows if r["status"] == "ok"]
        if ok:
            first = ok[0]
            key = config_key(first["impl"], first["workload"], first["n"], first["buffer"],
                             [(name, first.get(name)) for name in PARAMS])
            found[key] = (first, g.ok, g.loaded)
    with out.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(LOAD_COLUMNS)
        for key in sorted(found, key=str):
            row, ok_runs, loaded = found[key]
            writer.writerow([_cell(row.get(c)) for c in LOAD_COLUMNS[:-2]] + [ok_runs, loaded])


def _cell(value: Any) -> str:
    """A cell as runs.csv writes it (escape_cell, csv_number)."""
    return escape_cell(value) if isinstance(value, str) else csv_number(value)


def read_load(path: Path) -> dict[tuple, int] | None:
    if not path.is_file():
        return None
    with path.open(newline="") as f:
        return {row_key(row): int(row["ok_runs_under_load"]) for row in csv.DictReader(f)}


def load_run(summary: Path, env: Path, load: Path | None = None) -> Run:
    groups = read_summary(summary, read_load(load) if load else None)
    only_skipped = [g for g in groups if set(g.status_counts) == {"skipped"}]
    return Run(json.loads(env.read_text()), [g for g in groups if g not in only_skipped],
               only_skipped)


