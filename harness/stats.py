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
