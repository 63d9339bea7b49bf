"""The project's performance goals (core/presentation.py's GOALS) judged on
a published run: a row per goal whose configurations the run measured,
what it measured and the verdict. A verdict never rests on one run or on
fewer runs than 95% needs: "holds" and "**missed**" come from settled
intervals; anything else is "not settled", saying why."""

from __future__ import annotations


from ..analyse import goals as decided
from ..analyse import questions
from ..analyse.analysis import Group, Summary
from ..core.formatting import fmt_elapsed, fmt_ratio, fmt_ratio_bound, fmt_share
from ..core.presentation import GOALS, FigureWithin, Goal, SettledShare, SuiteMinutes, WithinOf
from ..core.schema import ConfigKey, Env
from ..present.report import cell, md_text

HOLDS, MISSED, NOT_SETTLED = decided.HOLDS, "**missed**", decided.NOT_SETTLED
WORDS = {decided.HOLDS: HOLDS, decided.MISSED: MISSED, decided.NOT_SETTLED: NOT_SETTLED}
HEADER = ["goal", "measured", ""]


def against(st: Summary, low: float | None = None, high: float | None = None) -> str:
    """A figure against [low, high] (analyse/goals.within), an unsettled one
    saying why and on which side the median falls."""
    verdict = decided.within(st, low, high)
    if verdict != decided.NOT_SETTLED:
        return WORDS[verdict]
    iv = st.interval
    if iv is not None and iv.settled:
        return f"{NOT_SETTLED}: the interval reaches across the limit"
    inside = (low is None or st.median >= low) and (high is None or st.median <= high)
    why = ("1 run" if st.count == 1 else f"{fmt_share(iv.confidence)} with {st.count} runs" if iv
           else f"{st.count} runs")
    return f"{NOT_SETTLED} ({why}): the median {'meets' if inside else 'misses'} it"


def _figure(goal: FigureWithin, v: decided.GoalVerdict) -> tuple[str, str]:
    g = v.groups[0]
    if g.median(goal.metric) is None:
        return md_text(g.statuses), MISSED
    return cell(g, goal.metric), against(g.metrics[goal.metric], goal.low, goal.high)


def _within_of(goal: WithinOf, v: decided.GoalVerdict) -> tuple[str, str]:
    """Each buffer's ratio interval, as analyse/goals judged it."""
    texts = []
    for b, g, base, iv in zip(goal.buffers, v.groups[::2], v.groups[1::2], v.intervals):
        if not g.values(goal.metric) or not base.values(goal.metric):
            texts.append(f"B = {b}: no ok run")
        elif iv is None:
            texts.append(f"B = {b}: {fmt_ratio(g.median(goal.metric) / base.median(goal.metric), False)}"
                         " (1 run, no interval)")
        else:
            texts.append(f"B = {b}: {fmt_ratio(iv.estimate, False)} [{fmt_ratio_bound(iv.low)}, "
                         f"{fmt_ratio_bound(iv.high)}]"
                         + (f" ({fmt_share(iv.confidence)})" if not iv.settled else ""))
    return "; ".join(texts), WORDS[v.verdict]


def _minutes(goal: SuiteMinutes, env: Env, runs: int) -> tuple[str, str] | None:
    seconds = env.elapsed_s()
    if env.settings.suite != goal.suite or seconds is None:
        return None
    return (f"{fmt_elapsed(seconds)}, {runs:,} process runs",
            HOLDS if seconds <= goal.minutes * 60 else MISSED)


def _settled(goal: SettledShare, env: Env, asked: questions.Questions | None
             ) -> tuple[str, str] | None:
    """Each family of the run's questions on its own: holds when every family
    that has verdicts settles at least the share of them."""
    if env.settings.suite != goal.suite or asked is None:
        return None
    families = [(name, settled, total) for name, settled, total in asked.families() if total]
    if not families:
        return None
    return ("; ".join(f"{name} {settled:,} of {total:,} ({fmt_share(settled / total)})"
                      for name, settled, total in families),
            HOLDS if all(settled >= goal.share * total for _, settled, total in families)
            else MISSED)


def judge(goal: Goal, groups: dict[ConfigKey, Group], env: Env,
          asked: questions.Questions | None) -> tuple[str, str] | None:
    """(what the run measured, the verdict), or None where the run did not
    measure the goal's configurations."""
    if isinstance(goal, SuiteMinutes):
        return _minutes(goal, env, sum(len(g.rows) for g in groups.values()))
    if isinstance(goal, SettledShare):
        return _settled(goal, env, asked)
    v = decided.decide(goal, groups)
    if v is None:
        return None
    if isinstance(goal, FigureWithin):
        return _figure(goal, v)
    if isinstance(goal, WithinOf):
        return _within_of(goal, v)
    return md_text(v.groups[0].statuses), WORDS[v.verdict]


def rows(groups: list[Group], env: Env, asked: questions.Questions | None) -> list[list[str]]:
    """A row per goal the run measured (HEADER), in GOALS' order."""
    by_key = {g.key: g for g in groups}
    return [[md_text(goal.text), *found] for goal in GOALS
            if (found := judge(goal, by_key, env, asked)) is not None]
