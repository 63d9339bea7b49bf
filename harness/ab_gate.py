"""The rule of run --gate PCT: an A/B run that decides. The run's two
names, the first the baseline, are compared by compare's gate
(analyse/gate.py: baseline_verdict) after the minimum and after each pass;
while no figure fails and some are undecided, each undecided figure's
configuration runs once more on both sides, the nearest to deciding per
second first, within the budget and up to max_repeat runs a side. The
other sequential rules (--until-ci, --until-settled, --budget) are
sequential.py's; docs/statistics.md ("An A/B run that decides") says what
this one's looks cost.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Callable, Iterable

from .analyse.analysis import Group, group_runs
from .analyse.gate import UNDECIDED, Verdict, baseline_verdict, gate_looks
from .analyse.noise import Noise
from .core.formatting import fmt_duration
from .core.schema import ConfigKey, Env, Row
from .plan.plan import Planned, configurations
from .sequential import outgrown, repeated, run_seconds, too_dear


def most_runs(runs: list[Planned], estimate: Callable[[Planned], float], max_repeat: int,
              budget_s: float) -> tuple[int, float]:
    """The most runs run --gate may make, and the seconds of runs it may
    take: the minimum (runs) whole, then at most max_repeat runs a side of
    each configuration, as many of them as fit in what the minimum leaves
    of the budget (counted cheapest first: the most there can be). A pass
    takes only what fits in the budget's time left, so past the minimum the
    budget bounds the time (estimate: each run's, as the progress line's)."""
    minimum = sum(estimate(p) for p in runs)
    extra = sorted(estimate(p) for p in configurations(runs).values()
                   for _ in range(max_repeat - p.rep))
    count, spent = 0, minimum
    for seconds in extra:
        if spent + seconds > budget_s:
            break
        count, spent = count + 1, spent + seconds
    return len(runs) + count, max(minimum, min(budget_s, minimum + sum(extra)))


class Gate:
    """The rule of run --gate PCT: an A/B run that decides. After the
    minimum, pass after pass, compare's gate on the run's two names (the
    baseline the first: compare.baseline_verdict, with the calibration's
    floors when given) decides what runs next. A failing figure, or every
    figure decided, ends the runs. Otherwise each configuration with an
    undecided figure runs once more on both sides (a figure is decided by
    both sides' runs), the nearest to deciding per second first: the runs a
    side its nearest figure still needs (Change.runs_to_decide, a forecast)
    times the seconds a run of both sides takes. A pass takes only what fits
    in the time left of budget_s (counted on `clock` from when this was
    made: the first run), and no side beyond max_repeat runs; a side with no
    ok run is not run again (nothing to judge against). `stopped` says why
    the runs ended with figures undecided."""

    def __init__(self, baseline: str, fail_above: float, max_repeat: int, budget_s: float,
                 noise: Noise | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.baseline, self.fail_above, self.max_repeat = baseline, fail_above, max_repeat
        self.budget_s, self.noise, self.clock = budget_s, noise, clock
        self.started = clock()
        self.stopped = ""

    repeated = staticmethod(repeated)
    outgrown = staticmethod(outgrown)
    too_dear = staticmethod(too_dear)

    def left(self) -> float:
        return self.budget_s - (self.clock() - self.started)

    def verdict(self, groups: list[Group]) -> Verdict:
        """compare's gate on the runs so far, the 5% spent over the looks
        (analyse/gate.py: gate_looks; the run's own env.json and directory
        are the session's to add: compare.compare_baseline)."""
        return baseline_verdict(groups, self.baseline, self.fail_above, Env(), Path("."),
                                noise=self.noise, looks=gate_looks(self.max_repeat))

    def more_runs(self, rows: Iterable[Row], runs: list[Planned]) -> list[Planned]:
        table = list(rows)
        found = group_runs(table)
        v = self.verdict(found)
        if v.failures or not v.undecided:
            return []  # decided: a failure decides the whole gate, as every pass does
        groups = {g.key: g for g in found}
        last_of = configurations(runs)
        reps: dict[ConfigKey, int] = {}
        for r in table:
            reps[ConfigKey.of(r)] = max(reps.get(ConfigKey.of(r), 0), r.rep)
        # each configuration's runs a side to its nearest decision
        nearest: dict[ConfigKey, float] = {}
        for c, ch in v.gated(UNDECIDED):
            need = ch.runs_to_decide(self.fail_above, v.family, v.rate)
            still = max(1, need - min(ch.runs)) if need is not None else math.inf
            nearest[c.key] = min(nearest.get(c.key, math.inf), still)
        steps, capped = [], 0
        for order, (key, still) in enumerate(nearest.items()):
            sides = (dataclasses.replace(key, impl=self.baseline), key)
            if not all(k in last_of and k in groups and groups[k].ok for k in sides):
                continue
            if any(reps.get(k, 0) >= self.max_repeat for k in sides):
                capped += 1
                continue
            seconds = sum(run_seconds(groups[k]) for k in sides)
            rep = max(reps.get(k, 0) for k in sides) + 1
            # ABBA: the side that runs first alternates pass by pass, so a
            # drift between a pair's two runs falls on both sides alike
            ordered = sides if rep % 2 else sides[::-1]
            steps.append((still * seconds, order, seconds,
                          [dataclasses.replace(last_of[k], rep=rep) for k in ordered]))
        chosen: list[Planned] = []
        left, skipped = self.left(), 0
        for _, _, seconds, pair in sorted(steps, key=lambda s: (s[0], s[1])):
            if seconds > left:
                skipped += 1
                continue
            chosen += pair
            left -= seconds
        if not chosen:
            why = []
            if skipped:
                why.append(f"the budget of {fmt_duration(self.budget_s)} ends the runs")
            if capped:
                why.append(f"{capped} configuration{'s are' if capped != 1 else ' is'} at "
                           f"--max-repeat ({self.max_repeat} runs a side)")
            if more := len(v.failing_more):
                why.append(f"{more} configuration{'s fail' if more != 1 else ' fails'} more "
                           "often on the candidate than on the baseline")
            self.stopped = ("the gate stays undecided: "
                            + ("; ".join(why) or "a side with no ok run is not run again"))
        return chosen
