"""The project's performance goals (core/presentation.py's GOALS) decided on
a run's groups: the family of goals the default suite asks besides the
rankings and the claims (questions.py), each judged on its settled interval.
A goal on configurations (a figure within bounds, every run ok, a ratio to a
baseline within a limit) is decided here; the two on the run as a whole (its
minutes, its settled shares) are the published page's (publish/goals.py),
outside the family. Pure: reads groups, writes nothing; sequential.py asks
which configurations an open goal still needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .analysis import Group, Summary
from ..core.presentation import GOALS, AllRunsOk, FigureWithin, Goal, WithinOf
from ..core.schema import ConfigKey
from ..core.stats import Interval, ratio_interval

HOLDS, MISSED, NOT_SETTLED = "holds", "missed", "not settled"
# The fewest runs whose median interval (stats.median_interval) reaches 95%:
# 1 - 2 * 0.5**6 = 0.969.
MEDIAN_RUNS = 6


@dataclass(frozen=True)
class GoalVerdict:
    """One goal on the run: the configurations it reads, their ok runs, the
    intervals it was judged on, and the verdict."""
    goal: Goal
    groups: tuple[Group, ...]
    verdict: str
    intervals: tuple[Interval | None, ...] = ()

    @property
    def keys(self) -> tuple[ConfigKey, ...]:
        return tuple(g.key for g in self.groups)

    @property
    def settled(self) -> bool:
        return self.verdict != NOT_SETTLED


def within(st: Summary, low: float | None = None, high: float | None = None) -> str:
    """A figure against [low, high]: holds when its settled (95%) median
    interval lies within, missed when wholly outside; else not settled."""
    def inside(v: float) -> bool:
        return (low is None or v >= low) and (high is None or v <= high)
    iv = st.interval
    if iv is None or not iv.settled:
        return NOT_SETTLED
    if inside(iv.low) and inside(iv.high):
        return HOLDS
    if (high is not None and iv.low > high) or (low is not None and iv.high < low):
        return MISSED
    return NOT_SETTLED


def _figure(goal: FigureWithin, by_key: dict[ConfigKey, Group]) -> GoalVerdict | None:
    g = by_key.get(ConfigKey(goal.impl, goal.workload, goal.n, None))
    if g is None:
        return None
    st = g.metrics.get(goal.metric)
    if st is None:  # no ok run: the goal's configuration failed
        return GoalVerdict(goal, (g,), MISSED)
    return GoalVerdict(goal, (g,), within(st, goal.low, goal.high), (st.interval,))


def _all_ok(goal: AllRunsOk, by_key: dict[ConfigKey, Group]) -> GoalVerdict | None:
    g = by_key.get(ConfigKey(goal.impl, goal.workload, goal.n, None))
    if g is None:
        return None
    return GoalVerdict(goal, (g,), HOLDS if g.ok == len(g.rows) else MISSED)


def _within_of(goal: WithinOf, by_key: dict[ConfigKey, Group]) -> GoalVerdict | None:
    """Each buffer's ratio interval (the implementation over its baseline):
    holds when every one is settled at most the limit, missed when one lies
    wholly above it or a side has no ok run."""
    groups: list[Group] = []
    said, intervals = [], []
    for b in goal.buffers:
        g = by_key.get(ConfigKey(goal.impl, goal.workload, goal.n, b))
        base = by_key.get(ConfigKey(goal.baseline, goal.workload, goal.n, b))
        if g is None or base is None:
            return None
        groups += [g, base]
        a, z = g.values(goal.metric), base.values(goal.metric)
        iv = ratio_interval(z, a) if a and z else None
        intervals.append(iv)
        said.append(MISSED if not a or not z else NOT_SETTLED if iv is None or not iv.settled
                    else HOLDS if iv.high <= goal.limit else MISSED if iv.low > goal.limit
                    else NOT_SETTLED)
    verdict = MISSED if MISSED in said else NOT_SETTLED if NOT_SETTLED in said else HOLDS
    return GoalVerdict(goal, tuple(groups), verdict, tuple(intervals))


def decide(goal: Goal, by_key: dict[ConfigKey, Group]) -> GoalVerdict | None:
    """A goal on configurations, decided; None where the run did not measure
    them, or the goal is on the run as a whole."""
    if isinstance(goal, FigureWithin):
        return _figure(goal, by_key)
    if isinstance(goal, AllRunsOk):
        return _all_ok(goal, by_key)
    if isinstance(goal, WithinOf):
        return _within_of(goal, by_key)
    return None


def goals(groups: list[Group]) -> list[GoalVerdict]:
    """Every goal on configurations the run measured, in GOALS' order."""
    by_key = {g.key: g for g in groups}
    return [v for goal in GOALS if (v := decide(goal, by_key)) is not None]
