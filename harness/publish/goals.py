"""The project's performance goals (core/presentation.py's GOALS) judged on
a published run: a row per goal whose configurations the run measured,
what it measured and the verdict. A verdict never rests on one run or on
fewer runs than 95% needs: "holds" and "**missed**" come from settled
intervals; anything else is "not settled", saying why."""

from __future__ import annotations

from datetime import datetime

from ..analyse import questions
from ..analyse.analysis import Group, Summary
from ..core.formatting import fmt_elapsed, fmt_ratio, fmt_ratio_bound
from ..core.presentation import (GOALS, AllRunsOk, FigureWithin, Goal, SettledShare, SuiteMinutes,
                                 WithinOf)
from ..core.schema import ConfigKey, Env
from ..core.stats import ratio_interval
from ..present.report import cell, md_text

HOLDS, MISSED, NOT_SETTLED = "holds", "**missed**", "not settled"
HEADER = ["goal", "measured", ""]


def against(st: Summary, low: float | None = None, high: float | None = None) -> str:
    """A figure against [low, high]: holds when its settled (95%) interval
    lies within, missed when wholly outside; otherwise not settled, saying
    on which side the median falls."""
    def inside(v: float) -> bool:
        return (low is None or v >= low) and (high is None or v <= high)
    iv = st.interval
    if iv is None or not iv.settled:
        why = ("1 run" if st.count == 1 else f"{iv.confidence:.0%} with {st.count} runs" if iv
               else f"{st.count} runs")
        return f"{NOT_SETTLED} ({why}): the median {'meets' if inside(st.median) else 'misses'} it"
    if inside(iv.low) and inside(iv.high):
        return HOLDS
    if (high is not None and iv.low > high) or (low is not None and iv.high < low):
        return MISSED
    return f"{NOT_SETTLED}: the interval reaches across the limit"


def _figure(goal: FigureWithin, groups: dict[ConfigKey, Group]) -> tuple[str, str] | None:
    g = groups.get(ConfigKey(goal.impl, goal.workload, goal.n, None))
    if g is None:
        return None
    if g.median(goal.metric) is None:
        return md_text(g.statuses), MISSED
    return cell(g, goal.metric), against(g.metrics[goal.metric], goal.low, goal.high)


def _all_ok(goal: AllRunsOk, groups: dict[ConfigKey, Group]) -> tuple[str, str] | None:
    g = groups.get(ConfigKey(goal.impl, goal.workload, goal.n, None))
    if g is None:
        return None
    return md_text(g.statuses), HOLDS if g.ok == len(g.rows) else MISSED


def _within_of(goal: WithinOf, groups: dict[ConfigKey, Group]) -> tuple[str, str] | None:
    """Each buffer's ratio interval (both sides' runs): holds when every one
    is settled at most the limit, missed when one lies wholly above it."""
    texts, said = [], []
    for b in goal.buffers:
        g = groups.get(ConfigKey(goal.impl, goal.workload, goal.n, b))
        base = groups.get(ConfigKey(goal.baseline, goal.workload, goal.n, b))
        if g is None or base is None:
            return None
        a, z = g.values(goal.metric), base.values(goal.metric)
        if not a or not z:
            texts.append(f"B = {b}: no ok run")
            said.append(MISSED)
            continue
        iv = ratio_interval(z, a)  # new / old: the implementation over its baseline
        if iv is None:
            texts.append(f"B = {b}: {fmt_ratio(g.median(goal.metric) / base.median(goal.metric), False)}"
                         " (1 run, no interval)")
            said.append(NOT_SETTLED)
            continue
        texts.append(f"B = {b}: {fmt_ratio(iv.estimate, False)} [{fmt_ratio_bound(iv.low)}, "
                     f"{fmt_ratio_bound(iv.high)}]"
                     + (f" ({iv.confidence:.0%})" if not iv.settled else ""))
        said.append(NOT_SETTLED if not iv.settled else HOLDS if iv.high <= goal.limit
                    else MISSED if iv.low > goal.limit else NOT_SETTLED)
    return "; ".join(texts), (MISSED if MISSED in said else NOT_SETTLED if NOT_SETTLED in said
                              else HOLDS)


def _minutes(goal: SuiteMinutes, env: Env, runs: int) -> tuple[str, str] | None:
    if env.settings.get("suite") != goal.suite or not env.started_at or not env.finished_at:
        return None
    seconds = (datetime.fromisoformat(env.finished_at)
               - datetime.fromisoformat(env.started_at)).total_seconds()
    return (f"{fmt_elapsed(seconds)}, {runs:,} process runs",
            HOLDS if seconds <= goal.minutes * 60 else MISSED)


def _settled(goal: SettledShare, env: Env, asked: questions.Questions | None
             ) -> tuple[str, str] | None:
    """Each family of the run's questions on its own: holds when every family
    that has verdicts settles at least the share of them."""
    if env.settings.get("suite") != goal.suite or asked is None:
        return None
    families = [(name, settled, total) for name, settled, total in asked.families() if total]
    if not families:
        return None
    return ("; ".join(f"{name} {settled:,} of {total:,} ({settled / total:.0%})"
                      for name, settled, total in families),
            HOLDS if all(settled >= goal.share * total for _, settled, total in families)
            else MISSED)


def judge(goal: Goal, groups: dict[ConfigKey, Group], env: Env,
          asked: questions.Questions | None) -> tuple[str, str] | None:
    """(what the run measured, the verdict), or None where the run did not
    measure the goal's configurations."""
    if isinstance(goal, FigureWithin):
        return _figure(goal, groups)
    if isinstance(goal, AllRunsOk):
        return _all_ok(goal, groups)
    if isinstance(goal, WithinOf):
        return _within_of(goal, groups)
    if isinstance(goal, SuiteMinutes):
        return _minutes(goal, env, sum(len(g.rows) for g in groups.values()))
    return _settled(goal, env, asked)


def rows(groups: list[Group], env: Env, asked: questions.Questions | None) -> list[list[str]]:
    """A row per goal the run measured (HEADER), in GOALS' order."""
    by_key = {g.key: g for g in groups}
    return [[md_text(goal.text), *found] for goal in GOALS
            if (found := judge(goal, by_key, env, asked)) is not None]
