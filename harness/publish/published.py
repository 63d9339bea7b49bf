"""A published run, read: the files committed beside a page of docs/results
(readme_tables.py writes them there), as the configurations the page, its
verdicts and the README's block are made from. A page is a function of
those files alone.

The run's runs.csv, where it is committed, is read as the harness reads any
run (record.rundir, analysis.group_runs): the page's analysis is then the
report's, row for row. Runs published before runs.csv was kept beside them
have summary.csv alone, read through SummaryRow, a typed line whose columns
are exports.SUMMARY_FIELDS' (its writer's): each line gives back the runs it
summarises (SummaryRow.rows: one ok Row per ok run, carrying that run's
value of each metric from {metric}_values, and one Row per run of any
other status), which the same analysis groups; what such a page needs
beyond them, how many ok runs ran under load, is its load.csv (Run.loaded).
env.json is read through core.schema.Env.

Shared by the page, the goals, the README's block, claims.py and
calibration.py, which import this module and never each other.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from ..analyse import analysis
from ..core.metrics import METRICS
from ..core.schema import (DIMENSIONS, RUN_COLUMNS, ConfigKey, Env, Row, Status, parse_status,
                           unescape_cell)
from ..record.rundir import RunDir, read_env

# A configuration's columns, as summary.csv, load.csv and runs.csv name them:
# ConfigKey's (impl, workload, n, buffer), then the dimensions (DIMENSIONS).
CONFIG_BASE = tuple(f.name for f in fields(ConfigKey) if f.name != "params")
KEY_COLUMNS = CONFIG_BASE + tuple(d.name for d in DIMENSIONS)
# Each is parsed as runs.csv's reader parses it (core.schema).
_PARSERS: dict[str, Callable[[str], Any]] = {c.name: c.parse for c in RUN_COLUMNS}


def parse_statuses(text: str) -> Counter[Status]:
    """summary.csv's statuses cell ("2 ok, 1 oom", Group.statuses)."""
    counts: Counter[Status] = Counter()
    for part in filter(None, (p.strip() for p in text.split(","))):
        count, status = part.split(" ", 1)
        counts[parse_status(status)] = int(count)
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
    statuses: Counter[Status] = _summary_column(parse_statuses)
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
        ok = [self._row(rep=rep, status=Status.OK)
              for rep in range(1, self.statuses[Status.OK] + 1)]
        for metric, values in self.values.items():
            if len(values) > len(ok):
                raise ValueError(f"{self.impl} {self.workload}: {len(values)} values of "
                                 f"{metric} for {len(ok)} ok runs")
            for row, value in zip(ok, values):
                setattr(row, metric, value)
        runs = ok + [self._row(status=status) for status, count in self.statuses.items()
                     if status != Status.OK for _ in range(count)]
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


# The files of a published run, beside its page: always summary.csv and
# env.json; runs.csv where the run directory had it when it was published,
# else load.csv (each configuration's ok runs under load, from runs.csv).
SUMMARY, ENV, RUNS, LOAD = "summary.csv", "env.json", "runs.csv", "load.csv"


@dataclass
class Run:
    env: Env
    groups: list[analysis.Group]  # every configuration that had a run other than skipped
    skipped: list[analysis.Group]  # configurations only skipped (toolchain missing, no such style)
    # per configuration, how many of its ok runs ran under load; None: not recorded
    loaded: dict[ConfigKey, int] | None = None
    from_runs: bool = False  # the groups are runs.csv's rows, not summary.csv's lines

    @property
    def load_recorded(self) -> bool:
        return self.loaded is not None and bool(self.groups)

    def under_load(self, g: analysis.Group | None) -> int | None:
        """g's ok runs under load; None where the page has no record of it."""
        if self.loaded is None or g is None:
            return None
        return self.loaded.get(g.key, 0)


# load.csv's counts, after the configuration's columns (KEY_COLUMNS).
LOAD_COUNTS = ("ok_runs", "ok_runs_under_load")


def read_load(path: Path) -> dict[ConfigKey, int] | None:
    if not path.is_file():
        return None
    _, under_load = LOAD_COUNTS
    with path.open(newline="") as f:
        return {key_of(cells): int(cells[under_load]) for cells in
                ({k: unescape_cell(v) for k, v in raw.items()} for raw in csv.DictReader(f))}


def load_run(folder: Path) -> Run:
    """The run published in `folder`: from its runs.csv where committed, else
    from its summary.csv (and load.csv, where there is one)."""
    if (folder / RUNS).is_file():
        groups = analysis.group_runs(RunDir(folder).runs().rows)
        loaded: dict[ConfigKey, int] | None = {g.key: g.loaded for g in groups}
    else:
        groups = read_summary(folder / SUMMARY)
        loaded = read_load(folder / LOAD)
    only_skipped = {id(g) for g in groups if set(g.status_counts) == {Status.SKIPPED}}
    return Run(read_env(folder / ENV), [g for g in groups if id(g) not in only_skipped],
               [g for g in groups if id(g) in only_skipped], loaded,
               from_runs=(folder / RUNS).is_file())
