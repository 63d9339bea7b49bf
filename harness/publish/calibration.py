"""How often the harness is wrong on the machine at hand, from a run of the
calibrate suite (harness/plan/suites.toml): each runtime under two names, X and
X[BENCH_AA=1], a variable no program reads, so the two are the same build
measured in the same interleaved loop. Every difference the statistics
find between them is a false one.

    .venv/bin/python -m harness.publish.readme_tables RUN_DIR --name DATE-MACHINE-calibration

writes the page; its section comes from here (readme_tables imports it).
For each A/A pair and each headline figure of its workload (the figures a
report and the gate read), from the run's summary.csv:

- **called different**: compare's verdict (regressed or improved: the
  exact two-sided 95% interval of the ratio excludes 1); the goal is at most
  5% of the comparisons;
- **after the family's control**: the same two-sided p-values through
  Benjamini–Hochberg over all the run's comparisons (the report's rule);
- **the gate at 5%**: how many `--fail-above 5%` would fail (a false alarm),
  pass, or leave undecided;
- **level**: the interval within the figure's margin (harness/core/metrics.py);
- **detectable change**: the smallest slowdown the gate finds, planted by
  multiplying the second name's measured values by a factor (1.01, 1.02, ...)
  until `--fail-above 5%` fails. A planted factor on real runs, not a
  slower program: it keeps each run's own noise, which is what decides
  detection, and needs no code in the measured programs.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable

from ..analyse.analysis import Group, headline
from ..core.metrics import METRICS
from ..core.stats import LEVEL, discoveries, ratio_interval, ratio_p, smallest_p

AA = "[BENCH_AA=1]"  # the no-op variant's suffix, as the calibrate suite names it
GATE = 0.05  # --fail-above 5%
FACTORS = [1 + i / 100 for i in range(1, 301)]  # planted slowdowns: +1% .. +300%
GOAL = 0.05
ENOUGH = 100  # comparisons before the share is judged against GOAL


@dataclass(frozen=True)
class Comparison:
    """One headline figure of one configuration: the stock name against the
    same build under the no-op variant."""
    impl: str
    workload: str
    where: str  # the configuration, e.g. "N=20000"
    metric: str
    old: tuple[float, ...]
    new: tuple[float, ...]

    @property
    def higher_is_better(self) -> bool:
        return METRICS[self.metric].higher_is_better

    @property
    def different(self) -> bool:
        iv = ratio_interval(self.old, self.new)
        return iv is not None and iv.settled and iv.side(1.0) != "within"

    @property
    def p_differ(self) -> float | None:
        up, down = ratio_p(self.old, self.new, 1.0, True), ratio_p(self.old, self.new, 1.0, False)
        return None if up is None or down is None else min(1.0, 2 * min(up, down))

    @property
    def level(self) -> bool:
        iv = ratio_interval(self.old, self.new)
        margin = METRICS[self.metric].margin
        return (iv is not None and iv.settled and iv.low >= 1 / (1 + margin)
                and iv.high <= 1 + margin)

    def gate(self, factor: float = 1.0) -> str:
        """fails / passes / undecided at --fail-above 5%, NEW planted worse by factor."""
        worse = factor if not self.higher_is_better else 1 / factor
        new = [v * worse for v in self.new]
        limit = 1 + GATE if not self.higher_is_better else 1 / (1 + GATE)
        p_worse = ratio_p(self.old, new, limit, above=not self.higher_is_better)
        p_within = ratio_p(self.old, new, limit, above=self.higher_is_better)
        alpha = 1 - LEVEL + 1e-12
        if p_worse is not None and p_worse <= alpha:
            return "fails"
        return "passes" if p_within is not None and p_within <= alpha else "undecided"

    def detectable(self) -> float | None:
        """The smallest planted factor the gate fails on (None: not within +300%)."""
        return next((f for f in FACTORS if self.gate(f) == "fails"), None)


def comparisons(groups: Iterable[Group]) -> list[Comparison]:
    """Every A/A comparison of a run's groups (the harness's, as
    published.read_summary gives them)."""
    by_key = {g.key: g for g in groups}
    out = []
    for g in by_key.values():
        if not g.impl.endswith(AA):
            continue
        base = by_key.get(replace(g.key, impl=g.impl[:-len(AA)]))
        if base is None:
            continue
        for metric in headline(g.workload):
            a, b = base.values(metric), g.values(metric)
            if not a or not b or min(a + b) <= 0:
                continue
            out.append(Comparison(base.impl, g.workload, g.key.settings, metric, a, b))
    return out


def _factor(f: float) -> str:
    return f"+{f - 1:.0%}" if math.isfinite(f) else f"beyond +{FACTORS[-1] - 1:.0%}"


def _pct(x: float) -> str:
    return f"{x:.1%}" if x < 0.1 else f"{x:.0%}"


def section(groups: Iterable[Group]) -> str | None:
    """The calibration page's section; None when the run has no A/A pair."""
    found = comparisons(groups)
    if not found:
        return None
    total = len(found)
    different = [c for c in found if c.different]
    family = discoveries([c.p_differ for c in found],
                         [min(1.0, 2 * smallest_p(len(c.old), len(c.new))) for c in found])
    gates = [c.gate() for c in found]
    runs = sorted({len(c.old) for c in found} | {len(c.new) for c in found})
    verdict = ("met" if len(different) / total <= GOAL else "**missed**") if total >= ENOUGH \
        else f"too few comparisons to say (the goal is judged over at least {ENOUGH})"
    lines = [
        "## How often the harness is wrong here: the A/A calibration\n",
        "From `harness/publish/calibration.py`. Each runtime ran under two names, X and "
        f"`X{AA}`, a variable no program reads: the same build, interleaved as usual, "
        f"{'/'.join(map(str, runs))} runs a side. Every difference found between them is a "
        "false one. Each comparison is one headline figure of one configuration.\n",
        f"**A/A comparisons called different: {len(different)} of {total} "
        f"({_pct(len(different) / total)}); goal at most {GOAL:.0%}: {verdict}.** "
        f"After the report's family control (Benjamini–Hochberg, false discovery rate 5%): "
        f"{sum(family)} of {total}. The gate `--fail-above 5%` on these pairs: "
        f"{gates.count('fails')} false failures, {gates.count('passes')} passes, "
        f"{gates.count('undecided')} undecided. Level within the figure's margin: "
        f"{sum(c.level for c in found)} of {total}.\n",
        "The smallest change the gate finds, per workload: a slowdown (or growth, for "
        "memory) planted by multiplying the second name's measured values by a factor, the "
        "smallest factor at which `--fail-above 5%` fails; the median over the workload's "
        "comparisons, and the factor that 90% of them detect.\n",
    ]
    by_workload: dict[str, list[Comparison]] = defaultdict(list)
    for c in found:
        by_workload[c.workload].append(c)
    rows = []
    for workload, members in by_workload.items():
        found_at = sorted(f if (f := c.detectable()) is not None else math.inf for c in members)
        median = statistics.median(found_at)
        p90 = found_at[math.ceil(0.9 * len(found_at)) - 1]
        rows.append([workload, str(len(members)), str(sum(c.different for c in members)),
                     str(sum(1 for c in members if c.gate() == "fails")),
                     str(sum(1 for c in members if c.gate() == "undecided")),
                     str(sum(c.level for c in members)), _factor(median), _factor(p90)])
    header = ["workload", "comparisons", "called different", "gate: false failures",
              "gate: undecided", "level", "detectable change (median)", "detected by 90%"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("| " + " | ".join("---" for _ in header) + " |")
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    wrong = sorted(different, key=lambda c: (c.workload, c.impl, c.where, c.metric))
    if wrong:
        lines.append("\nThe comparisons called different: " + "; ".join(
            f"{c.impl} {c.workload} {c.where} {METRICS[c.metric].label}" for c in wrong) + ".")
    return "\n".join(lines) + "\n"
