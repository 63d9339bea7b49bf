"""When to run a configuration again: the sequential rules of
`run --until-ci PCT`, `run --until-settled` and `run --budget`, in one
place. After the planned repeats (the minimum), pass after pass, more runs
of the configurations whose rule still asks for one, up to their max_repeat:

- --until-ci PCT: a headline figure's median interval is unsettled or wider
  than ±PCT of the median (analysis.wide_figures, the same test the report
  warns with);
- --until-settled: the configuration is a side of a verdict the reader
  asks for (analyse/questions.py: a neighbour pair of a ranking, an
  article's claim, a goal) that is not settled yet and can still settle
  within the ceiling (runs_to_settle), the headline rankings first
  (Allocation: each of their configurations to 2 runs, then the claims
  and the nearest cut of a headline ranking that is one tier, then their
  pairs, then the rest). A pass takes both sides of each
  chosen verdict to the runs it aims at (_aim): a pair is decided by both
  sides' runs, and the exact test's smallest p-value falls fastest when
  they stay balanced. The verdicts go cheapest to finish for their share
  of their family first (wanting);
- --gate PCT: an A/B run's own rule, ab_gate.Gate;
- --budget SECONDS: a pass takes, in that order, only what fits in a
  slice of the time left of the budget (counted from the first run, the
  minimum included), and the loop stops when nothing fits (`stopped` says so); `forecast`
  then says what is still open and what another 10 minutes would likely
  settle.

What runs again is a unit (Unit): a configuration, or a rate ladder whole,
its steps in one repeat (a verdict on a ladder's figure, or on one of its
steps, asks for another repeat of the ladder, at the cost of its steps'
runs), so that a ladder's figures are always read from whole repeats; a
repeat after those its earlier repeats sustained a step in starts two rungs
below the least they sustained (ladder.seeded_start), its lower steps not
run again.

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
import heapq
import math
import statistics
import time
from statistics import NormalDist
from typing import Callable, Iterable, Mapping

from .analyse.analysis import Group, group_runs, wide_figures
from .analyse.goals import MEDIAN_RUNS, GoalVerdict
from .analyse.questions import ClaimVerdict, Questions, Ranking, ask
from .analyse.ranks import RankIntervals, all_rank_intervals
from .analyse.standings import Standing
from .analyse.styles import AHEAD, APART, ServerStyles
from .core.claims import CLAIMS, Claim
from .core.formatting import fmt_duration
from .core.ladder import ladder_key, seeded_start
from .core.metrics import KNEE, METRICS, SUSTAINED
from .core.presentation import FigureWithin, WithinOf
from .core.schema import ConfigKey, Row, Status
from .core.workloads import RATE
from .plan.plan import Planned, configurations, held, start_times

# 1.96 + 0.84: a two-sided 5% test with 80% power, for the runs a verdict
# needs (runs_to_settle), a forecast that orders the runs, never a verdict.
Z = 2.8
# The fewest runs a side at which a neighbour pair can settle: 4 a side give
# a two-sided exact p of 1/35 (stats.smallest_p), under the family's 5%.
FEWEST = 4
# What a verdict with cheap sides (a run of each at most CHEAP_S seconds)
# aims at: 5 a side give 1/126. The family's rule (Benjamini-Hochberg) takes
# a p-value of 1/35 only when about three in ten of its tests are that low;
# pairs at 1/126 need one in twelve, so the cheap ones carry the dear ones.
AIM = 5
CHEAP_S = 2.0
# What one run costs besides its program's wall time (launch, the
# launcher's sampling, writing the row), in seconds.
OVERHEAD_S = 0.3
# The most of a --budget a configuration's first run may be expected to
# take (plan/timeouts.least_expected_s), or it is recorded, not run
# (Budgeted.too_dear): java-platform's chain-await at 1M, a million threads
# one after another, at least 360 s from its 7.3 s at 20k, was cut at the
# 300-s ceiling in the default run of 2026-12-02, a ninth of its 45 minutes
# on a configuration that has never finished here. A twentieth, 135 s of 45
# minutes, is above the dearest run that finishes (python-asyncio's chain at
# 1M: 46-86 s a run on the published pages).
SHARE = 1 / 20
# The shortest slice of the budget a pass may take (Budgeted.more_runs).
PASS_S = 300.0
# What `stopped` forecasts: the verdicts another this many seconds would settle.
MORE_S = 600.0


@dataclasses.dataclass(frozen=True)
class Allocation:
    """How --until-settled weighs the verdicts (docs/statistics.md,
    "Sequential runs"). NOW: the headline rankings first, every headline
    configuration at least headline_runs runs (a second mode can show only
    from a second run). BEFORE: every verdict of a family weighs the same
    (the allocation of the runs published before 2026-12-02, kept for the
    replays of docs/studies/allocation.md). dear_share: the share of a
    --budget past which a configuration's first run is not started
    (Budgeted.too_dear); None, every run starts. floor_runs: the floor's
    headline configurations get headline_runs too. HEADLINE_FIRST: the
    allocation of the default run of 2026-12-02, without either. cuts:
    the pairs across the nearest cut of a headline ranking that is one tier
    are verdicts of their own (_open_cuts); UNCUT, the allocation of the
    default run of 2026-12-03, without them."""
    headline_first: bool = True
    headline_runs: int = 2
    dear_share: float | None = SHARE
    floor_runs: bool = True
    cuts: bool = True  # a headline ranking that is one tier asks for its nearest cut (_open_cuts)


NOW = Allocation()
UNCUT = Allocation(cuts=False)
HEADLINE_FIRST = Allocation(dear_share=None, floor_runs=False, cuts=False)
BEFORE = Allocation(headline_first=False, headline_runs=1, dear_share=None, floor_runs=False,
                    cuts=False)


def headline(r: Ranking) -> bool:
    """Whether a ranking is a headline one (ranks.is_headline, as questions
    sets it: the warm pass and peak RSS at each workload's articles' size,
    the figures the articles published; every other size and the cold pass
    come after)."""
    return r.headline


def repeated(p: Planned, statuses: list[Status]) -> bool:
    """Whether a planned run goes ahead, given its configuration's statuses
    so far: under --until-settled, not after a timeout or two failures with
    no ok run between them (a thread baseline that cannot start a million
    threads fails the same way every time, and may take its whole timeout
    to; a crash is cheap and may be the machine's once)."""
    if not p.until_settled or Status.OK in statuses:
        return True
    return not (Status.TIMEOUT in statuses or len(statuses) >= 2)


def too_dear(p: Planned, expected_s: float | None) -> float | None:
    """Without a budget no run is too dear to start (None); with one,
    Budgeted.too_dear."""
    return None


# The failures whose cause grows with a configuration's size: it ran out of
# its time (the suites' timeouts grow far less than their sizes: chain's
# 30 s at 20k, 90 s at 1M), of its memory, or its tasks did not all overlap
# (their start outlasted the sleep). A crash is left out, as in repeated():
# it may be the machine's once.
GROWING = (Status.TIMEOUT, Status.OOM, Status.INVALID)


def outgrown(p: Planned, statuses: Mapping[ConfigKey, list[Status]]) -> ConfigKey | None:
    """Under --until-settled, the smaller configuration of p's family
    (ConfigKey.family: the same but for its size) whose runs so far failed
    by a limit that grows with size (GROWING), none ok: p would fail the same
    way, later, so it is recorded, not run (csharp-threads took 84 s to be
    invalid at 100k sleeping tasks and its whole 300 s timeout at 1M after
    its 10k failed so, in the default run of 2026-11-28 evening). None: p
    runs."""
    size = p.key.size
    if not p.until_settled or size is None:
        return None
    for key, seen in statuses.items():
        smaller = key.size
        if (smaller is not None and smaller < size and key.family == p.key.family
                and Status.OK not in seen and any(s in GROWING for s in seen)):
            return key
    return None


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
    """A verdict not settled yet: its two configurations and their ok runs;
    weight, its share of its family (each family's count of settled
    verdicts is reported on its own: a claim is one of 12, a pair one of
    hundreds)."""
    keys: tuple[ConfigKey, ...]  # a pair's or claim's two; a goal's one or more
    runs: tuple[int, ...]
    needed: float  # runs_to_settle
    weight: float = 1.0
    # a neighbour pair: its two sides are neighbours because of the medians
    # its forecast reads, so a close pair's gap is overstated (the order was
    # chosen by it) and a forecast past the ceiling is rougher than a
    # claim's or a goal's, whose sides were named before any run
    ranked: bool = False
    # a pair of a headline ranking (headline()), or a headline configuration
    # short of Allocation.headline_runs: under Allocation.headline_first,
    # these go before every verdict but the claims (_tier)
    headline: bool = False
    aim: int | None = None  # the runs it aims at, where not its forecast's (_aim)
    claim: bool = False  # an article's claim
    # a pair across the nearest cut of a headline ranking that is one tier
    # (_open_cuts): under Allocation.headline_first, asked as a claim is
    cut: bool = False


def _open(q: Questions, allocation: Allocation = NOW,
          ranked: Iterable[RankIntervals] = ()) -> list[Open]:
    # Not the verdicts held open by a bound from below (not measured): the
    # bound stays one however often its ladder runs again.
    first = [r for r in q.rankings if allocation.headline_first and headline(r)]
    top = [p for r in first for p in r.pairs if p.measured]
    pairs = [p for r in q.rankings if not any(r is f for f in first)
             for p in r.pairs if p.measured]
    claims = [c for c in q.claims if c.measured]
    return (_short(first, allocation.headline_runs, allocation.floor_runs)
            + [dataclasses.replace(_open_pair(p), weight=1 / len(top), headline=True)
               for p in top if not p.settled]
            + [dataclasses.replace(_open_pair(p), weight=1 / len(pairs))
               for p in pairs if not p.settled]
            + [dataclasses.replace(_open_claim(c), weight=1 / len(claims), claim=True)
               for c in claims if not c.settled]
            + [dataclasses.replace(o, weight=1 / len(q.goals))
               for g in q.goals if not g.settled and (o := _open_goal(g)) is not None]
            + _open_styles(q.styles)
            + (_open_cuts(list(ranked), allocation.headline_runs)
               if allocation.cuts and allocation.headline_first else []))


def _open_cuts(ranked: list[RankIntervals], runs: int) -> list[Open]:
    """The pairs still unsettled across the nearest cut of each headline
    ranking that is one tier once its configurations have their `runs`
    (RankIntervals.nearest_cut), each a verdict apart (not level: a cut
    needs the worse side placed below), asked as a claim is: a reader's
    question by name (which tier is my runtime in?), the cut weighing as
    one of the headline rankings. Their sides are rarely neighbours, so no
    neighbour pair asks for them: in the sleep 1M peak RSS ranking of
    2026-12-03, the cut after 14th waited on elixir (2 runs, 2.6 GiB)
    against java-virtual (5 runs, 0.9-1.2 GiB) alone."""
    top = [r for r in ranked if r.headline]
    return [Open((a.group.key, b.group.key), (a.runs, b.runs),
                 runs_to_settle(a.group.values(r.metric), b.group.values(r.metric), 1.0, 0.0),
                 weight=1 / (len(top) * len(cut.pairs)), ranked=True, headline=True, cut=True)
            for r in top if min(p.runs for p in r.places) >= runs and (cut := r.nearest_cut())
            for a, b in cut.pairs]


# Repeats of a server's two best styles' ladders that its question (which
# style sustains the most: analyse/styles.py) asks for: a repeat's spread
# and an interval across repeats need two. The bracket decides; more
# repeats widen it rather than narrow it, so they ask for no more.
STYLE_REPEATS = 2


def _open_styles(found: list[ServerStyles]) -> list[Open]:
    """Each server's best and runner-up styles short of STYLE_REPEATS, an
    open verdict as a claim is (seed004's own question), one of the run's
    servers; none where both are bounds (no repeat can order them)."""
    asked = [s for s in found if s.verdict in (AHEAD, APART)]
    return [Open((best.ladder.key, other.ladder.key), (best.repeats, other.repeats),
                 float(STYLE_REPEATS), weight=1 / len(asked), aim=STYLE_REPEATS, claim=True)
            for s in asked for best, other in [s.styles[:2]]
            if min(best.repeats, other.repeats) < STYLE_REPEATS]


def _short(first: list[Ranking], runs: int, floor: bool) -> list[Open]:
    """The headline configurations with fewer than `runs` runs of their
    figure, each an open verdict of its own that aims at `runs`: a
    configuration's second mode cannot show in one run. With floor, the
    floor's too: its column (the leader's multiple of it) has an interval
    from 2."""
    short = {g.key: len(g.values(r.metric)) for r in first
             for g in (*r.order, *([r.floor] if r.floor and floor else []))
             if len(g.values(r.metric)) < runs}
    return [Open((key,), (n,), float(runs), headline=True, aim=runs) for key, n in short.items()]


def _open_pair(p: Standing) -> Open:
    a, b = p.leader.values(p.metric), p.other.values(p.metric)
    return Open((p.leader.key, p.other.key), p.runs, runs_to_settle(a, b, 1.0, p.margin),
                ranked=True)


def _open_claim(c: ClaimVerdict) -> Open:
    a, b = c.den.values(c.claim.den.metric), c.num.values(c.claim.num.metric)
    return Open((c.num.key, c.den.key), c.runs, claim_runs(c.claim, a, b))


def claim_runs(c: Claim, den: tuple[float, ...], num: tuple[float, ...]) -> float:
    """runs_to_settle for a claim: its side of its threshold; for an "about
    equal" claim (near), the nearer of its two bounds, which the interval
    must clear either way (inside both: holds; outside one: does not),
    not the distance from the threshold itself, which settles nothing."""
    if c.near and den and num and min(den + num) > 0:
        ratio = statistics.median(num) / statistics.median(den)
        bound = c.above * c.near if ratio >= c.above else c.above / c.near
        return runs_to_settle(den, num, bound, 0.0)
    margin = 0.0
    if c.above == 1.0:  # questions.claim_margin, from the values at hand
        margin = METRICS[c.num.metric].level_margin(
            *(statistics.median(side) for side in (den, num) if side))
    return runs_to_settle(den, num, c.above, margin)


def _open_goal(v: GoalVerdict) -> Open | None:
    """An open goal: a figure's median interval clear of its bounds (at least
    MEDIAN_RUNS runs), or a ratio's interval clear of its limit at every
    buffer (runs_to_settle); None: more runs cannot settle it."""
    goal = v.goal
    if isinstance(goal, FigureWithin):
        values = v.groups[0].values(goal.metric)
        runs = (len(values),)
        bounds = [b for b in (goal.low, goal.high) if b]
        if len(values) < 2 or min(values) <= 0 or not bounds:
            return Open(v.keys, runs, float(MEDIAN_RUNS))
        logs = [math.log(x) for x in values]
        gap = min(abs(statistics.median(logs) - math.log(b)) for b in bounds)
        # the median's standard error is about 1.25 sd / sqrt(n) (normal data)
        spread = 1.25 * statistics.stdev(logs)
        needed = (Z * spread / gap) ** 2 if gap > 0 else math.inf
        return Open(v.keys, runs, max(float(MEDIAN_RUNS), needed))
    if isinstance(goal, WithinOf):
        sides = [g.values(goal.metric) for g in v.groups]
        needed = max(runs_to_settle(base, other, goal.limit, 0.0)
                     for other, base in zip(sides[::2], sides[1::2]))
        return Open(v.keys, tuple(len(x) for x in sides), needed)
    return None


def _aim(o: Open, ceiling: dict[ConfigKey, int], cost: dict[ConfigKey, float],
         allocation: Allocation = NOW) -> int:
    """The runs a side an open verdict aims at: its own (Open.aim), else its
    forecast (runs_to_settle), at least FEWEST, and AIM where both sides
    are cheap or (NOW) for a claim, one more than it has where it has that
    many already; never past either side's ceiling."""
    cap = min(ceiling.get(k, 0) for k in o.keys)
    if o.aim is not None:
        return min(cap, o.aim)
    # a claim is decided by the exact test alone, where 4 against 4 gives at
    # best 1/35, above the cut Benjamini-Hochberg took in every 45-minute
    # run: a claim aims at AIM; a pair below 5 a side borrows a variance
    cheap = max(cost.get(k, 1.0) for k in o.keys) <= CHEAP_S
    fewest = AIM if cheap or ((o.claim or o.cut) and allocation.headline_first) else FEWEST
    aim = min(cap, max(fewest, math.ceil(o.needed)) if o.needed < math.inf else cap)
    # still open at its aim (the family's rule wants a lower p than its runs
    # give, or the forecast was short): one more run a side
    return min(cap, max(o.runs) + 1) if min(o.runs) >= aim else aim


def _odds(o: Open, aim: int) -> float:
    """The chance that the verdict settles at `aim` runs a side, from its
    forecast: the power of the test runs_to_settle sizes (Z, 80% at the
    forecast), Phi(Z sqrt(aim / needed) - 1.96); about 2.5% where the
    forecast is infinite."""
    ratio = 0.0 if o.needed == math.inf else aim / o.needed
    return NormalDist().cdf(Z * math.sqrt(ratio) - 1.96)


def wanting(found: list[Open], reps: dict[ConfigKey, int], ceiling: dict[ConfigKey, int],
            cost: dict[ConfigKey, float], budget_s: float | None = None,
            allocation: Allocation = NOW) -> list[ConfigKey]:
    """The runs --until-settled adds this pass, a configuration once per run,
    in the order they should run. Each open verdict that can settle within
    both sides' ceilings takes both sides to the runs it aims at (_aim):
    a pair is decided by both sides' runs, and the exact test's smallest
    p-value falls fastest when they stay balanced. The verdicts go cheapest
    to finish first for their weight (a claim, one of its family's dozen,
    before a neighbour pair of the same cost, one of hundreds), counting
    the runs already taken this pass as free (shortest job first, a run
    shared by several verdicts paid once: the most of each family settled
    per second), in expectation: the cost over the weight and over the
    odds of settling at the aim (_odds). With a budget, a verdict whose
    runs do not fit is left for a cheaper one; a long shot (forecast past
    the ceiling) aims at the ceiling, a claim or goal at its lower odds
    (one forecast a little past it can still go before pairs of
    hundreds), a neighbour pair after every other verdict (Open.ranked);
    without a budget, a long shot gets none. The runs come round by round (every chosen
    configuration's next run before any one's second), so a drift during
    the pass falls on every side alike."""
    steps: list[tuple[int, Open, int, float]] = []
    for o in found:
        long_shot = o.needed > min(ceiling.get(k, 0) for k in o.keys)
        if long_shot and budget_s is None:
            continue  # cannot settle within the ceiling: more runs would buy nothing
        aim = _aim(o, ceiling, cost, allocation)
        steps.append((_tier(o, long_shot, allocation), o, aim, _odds(o, aim)))
    added = _cheapest_first(steps, dict(reps), cost, budget_s)
    return [k for round_no in range(max(added.values(), default=0))
            for k, n in added.items() if n > round_no]


def _cheapest_first(steps: list[tuple[int, Open, int, float]], planned: dict[ConfigKey, int],
                    cost: dict[ConfigKey, float],
                    budget_s: float | None) -> dict[ConfigKey, int]:
    """wanting's choice, one verdict at a time: the step of least (tier,
    cost of its runs still to plan over weight and odds, its keys), ties by
    the order given, until none is left or fits. A heap keyed by each
    step's priority, a step's entry replaced when a chosen one plans runs
    of a configuration it shares (its cost can only fall then): the same
    choices as taking the least of all steps each time, in n log n where
    that was n^2 (a pass of the default suite weighs about a thousand)."""
    def extra(aim: int, keys: tuple[ConfigKey, ...]) -> float:
        return sum(max(0, aim - planned.get(k, 0)) * cost.get(k, 1.0) for k in set(keys))

    ties = [[k.sort_key for k in o.keys] for _, o, _, _ in steps]

    def entry(i: int) -> tuple:
        tier, o, aim, odds = steps[i]
        return ((tier, extra(aim, o.keys) / (o.weight * odds), ties[i]), i, version[i])

    sharing: dict[ConfigKey, list[int]] = {}
    for i, (_, o, _, _) in enumerate(steps):
        for k in set(o.keys):
            sharing.setdefault(k, []).append(i)
    version = [0] * len(steps)
    heap = [entry(i) for i in range(len(steps))]
    heapq.heapify(heap)
    done = [False] * len(steps)
    added: dict[ConfigKey, int] = {}
    spent = 0.0
    while heap:
        _, i, seen = heapq.heappop(heap)
        if done[i] or seen != version[i]:
            continue  # chosen already, or its priority has fallen since
        done[i] = True
        _, o, aim, _ = steps[i]
        step = extra(aim, o.keys)
        if step <= 0 or (budget_s is not None and spent + step > budget_s):
            continue
        for k in dict.fromkeys(o.keys):
            more = max(0, aim - planned.get(k, 0))
            planned[k] = planned.get(k, 0) + more
            added[k] = added.get(k, 0) + more
        spent += step
        for j in {j for k in set(o.keys) for j in sharing[k] if not done[j]}:
            version[j] += 1
            heapq.heappush(heap, entry(j))
    return added


def _tier(o: Open, long_shot: bool, allocation: Allocation) -> int:
    """The order of the verdicts before their cost: a headline configuration
    short of its runs (0), an article's claim or a one-tier ranking's cut
    (1: a dozen, most of them at the headline sizes), a headline pair (2),
    every other verdict (3), a neighbour pair forecast past the ceiling (4)."""
    if o.headline and not o.ranked:
        return 0
    if allocation.headline_first and (o.claim or o.cut):
        return 1
    if long_shot and o.ranked:
        return 4
    return 2 if o.headline else 3


def run_seconds(g: Group, p: Planned | None = None) -> float:
    """The seconds a run of the configuration takes: its runs' mean wall
    time, plus what a run costs besides (OVERHEAD_S). A run of
    --adaptive-sleep (p, its planned run) counts the sleep its next run
    will have (plan.held), not the one each earlier run had: the first
    run sleeps as long as the part allows when nothing is known (5 s at
    10k tasks), the next ones about a second, and a cost read from the
    first would price the cheapest sets of the run among its dearest."""
    sleep_s = None
    if p is not None and p.adaptive_sleep:
        sleep_s = held(p, start_times(g.rows).get(g.key, [])).duration_ms / 1000
    walls = [r.wall_s + (r.iterations or 1) * (sleep_s - r.duration_ms / 1000)
             if sleep_s is not None and r.duration_ms is not None else r.wall_s
             for r in g.rows if r.wall_s is not None]
    return OVERHEAD_S + (statistics.fmean(walls) if walls else 1.0)


def ladder_seconds(steps: Iterable[Group]) -> float:
    """The seconds a repeat of a rate ladder takes: the mean, over its
    repeats, of the runs of its steps in that repeat (each as run_seconds
    counts it; a step not run past the ladder's end costs nothing)."""
    by_rep: dict[int, list[Row]] = {}
    for g in steps:
        for r in g.rows:
            if r.wall_s is not None:
                by_rep.setdefault(r.rep, []).append(r)
    return (statistics.fmean(spent_before(rows) for rows in by_rep.values()) if by_rep
            else OVERHEAD_S + 1.0)


# The ladders' steps a claim reads (core/claims.py): a seeded repeat of
# their ladder runs them too, however far below its start.
CLAIMED_STEPS = frozenset(k for c in CLAIMS for side in (c.num, c.den)
                          if (k := side.key()).param(RATE.name) is not None)


@dataclasses.dataclass(frozen=True)
class Unit:
    """What one more run of a verdict's side is: a run of a configuration,
    or a repeat of a whole rate ladder, each of its steps at once. A
    ladder's figures are read from all its steps of one repeat
    (core/ladder.py), and the scheduler stops a ladder only at a lower step
    of the same repeat: a step run again alone would be a repeat of one
    step, its ladder's figures read from it alone, run past its end."""
    key: ConfigKey  # the configuration's, or the ladder's (ladder_key)
    runs: tuple[Planned, ...]  # each configuration's last planned run, in plan order

    @property
    def ceiling(self) -> int | None:
        caps = [p.max_repeat for p in self.runs if p.max_repeat is not None]
        return min(caps) if len(caps) == len(self.runs) else None

    @property
    def until_settled(self) -> bool:
        return all(p.until_settled for p in self.runs)

    def ok(self, groups: dict[ConfigKey, Group]) -> bool:
        """Whether any of its configurations has an ok run: a unit with none
        failed and is not run again (a ladder whose every repeat ended at
        its first step still measured that step)."""
        return any(p.key in groups and groups[p.key].ok for p in self.runs)

    def seconds(self, groups: dict[ConfigKey, Group]) -> float:
        """A run's seconds; a ladder's repeat's, from its next repeat's first
        step up (again)."""
        if not self.ladder:
            return (run_seconds(groups[self.key], self.runs[0]) if self.key in groups
                    else OVERHEAD_S + 1.0)
        return ladder_seconds(groups[p.key] for p in self.again(groups) if p.key in groups)

    @property
    def ladder(self) -> bool:
        return not (len(self.runs) == 1 and self.runs[0].key == self.key)

    def again(self, groups: dict[ConfigKey, Group]) -> tuple[Planned, ...]:
        """Its runs in a later repeat: a ladder's from the step its earlier
        repeats seed (ladder.seeded_start: where each sustained a step), and
        any step below that a claim reads; every step otherwise."""
        whole = groups.get(self.key)
        if not self.ladder or whole is None or whole.ok < len(whole.rows):
            return self.runs
        start = seeded_start(whole.values(SUSTAINED) + whole.values(KNEE),
                             (p.key.param(RATE.name) for p in self.runs))
        return self.runs if start is None else tuple(
            p for p in self.runs if p.key.param(RATE.name) >= start or p.key in CLAIMED_STEPS)


def units(runs: list[Planned]) -> dict[ConfigKey, Unit]:
    """The plan's units of repetition, by key: each configuration, but the
    steps of a rate ladder as one, keyed by their ladder (Unit)."""
    found: dict[ConfigKey, list[Planned]] = {}
    for key, last in configurations(runs).items():
        found.setdefault(ladder_key(key) or key, []).append(last)
    return {key: Unit(key, tuple(members)) for key, members in found.items()}


@dataclasses.dataclass(frozen=True)
class _State:
    """The recorded rows as the rules read them, by unit (units()): reps,
    the most repeats recorded; ceiling, for the units --until-settled may
    run again; cost, a run's (a ladder's repeat's) seconds; unit_of, a
    configuration's or ladder's unit; q, the run's questions (None when no
    unit may run again)."""
    groups: dict[ConfigKey, Group]
    units: dict[ConfigKey, Unit]
    unit_of: dict[ConfigKey, ConfigKey]
    reps: dict[ConfigKey, int]
    ceiling: dict[ConfigKey, int]
    cost: dict[ConfigKey, float]
    q: Questions | None
    ranked: list[RankIntervals] = dataclasses.field(default_factory=list)  # the headline ones

    def open(self, allocation: Allocation = NOW) -> list[Open]:
        """The open verdicts, each side named by its unit: a verdict on a
        ladder's figure, or on one of its steps, is one on the whole ladder."""
        if self.q is None:
            return []
        return [dataclasses.replace(o, keys=tuple(self.unit_of.get(k, k) for k in o.keys))
                for o in _open(self.q, allocation, self.ranked)]


def _state(rows: Iterable[Row], runs: list[Planned]) -> _State:
    table = list(rows)
    groups = {g.key: g for g in group_runs(table)}
    found = units(runs)
    unit_of = {p.key: key for key, u in found.items() for p in u.runs} | {k: k for k in found}
    # a ladder's refined steps (ladder.refinement) are its unit's too
    unit_of |= {ConfigKey.of(r): ladder for r in table
                if (ladder := ladder_key(ConfigKey.of(r))) in found}
    reps: dict[ConfigKey, int] = {}
    for r in table:
        key = unit_of.get(ConfigKey.of(r), ConfigKey.of(r))
        reps[key] = max(reps.get(key, 0), r.rep)
    ceiling = {key: u.ceiling for key, u in found.items()
               if u.until_settled and u.ceiling is not None and u.ok(groups)}
    # a ladder is judged as its steps are (its group is the analysis's own)
    judged = [g for key, g in groups.items()
              if key not in unit_of or all(p.judged for p in found[unit_of[key]].runs)]
    floors = {p.impl.id for p in runs if p.impl.floor}
    q = ask(judged, floors) if ceiling else None
    ranked = all_rank_intervals(judged, floors, headline_only=True) if ceiling else []
    cost = {key: u.seconds(groups) for key, u in found.items()}
    return _State(groups, found, unit_of, reps, ceiling, cost, q, ranked)


def _due(st: _State) -> dict[ConfigKey, list[Planned]]:
    """Each unit's next run (a ladder's: its every step, one repeat), for
    the units that may have one: below their ceiling, and not failed."""
    due = {}
    for key, u in st.units.items():
        rep = max(max(p.rep for p in u.runs), st.reps.get(key, 0)) + 1
        if u.ceiling is not None and rep <= u.ceiling and u.ok(st.groups):
            due[key] = [dataclasses.replace(p, rep=rep) for p in u.again(st.groups)]
    return due


def _widening(st: _State, due: dict[ConfigKey, list[Planned]]) -> list[ConfigKey]:
    """--until-ci's units, in plan order: a headline figure of one of its
    configurations (or of its ladder) unsettled or wider than its target."""
    out = []
    for key, again in due.items():
        targets = [p.until_ci for p in again if p.until_ci is not None]
        looked = [st.groups[k] for k in dict.fromkeys([key, *(p.key for p in again)])
                  if k in st.groups]
        if targets and any(wide_figures(g, min(targets)) for g in looked):
            out.append(key)
    return out


def more_runs(rows: Iterable[Row], runs: list[Planned], budget_s: float | None = None,
              allocation: Allocation = NOW) -> list[Planned]:
    """The next pass, from the rows recorded so far (every recorded rep
    counts toward max_repeat, failed ones too): --until-ci's units in plan
    order, then --until-settled's in wanting's order, a rate ladder's
    steps together (Unit); with a budget, only what fits in budget_s
    seconds."""
    return _more_runs(_state(rows, runs), budget_s, allocation)


def _more_runs(st: _State, budget_s: float | None, allocation: Allocation) -> list[Planned]:
    """more_runs of the rows as st reads them (_state, the pass's costly part)."""
    due = _due(st)
    widening = _widening(st, due)
    spent = 0.0
    if budget_s is not None:
        fit = []
        for key in widening:
            if spent + st.cost[key] <= budget_s:
                fit.append(key)
                spent += st.cost[key]
        widening = fit
    settling = wanting(st.open(allocation), st.reps, st.ceiling, st.cost,
                       None if budget_s is None else budget_s - spent,
                       allocation) if st.q is not None else []
    out = [p for key in widening for p in due[key]]
    taken = set(widening)
    nth: dict[ConfigKey, int] = {}
    for key in settling:
        again = due.get(key)
        if again is None or key in taken or not st.units[key].until_settled:
            continue
        rep = again[0].rep + nth.get(key, 0)
        if rep <= (st.units[key].ceiling or 0):
            out += [dataclasses.replace(p, rep=rep) for p in again]
            nth[key] = nth.get(key, 0) + 1
    return out


def spent_before(rows: Iterable[Row]) -> float:
    """The budget a resumed run's recorded rows spent: their wall times and
    each run's overhead (the time between an interruption and --resume is
    not the runs')."""
    return sum(OVERHEAD_S + (r.wall_s or 0.0) for r in rows)


def forecast(rows: Iterable[Row], runs: list[Planned], seconds: float = MORE_S) -> str:
    """What is still open, and how many of the open verdicts another
    `seconds` of runs would likely settle (their sides' runs_to_settle,
    cheapest first; a side on a rate ladder costs its ladder's repeats)."""
    st = _state(rows, runs)
    if st.q is None:
        return ""
    found = [o for o in st.open() if o.aim is None]  # verdicts, not a configuration's runs
    if not found:
        return "every verdict the run asks is settled"
    costs = []
    for o in found:
        extra = sum(max(0.0, min(o.needed, st.ceiling.get(k, 0)) - n) * st.cost[k]
                    for k, n in zip(o.keys, o.runs) if k in st.cost)
        costs.append(extra if o.needed <= min(st.ceiling.get(k, 0) for k in o.keys)
                     else math.inf)
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
    first run; a fake clock in tests), less spent_s (what a resumed run's
    recorded rows took: spent_before); allocation, how the verdicts are
    weighed (NOW; BEFORE for the replays of the allocation before it)."""

    def __init__(self, budget_s: float, clock: Callable[[], float] = time.monotonic,
                 spent_s: float = 0.0, allocation: Allocation = NOW) -> None:
        self.budget_s, self.clock, self.spent_s = budget_s, clock, spent_s
        self.allocation = allocation
        self.started = clock()
        self.stopped = ""  # set when the budget ends a run with verdicts open

    repeated = staticmethod(repeated)
    outgrown = staticmethod(outgrown)

    def too_dear(self, p: Planned, expected_s: float | None) -> float | None:
        """The limit a run expected to take expected_s seconds at least
        passes (the allocation's dear_share of the budget: SHARE), under
        --until-settled; None: it runs."""
        share = self.allocation.dear_share
        if share is None or not p.until_settled or expected_s is None:
            return None
        return share * self.budget_s if expected_s > share * self.budget_s else None

    def left(self) -> float:
        return self.budget_s - self.spent_s - (self.clock() - self.started)

    def more_runs(self, rows: Iterable[Row], runs: list[Planned]) -> list[Planned]:
        """The next pass: what fits in a slice of the time left (at least
        PASS_S, at most a third of it), so the forecasts are read again from
        the new runs before the rest of the budget is spent."""
        left = max(0.0, self.left())
        st = _state(rows, runs)  # read once for both questions
        fits = _more_runs(st, min(left, max(PASS_S, left / 3)), self.allocation)
        if not fits and _more_runs(st, None, self.allocation):
            self.stopped = f"the budget of {fmt_duration(self.budget_s)} ends the runs"
        return fits
