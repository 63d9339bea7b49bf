"""A published run, read: the summary.csv, env.json and load.csv committed
beside a page of docs/results (readme_tables.py writes them there), as the
configurations the pages and the claims are made from. A page is a function
of those files alone, so it is read from them, not from runs.csv (which is
not published); load.csv is made from runs.csv by the harness's reader and
groups (write_load).

summary.csv is read through SummaryRow, a typed line whose columns are
exports.SUMMARY_FIELDS' (its writer's); env.json through core.schema.Env.
Each line gives back the runs it summarises (SummaryRow.rows: one ok Row per
ok run, carrying that run's value of each metric from {metric}_values, and
one Row per run of any other status), which the harness's own analysis
groups (analysis.group_runs): the medians, intervals, statuses and memory
per task a page shows come from the code report.md's come from. What a
page needs beyond those groups, how many ok runs ran under load
(load.csv), is kept beside them (Run.loaded).

Shared by readme_tables.py, claims.py and calibration.py, which import this
module and never each other (readme_tables aside, which shows the others'
sections).
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from ..analyse import analysis
from ..core.formatting import csv_number
# the figures the pages name, declared in core.metrics, named here for readme_tables
from ..core.metrics import COLD, LATENCIES, METRICS, RPS, RSS, SPAWN, THREADS, WALL, WARM  # noqa: F401
from ..core.schema import (DIMENSIONS, RUN_COLUMNS, ConfigKey, Env, Row, escape_cell,
                           unescape_cell)
from ..core.workloads import COMMON_DIMENSIONS, HTTP_DIMENSIONS
from ..record.rundir import RunDir, read_env

# A configuration's columns, as summary.csv, load.csv and runs.csv name them:
# ConfigKey's (impl, workload, n, buffer), then the dimensions (DIMENSIONS).
CONFIG_BASE = tuple(f.name for f in fields(ConfigKey) if f.name != "params")
KEY_COLUMNS = CONFIG_BASE + tuple(d.name for d in DIMENSIONS)
# Each is parsed as runs.csv's reader parses it (core.schema).
_PARSERS: dict[str, Callable[[str], Any]] = {c.name: c.parse for c in RUN_COLUMNS}

# The figures the pages name (metrics.METRICS'), declared once for readme_tables
# and claims; and the dimensions they name (core/workloads.py's declarations).
MEDIAN_RESPONSE = LATENCIES[0]
USERS, REQUESTS, DELAY_MS, POOL_THREADS, STYLE = (d.name for d in HTTP_DIMENSIONS)
CPUS, MACHINE = (d.name for d in COMMON_DIMENSIONS)


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


def key_of(cells: dict[str, str]) -> ConfigKey:
    """The configuration of a summary.csv or load.csv line, as the harness
    keys a run's row (ConfigKey.of)."""
    return ConfigKey.of(Row(**{name: _typed(name, cells) for name in KEY_COLUMNS}))


def _summary_column(parse: Callable[[str], Any] | None = None, empty: Any = None) -> Any:
    """A field of SummaryRow that is a column of summary.csv: its parser
    (None: runs.csv's, the column being one of its too), and its value when
    the cell is empty or the column absent."""
    return field(default=empty, metadata={"parse": parse, "empty": empty})


# The column of summary.csv that holds a metric's ok values, and the one
# that counts them (exports.PARTS' count), checked against each other.
VALUES, COUNT = "values", "count"


@dataclass
class SummaryRow:
    """One line of summary.csv, typed: the columns a page reads, each one of
    exports.SUMMARY_FIELDS (its writer's) by its name, and each metric's ok
    values (the {metric}_values columns)."""
    impl: str = _summary_column()
    language: str | None = _summary_column()
    runtime: str | None = _summary_column()
    workload: str = _summary_column()
    n: int | None = _summary_column()
    buffer: int | None = _summary_column()
    runs: int | None = _summary_column(_whole)  # checked against statuses (rows)
    statuses: Counter = _summary_column(parse_statuses)
    params: tuple[tuple[str, Any], ...] = ()  # the dimensions' columns (DIMENSIONS), in order
    values: dict[str, tuple[float, ...]] = field(default_factory=dict)  # by metric, name order

    @classmethod
    def parse(cls, raw: dict[str, str]) -> SummaryRow:
        """A csv.DictReader line: text as runs.csv writes it (escape_cell).
        A metric whose count of ok runs its values do not match (a
        summary.csv written before the values columns) cannot be rebuilt,
        and is an error, not a figure left out."""
        cells = {k: unescape_cell(v) for k, v in raw.items()}

        def typed(f: Any) -> Any:
            if f.metadata["parse"] is None:
                return _typed(f.name, cells)
            text = cells.get(f.name)
            return f.metadata["parse"](text) if text else f.metadata["empty"]
        row = cls(**{f.name: typed(f) for f in SUMMARY_COLUMNS},
                  params=tuple((d.name, _typed(d.name, cells)) for d in DIMENSIONS))
        row.statuses = row.statuses or Counter()
        for metric in sorted(METRICS):
            values = tuple(float(v) for v in cells.get(f"{metric}_{VALUES}", "").split())
            count = cells.get(f"{metric}_{COUNT}") or ""
            if (_whole(count) if count else 0) != len(values):
                raise ValueError(f"{row.impl} {row.workload}: {metric}_{COUNT} is {count} but "
                                 f"{metric}_{VALUES} holds {len(values)} values: a summary.csv "
                                 "without each ok run's value cannot be read (run `python -m "
                                 "harness report` on its run again)")
            if values:
                row.values[metric] = values
        return row

    @property
    def key(self) -> ConfigKey:
        return ConfigKey.of(self._row())

    def _row(self, **cells: Any) -> Row:
        return Row(impl=self.impl, language=self.language, runtime=self.runtime,
                   workload=self.workload, n=self.n, buffer=self.buffer, **dict(self.params),
                   **cells)

    def rows(self) -> list[Row]:
        """The runs this line summarises, as the harness's rows: one ok Row
        per ok run, the k-th carrying the k-th of each metric's values (a
        metric with fewer values than ok runs fills the first rows only),
        then one Row per run of each other status (statuses)."""
        ok = [self._row(rep=rep, status="ok") for rep in range(1, self.statuses["ok"] + 1)]
        for metric, values in self.values.items():
            if len(values) > len(ok):
                raise ValueError(f"{self.impl} {self.workload}: {len(values)} values of "
                                 f"{metric} for {len(ok)} ok runs")
            for row, value in zip(ok, values):
                setattr(row, metric, value)
        runs = ok + [self._row(status=status) for status, count in self.statuses.items()
                     if status != "ok" for _ in range(count)]
        if self.runs is not None and len(runs) != self.runs:
            raise ValueError(f"{self.impl} {self.workload}: statuses count {len(runs)} runs, "
                             f"runs says {self.runs}")
        return runs


# summary.csv's columns SummaryRow reads (every one of exports.SUMMARY_FIELDS).
SUMMARY_COLUMNS = tuple(f for f in fields(SummaryRow) if "parse" in f.metadata)


def read_summary_rows(path: Path) -> list[SummaryRow]:
    with path.open(newline="") as f:
        return [SummaryRow.parse(raw) for raw in csv.DictReader(f)]


def read_summary(path: Path) -> list[analysis.Group]:
    """summary.csv's configurations as the harness groups a run's rows
    (analysis.group_runs), from the runs each line gives back."""
    return analysis.group_runs([row for line in read_summary_rows(path) for row in line.rows()])


@dataclass
class Run:
    env: Env
    groups: list[analysis.Group]  # every configuration that had a run other than skipped
    skipped: list[analysis.Group]  # configurations only skipped (toolchain missing, no such style)
    # per configuration, how many of its ok runs ran under load (load.csv); None: not recorded
    loaded: dict[ConfigKey, int] | None = None

    @property
    def load_recorded(self) -> bool:
        return self.loaded is not None and bool(self.groups)

    def under_load(self, g: analysis.Group | None) -> int | None:
        """g's ok runs under load; None where load.csv is not beside the page."""
        if self.loaded is None or g is None:
            return None
        return self.loaded.get(g.key, 0)


LOAD_COUNTS = ("ok_runs", "ok_runs_under_load")
LOAD_COLUMNS = [*KEY_COLUMNS, *LOAD_COUNTS]


def write_load(run_dir: Path, out: Path) -> None:
    """load.csv: per configuration, its ok runs and how many of them ran under
    load. summary.csv does not carry that, and runs.csv is too large to
    publish; this is the one thing a page needs from it. The run is read and
    grouped by the harness (RunDir, analysis.analyse): a run is "under load"
    by the harness's rule (analysis.is_loaded, machineload.LOADED_FRAC)."""
    with out.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(LOAD_COLUMNS)
        for g in analysis.analyse(RunDir(run_dir)).groups:  # in the harness's reading order
            first = next((r for r in g.rows if r.status == "ok"), None)
            if first is not None:
                writer.writerow([_cell(first.figure(c)) for c in KEY_COLUMNS]
                                + [g.ok, g.loaded])


def _cell(value: Any) -> str:
    """A cell as runs.csv writes it (escape_cell, csv_number)."""
    return escape_cell(value) if isinstance(value, str) else csv_number(value)


def read_load(path: Path) -> dict[ConfigKey, int] | None:
    if not path.is_file():
        return None
    _, under_load = LOAD_COUNTS
    with path.open(newline="") as f:
        return {key_of(cells): int(cells[under_load]) for cells in
                ({k: unescape_cell(v) for k, v in raw.items()} for raw in csv.DictReader(f))}


def load_run(summary: Path, env: Path, load: Path | None = None) -> Run:
    groups = read_summary(summary)
    only_skipped = {id(g) for g in groups if set(g.status_counts) == {"skipped"}}
    return Run(read_env(env), [g for g in groups if id(g) not in only_skipped],
               [g for g in groups if id(g) in only_skipped],
               read_load(load) if load else None)
