"""A published run, read: the summary.csv, env.json and load.csv committed
beside a page of docs/results (readme_tables.py writes them there), as the
configurations the pages and the claims are made from. A page is a function
of those files alone, so it is read from them, not from runs.csv (which is
not published); load.csv is made from runs.csv by the harness's reader and
groups (write_load).

summary.csv is read through SummaryRow, a typed line whose columns are
exports.SUMMARY_FIELDS' (its writer's); env.json through core.schema.Env.

Shared by readme_tables.py, claims.py and calibration.py, which import this
module and never each other (readme_tables aside, which shows the others'
sections).
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable

from ..analyse import analysis
from ..core.formatting import csv_number
from ..core.metrics import LATENCIES, METRICS, THROUGHPUT
from ..core.schema import (DIMENSIONS, RUN_COLUMNS, ConfigKey, Env, Row, escape_cell,
                           unescape_cell)
from ..core.stats import Interval, median_interval
from ..core.workloads import COMMON_DIMENSIONS, HTTP_DIMENSIONS
from ..present.exports import PARTS
from ..record.rundir import RunDir, read_env

# A configuration's columns, as summary.csv, load.csv and runs.csv name them:
# ConfigKey's (impl, workload, n, buffer), then the dimensions (DIMENSIONS).
CONFIG_BASE = tuple(f.name for f in fields(ConfigKey) if f.name != "params")
KEY_COLUMNS = CONFIG_BASE + tuple(d.name for d in DIMENSIONS)
# Each is parsed as runs.csv's reader parses it (core.schema).
_PARSERS: dict[str, Callable[[str], Any]] = {c.name: c.parse for c in RUN_COLUMNS}

# The figures the pages name (metrics.METRICS'), declared once for readme_tables
# and claims; and the dimensions they name (core/workloads.py's declarations).
WALL, COLD, WARM, SPAWN, RSS, THREADS = (
    "wall_s", "first_iter_s", "warm_iter_s", "spawn_s", "peak_rss_bytes", "max_threads")
RPS, MEDIAN_RESPONSE = THROUGHPUT, LATENCIES[0]
USERS, REQUESTS, DELAY_MS, POOL_THREADS, STYLE = (d.name for d in HTTP_DIMENSIONS)
CPUS, MACHINE = (d.name for d in COMMON_DIMENSIONS)


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


# The statistics summary.csv gives each metric that a Stat holds, as
# exports.PARTS names them: median, min, max, count.
STATS = tuple(part for part in PARTS if part in {f.name for f in fields(Stat)})


def config_key(impl: str, workload: str, n: int | None, buffer: int | None,
               params: Iterable[tuple[str, Any]] = ()) -> tuple:
    """The one identity of a configuration: unset dimensions left out, sorted."""
    return (impl, workload, n, buffer,
            tuple(sorted((k, v) for k, v in params if v is not None and v != "")))


def parse_statuses(text: str) -> Counter:
    counts: Counter = Counter()
    for part in filter(None, (p.strip() for p in text.split(","))):
        count, status = part.split(" ", 1)
        counts[status] = int(count)
    return counts


def _whole(text: str) -> int:
    return int(float(text))


def _typed(name: str, cells: dict[str, str]) -> Any:
    """A cell of a column summary.csv or load.csv shares with runs.csv, as
    runs.csv's reader types it; None where empty or absent."""
    text = cells.get(name)
    return _PARSERS[name](text) if text else None


def key_of(cells: dict[str, str]) -> tuple:
    """The configuration of a summary.csv or load.csv line (config_key)."""
    return config_key(*(_typed(name, cells) for name in CONFIG_BASE),
                      [(d.name, _typed(d.name, cells)) for d in DIMENSIONS])


def _summary_column(parse: Callable[[str], Any] | None = None, empty: Any = None) -> Any:
    """A field of SummaryRow that is a column of summary.csv: its parser
    (None: runs.csv's, the column being one of its too), and its value when
    the cell is empty or the column absent."""
    return field(default=empty, metadata={"parse": parse, "empty": empty})


@dataclass
class SummaryRow:
    """One line of summary.csv, typed: the columns a page reads, each one of
    exports.SUMMARY_FIELDS (its writer's) by its name, and each metric's
    statistics (the {metric}_{part} columns)."""
    impl: str = _summary_column()
    workload: str = _summary_column()
    n: int | None = _summary_column()
    buffer: int | None = _summary_column()
    runs: int = _summary_column(_whole)
    statuses: Counter = _summary_column(parse_statuses)
    mem_per_task_bytes: float | None = _summary_column(float)
    params: tuple[tuple[str, Any], ...] = ()  # the dimensions' columns (DIMENSIONS), in order
    figures: dict[str, Stat] = field(default_factory=dict)  # by metric, in name order

    @classmethod
    def parse(cls, raw: dict[str, str]) -> SummaryRow:
        """A csv.DictReader line: text as runs.csv writes it (escape_cell)."""
        cells = {k: unescape_cell(v) for k, v in raw.items()}

        def typed(f: Any) -> Any:
            if f.metadata["parse"] is None:
                return _typed(f.name, cells)
            text = cells.get(f.name)
            return f.metadata["parse"](text) if text else f.metadata["empty"]
        row = cls(**{f.name: typed(f) for f in SUMMARY_COLUMNS},
                  params=tuple((d.name, _typed(d.name, cells)) for d in DIMENSIONS))
        for metric in sorted(METRICS):
            parts = [cells.get(f"{metric}_{part}", "") for part in STATS]
            if all(v != "" for v in parts):
                ok_values = tuple(float(v) for v in cells.get(f"{metric}_values", "").split())
                row.figures[metric] = Stat(float(parts[0]), float(parts[1]), float(parts[2]),
                                           _whole(parts[3]), ok_values)
        return row

    @property
    def key(self) -> tuple:
        return config_key(self.impl, self.workload, self.n, self.buffer, self.params)


# summary.csv's columns SummaryRow reads (every one of exports.SUMMARY_FIELDS).
SUMMARY_COLUMNS = tuple(f for f in fields(SummaryRow) if "parse" in f.metadata)


def read_summary_rows(path: Path) -> list[SummaryRow]:
    with path.open(newline="") as f:
        return [SummaryRow.parse(raw) for raw in csv.DictReader(f)]


@dataclass
class Group:
    """One configuration's row of summary.csv, as the pages read it."""
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

    @classmethod
    def of(cls, row: SummaryRow, loaded: dict[tuple, int] | None = None) -> Group:
        key = row.key
        return cls(*key, runs=row.runs, status_counts=row.statuses or Counter(),
                   metrics=row.figures, mem_per_task_bytes=row.mem_per_task_bytes,
                   loaded=None if loaded is None else loaded.get(key, 0))

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


def read_summary(path: Path, loaded: dict[tuple, int] | None = None) -> list[Group]:
    return [Group.of(row, loaded) for row in read_summary_rows(path)]


@dataclass
class Run:
    env: Env
    groups: list[Group]  # every configuration that had a run other than skipped
    skipped: list[Group]  # configurations only skipped (toolchain missing, no such style)


LOAD_COUNTS = ("ok_runs", "ok_runs_under_load")
LOAD_COLUMNS = [*KEY_COLUMNS, *LOAD_COUNTS]


def write_load(run_dir: Path, out: Path) -> None:
    """load.csv: per configuration, its ok runs and how many of them ran under
    load. summary.csv does not carry that, and runs.csv is too large to
    publish; this is the one thing a page needs from it. The run is read and
    grouped by the harness (RunDir, analysis.analyse): a run is "under load"
    by the harness's rule (analysis.is_loaded, machineload.LOADED_FRAC)."""
    found: dict[tuple, tuple[Row, int, int]] = {}
    for g in analysis.analyse(RunDir(run_dir)).groups:
        ok = [r for r in g.rows if r.status == "ok"]
        if ok:
            first = ok[0]
            key = config_key(first.impl, first.workload, first.n, first.buffer,
                             [(d.name, first.figure(d.name)) for d in DIMENSIONS])
            found[key] = (first, g.ok, g.loaded)
    with out.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(LOAD_COLUMNS)
        for key in sorted(found, key=str):
            row, ok_runs, loaded = found[key]
            writer.writerow([_cell(row.figure(c)) for c in KEY_COLUMNS] + [ok_runs, loaded])


def _cell(value: Any) -> str:
    """A cell as runs.csv writes it (escape_cell, csv_number)."""
    return escape_cell(value) if isinstance(value, str) else csv_number(value)


def read_load(path: Path) -> dict[tuple, int] | None:
    if not path.is_file():
        return None
    _, under_load = LOAD_COUNTS
    with path.open(newline="") as f:
        return {key_of(cells): int(cells[under_load]) for cells in
                ({k: unescape_cell(v) for k, v in raw.items()} for raw in csv.DictReader(f))}


def load_run(summary: Path, env: Path, load: Path | None = None) -> Run:
    groups = read_summary(summary, read_load(load) if load else None)
    only_skipped = [g for g in groups if set(g.status_counts) == {"skipped"}]
    return Run(read_env(env), [g for g in groups if g not in only_skipped], only_skipped)
