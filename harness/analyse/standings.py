"""Every implementation's standing against the leader of its comparable set
(same workload, N, buffer and dimensions), for each headline figure of the
workload: the report's verdicts, decided as one family. docs/statistics.md
("Verdicts") explains the rules.

For each pair (leader, other) two exact one-sided Mann–Whitney questions
are asked of the ratio other/leader (stats.ratio_p):
- differ: does the ratio lie off 1? (two-sided: twice the smaller tail);
- level: does it lie within ±margin? (the larger of the two one-sided
  p-values at 1/(1+margin) and 1+margin, an equivalence test as in TOST).
Where the runs carry several nodes (a cluster run), the leader and every
ratio are formed within nodes (analysis.node_blocks, stats.blocked_*): a
slower node slows both sides of its pairs alike and decides nothing.
The p-values of every pair of the run go into one Benjamini–Hochberg
family (stats.discoveries), so that of the verdicts called settled at most
5% are expected to be wrong, however many the report makes. A standing is
then "level" (within ±margin), "behind" (slower, or lower throughput, by
the ratio's estimate and interval), or "not settled" with the reason: too
few runs, an interval reaching across the margin, or a p-value that does
not survive the family's control.

Pure: reads groups, writes nothing; `run --until-settled` (sequential.py)
asks it which configurations need more runs.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from dataclasses import dataclass

from .analysis import (Group, bound_from_below, comparable_sets, headline, node_blocks, ratio_of,
                       several_nodes)
from ..core.formatting import fmt_percent, fmt_share
from .modes import bimodal
from ..core.variants import base_of
from ..core.metrics import METRICS
from ..core.schema import Part, RecordedSettings
from ..core.stats import (Block, Interval, Prior, blocked_ratio_interval, blocked_ratio_p,
                          borrowed_p, discoveries, smallest_p)

LEVEL_WORD, BEHIND, NOT_SETTLED = "level", "behind", "not settled"
FDR_RATE = 0.05  # the expected share of wrong verdicts among the settled ones
FEW_RUNS, ACROSS_MARGIN, FAMILY = (
    "too few runs", "its interval reaches across the margin", "not significant among the "
    "run's verdicts (false discovery rate 5%)")
# The exact test where its run counts give a smallest p this low (5 runs a
# side: 1/252), a borrowed variance below: the exact one assumes nothing of
# a configuration's spread, and from there it settles as much (the choice
# rests on run counts alone).
EXACT_FROM = 1 / 252
BOUND = ("a bound from below: a ladder sustained to its top step or to where the load "
         "generator could not keep up, so the server may sustain more")


@dataclass(frozen=True)
class Standing:
    """One implementation against its set's leader on one figure."""
    metric: str
    leader: Group
    other: Group
    interval: Interval | None  # of other/leader, oriented so that > 1 is worse
    margin: float
    p_differ: float | None
    p_level: float | None
    verdict: str = NOT_SETTLED
    why: str = ""  # for NOT_SETTLED
    blocks: tuple[Block, ...] = ()  # the runs paired node by node (node_blocks); (): pooled
    borrowed: bool = False  # tested with a borrowed variance (pair's prior): no floor

    @property
    def runs(self) -> tuple[int, int]:
        """The ok runs of (leader, other)."""
        return len(self.leader.values(self.metric)), len(self.other.values(self.metric))

    @property
    def floor(self) -> float:
        """The smallest one-sided p-value its tests can give: every pair
        beyond, in every node at once where runs are paired within nodes
        (fewer orderings than the pooled runs': 3 nodes of one run a side
        give 1/8, not 1/20); 0 where the variance is borrowed (a t test
        has no smallest p)."""
        if self.borrowed:
            return 0.0
        if not self.blocks:
            return smallest_p(*self.runs)
        return math.prod(smallest_p(len(a), len(b)) for a, b in self.blocks)

    @property
    def settled(self) -> bool:
        return self.verdict != NOT_SETTLED

    @property
    def measured(self) -> bool:
        """False where the lower side's figure is a bound from below: no run
        can order the two, so the pair is out of its family's count."""
        return self.why != BOUND

    @property
    def bimodal(self) -> tuple[Group, ...]:
        """The sides whose runs fall into two modes (modes.bimodal): the
        verdict rests on a figure that is one mode or between two."""
        return tuple(g for g in (self.leader, self.other) if bimodal(g.values(self.metric)))


def pair(metric: str, leader: Group, other: Group, margin: float,
         prior: Prior | None = None) -> Standing:
    """The two questions of other against leader: exact, or with prior (a
    variance borrowed across the run's configurations, ranks.priors) by
    the moderated t, where the runs are not paired within nodes."""
    # (base, compared) so that compared/base > 1 means other is worse
    base, compared = (other, leader) if METRICS[metric].higher_is_better else (leader, other)
    blocks = tuple(node_blocks(base, compared, metric) or ())
    paired = blocks or ((base.values(metric), compared.values(metric)),)
    iv = blocked_ratio_interval(paired)
    borrowed = (prior is not None and not blocks
                and smallest_p(len(base.values(metric)), len(compared.values(metric))) > EXACT_FROM)

    def p(ratio: float, above: bool) -> float | None:
        if borrowed:
            return borrowed_p(base.values(metric), compared.values(metric), prior, ratio, above)
        return blocked_ratio_p(paired, ratio, above)

    up, down = p(1.0, True), p(1.0, False)
    differ = None if up is None or down is None else min(1.0, 2 * min(up, down))
    low, high = p(1 / (1 + margin), True), p(1 + margin, False)
    level = None if low is None or high is None else max(low, high)
    # A bound from below may be beaten: the other's lead no one can see, a tie
    # neither (analysis.bound_from_below).
    if bound_from_below(other, metric):
        differ = level = None
    elif bound_from_below(leader, metric):
        level = None
    return Standing(metric, leader, other, iv, margin, differ, level, blocks=blocks,
                    borrowed=borrowed)


def ranked(members: list[Group], metric: str) -> list[Group]:
    """The members that have the figure, best first: by median (the
    highest where higher is better). Where their runs carry several nodes,
    as analysis.rank: the leader is the one with the best within-node
    ratio to the best median, the others follow by their within-node ratio
    to the leader (analysis.ratio_of); a median carries the effect of the
    nodes its runs fell on, a within-node ratio does not."""
    measured = [g for g in members if g.values(metric)]
    sign = -1 if METRICS[metric].higher_is_better else 1
    by_median = sorted(measured, key=lambda g: (sign * g.median(metric), g.impl))
    if (len(by_median) < 2 or by_median[0].median(metric) <= 0
            or not several_nodes(measured, metric)):
        return by_median

    def to(base: Group, g: Group) -> float:
        """g / base within nodes, signed so that lower is better."""
        return sign * (1.0 if g is base else ratio_of(base, g, metric)[0])

    leader = min(measured, key=lambda g: (to(by_median[0], g), g.impl))
    return [leader] + sorted((g for g in measured if g is not leader),
                             key=lambda g: (to(leader, g), g.impl))


def _leader(members: list[Group], metric: str) -> Group | None:
    order = ranked(members, metric)
    return order[0] if len(order) >= 2 else None


def unjudged_parts(settings: RecordedSettings) -> list[Part]:
    """The parts of a run's settings (env.json) declared `judged = false`."""
    return [p for p in settings.parts if not p.judged]


def in_part(g: Group, part: Part) -> bool:
    """Whether a group is one of a part's configurations (env.json's record
    of the part): its workload, N, implementations and dimensions' values
    (the http check at 10 users is not the judged load at 50)."""
    return (g.workload in part.workloads
            and (g.n is None or g.n in part.ns)
            and (part.impls is None or base_of(g.impl) in part.impls)
            and all(g.key.param(name) in values for name, values in part.params.items()
                    if g.key.param(name) is not None))


def judged(groups: list[Group], settings: RecordedSettings) -> list[Group]:
    """The groups a run's verdicts are about: all but those of a part
    declared `judged = false` (suites.toml: a check, too few runs to judge)."""
    return [g for g in groups if not any(in_part(g, p) for p in unjudged_parts(settings))]


def unjudged_note(settings: RecordedSettings) -> str:
    """One sentence naming the workloads a run checked without judging ("" if none)."""
    names = sorted({w + "".join(f" {k}={'/'.join(map(str, v))}" for k, v in p.params.items() if v)
                    for p in unjudged_parts(settings) for w in p.workloads})
    if not names:
        return ""
    return (f"Not judged: {', '.join(names)}, a check that every program works (its part of "
            f"the suite runs too few times for a verdict; harness/plan/suites.toml says why).")


def standings(groups: list[Group], margins: dict[str, float] | None = None) -> list[Standing]:
    """Every standing of the run, its verdict decided within the family of
    all of them."""
    raw: list[Standing] = []
    for (workload, *_), members in comparable_sets(groups).items():
        for metric in headline(workload):
            leader = _leader(members, metric)
            if leader is None:
                continue
            margin = (margins or {}).get(metric, METRICS[metric].margin)
            raw += [pair(metric, leader, g, margin) for g in members
                    if g is not leader and g.values(metric)]
    return decide(raw)


def decide(raw: list[Standing]) -> list[Standing]:
    """The family's verdicts: a level or differ p-value is a discovery under
    Benjamini–Hochberg over both questions of every pair (each one's floor
    is the smallest p its run counts allow). Of a pair's two null
    hypotheses ("differs by the margin or more", "equal") at most one is
    true, so at most half of the 2·Y tested nulls are: BH's false discovery
    rate, rate·(true nulls)/(tests), is then at most FDR_RATE when BH is run
    at twice it."""
    p = [s.p_level for s in raw] + [s.p_differ for s in raw]
    floors = [s.floor for s in raw] + [min(1.0, 2 * s.floor) for s in raw]
    found = discoveries(p, floors, rate=2 * FDR_RATE)
    out = []
    for i, s in enumerate(raw):
        level, differ = found[i], found[len(raw) + i]
        if level:
            out.append(_with(s, LEVEL_WORD))
        elif differ:
            out.append(_with(s, BEHIND))
        else:
            out.append(_with(s, NOT_SETTLED, _why(s)))
    return out


def _with(s: Standing, verdict: str, why: str = "") -> Standing:
    return dataclasses.replace(s, verdict=verdict, why=why)


def _why(s: Standing) -> str:
    n, m = s.runs
    if s.p_differ is None and bound_from_below(s.other, s.metric):
        return BOUND
    if 2 * s.floor > 2 * FDR_RATE - 1e-12:
        if s.blocks:
            nodes = len(s.blocks)
            return (f"{FEW_RUNS} ({n} and {m}, paired within {nodes} node"
                    f"{'s' if nodes != 1 else ''}; more runs on each can settle it)")
        return f"{FEW_RUNS} ({n} and {m}; 4 a side can settle it)"
    iv, margin = s.interval, s.margin
    if iv is not None and iv.low <= 1 <= iv.high and (iv.low < 1 / (1 + margin)
                                                     or iv.high > 1 + margin):
        return ACROSS_MARGIN
    return FAMILY


def settled_share(found: list[Standing]) -> tuple[int, int]:
    """(settled, all) standings."""
    return sum(s.settled for s in found), len(found)


def summary(found: list[Standing]) -> str:
    """The line a report opens its verdicts with: how many are settled, of
    which kind, why the rest are not, and how many runs they took."""
    settled, total = settled_share(found)
    if not total:
        return "Verdicts settled: none to make (no figure has two implementations to compare)."
    kinds = defaultdict(int)
    reasons = defaultdict(int)
    for s in found:
        kinds[s.verdict] += 1
        if not s.settled:
            reasons[s.why.split(" (")[0]] += 1
    runs = [r for s in found for r in s.runs]
    text = (f"Verdicts settled: {settled} of {total} ({fmt_share(settled / total)}): "
            f"{kinds[BEHIND]} behind their set's leader, {kinds[LEVEL_WORD]} level with it")
    if reasons:
        text += "; not settled: " + ", ".join(f"{n} {why}" for why, n in sorted(
            reasons.items(), key=lambda kv: -kv[1]))
    return (text + f". Each is an implementation against its set's leader on a headline figure, "
            f"decided as one family (false discovery rate {fmt_share(FDR_RATE)}); "
            f"{min(runs)} to {max(runs)} ok runs a side.")


def verdict_text(s: Standing) -> str:
    """'behind', 'level (within ±5%)' or 'not settled: why'."""
    if s.verdict == LEVEL_WORD:
        return f"level (within ±{fmt_percent(s.margin)})"
    return s.verdict if s.settled else f"{NOT_SETTLED}: {s.why}"
