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

An interval is `settled` when its confidence reaches LEVEL; a verdict built
on one that is not says "not settled", whatever the figures.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Callable, Iterable, Sequence

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


def median_interval(values: Iterable[float], level: float = LEVEL) -> Interval | None:
    """The median with its order-statistic interval; None below two values
    (one run has no interval, and says so)."""
    x = sorted(float(v) for v in values)
    n = len(x)
    if n < 2:
        return None
    # coverage[k-1] of [x(k), x(n+1-k)], k = 1 .. n//2
    coverage = [1 - 2 * _sign_cdf(k - 1, n) for k in range(1, n // 2 + 1)]
    k = _widest_k(coverage, level)
    return Interval(statistics.median(x), x[k - 1], x[n - k], coverage[k - 1], (n,))


@lru_cache(maxsize=None)
def _u_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n+m, n) equally likely orderings of two samples
    give each value of the Mann–Whitney U (0 .. n·m). scipy computes U's
    p-values but exposes neither this distribution nor the interval built
    on it, hence this recurrence: the largest value comes from the first
    sample (adding m to U) or from the second."""
    if n == 0 or m == 0:
        return (1,)
    counts = [0] * (n * m + 1)
    for u, c in enumerate(_u_counts(n - 1, m)):
        counts[u + m] += c
    for u, c in enumerate(_u_counts(n, m - 1)):
        counts[u] += c
    return tuple(counts)


def ratio_interval(old: Iterable[float], new: Iterable[float],
                   level: float = LEVEL) -> Interval | None:
    """new / old: the median of the pairwise ratios with its exact interval;
    None when a side has fewer than two values or a value is not positive
    (a ratio needs both)."""
    a, b = [float(v) for v in old], [float(v) for v in new]
    n, m = len(a), len(b)
    if n < 2 or m < 2 or min(a + b) <= 0:
        return None
    ratios = sorted(y / x for x in a for y in b)
    counts = _u_counts(n, m)
    total = math.comb(n + m, n)
    cdf = list(accumulate(counts))
    # [r(k), r(nm+1-k)] misses the true ratio when U <= k-1 or U >= nm-k+1
    coverage = [1 - 2 * cdf[k - 1] / total for k in range(1, n * m // 2 + 1)]
    k = _widest_k(coverage, level)
    return Interval(statistics.median(ratios), ratios[k - 1], ratios[n * m - k],
                    coverage[k - 1], (n, m))


def _pairs_beyond(old: Sequence[float], new: Sequence[float], ratio: float,
                  above: bool) -> int:
    """How many pairwise ratios new/old lie strictly beyond ratio (above or
    below it): the Mann–Whitney U of the two samples, one shifted by ratio.
    A tie counts against the claim, which keeps the p-value conservative."""
    if above:
        return sum(y > ratio * x for x in old for y in new)
    return sum(y < ratio * x for x in old for y in new)


def ratio_p(old: Iterable[float], new: Iterable[float], ratio: float,
            above: bool) -> float | None:
    """The exact one-sided p-value of "new/old lies above ratio" (above) or
    "below ratio": the chance, were the true ratio exactly `ratio`, of at
    least as many pairwise ratios beyond it (the shifted Mann–Whitney test,
    the same distribution as ratio_interval). None where a ratio cannot be
    taken. p <= 1 - level exactly when the one-sided bound of ratio_bound
    excludes `ratio`, ties aside."""
    a, b = [float(v) for v in old], [float(v) for v in new]
    n, m = len(a), len(b)
    if n < 1 or m < 1 or min(a + b) <= 0:
        return None
    u = _pairs_beyond(a, b, ratio, above)
    counts = _u_counts(n, m)
    return sum(counts[u:]) / math.comb(n + m, n)


def smallest_p(n: int, m: int) -> float:
    """The smallest p-value ratio_p can give with n and m runs: every pair
    beyond, 1 / C(n+m, n) (3 a side: 1/20, 4 a side: 1/70)."""
    return 1 / math.comb(n + m, n)


def ratio_bound(old: Iterable[float], new: Iterable[float], lower: bool,
                level: float = LEVEL) -> Interval | None:
    """A one-sided bound of new/old: the lower bound (lower) is the k-th
    smallest pairwise ratio, with P(U <= k-1) <= 1 - level; the upper the
    k-th largest. One-sided, it needs fewer runs than the two-sided
    interval: 3 a side give 95% (the smallest of the nine ratios, 1/20).
    The Interval's other end is unbounded (0 or inf). None below one run a
    side or with a value that is not positive."""
    a, b = [float(v) for v in old], [float(v) for v in new]
    n, m = len(a), len(b)
    if n < 1 or m < 1 or min(a + b) <= 0:
        return None
    ratios = sorted(y / x for x in a for y in b)
    cdf = list(accumulate(_u_counts(n, m)))
    total = math.comb(n + m, n)
    coverage = [1 - cdf[k - 1] / total for k in range(1, n * m + 1)]
    k = _widest_k(coverage, level)
    estimate = statistics.median(ratios)
    if lower:
        return Interval(estimate, ratios[k - 1], math.inf, coverage[k - 1], (n, m))
    return Interval(estimate, 0.0, ratios[n * m - k], coverage[k - 1], (n, m))


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


def describe(iv: Interval | None, runs: int,
             fmt: Callable[[float], str] = lambda v: f"{v:.3g}") -> str:
    """An interval as the report and compare print it: "[lo, hi]" when
    settled, with its confidence when not; "1 run, no interval" for one."""
    if iv is None:
        return f"{runs} run{'s' if runs != 1 else ''}, no interval"
    text = f"[{fmt(iv.low)}, {fmt(iv.high)}]"
    return text if iv.settled else f"{text} ({iv.confidence:.0%})"
