"""analyse/ranks.py on synthetic samples with known orders: joint rank
intervals hold the true places, clear gaps are placed with 2 runs a side
once a variance is borrowed, the best set and tiers follow, the headline
rankings are the articles' sizes, and on no change the borrowed test calls
a side ahead in at most 5% of resampled A/A splits."""

from __future__ import annotations

import numpy as np

from harness.analyse.analysis import group_runs
from harness.core.formatting import fmt_ordinal
from harness.analyse.ranks import (ANY, Place, RankIntervals, _tiers, all_rank_intervals,
                                   calibrate, is_headline, prior_for, priors, rank_intervals, rank_margin, resampled_aa)

from .test_standings import MS, rows

SIGMA = 0.2  # the sd of a log figure, as warm passes spread here (15-25%)


def _background(rng: np.random.Generator, impls: str, runs: int = 4) -> list:
    """Other sizes of the same workload, every impl equal: what the variance is borrowed from."""
    return [r for n in (10, 100, 1000) for impl in impls
            for r in rows(impl, list(MS * np.exp(rng.normal(0, SIGMA, runs))), n=n)]


def _planted(rng: np.random.Generator, factors: dict[str, float], runs: int) -> list:
    return [r for impl, f in factors.items()
            for r in rows(impl, list(f * MS * np.exp(rng.normal(0, SIGMA, runs))), n=1_000_000)]


def _ranking(groups, metric: str = "warm_iter_s"):
    return next(r for r in all_rank_intervals(groups) if r.n == 1_000_000 and r.metric == metric)


FACTORS = {"a": 1.0, "b": 1.05, "c": 3.0, "d": 3.1, "e": 10.0, "f": 30.0}


def test_two_runs_a_side_place_clear_gaps_and_every_interval_holds_the_truth() -> None:
    """Three clusters (a~b, c~d, then e and f), 3x to 10x apart, 2 runs a
    side: over 20 seeds, every rank interval holds the implementation's
    true place set (a and b share 1st-2nd), the best set never loses a or b,
    and most seeds settle at least the e and f places."""
    truth = {"a": (1, 2), "b": (1, 2), "c": (3, 4), "d": (3, 4), "e": (5, 5), "f": (6, 6)}
    settled = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        r = _ranking(group_runs(_planted(rng, FACTORS, 2) + _background(rng, "abcdef")))
        assert r.borrowed and r.headline  # chain at 1M: an articles' size
        for p in r.places:
            lo, hi = truth[p.impl]
            assert p.lo <= hi and p.hi >= lo, (seed, p.impl, p.lo, p.hi)
        assert {"a", "b"} <= {p.impl for p in r.best_set}
        settled += r.place_of("f").text == "6th"
    assert settled >= 15


def test_tiers_and_texts() -> None:
    rng = np.random.default_rng(7)
    r = _ranking(group_runs(_planted(rng, {"a": 1.0, "b": 1.02, "c": 20.0}, 3)
                            + _background(rng, "abc")))
    assert [[p.impl for p in t] for t in r.tiers()] in (
        [["a", "b"], ["c"]], [["b", "a"], ["c"]])
    assert r.tier_text().startswith("1st–2nd: ") and r.tier_text().endswith("; 3rd: c")
    assert r.place_of("c").text == "3rd" and r.place_of("a").text == "1st–2nd"
    assert len(r.best_set) == 2
    assert [fmt_ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd"]


def test_a_runtime_whose_interval_spans_over_half_the_ranking_is_set_apart() -> None:
    """Fixed intervals, best first by estimate: w's 2nd-6th of 6 would join
    every tier into one (no cut where all above are placed above all
    below); left out of the rule, a and b are a tier apart from c, d and e,
    and w, whose interval crosses that edge, belongs to neither."""
    tier_of, spans = _tiers([1, 1, 2, 3, 3, 5], [2, 2, 6, 4, 4, 6])
    assert tier_of == [1, 1, None, 2, 2, 2]
    assert spans == [(1, 2), (1, 2), (3, 6), (3, 6), (3, 6), (3, 6)]
    # without a wide interval, the rule is the plain one
    assert _tiers([1, 1, 3], [2, 2, 3]) == ([1, 1, 2], [(1, 2), (1, 2), (3, 3)])
    # nothing settled: one tier, no one apart (a cut needs a narrow runtime on each side)
    assert _tiers([1] * 6, [6] * 6) == ([1] * 6, [(1, 6)] * 6)
    # a stretch with only runtimes set apart joins the tier above
    assert _tiers([1, 1, 3, 4, 4, 6, 6], [1, 5, 3, 5, 5, 7, 7]) == (
        [1, None, 2, 3, 3, 4, 4], [(1, 2), (1, 2), (3, 3), (4, 5), (4, 5), (6, 7), (6, 7)])
    # in a small ranking two runtimes tied for 1st-2nd are a tier, not set apart
    assert _tiers([1, 1, 3], [2, 2, 3]) == ([1, 1, 2], [(1, 2), (1, 2), (3, 3)])


def test_one_run_a_side_without_a_borrowed_variance_places_nothing() -> None:
    """No configuration with 2 runs to borrow from: the exact test, whose
    smallest p at 1 and 1 is 1/2, leaves every place open."""
    rng = np.random.default_rng(1)
    r = _ranking(group_runs(_planted(rng, FACTORS, 1)))
    assert not r.borrowed
    assert all((p.lo, p.hi) == (1, 6) for p in r.places) and len(r.tiers()) == 1


def test_equal_implementations_stay_one_tier_in_almost_every_seed() -> None:
    """Six equal implementations, 2 runs a side, 40 seeds: the joint 95%
    intervals claim an order (a place off 1st-6th) in at most 2 of them."""
    wrong = 0
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        r = _ranking(group_runs(_planted(rng, dict.fromkeys("abcdef", 1.0), 2)
                                + _background(rng, "abcdef")))
        wrong += any((p.lo, p.hi) != (1, 6) for p in r.places)
    assert wrong <= 2


def test_the_headline_rankings_are_the_articles_sizes() -> None:
    assert is_headline("chain", 1_000_000, "warm_iter_s")
    assert is_headline("bounded", 10_000, "peak_rss_bytes")
    assert is_headline("sleep", 1_000_000, "peak_rss_bytes")
    assert not is_headline("sleep", 1_000_000, "warm_iter_s")
    assert not is_headline("chain", 1_000_000, "first_iter_s")
    assert not is_headline("chain", 10_000, "warm_iter_s")
    assert (rank_margin("warm_iter_s"), rank_margin("peak_rss_bytes")) == (0.10, 0.05)


def test_the_calibration_inflates_a_heavy_tailed_figure() -> None:
    """Configurations whose runs are a t with 2 df (heavy tails): the
    calibrated scale is above 1; normal runs keep a scale near 1."""
    rng = np.random.default_rng(3)
    heavy = [tuple(np.exp(0.1 * rng.standard_t(2, 6))) for _ in range(40)]
    normal = [tuple(np.exp(0.1 * rng.normal(0, 1, 6))) for _ in range(40)]
    assert calibrate(heavy).scale > 1.2
    assert calibrate(normal).scale < 1.3
    assert calibrate(normal[:5]) is None  # too few to borrow from


def test_resampled_aa_calls_at_most_5_percent_ahead() -> None:
    """Configurations with their own spreads (sd 0.1 to 0.4 of a log,
    some heavy-tailed), 6 runs each: split A/A at 1, 2 and 3 runs a side,
    the borrowed test calls a side ahead in at most 5% of the splits."""
    rng = np.random.default_rng(11)
    table = []
    for i in range(40):
        sd = rng.uniform(0.1, 0.4)
        noise = rng.standard_t(4, 6) if i % 3 == 0 else rng.normal(0, 1, 6)
        table += rows(f"x{i}", list(MS * np.exp(sd * noise)), n=10 * (i % 4 + 1))
    groups = group_runs(table)
    assert priors(groups)[("chain", ANY, "warm_iter_s")].configurations == 40
    for n in (1, 2, 3):
        found = {f.metric: f for f in resampled_aa(groups, n, trials=10)}["warm_iter_s"]
        assert found.comparisons == 400 and found.rate <= 0.05, (n, found)


def test_the_settled_pairs_are_those_the_places_rest_on() -> None:
    rng = np.random.default_rng(7)
    r = _ranking(group_runs(_planted(rng, {"a": 1.0, "b": 1.02, "c": 20.0}, 3)
                            + _background(rng, "abc")))
    assert r.ahead("a", "c") and r.ahead("b", "c")
    assert not r.ahead("c", "a") and not r.ahead("a", "b") and not r.ahead("b", "a")


def test_a_size_borrows_its_own_spread_not_another_sizes() -> None:
    """Ten configurations at a size whose runs spread 3% and ten at another
    spreading 40%, heavy-tailed, 2 runs each: the quiet size's prior is its
    own (a spread near 3%), and its ranking places a 1.25× gap the pooled
    prior would blur."""
    rng = np.random.default_rng(5)
    table = []
    for i in range(10):
        table += rows(f"q{i}", list(MS * (1.25 ** i) * np.exp(0.03 * rng.normal(0, 1, 2))), n=1000)
        table += rows(f"q{i}", list(MS * np.exp(0.4 * rng.standard_t(3, 2))), n=10)
    groups = group_runs(table)
    found = priors(groups)
    own = prior_for(found, "chain", 1000, "warm_iter_s")
    pooled = found[("chain", ANY, "warm_iter_s")]
    assert own is found[("chain", "1000", "warm_iter_s")]
    assert own.var ** 0.5 < 0.06 and own.configurations == 10
    quiet = next(r for r in all_rank_intervals(groups) if r.n == 1000 and r.metric == "warm_iter_s")
    blurred = rank_intervals([p.group for p in quiet.places], "warm_iter_s", quiet.key, pooled)
    assert len(quiet.tiers()) >= 8 and len(quiet.best_set) == 1
    assert len(blurred.tiers()) < len(quiet.tiers())


def _fixed(estimates: list[float], lo: list[int], hi: list[int],
           settled: set[tuple[str, str]]) -> RankIntervals:
    """A ranking of fixed intervals and settled pairs, a..z best first."""
    names = "abcdefgh"[:len(estimates)]
    tier_of, spans = _tiers(lo, hi)
    groups = {g.impl: g for g in group_runs(
        [r for name, est in zip(names, estimates) for r in rows(name, [est * MS] * 2, n=10**6)])}
    places = tuple(Place(groups[name], est, lo[j], hi[j], lo[j] == 1, tier_of[j], 2, spans[j][0],
                         None, spans[j][1])
                   for j, (name, est) in enumerate(zip(names, estimates)))
    return RankIntervals(("chain", 10**6, None, ()), "warm_iter_s", places, True, True,
                         settled=frozenset(settled))


def test_the_nearest_cut_of_a_one_tier_ranking_is_the_fewest_pairs_left_open() -> None:
    """a 1st-2nd, b 1st-3rd, c 2nd-4th, d 3rd-4th: no cut holds, each of
    the three is blocked by one pair (a-b, b-c, c-d); the tie goes to the
    pair furthest apart, b against c at 4x."""
    settled = {("a", "c"), ("a", "d"), ("b", "d")}
    r = _fixed([1, 2, 8, 16], [1, 1, 2, 3], [2, 3, 4, 4], settled)
    assert len(r.tiers()) == 1
    assert [(a.impl, b.impl) for a, b in r.nearest_cut().pairs] == [("b", "c")]
    assert r.nearest_cut().after == 2
    # closer there: the pair a-b, 2x against c-d's 1.5x and b-c's 1.25x
    r = _fixed([1, 2, 2.5, 3.75], [1, 1, 2, 3], [2, 3, 4, 4], settled)
    assert [(a.impl, b.impl) for a, b in r.nearest_cut().pairs] == [("a", "b")]
    # fewer pairs first: a-b alone at 1.1x before b-c and b-d (or b-d and
    # c-d) at 2x to 15x
    r = _fixed([1, 1.1, 8, 16], [1, 1, 2, 2], [2, 3, 4, 4], {("a", "c"), ("a", "d")})
    assert [(a.impl, b.impl) for a, b in r.nearest_cut().pairs] == [("a", "b")]
    # two tiers already: nothing asked
    r = _fixed([1, 2, 8, 16], [1, 1, 3, 3], [2, 2, 4, 4],
               {("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")})
    assert len(r.tiers()) == 2 and r.nearest_cut() is None


def test_two_runtimes_set_apart_do_not_block_a_cut_between_them() -> None:
    """b and c span all 4 places (_wide): the pair b-c is not one a cut
    waits for. The cut after b is left a-c open, the one after c c-d, as
    far apart (4x): counted, b-c would make the first two pairs and the
    second the nearest."""
    r = _fixed([1, 2, 4, 16], [1, 1, 1, 3], [3, 4, 4, 4], {("a", "d"), ("b", "d")})
    assert len(r.tiers()) == 1
    assert [(a.impl, b.impl) for a, b in r.nearest_cut().pairs] == [("a", "c")]
