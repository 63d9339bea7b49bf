"""Places you can quote: each ranking's joint 95% rank intervals, the set
that could be best, and the tiers they make (docs/statistics.md, "Rank
intervals").

A ranking is one figure of one comparable set (analysis.comparable_sets),
the floor (impls.toml `floor = true`) beside it, not in it. Every ordered
pair (j, k) of its K implementations asks one one-sided question, "is j
worse than k?", on the log figures; Holm's step-down over all K·(K−1) of
them (stats.holm) keeps the chance of any wrong "worse" at most 5%, so
that, jointly for all K with 95% confidence (Mogstad, Romano, Shaikh and
Wilhelm, "Inference for Ranks", 2024, sec. 3):

- j's place is at least 1 + (how many are settled better than j) and at
  most K − (how many j is settled better than): "3rd–5th of 16";
- the set that could be best is those whose interval starts at 1st: it
  holds every true best at once with 95% confidence, ties included (a set
  from Holm over each one's own K−1 questions would be smaller, but with
  tied bests it would miss one of them more often than 5%: 17 of 150 for
  six equal implementations at 2 runs a side);
- a tier ends after place i when the first i by estimate all have places
  within 1..i (and so the rest within i+1..K): tiers are places a reader
  can quote as a group.

Each question is the moderated t on log figures with a variance borrowed
across the run's configurations of the same workload and figure
(stats.borrowed_p, calibrate below), so that 1 to 3 runs a side can place
clear gaps; the exact Mann–Whitney test (stats.ratio_p) where its run
counts can reach Holm's first step (rate / K(K−1)) or no variance can be
borrowed (fewer than 8 configurations with 2 runs). The choice rests on
run counts alone, never on the values.

Pure: reads groups, writes nothing.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterable, Sequence

from .analysis import Group, SetKey, bound_from_below, comparable_sets, headline
from .modes import Modes, bimodal
from ..core.formatting import fmt_places
from ..core.metrics import METRICS
from ..core.workloads import WORKLOADS
from ..core.stats import (LEVEL, Prior, borrowed_p, borrowed_t, fit_prior, fit_priors_leaving_out,
                          holm, ratio_p, smallest_p, student_isf)

# The articles' sizes: each workload's headline rankings are at this N
# (bounded: producers, both buffers), for its headline figures (the
# workload's declaration, core/workloads.py).
HEADLINE_N = {w.name: w.headline_n for w in WORKLOADS.values() if w.headline_n is not None}
SEED = 64  # the calibration's splits are the same every time a run is read
SPLITS = 8  # random no-change splits per configuration and runs a side
CALIBRATION_SIDES = (1, 2, 3)  # runs a side of those splits
MIN_CONFIGURATIONS = 8  # with 2 runs or more, to borrow from (fewer: no prior)


def rank_margin(metric: str) -> float:
    """The margin within which two neighbours of a ranking are level."""
    declared = METRICS[metric]
    return declared.margin if declared.rank_margin is None else declared.rank_margin


def is_headline(workload: str, n: int | None, metric: str) -> bool:
    """Whether a ranking is one the articles published: its workload's
    articles' size and a figure they ranked."""
    return (HEADLINE_N.get(workload) == n and n is not None
            and metric in WORKLOADS[workload].headline_figures)


@dataclass(frozen=True)
class Place:
    """One implementation's joint 95% rank interval in its ranking."""
    group: Group
    estimate: float  # the geometric mean of its ok runs' figure, what the tests compare
    lo: int  # 1-based: the best place it can hold at 95%, jointly with the others
    hi: int  # the worst
    best: bool  # in the 95% set that could be best (lo == 1)
    tier: int | None  # 1-based (RankIntervals.tiers); None: set apart (_tiers)
    runs: int  # ok runs with the figure
    tier_start: int = 1  # its tier's first place
    modes: Modes | None = None  # its runs fall into two modes (modes.bimodal): flag it
    tier_end: int = 1  # its tier's last place

    @property
    def apart(self) -> bool:
        """Set apart from the tiers: its interval spans tiers the others separate."""
        return self.tier is None

    @property
    def impl(self) -> str:
        return self.group.impl

    @property
    def width(self) -> int:
        """How many places the interval spans less one: 0 for a place settled."""
        return self.hi - self.lo

    @property
    def text(self) -> str:
        """'3rd–5th', or '2nd' where settled."""
        return fmt_places(self.lo, self.hi)


@dataclass(frozen=True)
class RankIntervals:
    """One ranking: its places, best first by estimate."""
    key: SetKey  # (workload, n, buffer, params)
    metric: str
    places: tuple[Place, ...]
    headline: bool  # the articles' size and figure (is_headline)
    borrowed: bool  # its tests used a borrowed variance (else the exact test)
    floor: Group | None = None  # the floor implementation, beside the ranking
    # (better, worse) impls of every pair Holm settled: what the places rest on
    settled: frozenset[tuple[str, str]] = frozenset()

    @property
    def workload(self) -> str:
        return self.key[0]

    @property
    def n(self) -> int | None:
        return self.key[1]

    @property
    def margin(self) -> float:
        return rank_margin(self.metric)

    @property
    def best_set(self) -> tuple[Place, ...]:
        return tuple(p for p in self.places if p.best)

    def tiers(self) -> list[tuple[Place, ...]]:
        """The places in tiers, best first; those set apart in none."""
        out: list[list[Place]] = []
        for p in self.places:
            if p.apart:
                continue
            if not out or p.tier != out[-1][0].tier:
                out.append([])
            out[-1].append(p)
        return [tuple(t) for t in out]

    @property
    def apart(self) -> tuple[Place, ...]:
        return tuple(p for p in self.places if p.apart)

    def tier_text(self) -> str:
        """'1st–2nd: go, bun; 3rd: rust-tokio', then 'apart: java-virtual
        (2nd–9th)' where one is set apart."""
        parts = [f"{fmt_places(members[0].tier_start, members[0].tier_end)}: "
                 f"{', '.join(p.impl for p in members)}" for members in self.tiers()]
        if self.apart:
            parts.append("apart: " + ", ".join(f"{p.impl} ({p.text})" for p in self.apart))
        return "; ".join(parts)

    def ahead(self, better: str, worse: str) -> bool:
        """Whether the ranking settled `better` ahead of `worse`."""
        return (better, worse) in self.settled

    def place_of(self, impl: str) -> Place | None:
        return next((p for p in self.places if p.impl == impl), None)

    def nearest_cut(self) -> Cut | None:
        """In a ranking that is one tier, the cut nearest to holding: of
        the cuts _tiers could make, the one with the fewest pairs still
        unsettled across it (ties: the one whose closest such pair is
        furthest apart, the likeliest to settle), a pair of two runtimes
        set apart for their own spread (_wide) not counted, as _tiers does
        not; None where the ranking has two tiers or more. More runs of its
        pairs are what would make it two (sequential)."""
        if len(self.tiers()) != 1:
            return None
        places = self.places
        wide = _wide([p.lo for p in places], [p.hi for p in places])
        narrow = [j for j in range(len(places)) if j not in wide]
        cuts = [Cut(cut, tuple((places[a], places[b]) for a in range(cut)
                               for b in range(cut, len(places)) if not {a, b} <= wide
                               and (places[a].impl, places[b].impl) not in self.settled))
                for cut in range(1, len(places)) if narrow and narrow[0] < cut <= narrow[-1]]
        return min((c for c in cuts if c.pairs), default=None,
                   key=lambda c: (len(c.pairs), -min(_gap(a, b) for a, b in c.pairs)))


@dataclass(frozen=True)
class Cut:
    """Where a ranking could split into two tiers: after place `after`,
    once every pair still unsettled across it is settled."""
    after: int
    pairs: tuple[tuple[Place, Place], ...]  # (better by estimate, worse)


def _gap(a: Place, b: Place) -> float:
    """How far apart two places' estimates are, on the log scale."""
    return abs(math.log(b.estimate / a.estimate))


# --- the borrowed variance ---------------------------------------------

def logs(g: Group, metric: str) -> tuple[float, ...]:
    return tuple(math.log(v) for v in g.values(metric) if v > 0)


def _own(sample: Sequence[float]) -> tuple[float, int]:
    """A configuration's sample variance of its log figures, and its df."""
    return statistics.variance([math.log(v) for v in sample]), len(sample) - 1


def calibrate(samples: Sequence[Sequence[float]], seed: int = SEED,
              siblings: Sequence[Sequence[Sequence[float]]] = ()) -> Prior | None:
    """The prior of one figure from its configurations' ok runs (positive
    values), its scale calibrated leave-one-configuration-out: each
    configuration with 2 or more runs is split at random into two sides of
    1, 2 and 3 runs (no change between them), tested with the prior fitted
    on the other configurations, and a scale is the smallest factor >= 1
    by which those no-change |t| must be divided so that, at each runs a
    side it covers, at most 5% pass the two-sided 5% cut and at most 1%
    the 1% cut, each configuration weighing the same. Two scales:
    `scale_with_own` covers 2 and 3 runs a side (sides of 2 runs or more,
    their own spread in the test; Prior.scale_for), `scale` 1, 2 and 3 and
    is at least `scale_with_own` (a side of one run, tested on the prior
    alone). A runs a side counts where MIN_CONFIGURATIONS configurations
    have the runs for it; where 2 and 3 runs a side have too few, the
    no-change splits of `siblings` (the same figure's other sizes, each
    tested with its own size's prior) are pooled with these, and without
    enough either `scale` serves both. None where fewer than
    MIN_CONFIGURATIONS configurations have 2 runs.
    Once per samples and seed: a report asks it for its rankings and again
    for its headline places."""
    found = _split_ratios(_hashable(samples), seed)
    if found is None:
        return None
    prior, ratios = found
    scale = max([1.0] + [_scale_of(r) for r in ratios.values() if _enough(r)])
    with_own = [ratios[m] for m in WITH_OWN if _enough(ratios[m])]
    if not with_own:
        pooled = {m: list(ratios[m]) for m in WITH_OWN}
        for other in (_split_ratios(_hashable(s), seed) for s in siblings):
            for m in WITH_OWN:
                pooled[m] += other[1][m] if other is not None else []
        with_own = [r for r in pooled.values() if _enough(r)]
    own_scale = max([1.0] + [_scale_of(r) for r in with_own]) if with_own else None
    # a side of one run is never tested more leniently than sides of more
    return replace(prior, scale=max(scale, own_scale or 1.0), scale_with_own=own_scale)


WITH_OWN = (2, 3)  # the runs a side whose tests hold some of the sides' own spread
Ratios = list[tuple[float, float, float]]  # (|t| / the two-sided 5% cut, / the 1% cut, weight)


def _hashable(samples: Sequence[Sequence[float]]) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(s) for s in samples)


def _enough(found: Ratios) -> bool:
    return len(found) >= MIN_CONFIGURATIONS * SPLITS


def _scale_of(found: Ratios) -> float:
    """The factor that takes the 95th percentile of the 5% ratios and the
    99th of the 1% ratios to 1."""
    return max(_quantile([(r, w) for r, _, w in found], 0.95),
               _quantile([(r, w) for _, r, w in found], 0.99))


@lru_cache(maxsize=128)
def _split_ratios(samples: tuple[tuple[float, ...], ...],
                  seed: int) -> tuple[Prior, dict[int, Ratios]] | None:
    """calibrate's prior (unscaled) and its no-change splits' ratios by
    runs a side; None as calibrate."""
    own = [(i, _own(s)) for i, s in enumerate(samples) if len(s) >= 2]
    prior = fit_prior([v for _, v in own])
    if prior is None or len(own) < MIN_CONFIGURATIONS:
        return None
    rng = random.Random(seed)
    ratios: dict[int, Ratios] = {m: [] for m in CALIBRATION_SIDES}
    for (i, _), left_out in zip(own, fit_priors_leaving_out([v for _, v in own])):
        loo = left_out or prior
        sample = list(samples[i])
        for m in (m for m in CALIBRATION_SIDES if 2 * m <= len(sample)):
            for _ in range(SPLITS):
                rng.shuffle(sample)
                t, df = borrowed_t(sample[:m], sample[m:2 * m], loo)
                key = _df_key(df)
                ratios[m].append((abs(t) / student_isf(0.025, key),
                                  abs(t) / student_isf(0.005, key), 1 / SPLITS))
    return prior, ratios


def _df_key(df: float) -> float:
    """df rounded for student_isf's cache (a quarter under 100; inf above)."""
    return math.inf if df > 100 else round(df * 4) / 4


def _quantile(weighted: list[tuple[float, float]], q: float) -> float:
    """The weighted q-quantile: the smallest value with at least q of the weight at or below."""
    if not weighted:
        return 0.0
    total = sum(w for _, w in weighted)
    run = 0.0
    for value, w in sorted(weighted):
        run += w
        if run >= q * total - 1e-12:
            return value
    return max(v for v, _ in weighted)


ANY = "*"  # the workload or size of a prior fitted across them

PriorKey = tuple[str, str, str]  # (workload or ANY, size (str(n)) or ANY, figure)


def _prior_keys(workload: str, n: int | None, metric: str) -> tuple[PriorKey, ...]:
    """Where a configuration's figure borrows from, nearest first: its own
    size (where the figure's declaration says so: Metric.by_size), its
    workload, every workload."""
    wider = ((workload, ANY, metric), (ANY, ANY, metric))
    return ((workload, str(n), metric), *wider) if METRICS[metric].by_size else wider


def _fitted(samples: dict[PriorKey, list[tuple[float, ...]]]) -> dict[PriorKey, Prior]:
    """Each key's calibrated prior; a size's siblings are its workload's other sizes."""
    def siblings(key: PriorKey) -> list[list[tuple[float, ...]]]:
        workload, size, metric = key
        return [] if size == ANY else [found for (w, at, m), found in samples.items()
                                       if (w, m) == (workload, metric) and at not in (size, ANY)]
    return {key: prior for key, found in samples.items()
            if (prior := calibrate(found, siblings=siblings(key))) is not None}


def _samples(groups: Iterable[Group]) -> dict[PriorKey, list[tuple[float, ...]]]:
    """Each configuration's positive figures under each of its prior keys."""
    out: dict[PriorKey, list[tuple[float, ...]]] = {}
    for g in groups:
        for metric in headline(g.workload):
            if (values := tuple(v for v in g.values(metric) if v > 0)) and not bimodal(values):
                for key in _prior_keys(g.workload, g.key.n, metric):
                    out.setdefault(key, []).append(values)
    return out


def priors(groups: Iterable[Group]) -> dict[PriorKey, Prior]:
    """The borrowed variance of each figure of a run at each size of each
    workload, from that size's configurations (calibrate), and of the
    workload's and every workload's configurations: prior_for's fallbacks
    where a size has too few configurations of 2 runs. A size first, since
    a figure's spread is a size's (a cold pass at 20k is mostly start-up, at
    1M mostly work): pooled, the sizes' spreads make a prior whose
    calibration scale blurs the size whose spread is small. A configuration
    whose runs fall into two modes lends nothing: its spread is its own
    (the moderated t weighs it by its runs)."""
    return _fitted(_samples(groups))


def prior_for(borrowed: dict[PriorKey, Prior], workload: str, n: int | None,
              metric: str) -> Prior | None:
    """A ranking's prior: its size's, else its workload's, else the figure's over every workload."""
    return next((borrowed[k] for k in _prior_keys(workload, n, metric) if k in borrowed), None)


# --- the rank intervals --------------------------------------------------

def worse_p(better: Group, worse: Group, metric: str, prior: Prior | None,
            reach: float = 0.0) -> tuple[float | None, float]:
    """(p, floor) of "worse's figure is worse than better's": the exact
    one-sided Mann–Whitney test where its smallest p reaches `reach` (the
    family's first Holm step) or there is no prior; else the moderated t
    with the borrowed prior. The choice rests on run counts alone."""
    a, b = better.values(metric), worse.values(metric)
    up = not METRICS[metric].higher_is_better
    if not a or not b or bound_from_below(worse, metric):
        return None, 1.0  # a bound from below may be the better figure: no run can say
    floor = smallest_p(len(a), len(b))
    if prior is None or floor <= reach + 1e-12:
        return ratio_p(a, b, 1.0, up), floor
    return borrowed_p(a, b, prior, 1.0, up), 0.0


def rank_intervals(members: Sequence[Group], metric: str, key: SetKey,
                   prior: Prior | None, floor: Group | None = None,
                   rate: float = 1 - LEVEL) -> RankIntervals | None:
    """The joint rank intervals of the members that have the figure; None
    below two of them."""
    ranked = [g for g in members if any(v > 0 for v in g.values(metric))]
    if len(ranked) < 2:
        return None
    sign = -1 if METRICS[metric].higher_is_better else 1
    est = {id(g): math.exp(statistics.fmean(logs(g, metric))) for g in ranked}
    ranked.sort(key=lambda g: (sign * est[id(g)], g.impl))
    pairs = [(j, k) for j in range(len(ranked)) for k in range(len(ranked)) if j != k]
    reach = rate / len(pairs)
    tests = [worse_p(ranked[k], ranked[j], metric, prior, reach) for j, k in pairs]  # j worse than k
    rejected = holm([p for p, _ in tests], [f for _, f in tests], rate)
    size = len(ranked)
    above = [0] * size  # settled better than j
    below = [0] * size  # j settled better than
    for (j, k), r in zip(pairs, rejected):
        if r:
            above[j] += 1
            below[k] += 1
    lo = [1 + above[j] for j in range(size)]
    hi = [size - below[j] for j in range(size)]
    tier_of, spans = _tiers(lo, hi)
    places = tuple(Place(g, est[id(g)], lo[j], hi[j], lo[j] == 1, tier_of[j],
                         len(g.values(metric)), spans[j][0], bimodal(g.values(metric)),
                         spans[j][1])
                   for j, g in enumerate(ranked))
    settled = frozenset((ranked[k].impl, ranked[j].impl)
                        for (j, k), r in zip(pairs, rejected) if r)
    return RankIntervals(key, metric, places, is_headline(key[0], key[1], metric),
                         prior is not None, floor, settled)


# A runtime set apart from the tiers spans more than half its ranking and
# more than this many places: in a ranking of 3, two runtimes tied for
# 1st-2nd are a tier, not two runtimes apart.
WIDE_MIN = 3


def _wide(lo: list[int], hi: list[int]) -> set[int]:
    """The positions whose interval spans more than half the places and
    more than WIDE_MIN."""
    size = len(lo)
    return {j for j in range(size) if hi[j] - lo[j] + 1 > max(size / 2, WIDE_MIN)}


def _tiers(lo: list[int], hi: list[int]) -> tuple[list[int | None], list[tuple[int, int]]]:
    """Each position's tier (1-based; None: set apart) and its tier's first
    and last place. A cut after position i where every runtime is placed on
    its side: the first i within 1..i, the rest within i+1..K. A runtime
    whose interval spans more than half the places and more than WIDE_MIN
    (its own runs spread that widely, as java-virtual's peak RSS at chain
    1M) is left out of that test, and set apart where a cut then falls
    inside its interval, rather than joining every tier it spans into one;
    a cut needs a runtime not so wide on each side."""
    size = len(lo)
    wide = _wide(lo, hi)

    def holds(j: int, cut: int) -> bool:
        return hi[j] <= cut if j < cut else lo[j] >= cut + 1
    narrow = [j for j in range(size) if j not in wide]
    cuts = [cut for cut in range(1, size)
            if narrow and narrow[0] < cut <= narrow[-1]
            and all(holds(j, cut) for j in narrow)]
    apart = {j for j in wide if not all(holds(j, cut) for cut in cuts)}
    tiers: list[list[int]] = []
    for a, b in zip([0, *cuts], [*cuts, size]):
        if tiers and all(j in apart for j in range(a, b)):
            tiers[-1].extend(range(a, b))  # nothing placed here: the tier above reaches on
        else:
            tiers.append(list(range(a, b)))
    tier_of: list[int | None] = [None] * size
    spans = [(1, size)] * size
    for t, members in enumerate(tiers, 1):
        for j in members:
            tier_of[j] = None if j in apart else t
            spans[j] = (members[0] + 1, members[-1] + 1)
    return tier_of, spans


def all_rank_intervals(groups: list[Group], floor_impls: Iterable[str] = (),
                       headline_only: bool = False,
                       borrowed: dict[PriorKey, Prior] | None = None) -> list[RankIntervals]:
    """Every ranking of the run (each headline figure of each comparable
    set), or its headline rankings only; borrowed: priors(groups) when the
    caller has them."""
    floors = set(floor_impls)
    borrowed = priors(groups) if borrowed is None else borrowed
    out = []
    for key, members in sorted(comparable_sets(groups).items(),
                               key=lambda kv: kv[1][0].key.sort_key):
        for metric in headline(key[0]):
            if headline_only and not is_headline(key[0], key[1], metric):
                continue
            floor = next((g for g in members if g.impl in floors and g.values(metric)), None)
            found = rank_intervals([g for g in members if g.impl not in floors], metric, key,
                                   prior_for(borrowed, key[0], key[1], metric), floor)
            if found is not None:
                out.append(found)
    return out


# --- how often the borrowed test is wrong: resampled A/A ------------------

FOLDS = 5  # the configurations are held out a fifth at a time


@dataclass(frozen=True)
class FalseAhead:
    """Resampled A/A of one figure at some runs a side: how many no-change
    comparisons the borrowed test called one side ahead, of how many."""
    metric: str
    runs_a_side: int
    ahead: int
    comparisons: int

    @property
    def rate(self) -> float:
        return self.ahead / self.comparisons if self.comparisons else 0.0


def resampled_aa(groups: Iterable[Group], runs_a_side: int, trials: int = 10,
                 seed: int = SEED, rate: float = 1 - LEVEL) -> list[FalseAhead]:
    """Each configuration with 2·runs_a_side ok runs or more, split at
    random `trials` times into two sides of runs_a_side runs (one build's
    runs: nothing changed), each split asked "is one side ahead?" by the
    borrowed test at `rate` two-sided, one test on its own (no family
    correction: a family's rule only calls fewer). The prior is the one a
    run would give it (prior_for: its size's, else its workload's),
    calibrated on the other configurations only (a fifth of its workload's
    held out at a time), as a run's prior is fitted before it meets a new
    configuration. One record per figure."""
    # (its size, its runs, whether priors() lends from it: one mode)
    by_key: dict[tuple[str, str], list[tuple[str, tuple[float, ...], bool]]] = {}
    for g in groups:
        for metric in headline(g.workload):
            if (values := tuple(v for v in g.values(metric) if v > 0)):
                by_key.setdefault((g.workload, metric), []).append(
                    (str(g.key.n), values, not bimodal(values)))
    counts: dict[str, list[int]] = {}
    rng = random.Random(seed)
    for (_, metric), samples in sorted(by_key.items()):
        tally = counts.setdefault(metric, [0, 0])
        for fold in range(FOLDS):
            held = [entry for i, entry in enumerate(samples) if i % FOLDS == fold]
            others = [(size, s) for i, (size, s, lends) in enumerate(samples)
                      if i % FOLDS != fold and lends]
            whole = calibrate([s for _, s in others], seed)
            for size, sample, _ in held:
                if len(sample) < 2 * runs_a_side:
                    continue
                siblings = [[s for at, s in others if at == other]
                            for other in sorted({at for at, _ in others if at != size})]
                prior = (calibrate([s for at, s in others if at == size], seed, siblings)
                         if METRICS[metric].by_size else None) or whole
                if prior is None:
                    continue
                for _ in range(trials):
                    drawn = rng.sample(list(sample), 2 * runs_a_side)
                    p = borrowed_p(drawn[:runs_a_side], drawn[runs_a_side:], prior, 1.0, True)
                    tally[0] += p is not None and min(p, 1 - p) <= rate / 2
                    tally[1] += 1
    return [FalseAhead(m, runs_a_side, a, n) for m, (a, n) in sorted(counts.items())]


def names_apart(groups: list[Group], floor_impls: Iterable[str] = (),
                suffix: str = "[BENCH_AA=1]") -> tuple[int, int]:
    """(rankings that settle two names of one build apart, rankings that
    hold both names): on a run of the calibrate suite, each runtime under
    X and X + suffix (noise.AA), every such ranking is a false order."""
    apart = total = 0
    for r in all_rank_intervals(groups, floor_impls):
        names = {p.impl for p in r.places}
        twins = [x for x in names if x + suffix in names]
        if twins:
            total += 1
            apart += any(r.ahead(x, x + suffix) or r.ahead(x + suffix, x) for x in twins)
    return apart, total
