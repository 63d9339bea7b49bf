"""When to run a configuration again: the sequential rules of
`run --until-ci PCT`, `run --until-settled` and `run --budget`, in one
place. After the planned repeats (the minimum), pass after pass, more runs
of the configurations whose rule still asks for one, up to their max_repeat:

- --until-ci PCT: a headline figure's median interval is unsettled or wider
  than ±PCT of the median (analysis.wide_figures, the same test the report
  warns with);
- --until-settled: the configuration is a side of a verdict the reader
  asks for (analyse/questions.py: a neighbour pair of a ranking, an
  article's claim) that is not settled yet and can still settle within the
  ceiling (runs_to_settle). The run goes to the side with fewer runs (both,
  when even): a pair is decided by both sides' runs, and the exact test's
  smallest p-value falls fastest when they stay balanced. The pass takes
  the configurations most valuable first: the open verdicts a run of it
  serves, per second it takes (a 0.5 s configuration in six open pairs goes
  before a 60 s one in one);
- --gate PCT (an A/B run that decides, class Gate): compare's gate on the
  run's two names, the first the baseline (compare.baseline_verdict). While
  no figure fails and some are undecided, each undecided figure's
  configuration runs once more on both sides, the nearest to deciding per
  second first, within the budget and up to max_repeat runs a side;
- --budget SECONDS: a pass takes, in that order, only what fits in the time
  left of the budget (counted from the first run, the minimum included),
  and the loop stops when nothing fits (`stopped` says so); `forecast`
  then says what is still open and what another 10 minutes would likely
  settle.

A configuration with no ok row failed: it is not run again. Under
--until-settled, neither is one with no ok run that timed out or failed
twice, even within the minimum (repeated): a timeout takes the whole
--timeout, a resource limit fails the same way each time, and more of them
settle nothing. Pure but for the budget's clock: the session reads the rows back after each pass
and executes what this says. docs/statistics.md ("Sequential runs") says
what repeated looks cost.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable

from .analyse.analysis import Group, group_runs, wide_figures
from .analyse.questions import ClaimVerdict, Questions, ask
from .analyse.standings import Standing
from .core.formatting import fmt_duration
from .core.metrics import METRICS
from .core.schema import ConfigKey, Env, Row, Status
from .plan.plan import Planned, configurations
from .present.compare import UNDECIDED, Verdict, baseline_verdict
from .present.noise import Noise

# 1.96 + 0.84: a two-sided 5% test with 80% power, for the runs a verdict
# needs (runs_to_settle), a forecast that orders the runs, never a verdict.
Z = 2.8
# The fewest runs a side at which a neighbour pair can settle: 4 a side give
# a two-sided exact p of 1/35 (stats.smallest_p), under the family's 5%.
FEWEST = 4
# What one run costs besides its program's wall time (launch, the
# launcher's sampling, writing the row), in seconds.
OVERHEAD_S = 0.3
# What `stopped` forecasts: the verdicts another this many seconds would settle.
MORE_S = 600.0


def repeated(p: Planned, statuses: list[Status]) -> bool:
    """Whether a planned run goes ahead, given its configuration's statuses
    so far: under --until-settled, not after a timeout or two failures with
    no ok run between them (a thread baseline that cannot start a million
    threads fails the same way every time, and may take its whole timeout
    to; a crash is cheap and may be the machine's once)."""
    if not p.until_settled or Status.OK in statuses:
        return True
    return not (Status.TIMEOUT in statuses or len(statuses) >= 2)


def runs_to_settle(base: tuple[float, ...], other: tuple[float, ...], threshold: float,
                   margin: float) -> float:
    """About how many runs a side the verdict on other/base against
    threshold needs: apart from it (the ratio's log distance) or, with a
    margin, within it, whichever comes first, from the runs' spread on the
    log scale (the normal approximation of the rank test, a forecast). inf:
    neither can settle (the estimate sits on the margin, or no spread to
    read yet is not the case: with fewer than two runs a side, FEWEST)."""
    if min(len(base), len(other)) < 2 or min(base + other) <= 0:
        return FEWEST
    la, lb = [math.log(v) for v in base], [math.log(v) for v in other]
    spread = math.sqrt((statistics.variance(la) + statistics.variance(lb)) / 2)
    distance = abs(statistics.median(lb) - statistics.median(la) - math.log(threshold))
    needed = math.inf
    for gap in (distance, math.log1p(margin) - distance if margin else 0.0):
        if gap > 0:
            needed = min(needed, 2 * (Z * spread / gap) ** 2)
    return max(FEWEST, needed) if needed < math.inf else math.inf


@dataclasses.dataclass(frozen=True)
class Open:
    """A verdict not settled yet: its two configurations and their ok runs."""
    keys: tuple[ConfigKey, ConfigKey]
    runs: tuple[int, int]
    needed: float  # runs_to_settle


def _open(q: Questions) -> list[Open]:
    out = []
    for r in q.rankings:
        for p in r.pairs:
            if not p.settled:
                out.append(_open_pair(p))
    out += [_open_claim(c) for c in q.claims if not c.settled]
    return out


def _open_pair(p: Standing) -> Open:
    a, b = p.leader.values(p.metric), p.other.values(p.metric)
    return Open((p.leader.key, p.other.key), p.runs, runs_to_settle(a, b, 1.0, p.margin))


def _open_claim(c: ClaimVerdict) -> Open:
    a, b = c.den.values(c.claim.den.metric), c.num.values(c.claim.num.metric)
    margin = METRICS[c.claim.num.metric].margin if c.claim.above == 1.0 else 0.0
    return Open((c.num.key, c.den.key), c.runs,
                runs_to_settle(a, b, c.claim.above, margin))


def wanting(found: list[Open], reps: dict[ConfigKey, int], ceiling: dict[ConfigKey, int],
            cost: dict[ConfigKey, float], budget_s: float | None = None) -> list[ConfigKey]:
    """The configurations --until-settled gives one more run this pass, in
    the order they should run. Each open verdict that can settle within
    both sides' ceilings aims at the runs a side runs_to_settle forecasts;
    its step this pass is one run of the side with fewer runs (both when
    even), since a pair is decided by both sides' runs. The verdicts go
    cheapest to finish first (the seconds of the runs they still need,
    shortest job first: the most verdicts per second), a run shared by
    several counting once. With a budget, a step that does not fit is left
    for a cheaper one, and a long shot (forecast past the ceiling, a
    forecast from few runs) gets the time the others leave over; without
    one, it gets none."""
    steps = []
    for o in found:
        (a, b), (n_a, n_b) = o.keys, o.runs
        long_shot = o.needed > min(ceiling.get(a, 0), ceiling.get(b, 0))
        if long_shot and budget_s is None:
            continue  # cannot settle within the ceiling: more runs would buy nothing
        # aim at the forecast (a long shot: the ceiling, on time the budget leaves over)
        top = {k: ceiling.get(k, 0) if long_shot else
               min(ceiling.get(k, 0), max(FEWEST, math.ceil(o.needed))) for k in (a, b)}
        due = {k: reps.get(k, 0) < top[k] for k in (a, b)}
        sides = [k for k in ([a, b] if n_a == n_b else [a] if n_a < n_b else [b]) if due[k]] \
            or [k for k in (a, b) if due[k]]
        if sides:
            left = sum(max(0, top[k] - n) * cost.get(k, 1.0) for k, n in ((a, n_a), (b, n_b)))
            steps.append(((long_shot, left), [k.sort_key for k in sides], sides))
    chosen: dict[ConfigKey, None] = {}
    spent = 0.0
    for _, _, sides in sorted(steps, key=lambda s: (s[0], s[1])):
        new = [k for k in sides if k not in chosen]
        step = sum(cost.get(k, 1.0) for k in new)
        if budget_s is not None and spent + step > budget_s:
            continue
        chosen.update(dict.fromkeys(new))
        spent += step
    return list(chosen)


def _cost(g: Group) -> float:
    """The seconds a run of the configuration takes: its runs' mean wall time."""
    walls = [r.wall_s for r in g.rows if r.wall_s is not None]
    return OVERHEAD_S + (statistics.fmean(walls) if walls else 1.0)


def _state(rows: Iterable[Row], runs: list[Planned]
           ) -> tuple[dict[ConfigKey, Group], dict[ConfigKey, Planned], dict[ConfigKey, int],
                      dict[ConfigKey, int], Questions | None]:
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
    floors = {p.impl.id for p in runs if p.impl.floor}
    q = ask(judged, floors) if ceiling else None
    return groups, last_of, reps, ceiling, q


def more_runs(rows: Iterable[Row], runs: list[Planned], budget_s: float | None = None
              ) -> list[Planned]:
    """The next pass, from the rows recorded so far (every recorded rep
    counts toward max_repeat, failed ones too): --until-ci's configurations
    in plan order, then --until-settled's in wanting's order; with a
    budget, only what fits in budget_s seconds."""
    groups, last_of, reps, ceiling, q = _state(rows, runs)
    cost = {k: _cost(g) for k, g in groups.items()}
    due: dict[ConfigKey, Planned] = {}
    for key, last in last_of.items():
        g = groups.get(key)
        rep = max(last.rep, reps.get(key, 0)) + 1
        if last.max_repeat is not None and rep <= last.max_repeat and g is not None and g.ok:
            due[key] = dataclasses.replace(last, rep=rep)
    widening = [p for key, p in due.items()
                if p.until_ci is not None and wide_figures(groups[key], p.until_ci)]
    spent = 0.0
    if budget_s is not None:
        fit = []
        for p in widening:
            if spent + cost[p.key] <= budget_s:
                fit.append(p)
                spent += cost[p.key]
        widening = fit
    settling = wanting(_open(q), reps, ceiling, cost,
                       None if budget_s is None else budget_s - spent) if q is not None else []
    taken = {p.key for p in widening}
    return widening + [due[k] for k in settling
                       if k in due and due[k].until_settled and k not in taken]


def forecast(rows: Iterable[Row], runs: list[Planned], seconds: float = MORE_S) -> str:
    """What is still open, and how many of the open verdicts another
    `seconds` of runs would likely settle (their sides' runs_to_settle,
    cheapest first)."""
    groups, _, reps, ceiling, q = _state(rows, runs)
    if q is None:
        return ""
    found = _open(q)
    if not found:
        return "every verdict the run asks is settled"
    costs = []
    for o in found:
        extra = sum(max(0.0, min(o.needed, ceiling.get(k, 0)) - n) * _cost(groups[k])
                    for k, n in zip(o.keys, o.runs) if k in groups)
        costs.append(extra if o.needed <= min(ceiling.get(k, 0) for k in o.keys) else math.inf)
    spent, likely = 0.0, 0
    for c in sorted(costs):
        if spent + c > seconds:
            break
        spent, likely = spent + c, likely + 1
    return (f"{len(found)} verdict{'s' if len(found) != 1 else ''} still open; another "
            f"{fmt_duration(seconds)} of runs would likely settle about {likely} of them")


class Budgeted:
    """The rules with a time budget (run --budget): each pass fits in what
    is left of budget_s, counted on `clock` from when this was made (the
    first run; a fake clock in tests)."""

    def __init__(self, budget_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget_s, self.clock = budget_s, clock
        self.started = clock()
        self.stopped = ""  # set when the budget ends a run with verdicts open

    repeated = staticmethod(repeated)

    def left(self) -> float:
        return self.budget_s - (self.clock() - self.started)

    def more_runs(self, rows: Iterable[Row], runs: list[Planned]) -> list[Planned]:
        table = list(rows)
        unbounded = more_runs(table, runs)
        fits = more_runs(table, runs, max(0.0, self.left()))
        if len(fits) < len(unbounded):
            self.stopped = f"the budget of {fmt_duration(self.budget_s)} ends the runs"
        return fits


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

    def left(self) -> float:
        return self.budget_s - (self.clock() - self.started)

    def verdict(self, groups: list[Group]) -> Verdict:
        """compare's gate on the runs so far (the run's own env.json and
        directory are the session's to add: compare.compare_baseline)."""
        return baseline_verdict(groups, self.baseline, self.fail_above, Env(), Path("."),
                                noise=self.noise)

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
        nearest: dict[ConfigKey, float] = {}  # each configuration's runs a side to its nearest decision
        for c, ch in v.gated(UNDECIDED):
            need = ch.runs_to_decide(self.fail_above, v.family)
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
            seconds = sum(_cost(groups[k]) for k in sides)
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
            why = ([f"the budget of {fmt_duration(self.budget_s)} ends the runs"] if skipped
                   else []) + ([f"{capped} configuration{'s are' if capped != 1 else ' is'} at "
                                f"--max-repeat ({self.max_repeat} runs a side)"] if capped
                               else []) or ["a side with no ok run is not run again"]
            self.stopped = f"the gate stays undecided: {'; '.join(why)}"
        return chosen
