"""Confidence intervals for a figure and for a ratio of two figures, and
what they let a verdict say. docs/statistics.md explains the methods.

Both methods are distribution-free and their confidence is exact, not
asymptotic: a benchmark has a handful of process runs per configuration,
where a bootstrap would call the range of three runs a 95% interval.

- The median of n runs: the interval between two order statistics,
  [x(k), x(n+1-k)], whose coverage is 1 - 2·P(B ≤ k-1) for B ~ Bin(n, 1/2)
  (the sign test's interval). 95% needs n ≥ 6; with fewer runs the widest
  interval, [min, max], is given with its own, lower confidence.
- A ratio new/old: the Hodges–Lehmann estimate on the log scale, i.e. the
  median of the n·m pairwise ratios, and the interval between the k-th
  smallest and k-th largest pairwise ratio, whose coverage follows from the
  exact distribution of the Mann–Whitney U statistic (Lehmann, Nonparametrics,
  1975, ch. 2; Bauer 1972). It assumes the two samples differ by a factor;
  95% needs 4 runs on each side.
- The same ratio over blocks (the nodes of a cluster run): only runs of one
  block are paired, the estimate is the median of those within-block
  ratios, and the interval's coverage follows from the sum of the blocks'
  U statistics (the combined Wilcoxon statistic, Lehmann 1975, ch. 3), whose
  exact distribution is the convolution of theirs. A factor that slows a
  block's runs alike cancels in every pair. One block is the ratio above.

- A difference of log figures with a variance borrowed across a run's
  configurations (Prior, fit_prior, borrowed_t, borrowed_p): limma's
  moderated t (Smyth 2004), not distribution-free, so its scale is
  calibrated on the run's own no-change splits (analyse/ranks.calibrate);
  used where the exact tests' run counts cannot reach a family's level.

An interval is `settled` when its confidence reaches LEVEL; a verdict built
on one that is not says "not settled", whatever the figures.
"""

from __future__ import annotations

import math
import operator
import statistics
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, reduce
from itertools import accumulate, chain
from typing import Iterable, Sequence

LEVEL = 0.95


def _sign_cdf(j: int, n: int) -> float:
    """P(B <= j) for B ~ Bin(n, 1/2), exactly. Counted here rather than taken
    from scipy so that the measuring process (run --until-ci decides between
    runs) never imports it; the tests check it against scipy."""
    return sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    confidence: float  # the interval's exact coverage
    runs: tuple[int, ...]  # the values behind it: (n,) for a figure, (old, new) for a ratio

    @property
    def settled(self) -> bool:
        return self.confidence >= LEVEL - 1e-12

    @property
    def relative_width(self) -> float:
        """The larger half-width as a fraction of the estimate."""
        if self.estimate == 0:
            return math.inf
        return max(self.high - self.estimate, self.estimate - self.low) / abs(self.estimate)

    def side(self, threshold: float) -> str:
        """"above" or "below" when the whole settled interval lies on that
        side of threshold; "within" when a settled interval holds it;
        "not settled" when the interval's confidence is below LEVEL."""
        if not self.settled:
            return "not settled"
        if self.low > threshold:
            return "above"
        if self.high < threshold:
            return "below"
        return "within"


def _widest_k(coverage: Sequence[float], level: float) -> int:
    """The largest k (1-based, the k-th value from each end) whose interval
    still reaches level; 1 when none does (the widest interval)."""
    k = 1
    while k < len(coverage) and coverage[k] >= level - 1e-12:
        k += 1
    return k


def _median(x: Sequence[float]) -> float:
    """statistics.median of values already sorted (it would sort them again)."""
    half = len(x) // 2
    return x[half] if len(x) % 2 else (x[half - 1] + x[half]) / 2


@lru_cache(maxsize=None)
def _median_k(n: int, level: float) -> tuple[int, float]:
    """median_interval's k and coverage for n values: once per n, not per
    figure (a large run has thousands of figures of as many runs)."""
    # coverage[k-1] of [x(k), x(n+1-k)], k = 1 .. n//2
    coverage = [1 - 2 * _sign_cdf(k - 1, n) for k in range(1, n // 2 + 1)]
    k = _widest_k(coverage, level)
    return k, coverage[k - 1]


def median_interval(values: Iterable[float], level: float = LEVEL) -> Interval | None:
    """The median with its order-statistic interval; None below two values
    (one run has no interval, and says so)."""
    x = sorted(float(v) for v in values)
    n = len(x)
    if n < 2:
        return None
    k, confidence = _median_k(n, level)
    return Interval(_median(x), x[k - 1], x[n - k], confidence, (n,))


@lru_cache(maxsize=None)
def _u_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n+m, n) equally likely orderings of two samples
    give each value of the Mann–Whitney U (0 .. n·m). scipy computes U's
    p-values but exposes neither this distribution nor the interval built
    on it, hence this recurrence: the largest value comes from the first
    sample (adding m to U) or from the second."""
    # The same counts by their generating function, the Gaussian binomial
    # prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i): O(n^2 m) exact integer steps,
    # where the recurrence took O(n^2 m^2) (a 100-run side: minutes).
    # Each step runs as whole-list operations (map, accumulate), not a
    # Python loop per coefficient, on the lower half of the coefficients
    # only: a coefficient depends on lower ones alone, and the counts are
    # symmetric (U and n·m - U), so the upper half is the lower reversed.
    n, m = min(n, m), max(n, m)  # U's distribution is symmetric in the two sizes
    counts = [1] + [0] * (n * m // 2)
    for i in range(1, n + 1):
        # times (1 - q^(m+i)): c[u] - c[u-m-i], from the old coefficients
        counts[m + i:] = map(operator.sub, counts[m + i:], counts[:-(m + i)])
        for r in range(i):  # divided by (1 - q^i): a running sum with stride i
            counts[r::i] = accumulate(counts[r::i])
    return tuple(counts + counts[:n * m - n * m // 2][::-1])


# One block's runs: (old, new), e.g. those of one node of a cluster run.
Block = tuple[Sequence[float], Sequence[float]]


def _convolve(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """The counts of a sum of two independent statistics, from theirs.
    Counted here, in exact integers as _u_counts: scipy has no stratified
    Mann–Whitney distribution, and numpy's float convolution would round
    the counts of large blocks."""
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return tuple(out)


@lru_cache(maxsize=None)
def _blocked_u_counts(sizes: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """The null distribution of the sum of the blocks' U (sizes: each
    block's (old, new) run counts, sorted): the blocks' orderings are
    independent, so it is the convolution of their U distributions (the
    Mann–Whitney counts themselves for one block)."""
    return reduce(_convolve, (_u_counts(n, m) for n, m in sizes))


@dataclass(frozen=True)
class _Paired:
    """The blocks a ratio can use (both sides have runs), as floats."""
    blocks: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...]

    @property
    def runs(self) -> tuple[int, int]:
        return sum(len(a) for a, _ in self.blocks), sum(len(b) for _, b in self.blocks)

    def ratios(self) -> list[float]:
        """Every within-block ratio new/old, sorted (x.__rtruediv__(y) is y / x)."""
        return sorted(chain.from_iterable(map(x.__rtruediv__, b)
                                          for a, b in self.blocks for x in a))

    @property
    def sizes(self) -> tuple[tuple[int, int], ...]:
        """The blocks' (old, new) run counts, sorted: what the null rests on."""
        return tuple(sorted((len(a), len(b)) for a, b in self.blocks))

    def null(self) -> tuple[tuple[int, ...], int]:
        """The cumulative counts of the summed U, and their total."""
        return _null(self.sizes)


@lru_cache(maxsize=None)
def _null(sizes: tuple[tuple[int, int], ...]) -> tuple[tuple[int, ...], int]:
    """_Paired.null by the blocks' sizes: once per sizes, not per figure
    (a large run asks it of every configuration)."""
    return tuple(accumulate(_blocked_u_counts(sizes))), math.prod(math.comb(n + m, n)
                                                                  for n, m in sizes)


def _paired(blocks: Iterable[Block]) -> _Paired | None:
    """The blocks with runs on both sides (a block with one side only has
    nothing to pair its runs with, and says nothing on the ratio); None
    when a value is not positive (no ratio can be taken) or no block is left."""
    kept = []
    for old, new in blocks:
        a, b = tuple(float(v) for v in old), tuple(float(v) for v in new)
        if min(a + b, default=1.0) <= 0:
            return None
        if a and b:
            kept.append((a, b))
    return _Paired(tuple(kept)) if kept else None


def ratio_interval(old: Iterable[float], new: Iterable[float],
                   level: float = LEVEL) -> Interval | None:
    """new / old: the median of the pairwise ratios with its exact interval;
    None when a side has fewer than two values or a value is not positive
    (a ratio needs both)."""
    return blocked_ratio_interval([(tuple(old), tuple(new))], level)


def blocked_ratio_interval(blocks: Iterable[Block], level: float = LEVEL) -> Interval | None:
    """new / old over blocks: the median of the within-block pairwise ratios
    (the stratified Hodges–Lehmann estimate) with its exact interval from the
    summed U; None when the paired blocks hold fewer than two runs a side or
    a value is not positive. One block: ratio_interval."""
    paired = _paired(blocks)
    if paired is None or min(paired.runs) < 2:
        return None
    return _ratio_interval(paired, level)


@lru_cache(maxsize=4096)
def _ratio_interval(paired: _Paired, level: float) -> Interval:
    """blocked_ratio_interval of paired runs: once per pair of samples (a
    report asks the same pair for its ratios, standings and rankings)."""
    ratios = paired.ratios()
    k, confidence = _interval_k(paired.sizes, level)
    return Interval(_median(ratios), ratios[k - 1], ratios[len(ratios) - k], confidence,
                    paired.runs)


@lru_cache(maxsize=None)
def _interval_k(sizes: tuple[tuple[int, int], ...], level: float) -> tuple[int, float]:
    """The k of the interval [r(k), r(pairs+1-k)] and its coverage, by the
    blocks' sizes: once per sizes, not per figure."""
    cdf, total = _null(sizes)
    pairs = sum(n * m for n, m in sizes)
    # [r(k), r(pairs+1-k)] misses the true ratio when U <= k-1 or U >= pairs-k+1
    coverage = [1 - 2 * cdf[k - 1] / total for k in range(1, pairs // 2 + 1)]
    k = _widest_k(coverage, level)
    return k, coverage[k - 1]


def _pairs_beyond(old: Sequence[float], new: Sequence[float], ratio: float,
                  above: bool) -> int:
    """How many pairwise ratios new/old lie strictly beyond ratio (above or
    below it): the Mann–Whitney U of the two samples, one shifted by ratio.
    A tie counts against the claim, which keeps the p-value conservative.
    Counted by bisection in the sorted new runs, not pair by pair."""
    ys = sorted(new)
    if above:
        return sum(len(ys) - bisect_right(ys, ratio * x) for x in old)
    return sum(bisect_left(ys, ratio * x) for x in old)


def ratio_p(old: Iterable[float], new: Iterable[float], ratio: float,
            above: bool) -> float | None:
    """The exact one-sided p-value of "new/old lies above ratio" (above) or
    "below ratio": the chance, were the true ratio exactly `ratio`, of at
    least as many pairwise ratios beyond it (the shifted Mann–Whitney test,
    the same distribution as ratio_interval). None where a ratio cannot be
    taken. p <= 1 - level exactly when the one-sided bound of ratio_bound
    excludes `ratio`, ties aside."""
    return blocked_ratio_p([(tuple(old), tuple(new))], ratio, above)


def blocked_ratio_p(blocks: Iterable[Block], ratio: float, above: bool) -> float | None:
    """ratio_p over blocks: the within-block pairs beyond ratio, summed over
    the blocks (the stratified Mann–Whitney test). One block: ratio_p."""
    paired = _paired(blocks)
    if paired is None:
        return None
    u = sum(_pairs_beyond(a, b, ratio, above) for a, b in paired.blocks)
    cdf, total = paired.null()
    return (total - (cdf[u - 1] if u else 0)) / total


def smallest_p(n: int, m: int) -> float:
    """The smallest p-value ratio_p can give with n and m runs: every pair
    beyond, 1 / C(n+m, n) (3 a side: 1/20, 4 a side: 1/70)."""
    return 1 / math.comb(n + m, n)


def blocked_smallest_p(blocks: Iterable[Block]) -> float | None:
    """smallest_p over blocks: every within-block pair beyond, 1 / the
    number of orderings, ∏ C(nᵢ + mᵢ, nᵢ); None where no ratio can be taken."""
    paired = _paired(blocks)
    return None if paired is None else 1 / paired.null()[1]


def ratio_bound(old: Iterable[float], new: Iterable[float], lower: bool,
                level: float = LEVEL) -> Interval | None:
    """A one-sided bound of new/old: the lower bound (lower) is the k-th
    smallest pairwise ratio, with P(U <= k-1) <= 1 - level; the upper the
    k-th largest. One-sided, it needs fewer runs than the two-sided
    interval: 3 a side give 95% (the smallest of the nine ratios, 1/20).
    The Interval's other end is unbounded (0 or inf). None below one run a
    side or with a value that is not positive."""
    return blocked_ratio_bound([(tuple(old), tuple(new))], lower, level)


def blocked_ratio_bound(blocks: Iterable[Block], lower: bool,
                        level: float = LEVEL) -> Interval | None:
    """ratio_bound over blocks: the k-th smallest (or largest) within-block
    ratio, k from the summed U. One block: ratio_bound."""
    paired = _paired(blocks)
    if paired is None:
        return None
    ratios = paired.ratios()
    pairs = len(ratios)
    cdf, total = paired.null()
    coverage = [1 - cdf[k - 1] / total for k in range(1, pairs + 1)]
    k = _widest_k(coverage, level)
    estimate = _median(ratios)
    if lower:
        return Interval(estimate, ratios[k - 1], math.inf, coverage[k - 1], paired.runs)
    return Interval(estimate, 0.0, ratios[pairs - k], coverage[k - 1], paired.runs)


def discoveries(p_values: Sequence[float | None], floors: Sequence[float],
                rate: float = 1 - LEVEL) -> list[bool]:
    """Which of a family of tests to call discoveries, keeping the expected
    share of false ones among them at most `rate` (Benjamini–Hochberg,
    1995; valid for independent or positively dependent tests). A test whose
    smallest attainable p-value (floors: smallest_p of its run counts) is
    above `rate` can never be a discovery and is left out of the family's
    size (Tarone, 1990; Gilbert, 2005): with discrete exact tests, counting
    it would only cost the others power. None: no test (not counted)."""
    family = [i for i, (p, f) in enumerate(zip(p_values, floors))
              if p is not None and f <= rate + 1e-12]
    size = len(family)
    ranked = sorted(family, key=lambda i: p_values[i])  # type: ignore[arg-type, return-value]
    cut = 0
    for rank, i in enumerate(ranked, 1):
        if p_values[i] <= rate * rank / size + 1e-12:  # type: ignore[operator]
            cut = rank
    chosen = set(ranked[:cut])
    return [i in chosen for i in range(len(p_values))]


def family_size(floors: Sequence[float], rate: float = 1 - LEVEL) -> int:
    """Tarone's (1990) size of a family of discrete tests for a family-wise
    rate: the smallest K such that at most K tests can reach rate / K (their
    smallest attainable p-values, floors). A test that cannot reach it can
    never be rejected, so leaving it out of the count costs no guarantee."""
    k = 1
    while sum(f <= rate / k + 1e-12 for f in floors) > k:
        k += 1
    return k


def holm(p_values: Sequence[float | None], floors: Sequence[float],
         rate: float = 1 - LEVEL) -> list[bool]:
    """Which of a family of tests to reject, keeping the chance of any false
    rejection at most `rate` whatever their dependence (Holm, 1979: the
    k-th smallest p-value against rate / (size - k + 1), stopping at the
    first that misses). The family is the tests whose floor reaches
    rate / K (family_size): chosen from run counts alone, never from the
    data, so Holm's guarantee holds over it and the rest are never
    rejected. None: no test (never rejected, not counted)."""
    cut = rate / family_size([f for p, f in zip(p_values, floors) if p is not None], rate)
    family = [i for i, (p, f) in enumerate(zip(p_values, floors))
              if p is not None and f <= cut + 1e-12]
    ranked = sorted(family, key=lambda i: p_values[i])  # type: ignore[arg-type, return-value]
    rejected = set()
    for rank, i in enumerate(ranked):
        if p_values[i] > rate / (len(ranked) - rank) + 1e-12:  # type: ignore[operator]
            break
        rejected.add(i)
    return [i in rejected for i in range(len(p_values))]


def runs_to_reject(family: int, rate: float = 1 - LEVEL) -> int:
    """The fewest runs a side whose smallest one-sided p-value (smallest_p)
    reaches rate / family: below it no test of such a family can be
    rejected (Holm's first step), whatever the data."""
    n = 1
    while smallest_p(n, n) > rate / max(family, 1) + 1e-12:
        n += 1
    return n


def runs_needed(level: float = LEVEL) -> tuple[int, int]:
    """The fewest runs that can give a settled interval: (a figure, each side
    of a ratio)."""
    n = 2
    while median_interval(range(n), level).confidence < level - 1e-12:
        n += 1
    m = 2
    while ratio_interval(range(1, m + 1), range(1, m + 1), level).confidence < level - 1e-12:
        m += 1
    return n, m


# --- A variance borrowed across configurations (docs/statistics.md,
# "Borrowing a variance"): the log figures of one configuration have a
# spread of their own, which 1 to 3 runs cannot estimate; moderated toward
# the spread of the run's other configurations of the same figure (Smyth,
# "Linear models and empirical Bayes methods", 2004: limma's moderated t),
# a difference of two log means can be tested with few runs a side.

def digamma(x: float) -> float:
    """ψ(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    out = 0.0
    while x < 6:
        out -= 1 / x
        x += 1
    f = 1 / (x * x)
    return out + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f / 240)))


def trigamma(x: float) -> float:
    """ψ'(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    out = 0.0
    while x < 6:
        out += 1 / (x * x)
        x += 1
    f = 1 / (x * x)
    return out + 1 / x + f / 2 + f / x * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta (Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-14:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def student_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with df degrees of freedom (df = inf: the
    normal). Computed here, as the sign and U counts are, so that the
    measuring process never imports scipy; the tests check it against it."""
    if math.isinf(df) or df > 1e7:
        return 1 - statistics.NormalDist().cdf(t)
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))
    return tail if t > 0 else 1 - tail


@lru_cache(maxsize=4096)
def student_isf(p: float, df: float) -> float:
    """The t whose upper tail is p (bisection on student_sf)."""
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if student_sf(mid, df) > p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return (lo + hi) / 2


@dataclass(frozen=True)
class Prior:
    """The spread borrowed for one figure: its prior variance of a log
    figure (var), the degrees of freedom it counts as (df; inf: every
    configuration's own spread is that one), and the factor its test
    statistic is divided by (scale, >= 1), calibrated on the run's own
    no-change splits (analyse/ranks.calibrate)."""
    var: float
    df: float
    scale: float = 1.0
    configurations: int = 0  # how many configurations it was fitted on
    # The scale where each side has 2 runs or more, so that the test's
    # variance is partly the sides' own (None: `scale`). A side of one run
    # rests on the prior alone, and a figure whose configurations spread
    # very unequally (peak RSS: a collected runtime's against a fixed
    # one's) needs a far larger scale there than where its own runs enter.
    scale_with_own: float | None = None

    def scale_for(self, runs: int) -> float:
        """The calibration scale of a test whose smaller side has `runs` runs."""
        return self.scale if runs < 2 or self.scale_with_own is None else self.scale_with_own

    def moderated(self, own: float, df: int) -> tuple[float, float]:
        """A configuration's variance moderated toward var, with its df."""
        if math.isinf(self.df):
            return self.var, math.inf
        if df <= 0:
            return self.var, self.df
        return (self.df * self.var + df * own) / (self.df + df), self.df + df


def fit_prior(variances: Sequence[tuple[float, int]]) -> Prior | None:
    """The prior of Smyth (2004, sec. 6.2) from configurations' sample
    variances of log figures and their df ((s², d), d >= 1, s² > 0): the
    moments of log s², less their sampling part (digamma, trigamma), give
    the prior's df and variance. None from fewer than 3 variances."""
    kept = [(s2, d) for s2, d in variances if s2 > 0 and d >= 1]
    if len(kept) < 3:
        return None
    e = [_log_term(s2, d) for s2, d in kept]
    return _prior_of(statistics.fmean(e), statistics.variance(e),
                     statistics.fmean(trigamma(d / 2) for _, d in kept), len(kept))


def _log_term(s2: float, d: int) -> float:
    """log s², less its expectation's sampling part: fit_prior's moments are of these."""
    return math.log(s2) - digamma(d / 2) + math.log(d / 2)


def _prior_of(mean: float, variance: float, sampling: float, count: int) -> Prior:
    """fit_prior from the mean and variance of the log terms and the mean
    sampling variance (trigamma) of count configurations."""
    excess = variance - sampling
    if excess <= 0:
        return Prior(math.exp(mean), math.inf, configurations=count)
    df = 2 * _trigamma_inverse(excess)
    return Prior(math.exp(mean + digamma(df / 2) - math.log(df / 2)), df, configurations=count)


def fit_priors_leaving_out(variances: Sequence[tuple[float, int]]) -> list[Prior | None]:
    """fit_prior of all the variances but the i-th, for each i, in one pass
    (it was a pass each: quadratic in a run's configurations). The sums
    behind the moments are kept exactly, as fractions, so that each one left
    out is the exact total less one term, rounded once as math.fsum (fmean)
    and statistics.variance round theirs: the very floats fit_prior gives."""
    kept = [s2 > 0 and d >= 1 for s2, d in variances]
    terms = [(Fraction(_log_term(s2, d)), Fraction(trigamma(d / 2))) if keep else None
             for (s2, d), keep in zip(variances, kept)]
    used = [t for t in terms if t is not None]
    sx, sxx = sum(e for e, _ in used), sum(e * e for e, _ in used)
    sampling = sum(t for _, t in used)
    n = len(used) - 1  # the configurations left when one kept is left out
    whole = fit_prior(variances)  # leaving out one not kept leaves them all
    out: list[Prior | None] = []
    for term in terms:
        if term is None or n < 3:
            out.append(whole if term is None else None)
            continue
        x, xx = sx - term[0], sxx - term[0] * term[0]
        out.append(_prior_of(float(x) / n, float((n * xx - x * x) / n / (n - 1)),
                             float(sampling - term[1]) / n, n))
    return out


def _trigamma_inverse(y: float) -> float:
    """The x with trigamma(x) = y (Smyth's Newton iteration)."""
    if y > 1e7:
        return 1 / math.sqrt(y)
    if y < 1e-6:
        return 1 / y
    x = 0.5 + 1 / y
    for _ in range(50):
        tri = trigamma(x)
        step = tri * (1 - tri / y) / _tetragamma(x)
        x += step
        if -step / x < 1e-8:
            break
    return x


def _tetragamma(x: float) -> float:
    """ψ''(x), by a central difference of trigamma (smooth for x > 0)."""
    h = 1e-4 * min(1.0, x)
    return (trigamma(x + h) - trigamma(x - h)) / (2 * h)


def borrowed_t(old: Sequence[float], new: Sequence[float], prior: Prior,
               ratio: float = 1.0) -> tuple[float, float]:
    """(t, df) of log(new/old) against log(ratio): the difference of the two
    sides' mean log figures over its standard error, the pair's pooled
    within-side variance moderated toward the prior's (limma's moderated
    t), divided by the prior's calibration scale at the smaller side's runs
    (Prior.scale_for). Needs a run a side and
    positive values; 1 and 1 rest on the prior alone."""
    a, b = [math.log(v) for v in old], [math.log(v) for v in new]
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    df = len(a) + len(b) - 2
    own = (sum((x - ma) ** 2 for x in a) + sum((y - mb) ** 2 for y in b)) / df if df else 0.0
    var, dof = prior.moderated(own, df)
    se = math.sqrt(var * (1 / len(a) + 1 / len(b))) * prior.scale_for(min(len(a), len(b)))
    diff = mb - ma - math.log(ratio)
    if se == 0:
        return (math.copysign(math.inf, diff) if diff else 0.0), dof
    return diff / se, dof


def borrowed_p(old: Sequence[float], new: Sequence[float], prior: Prior, ratio: float,
               above: bool) -> float | None:
    """The one-sided p-value of "new/old lies above ratio" (above) or below
    it, by the moderated t (borrowed_t); None without a run a side or with
    a value that is not positive."""
    if not old or not new or min(*old, *new) <= 0:
        return None
    t, df = borrowed_t(old, new, prior, ratio)
    return student_sf(t if above else -t, df)
