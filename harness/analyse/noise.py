"""Each headline figure's own noise on this machine, from a run of the
calibrate suite (harness/plan/suites.toml): each runtime under two names, X
and X[BENCH_AA=1], a variable no program reads, so their runs are all runs
of one build, and any split of them into two sides is a comparison in which
nothing changed (an A/A comparison).

A figure's **floor** at n runs a side: split its pooled calibration runs at
random into n and n, many times, and take the one-sided 95% bound of how
much worse the second side is (the bound the gate passes a figure on,
stats.ratio_bound); the floor is the bound that 90% of these no-change
comparisons stay within. A gate at PCT below a figure's floor would leave
it undecided in more than one no-change comparison in ten: compare names
it "not gateable at PCT here" with its floor, and leaves it out of the
gate's family (docs/statistics.md, "Figures the machine cannot gate").

The floor is a function of the pooled runs alone, the same whichever way
they are split, so choosing the family by it keeps Holm's guarantee on
those runs' own splits (the calibration page's gate trials).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Iterable, Sequence

from .analysis import Group, headline
from ..core.metrics import METRICS
from ..core.schema import ConfigKey, Row, Status
from ..core.stats import ratio_bound

AA = "[BENCH_AA=1]"  # the no-op variant's suffix, as the calibrate suite names it
SHARE = 0.9  # of the no-change comparisons a gateable figure passes
SPLITS = 200  # random splits a floor is measured on
SEED = 51  # a floor is the same number every time it is read


def aa_pairs(groups: Iterable[Group]) -> list[tuple[Group, Group]]:
    """Each configuration's two names, (stock, no-op variant)."""
    by_key = {g.key: g for g in groups}
    return [(base, g) for g in by_key.values() if g.impl.endswith(AA)
            if (base := by_key.get(replace(g.key, impl=g.impl[:-len(AA)]))) is not None]


def pooled_rows(base: Group, aa: Group) -> list[Row]:
    """The ok runs of both names, under the stock name: one build's runs."""
    return [r if r.impl == base.impl else replace(r, impl=base.impl)
            for g in (base, aa) for r in g.rows if r.status == Status.OK]


def worse_bound(old: Sequence[float], new: Sequence[float], higher_is_better: bool) -> float:
    """The one-sided 95% bound of how much worse new is than old, as a
    fraction (the gate passes a figure at PCT when this is below PCT)."""
    b = ratio_bound(old, new, lower=higher_is_better)
    if b is None:
        return math.inf
    return (1 / b.low - 1 if b.low > 0 else math.inf) if higher_is_better else b.high - 1


def floor(values: Sequence[float], n: int, higher_is_better: bool) -> float:
    """The bound 90% of random n-and-n splits of values stay within (inf
    when values hold fewer than 2n runs, or n < 1)."""
    if n < 1 or len(values) < 2 * n:
        return math.inf
    rng = random.Random(SEED)
    bounds = []
    for _ in range(SPLITS):
        drawn = rng.sample(list(values), 2 * n)
        bounds.append(worse_bound(drawn[:n], drawn[n:], higher_is_better))
    bounds.sort()
    return bounds[math.ceil(SHARE * len(bounds)) - 1]


@dataclass
class Noise:
    """The headline figures' pooled A/A runs of one calibration run."""
    source: str  # the calibration run's id, for the text
    host: str | None = None  # the machine it ran on (env.json's hostname)
    runs: dict[tuple[ConfigKey, str], tuple[float, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, groups: Iterable[Group], source: str, host: str | None = None) -> "Noise":
        noise = cls(source, host)
        for base, aa in aa_pairs(groups):
            rows = pooled_rows(base, aa)
            for metric in headline(base.workload):
                values = tuple(float(v) for r in rows if (v := r.figure(metric)) is not None)
                if len(values) >= 2 and min(values) > 0:
                    noise.runs[(base.key, metric)] = values
        return noise

    def floor(self, key: ConfigKey, metric: str, runs: int) -> float | None:
        """The figure's floor at `runs` a side (at most half its calibration
        runs: more would need runs the calibration did not make, so the
        floor at fewer stands in, an overestimate); None when the
        calibration did not measure it."""
        values = self.runs.get((key, metric))
        if values is None:
            return None
        return _floor(values, self.side(key, metric, runs), METRICS[metric].higher_is_better)

    def side(self, key: ConfigKey, metric: str, runs: int) -> int:
        """The runs a side the floor is measured at: runs, or half the
        calibration's runs where it has fewer than 2·runs."""
        return min(runs, len(self.runs.get((key, metric), ())) // 2)


@lru_cache(maxsize=None)
def _floor(values: tuple[float, ...], n: int, higher_is_better: bool) -> float:
    return floor(values, n, higher_is_better)
