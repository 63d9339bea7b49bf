"""The times of the newest published run of a suite (docs/results/*/:
env.json and summary.csv), read for the plan's estimate (the session hands
them to plan.runplan.plan_run) on a machine with no
earlier run of a configuration: the published pages are 2-core runs, the
kind of machine the suites are planned for, so their medians are a better
first guess than a workload's rough formula (a default run's first line
was off by half with the formula alone). Read only: nothing is written."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..core.schema import RUN_COLUMNS, ConfigKey, Row
from ..core.workloads import WORKLOADS
from .rundir import RunDirError, read_env

_PARSE = {c.name: c.parse for c in RUN_COLUMNS}
_KEY_COLUMNS = ("impl", "workload", "n", "buffer") + tuple(
    c.name for c in RUN_COLUMNS if c.name in {f for w in WORKLOADS.values()
                                              for f in (d.name for d in w.dimensions)})


@dataclass(frozen=True)
class Published:
    """Per configuration, the median of its workload's history column
    (Workload.history_column: wall time, a sleep's start time) over the
    page's ok runs; `source` names the page for the estimate's basis."""
    times: dict[ConfigKey, float]
    source: str


def _suite(folder: Path) -> str | None:
    try:
        return read_env(folder / "env.json").settings.suite
    except (OSError, ValueError, RunDirError):
        return None


def _times(summary: Path) -> dict[ConfigKey, float]:
    out: dict[ConfigKey, float] = {}
    with summary.open(newline="", encoding="utf-8") as f:
        for cells in csv.DictReader(f):
            try:
                workload = WORKLOADS.get(cells.get("workload") or "")
                median = cells.get(f"{workload.history_column}_median") if workload else ""
                if not median:
                    continue
                row = Row(**{name: _PARSE[name](cells[name]) if cells.get(name) else None
                             for name in _KEY_COLUMNS if name in cells})
                out[ConfigKey.of(row)] = float(median)
            except (ValueError, TypeError):
                continue  # a cell this reader cannot take: that configuration is guessed
    return out


def newest(results: Path, suite: str | None) -> Published | None:
    """The newest page in `results` (folders named by date first) run with
    `suite`, or None."""
    if suite is None or not results.is_dir():
        return None
    for folder in sorted((p for p in results.iterdir() if p.is_dir()), reverse=True):
        if (folder / "summary.csv").is_file() and _suite(folder) == suite:
            times = _times(folder / "summary.csv")
            if times:
                return Published(times, f"docs/results/{folder.name}")
    return None
