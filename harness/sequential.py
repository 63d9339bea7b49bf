"""When to stop running a configuration: the sequential rules of
`run --until-ci PCT` and `run --until-settled`, in one place. After the
planned repeats (the minimum), pass after pass, one more run of each
configuration whose rule still asks for one, up to its max_repeat:

- --until-ci PCT: a headline figure's median interval is unsettled or wider
  than ±PCT of the median (analysis.wide_figures, the same test the report
  warns with);
- --until-settled: the configuration takes part in a standing (against its
  set's leader, standings.py) that is not settled yet, the run's verdicts
  being decided as one family each pass. The run goes to the leader while
  it has fewer than LEAD more runs than the other (the leader is in every
  standing of its set, so one run of it counts in all of them: 6 runs of
  the leader against 3 of the rest settle at 95% where 3 a side cannot),
  else to the other. A configuration far from every rival settles at the
  minimum and runs no more.

A configuration with no ok row failed: it is not run again. Under
--until-settled, neither is one with no ok run that timed out or failed
twice, even within the minimum (repeated): a timeout takes the whole
--timeout, a resource limit fails the same way each time, and more of them
settle nothing. Pure: the
session reads the rows back after each pass and executes what this says.
docs/statistics.md ("Sequential runs") says what repeated looks cost.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from .analyse.analysis import group_runs, wide_figures
from .plan.plan import Planned, configurations
from .core.schema import ConfigKey, Row
from .analyse.standings import Standing, standings

# How many more runs than the other side a leader gets first (see above).
LEAD = 3


def repeated(p: Planned, statuses: list[str]) -> bool:
    """Whether a planned run goes ahead, given its configuration's statuses
    so far: under --until-settled, not after a timeout or two failures with
    no ok run between them (a thread baseline that cannot start a million
    threads fails the same way every time, and may take 80 s to)."""
    if not p.until_settled or "ok" in statuses:
        return True
    return not ("timeout" in statuses or len(statuses) >= 2)


def wanting(found: list[Standing], reps: dict[ConfigKey, int],
            ceiling: dict[ConfigKey, int]) -> set[ConfigKey]:
    """The configurations --until-settled gives one more run: for each
    standing not settled, its leader while the leader has fewer than LEAD
    runs more than the other and is below its ceiling, else the other (or
    the leader, when the other is at its ceiling)."""
    out: set[ConfigKey] = set()
    for s in found:
        if s.settled:
            continue
        leader, other = s.leader.key, s.other.key
        n_leader, n_other = s.runs
        leader_can = reps.get(leader, 0) < ceiling.get(leader, 0)
        other_can = reps.get(other, 0) < ceiling.get(other, 0)
        if leader_can and (n_leader < n_other + LEAD or not other_can):
            out.add(leader)
        elif other_can:
            out.add(other)
    return out


def more_runs(rows: Iterable[Row], runs: list[Planned]) -> list[Planned]:
    """The next pass, from the rows recorded so far (every recorded rep
    counts toward max_repeat, failed ones too), in plan order."""
    table = list(rows)
    groups = {g.key: g for g in group_runs(table)}
    last_of = configurations(runs)
    reps: dict[ConfigKey, int] = {}
    for r in table:
        key = ConfigKey.of(r)
        reps[key] = max(reps.get(key, 0), r.rep)
    ceiling = {key: p.max_repeat for key, p in last_of.items()
               if p.until_settled and p.max_repeat is not None and key in groups
               and groups[key].ok}
    judged = [g for key, g in groups.items() if key not in last_of or last_of[key].judged]
    unsettled = wanting(standings(judged), reps, ceiling) if ceiling else set()
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

