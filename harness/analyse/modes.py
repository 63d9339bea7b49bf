"""Two modes shown, not averaged (docs/statistics.md, "Two modes"): a
configuration whose runs fall into two clusters, the upper at least
GAP times the lower, each holding a real share of the runs. A JIT that
kicks in on some runs, a collector that runs on some, a scheduler that
lands a task on the other core: its median is one of the modes, or
between them, and its interval's width is the gap, not noise.

The test: the runs' logs sorted, split at their widest gap; the split is
two modes when each side holds at least MIN_RUNS runs and MIN_SHARE of
them, the medians of the two sides are GAP or more apart, and the empty
stretch between them is at least MIN_GAP and SEPARATION times the sides'
pooled sd (a continuous spread has no such stretch). One run cannot
show a second mode, nor can 3: a mode needs 2 runs of its own. It is a
flag, not a test at a level: on one lognormal mode of sd 0.25 (a warm
pass's spread here) it flags 4 to 6 runs in 3 to 7% of samples, 12 runs
in under 1%; two modes 1.95x apart of sd 0.05 it flags in 99% at 4 to 12
runs, of sd 0.1 (10 runs and 2) in about two thirds (test_modes.py).

Pure: reads values or groups, writes nothing.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from .analysis import Group, headline
from ..core.formatting import fmt_share

GAP = 1.5  # the upper mode's median over the lower's, at least
MIN_RUNS = 2  # runs in each mode, at least
MIN_SHARE = 0.1  # of the runs in each mode, at least
MIN_GAP = 1.25  # the empty stretch between the modes, as a factor, at least
SEPARATION = 4  # that stretch over the modes' pooled sd (of a log figure), at least


@dataclass(frozen=True)
class Mode:
    figure: float  # the median of its runs
    runs: int
    share: float  # of the configuration's runs


@dataclass(frozen=True)
class Modes:
    """A bimodal figure: its lower and upper mode."""
    lower: Mode
    upper: Mode

    @property
    def ratio(self) -> float:
        return self.upper.figure / self.lower.figure

    def text(self, fmt: Callable[[float], str]) -> str:
        """'two modes: 10 runs at 1.2 s (83%), 2 at 2.3 s (17%)', each figure
        formatted by fmt."""
        return (f"two modes: {self.lower.runs} runs at {fmt(self.lower.figure)} "
                f"({fmt_share(self.lower.share)}), {self.upper.runs} at "
                f"{fmt(self.upper.figure)} ({fmt_share(self.upper.share)})")


def bimodal(values: Sequence[float]) -> Modes | None:
    """The two modes of a configuration's runs, or None where they are not
    two (too few runs, no gap, or one side too small)."""
    x = sorted(math.log(v) for v in values if v > 0)
    n = len(x)
    if n < 2 * MIN_RUNS:
        return None
    least = max(MIN_RUNS, math.ceil(MIN_SHARE * n))
    cuts = range(least, n - least + 1)  # the lower mode is x[:cut]
    if not cuts:
        return None
    cut = max(cuts, key=lambda c: x[c] - x[c - 1])
    low, high = x[:cut], x[cut:]
    gap = x[cut] - x[cut - 1]
    centre = statistics.fmean(low), statistics.fmean(high)
    spread = math.sqrt((sum((v - centre[0]) ** 2 for v in low)
                        + sum((v - centre[1]) ** 2 for v in high)) / (n - 2))
    if (statistics.median(high) - statistics.median(low) < math.log(GAP)
            or gap < math.log(MIN_GAP) or gap <= SEPARATION * spread):
        return None
    raw = sorted(v for v in values if v > 0)
    return Modes(Mode(statistics.median(raw[:cut]), len(low), len(low) / n),
                 Mode(statistics.median(raw[cut:]), len(high), len(high) / n))


@dataclass(frozen=True)
class Bimodal:
    """One configuration's figure found bimodal."""
    group: Group
    metric: str
    modes: Modes


def bimodal_groups(groups: Iterable[Group]) -> list[Bimodal]:
    """Every configuration's headline figure whose runs fall into two modes."""
    return [Bimodal(g, metric, found) for g in groups for metric in headline(g.workload)
            if (found := bimodal(g.values(metric))) is not None]
