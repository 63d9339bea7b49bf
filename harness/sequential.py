"""When to stop running a configuration: the sequential rules of
`run --until-ci PCT` and `run --until-settled`, in one place. After the
planned repeats (the minimum), pass after pass, one more run of each
configuration whose rule still asks for one, up to its max_repeat:

- --until-ci PCT: a headline figure's median interval is unsettled or wider
  than ±PCT of the median (analysis.wide_figures, the same test the report
  warns with);
- --until-settled: the configuration takes part in a standing (against its
  set's leader, standings.py) that is not settled yet, the run's verdicts
  being decided as one family each pass. A configuration far from every
  rival settles at the minimum and runs no more.

A configuration with no ok row failed: it is not run again. Pure: the
session reads the rows back after each pass and executes what this says.
docs/statistics.md ("Sequential runs") says what repeated looks cost.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from .analysis import group_runs, wide_figures
from .plan import Planned, configurations
from .rundir import ConfigKey
from .standings import standings, unsettled_configs


def more_runs(rows: Iterable[dict[str, Any]], runs: list[Planned]) -> list[Planned]:
    """The next pass, from the rows recorded so far (every recorded rep
    counts toward max_repeat, failed ones too), in plan order."""
    table = [dict(r) for r in rows]  # grouping annotates rows: keep the caller's as they are
    groups = {g.key: g for g in group_runs(table)}
    last_of = configurations(runs)
    unsettled = (unsettled_configs(standings(list(groups.values())))
                 if any(p.until_settled for p in last_of.values()) else set())
    reps: dict[ConfigKey, int] = {}
    for r in table:
        key = ConfigKey.of(r)
        reps[key] = max(reps.get(key, 0), r["rep"])
    more = []
    for key, last in last_of.items():
        if last.max_repeat is None or (last.until_ci is None and not last.until_settled):
            continue
        g = groups.get(key)
        rep = max(last.rep, reps.get(key, 0)) + 1
        if rep > last.max_repeat or g is None or not g.ok:
            continue
        if ((last.until_ci is not None and wide_figures(g, last.until_ci))
                or (last.until_settled and key in unsettled)):
            more.append(dataclasses.replace(last, rep=rep))
    return more


def most_runs(runs: list[Planned]) -> list[Planned]:
    """The plan with every sequential configuration at its max_repeat: the
    most a run may take."""
    extra = [dataclasses.replace(last, rep=rep) for key, last in configurations(runs).items()
             if last.max_repeat is not None for rep in range(last.rep + 1, last.max_repeat + 1)]
    return runs + extra
