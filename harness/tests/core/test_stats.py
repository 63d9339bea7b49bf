"""The statistics on synthetic samples with known answers (never on timings)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, false_discovery_control, mannwhitneyu

from harness.core.formatting import fmt_interval, fmt_number
from harness.core.stats import (LEVEL, Interval, _sign_cdf, _u_counts, discoveries,
                           median_interval, ratio_bound, ratio_p, smallest_p,
                           ratio_interval, runs_needed)


@pytest.mark.parametrize("n,m", [(1, 1), (2, 3), (3, 3), (4, 5), (6, 2)])
def test_the_u_distribution_is_the_enumerated_one(n: int, m: int) -> None:
    """Every way to place n values of one sample among n+m, counted by hand."""
    counts = [0] * (n * m + 1)
    for positions in itertools.combinations(range(n + m), n):
        # U counts, for each value of the first sample, the second's values below it
        counts[sum(p - i for i, p in enumerate(positions))] += 1
    assert list(_u_counts(n, m)) == counts and sum(counts) == math.comb(n + m, n)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 31])
def test_the_sign_distribution_is_scipys_binomial(n: int) -> None:
    for j in range(n + 1):
        assert _sign_cdf(j, n) == pytest.approx(binom.cdf(j, n, 0.5), abs=1e-12)


def test_the_median_interval_is_the_sign_test_interval() -> None:
    iv = median_interval([5, 1, 4, 2, 3, 6, 8, 7, 9, 10])
    # n = 10: [x(2), x(9)] covers 1 - 2 P(B <= 1) = 97.9%; [x(3), x(8)] only 89%
    assert (iv.low, iv.high, iv.estimate) == (2, 9, 5.5)
    assert iv.confidence == pytest.approx(1 - 2 * binom.cdf(1, 10, 0.5)) and iv.settled


@pytest.mark.parametrize("n,confidence", [(2, 0.5), (3, 0.75), (4, 0.875), (5, 0.9375)])
def test_few_runs_give_the_range_with_its_own_confidence(n: int, confidence: float) -> None:
    iv = median_interval(range(n))
    assert (iv.low, iv.high, iv.confidence, iv.settled) == (0, n - 1, confidence, False)
    assert fmt_interval(iv, n, fmt_number) == f"[0, {n - 1}] ({confidence:.0%})"


def test_one_run_has_no_interval() -> None:
    assert median_interval([3.0]) is None and ratio_interval([1.0], [1.0, 2.0]) is None
    assert fmt_interval(None, 1, fmt_number) == "(1 run, no interval)"


def test_identical_runs_give_a_point() -> None:
    iv = median_interval([7.0] * 8)
    assert (iv.low, iv.estimate, iv.high) == (7.0, 7.0, 7.0) and iv.relative_width == 0


def test_runs_needed_for_a_settled_interval() -> None:
    assert runs_needed() == (6, 4)


def test_a_ratio_of_exactly_scaled_samples_is_that_factor() -> None:
    old = [1.0, 1.1, 0.9, 1.05, 0.95]
    iv = ratio_interval(old, [2 * v for v in old])
    assert iv.low < 2.0 < iv.high and iv.estimate == pytest.approx(2.0, rel=0.02)
    assert iv.side(1.0) == "above" and iv.side(3.0) == "below" and iv.side(2.0) == "within"


def test_a_ratio_interval_with_too_few_runs_is_not_settled() -> None:
    iv = ratio_interval([1.0, 1.01, 0.99], [2.0, 2.02, 1.98])
    assert iv.confidence == pytest.approx(0.9) and iv.side(1.0) == "not settled"


def test_a_ratio_needs_positive_values() -> None:
    assert ratio_interval([0.0, 1.0], [1.0, 2.0]) is None


def test_coverage_of_the_median_interval_is_what_it_says() -> None:
    """Normal samples of 8 (true median 10): the share of intervals holding
    10 is the stated confidence, within the simulation's noise."""
    rng = np.random.default_rng(1)
    trials = 4000
    ivs = [median_interval(rng.normal(10, 1, 8)) for _ in range(trials)]
    hit = sum(iv.low <= 10 <= iv.high for iv in ivs) / trials
    stated = ivs[0].confidence
    assert stated >= LEVEL and abs(hit - stated) < 3 * math.sqrt(stated * (1 - stated) / trials)


@pytest.mark.parametrize("sigma", [0.02, 0.3])
def test_coverage_of_the_ratio_interval_is_what_it_says(sigma: float) -> None:
    """Lognormal samples of 5 and 6 runs, the second 1.2 times the first:
    tight or noisy, the interval holds 1.2 as often as it claims."""
    rng = np.random.default_rng(2)
    trials = 3000
    ivs = [ratio_interval(rng.lognormal(0, sigma, 5), 1.2 * rng.lognormal(0, sigma, 6))
           for _ in range(trials)]
    hit = sum(iv.low <= 1.2 <= iv.high for iv in ivs) / trials
    stated = ivs[0].confidence
    assert stated >= LEVEL and abs(hit - stated) < 3 * math.sqrt(stated * (1 - stated) / trials)
    if sigma == 0.02:  # tight data: every interval excludes "no change"
        assert all(iv.side(1.0) == "above" for iv in ivs)


def test_an_interval_is_a_value_object() -> None:
    iv = Interval(2.0, 1.0, 4.0, 0.97, (6,))
    assert iv.relative_width == 1.0 and iv.settled


# -- one-sided tests, the gate's and the verdicts' -----------------------------

@pytest.mark.parametrize("n,m", [(3, 3), (4, 5), (6, 6)])
def test_the_one_sided_p_is_scipys_exact_mann_whitney(n: int, m: int) -> None:
    """ratio_p(old, new, r, above) is the exact Mann–Whitney p-value of new/r
    against old (scipy's, method="exact", no ties)."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        old, new = rng.lognormal(0, 0.2, n), rng.lognormal(0.1, 0.2, m)
        for r in (0.9, 1.0, 1.05):
            for above, alternative in ((True, "greater"), (False, "less")):
                ours = ratio_p(old, new, r, above)
                theirs = mannwhitneyu(new / r, old, alternative=alternative, method="exact").pvalue
                assert ours == pytest.approx(theirs, abs=1e-12)


def test_three_runs_a_side_reach_95_percent_one_sided() -> None:
    """The gate's arithmetic: the smallest of the nine ratios is an exact 95%
    lower bound (1 - 1/20); two a side cannot reach it (1 - 1/6)."""
    assert smallest_p(3, 3) == pytest.approx(1 / 20) and smallest_p(4, 4) == pytest.approx(1 / 70)
    b = ratio_bound([1.0, 1.01, 0.99], [2.0, 2.02, 1.98], lower=True)
    assert b.settled and b.confidence == pytest.approx(0.95)
    assert b.low == pytest.approx(1.98 / 1.01) and b.high == math.inf
    assert not ratio_bound([1.0, 1.01], [2.0, 2.02], lower=True).settled
    up = ratio_bound([1.0, 1.01, 0.99], [2.0, 2.02, 1.98], lower=False)
    assert up.high == pytest.approx(2.02 / 0.99) and up.low == 0


@pytest.mark.parametrize("sigma", [0.02, 0.3])
def test_coverage_of_the_one_sided_bound_is_what_it_says(sigma: float) -> None:
    """3 a side, new 1.2 times old: the lower bound lies below 1.2 at least
    95% of the time, tight or noisy."""
    rng = np.random.default_rng(3)
    trials = 4000
    bounds = [ratio_bound(rng.lognormal(0, sigma, 3), 1.2 * rng.lognormal(0, sigma, 3), True)
              for _ in range(trials)]
    hit = sum(b.low <= 1.2 for b in bounds) / trials
    assert hit >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / trials)


def test_false_alarms_and_power_of_a_one_sided_question() -> None:
    """"Worse by more than 5%?" at 3 runs a side: when nothing changed it is
    answered yes far less often than 5% (all nine ratios must pass 1.05);
    at exactly +5% (the null's edge) at most 5%; a doubling with 5% noise is
    found every time."""
    rng = np.random.default_rng(4)
    trials = 4000

    def rate(factor: float, sigma: float) -> float:
        return sum(ratio_p(rng.lognormal(0, sigma, 3), factor * rng.lognormal(0, sigma, 3),
                           1.05, True) <= 0.05 + 1e-12 for _ in range(trials)) / trials

    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)
    assert rate(1.0, 0.02) < 0.01
    assert rate(1.0, 0.3) < bound and rate(1.05, 0.3) < bound
    assert rate(2.0, 0.05) == 1.0


def test_discoveries_are_scipys_benjamini_hochberg() -> None:
    """With every test able to reach the rate, discoveries() is BH (scipy's
    false_discovery_control, adjusted p <= rate)."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        p = list(np.concatenate([rng.uniform(0, 0.01, rng.integers(0, 10)),
                                 rng.uniform(0, 1, rng.integers(1, 30))]))
        ours = discoveries(p, [0.0] * len(p))
        theirs = false_discovery_control(p) <= 0.05
        assert ours == list(theirs)


def test_discoveries_leave_out_tests_that_cannot_reach_the_rate() -> None:
    """A test whose smallest p is above the rate (2 runs a side: 1/6) neither
    counts in the family nor becomes a discovery (Tarone)."""
    p = [0.01, 0.025, 1 / 6, 1 / 6, 1 / 6, None]
    floors = [1 / 70, 1 / 70, 1 / 6, 1 / 6, 1 / 6, 1 / 70]
    assert discoveries(p, floors) == [True, True, False, False, False, False]
    # counted, the three would have cost the second test its discovery
    assert discoveries(p[:5], [0.0] * 5) == [True, False, False, False, False]


def test_the_false_discovery_rate_holds_on_a_mixed_family() -> None:
    """100 verdicts of 5 runs a side, 80 with no difference and 20 with a
    doubling (lognormal noise, 20%): the share of false discoveries among the
    discoveries, averaged over trials, stays under 5%, and most of the
    doublings are found."""
    rng = np.random.default_rng(6)
    shares, found = [], []
    for _ in range(60):
        factors = [1.0] * 80 + [2.0] * 20
        p = [ratio_p(rng.lognormal(0, 0.2, 5), f * rng.lognormal(0, 0.2, 5), 1.0, True)
             for f in factors]
        chosen = discoveries(p, [smallest_p(5, 5)] * len(p))
        false = sum(c for c, f in zip(chosen, factors) if f == 1.0)
        shares.append(false / max(sum(chosen), 1))
        found.append(sum(c for c, f in zip(chosen, factors) if f == 2.0) / 20)
    assert np.mean(shares) < 0.05 and np.mean(found) > 0.8


def test_student_t_digamma_and_trigamma_match_scipy() -> None:
    from scipy import special
    from scipy.stats import t as student
    from harness.core.stats import digamma, student_isf, student_sf, trigamma
    for x in (0.2, 1.0, 2.5, 7.0, 40.0):
        assert abs(digamma(x) - special.digamma(x)) < 1e-9
        assert abs(trigamma(x) - special.polygamma(1, x)) < 1e-9
    for t, df in ((1.5, 1), (2.0, 3), (-1.0, 5), (4.0, 20), (0.1, 100), (3.0, 2.5)):
        assert abs(student_sf(t, df) - student.sf(t, df)) < 1e-9
    assert abs(student_isf(0.025, 4) - student.isf(0.025, 4)) < 1e-8


def test_a_prior_fitted_on_known_variances_recovers_it() -> None:
    """Each configuration's true variance drawn from a scaled inverse χ²
    with d0 = 10 and s0² = 0.04, 6 runs each: Smyth's moments give both
    back, the variance within 10% and the df within 8 to 14 (2,000
    configurations)."""
    import numpy as np
    from harness.core.stats import fit_prior
    rng = np.random.default_rng(5)
    true = 10 * 0.04 / rng.chisquare(10, 2000)
    found = fit_prior([(float(np.var(rng.normal(0, np.sqrt(v), 6), ddof=1)), 5) for v in true])
    assert abs(found.var / 0.04 - 1) < 0.1 and 8 < found.df < 14


def test_the_borrowed_test_needs_one_run_a_side_and_reads_a_clear_gap() -> None:
    """With a prior of sd 0.1 (many df), one run a side 2x apart is far
    beyond chance; equal figures are not; the scale weakens the test."""
    from harness.core.stats import Prior, borrowed_p
    prior = Prior(0.01, math.inf)
    assert borrowed_p([1.0], [2.0], prior, 1.0, True) < 1e-5
    assert borrowed_p([1.0], [1.0], prior, 1.0, True) == 0.5
    assert borrowed_p([1.0], [2.0], prior, 1.0, False) > 0.99
    assert borrowed_p([1.0], [2.0], Prior(0.01, math.inf, scale=3.0), 1.0, True) > 1e-3
    assert borrowed_p([], [2.0], prior, 1.0, True) is None


def test_the_priors_left_one_out_are_fit_prior_of_the_rest_exactly() -> None:
    """fit_priors_leaving_out, one pass with exact sums, gives the very
    floats of fit_prior asked of the variances less each one in turn; a
    variance fit_prior leaves out (zero, or no df) leaves the rest whole,
    and below three left there is none."""
    import random
    from harness.core.stats import fit_prior, fit_priors_leaving_out
    rng = random.Random(3)
    for size in (0, 1, 3, 4, 5, 12, 40):
        for _ in range(20):
            variances = [(rng.choice([0.0, rng.lognormvariate(-4, 1.5)]), rng.choice([0, 1, 2, 5]))
                         for _ in range(size)]
            assert fit_priors_leaving_out(variances) == [
                fit_prior(variances[:i] + variances[i + 1:]) for i in range(size)], variances


def test_the_pairs_beyond_a_ratio_are_counted_as_pair_by_pair() -> None:
    """The shifted U counted by bisection is the count over every pair,
    ties (which count against the claim) included."""
    import random
    from harness.core.stats import _pairs_beyond
    rng = random.Random(4)
    for _ in range(300):
        old = [rng.choice([1.0, 2.0, 3.0, rng.uniform(0.5, 4)]) for _ in range(rng.randint(1, 9))]
        new = [rng.choice([1.0, 2.0, 3.0, rng.uniform(0.5, 4)]) for _ in range(rng.randint(1, 9))]
        for ratio in (0.5, 1.0, 1.5, 2.0, rng.uniform(0.2, 5)):
            assert _pairs_beyond(old, new, ratio, True) == sum(
                y > ratio * x for x in old for y in new)
            assert _pairs_beyond(old, new, ratio, False) == sum(
                y < ratio * x for x in old for y in new)
