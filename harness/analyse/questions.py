"""The questions a reader asks of a run, each answered as a family of
verdicts (docs/statistics.md, "Rankings and claims"):

- rankings: for each headline figure of each comparable set (standings'
  sets), the implementations best first, the floor (impls.toml
  `floor = true`) shown beside the ranking but not in it; each pair of
  neighbours asked the standings' two questions (differ; level within the
  figure's margin), every neighbour pair of the run one Benjamini–Hochberg
  family (standings.decide). Runs of neighbours not settled apart are one
  tier: the ranking reads as an ordering with ties.
- claims: each article claim (core/claims.py) whose two configurations the
  run measured, asked on which side of its threshold the ratio lies
  (one-sided, in the direction the article gave and against it) and, for a
  claimed lead, whether the two are level; every claim of the run one
  family (below).

A family's count of settled verdicts is its own: the rankings' and the
claims' are reported apart, and the vs-leader standings (standings.py)
stay what the tables' ×leader columns read. Pure: reads groups, writes
nothing; `run --until-settled` (sequential.py) asks it which
configurations an open verdict still needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from .analysis import Group, bound_from_below, comparable_sets, headline
from .goals import GoalVerdict, goals
from .modes import bimodal
from .ranks import PriorKey, is_headline, prior_for, priors, rank_margin
from ..core.claims import CLAIMS, Claim
from ..core.formatting import fmt_number, fmt_percent, fmt_share, fmt_sig
from ..core.metrics import METRICS
from ..core.schema import ConfigKey
from ..core.stats import Interval, Prior, discoveries, ratio_interval, ratio_p, smallest_p
from .styles import ServerStyles, by_server
from .standings import (BEHIND, FDR_RATE, LEVEL_WORD, NOT_SETTLED, Standing, decide,
                        pair, ranked)

HOLDS, DOES_NOT_HOLD, NOT_MEASURED = "holds", "does not hold", "not measured"
# A claim whose two sides are both bounds from below (analysis.bound_from_below):
# neither server's figure was measured, only the reach of what loaded it.
BEYOND_REACH = ("both ladders sustained every rate offered, up to their top step or to where "
                "the load generator could not keep up: each sustained rate is a bound from "
                "below, and no run of this machine's ladder can order them")
RANKINGS, CLAIMS_FAMILY, GOALS_FAMILY = "rankings", "claims", "goals"
HEADLINE_FAMILY = "headline rankings"  # the neighbour pairs of the articles' sizes (ranks.is_headline)


@dataclass(frozen=True)
class Ranking:
    """One headline figure of one comparable set, best first."""
    workload: str
    metric: str
    order: tuple[Group, ...]  # the floor left out
    floor: Group | None
    pairs: tuple[Standing, ...]  # pairs[i]: order[i] (leader) against order[i + 1] (other)
    headline: bool = False  # the articles' size and figure (ranks.is_headline)

    def tiers(self) -> list[tuple[int, list[Group]]]:
        """(first place, members): a new tier starts after each neighbour
        settled ahead; level and unsettled neighbours share one."""
        out: list[tuple[int, list[Group]]] = [(1, [self.order[0]])]
        for place, pair in enumerate(self.pairs, 2):
            if pair.verdict == BEHIND:
                out.append((place, [pair.other]))
            else:
                out[-1][1].append(pair.other)
        return out

    def tier_text(self) -> str:
        """'1: go; 2–3: rust-tokio = rust-smol ~ java-virtual': '=' level,
        '~' not settled apart, ';' a settled gap."""
        parts = []
        for first, members in self.tiers():
            last = first + len(members) - 1
            names = members[0].impl
            for place in range(first, last):  # pairs[place - 1] joins places place and place + 1
                pair = self.pairs[place - 1]
                names += f" {'=' if pair.verdict == LEVEL_WORD else '~'} {pair.other.impl}"
            parts.append(f"{first}{f'–{last}' if last != first else ''}: {names}")
        return "; ".join(parts)


@dataclass(frozen=True)
class ClaimVerdict:
    """One article claim against the run: num/den, its exact 95% interval and
    the family's verdict."""
    claim: Claim
    num: Group
    den: Group
    interval: Interval | None  # num / den
    p_holds: float | None
    p_against: float | None
    p_level: float | None  # a claimed lead found level (claims with threshold 1 only)
    verdict: str = NOT_SETTLED
    why: str = ""

    @property
    def runs(self) -> tuple[int, int]:
        return (len(self.num.values(self.claim.num.metric)),
                len(self.den.values(self.claim.den.metric)))

    @property
    def floor(self) -> float:
        """The smallest one-sided p-value its run counts allow."""
        return smallest_p(*self.runs)

    @property
    def settled(self) -> bool:
        return self.verdict in (HOLDS, DOES_NOT_HOLD)

    @property
    def measured(self) -> bool:
        """False where both sides are bounds from below (BEYOND_REACH): the
        claim is shown but out of its family's count."""
        return self.verdict != NOT_MEASURED

    @property
    def keys(self) -> tuple[ConfigKey, ConfigKey]:
        return self.num.key, self.den.key

    @property
    def bimodal(self) -> tuple[Group, ...]:
        """The sides whose runs fall into two modes (modes.bimodal)."""
        return tuple(g for g, side in ((self.num, self.claim.num), (self.den, self.claim.den))
                     if bimodal(g.values(side.metric)))

    @property
    def size(self) -> str:
        """The article's own figure against the 95% interval ("" where it gave none)."""
        c, iv = self.claim, self.interval
        if c.size is None or iv is None or not iv.settled:
            return ""
        said = f"{fmt_sig(c.size, 3)}×"
        if c.at_least:
            return ("its size holds (all of the interval is above " + said + ")" if iv.low > c.size
                    else f"its size does not (the interval is below {said})" if iv.high < c.size
                    else f"its size is not settled (the interval holds {said})")
        inside = iv.low <= c.size <= iv.high
        return (f"its size {'holds' if inside else 'does not'} (the article's {said} lies "
                f"{'inside' if inside else 'outside'} the interval)")


@dataclass(frozen=True)
class Questions:
    rankings: list[Ranking]
    claims: list[ClaimVerdict]
    goals: list[GoalVerdict] = field(default_factory=list)
    # seed004's question, per server: which style sustains the most (styles.py)
    styles: list[ServerStyles] = field(default_factory=list)

    def families(self) -> list[tuple[str, int, int]]:
        """(family, settled, total), each family counted on its own, of the
        verdicts a run can measure (not those whose sides are bounds from
        below: unmeasured()); the goals only where the run measured one."""
        pairs = [p for r in self.rankings for p in r.pairs if p.measured]
        top = [p for r in self.rankings if r.headline for p in r.pairs if p.measured]
        claims = [c for c in self.claims if c.measured]
        return ([(HEADLINE_FAMILY, sum(p.settled for p in top), len(top))] if top else []) + [
            (RANKINGS, sum(p.settled for p in pairs), len(pairs)),
            (CLAIMS_FAMILY, sum(c.settled for c in claims), len(claims))] + (
            [(GOALS_FAMILY, sum(g.settled for g in self.goals), len(self.goals))]
            if self.goals else [])

    def unmeasured(self) -> tuple[int, int]:
        """(neighbour pairs, claims) out of the counts: a side's figure a
        bound from below that no run can turn into the server's."""
        return (sum(not p.measured for r in self.rankings for p in r.pairs),
                sum(not c.measured for c in self.claims))

    def summary(self) -> str:
        """'Verdicts settled: rankings 410 of 524 neighbour pairs (78%); claims 11 of 12 (92%).'"""
        words = {HEADLINE_FAMILY: "neighbour pairs in the headline rankings (the articles' sizes)",
                 RANKINGS: "neighbour pairs in the rankings",
                 CLAIMS_FAMILY: "the articles' claims", GOALS_FAMILY: "the project's goals"}
        parts = [f"{words[name]} {settled:,} of {total:,}"
                 + (f" ({fmt_share(settled / total)})" if total else "")
                 for name, settled, total in self.families()]
        control = (f"false discovery rate {fmt_share(FDR_RATE)} within the rankings and within "
                   "the claims; a goal on its own 95% interval" if self.goals else
                   f"false discovery rate {fmt_share(FDR_RATE)} within each")
        pairs, claims = self.unmeasured()
        beyond = [f"{n:,} {word}{'s' if n != 1 else ''}" for n, word in
                  ((pairs, "neighbour pair"), (claims, "claim")) if n]
        return (f"Verdicts settled, each family on its own ({control}): " + "; ".join(parts) + "."
                + (f" Not counted, since not measured: {' and '.join(beyond)} whose sides are "
                   "sustained rates bounded from below (ladders that ran to their top step or "
                   "to the load generator's limit)." if beyond else ""))


def rankings(groups: list[Group], floor_impls: Iterable[str] = (),
             margins: dict[str, float] | None = None,
             borrowed: dict[PriorKey, Prior] | None = None) -> list[Ranking]:
    """Every ranking of the run, its neighbour pairs level within the
    ranking's margin (ranks.rank_margin: 10% for a time, 5% for peak RSS;
    margins: the caller's instead) and tested with the variance borrowed
    across the run's configurations (ranks.priors; borrowed: the caller's),
    the headline rankings' pairs decided as one family and the others' as
    another (a count of the first is what readers compare)."""
    floors = set(floor_impls)
    borrowed = priors(groups) if borrowed is None else borrowed
    drafts: list[tuple[str, int | None, str, list[Group], Group | None]] = []
    raw: list[Standing] = []
    for (workload, n, *_), members in sorted(comparable_sets(groups).items(),
                                             key=lambda kv: kv[1][0].key.sort_key):
        for metric in headline(workload):
            order = [g for g in ranked(members, metric) if g.impl not in floors]
            if len(order) < 2:
                continue
            floor = next((g for g in members if g.impl in floors and g.values(metric)), None)
            margin = (margins or {}).get(metric, rank_margin(metric))
            prior = prior_for(borrowed, workload, n, metric)
            drafts.append((workload, n, metric, order, floor))
            raw += [pair(metric, a, b, margin, prior) for a, b in zip(order, order[1:])]
    top = [is_headline(w, n, m) for w, n, m, order, _ in drafts for _ in order[1:]]
    decided = _decide_apart(raw, top)
    out, i = [], 0
    for workload, n, metric, order, floor in drafts:
        out.append(Ranking(workload, metric, tuple(order), floor,
                           tuple(decided[i:i + len(order) - 1]), is_headline(workload, n, metric)))
        i += len(order) - 1
    return out


def _decide_apart(raw: list[Standing], top: list[bool]) -> list[Standing]:
    """standings.decide over the headline pairs and over the others, each
    its own family, back in raw's order."""
    out: list[Standing | None] = [None] * len(raw)
    for want in (True, False):
        index = [i for i, t in enumerate(top) if t == want]
        for i, s in zip(index, decide([raw[i] for i in index])):
            out[i] = s
    return out  # type: ignore[return-value]


# Of a claim's tests (holds; against; level, for a claimed lead) at most two
# of three nulls are true at once ("r <= threshold" and "r >= threshold" only
# both at r = threshold exactly): Benjamini–Hochberg at this multiple of the
# rate keeps the family's false discovery rate at most FDR_RATE (its bound
# is rate * true nulls / tests).
CLAIM_RATE = FDR_RATE * 3 / 2


def claim_margin(c: Claim, num: Group, den: Group) -> float:
    """A claimed lead's level margin: its figure's, at the two medians."""
    return METRICS[c.num.metric].level_margin(num.median(c.num.metric),
                                              den.median(c.den.metric))


def _claim(c: Claim, num: Group, den: Group) -> ClaimVerdict:
    a, b = num.values(c.num.metric), den.values(c.den.metric)
    iv = ratio_interval(b, a)  # new / old: numerator over denominator
    if c.near:
        low, high = c.above / c.near, c.above * c.near
        up, down = ratio_p(b, a, low, True), ratio_p(b, a, high, False)
        holds = None if up is None or down is None else max(up, down)
        out_low, out_high = ratio_p(b, a, low, False), ratio_p(b, a, high, True)
        against = (None if out_low is None or out_high is None
                   else min(1.0, 2 * min(out_low, out_high)))
        return ClaimVerdict(c, num, den, iv, holds, against, None)
    holds = ratio_p(b, a, c.above, not c.less)
    against = ratio_p(b, a, c.above, c.less)
    level = None
    if c.above == 1.0:
        margin = claim_margin(c, num, den)
        up, down = ratio_p(b, a, 1 / (1 + margin), True), ratio_p(b, a, 1 + margin, False)
        level = None if up is None or down is None else max(up, down)
    # A side whose value is a bound from below may be higher: "num above"
    # needs den's values to be the server's, "num below" num's, a tie both.
    num_bound, den_bound = bound_from_below(num, c.num.metric), bound_from_below(den, c.den.metric)
    if num_bound or den_bound:
        level = None
        holds = None if (num_bound if c.less else den_bound) else holds
        against = None if (den_bound if c.less else num_bound) else against
    return ClaimVerdict(c, num, den, iv, holds, against, level)


def claims(groups: list[Group], declared: Iterable[Claim] = CLAIMS) -> list[ClaimVerdict]:
    """Every claim whose two configurations the run measured (an ok run on
    each side), decided as one family."""
    by_key = {g.key: g for g in groups}
    raw = []
    for c in declared:
        num, den = by_key.get(c.num.key()), by_key.get(c.den.key())
        if num is not None and den is not None and num.values(c.num.metric) \
                and den.values(c.den.metric):
            raw.append(_claim(c, num, den))
    tests = [(i, p) for i, v in enumerate(raw) for p in (v.p_holds, v.p_against, v.p_level)]
    found = discoveries([p for _, p in tests], [raw[i].floor for i, _ in tests], rate=CLAIM_RATE)
    hit: dict[int, list[bool]] = {}
    for (i, _), f in zip(tests, found):
        hit.setdefault(i, []).append(f)
    out = []
    for i, v in enumerate(raw):
        holds, against, level = hit[i]
        if beyond_reach(v):
            out.append(_verdict(v, NOT_MEASURED, BEYOND_REACH))
        elif level:
            margin = claim_margin(v.claim, v.num, v.den)
            out.append(_verdict(v, DOES_NOT_HOLD, f"level (within {_margin_text(v, margin)})"))
        elif holds:
            out.append(_verdict(v, HOLDS))
        elif against:
            out.append(_verdict(v, DOES_NOT_HOLD))
        else:
            out.append(_verdict(v, NOT_SETTLED, _claim_why(v)))
    return out


def _margin_text(v: ClaimVerdict, margin: float) -> str:
    """'±10%', or '±2 of 6: 33%' where the margin is the figure's units."""
    m = METRICS[v.claim.num.metric]
    if margin == m.margin:
        return f"±{fmt_percent(margin)}"
    smaller = min(v.num.median(v.claim.num.metric), v.den.median(v.claim.den.metric))
    return f"±{fmt_number(m.margin_units)} of {fmt_number(smaller)}: {fmt_share(margin)}"


def _verdict(v: ClaimVerdict, verdict: str, why: str = "") -> ClaimVerdict:
    return replace(v, verdict=verdict, why=why)


def beyond_reach(v: ClaimVerdict) -> bool:
    """Both sides bounds from below: neither direction can be read, however
    many runs (one bound leaves one)."""
    return (bound_from_below(v.num, v.claim.num.metric)
            and bound_from_below(v.den, v.claim.den.metric))


def _claim_why(v: ClaimVerdict) -> str:
    n, m = v.runs
    if min(n, m) < 2:
        return f"one run on a side ({n} and {m})"
    if v.floor > CLAIM_RATE:
        return f"too few runs ({n} and {m})"
    return "its interval holds the threshold" if v.interval is not None and (
        v.interval.low <= v.claim.above <= v.interval.high) else (
        "not significant among the run's claims (false discovery rate 5%)")


def ask(groups: list[Group], floor_impls: Iterable[str] = (),
        margins: dict[str, float] | None = None) -> Questions:
    """The run's rankings, claims and goals, each family decided on its own,
    and each server's styles by the rate they sustain."""
    return Questions(rankings(groups, floor_impls, margins), claims(groups), goals(groups),
                     by_server(groups))
