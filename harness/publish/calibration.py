"""How often the harness is wrong on the machine at hand, from a run of the
calibrate suite (harness/plan/suites.toml): each runtime under two names, X and
X[BENCH_AA=1], a variable no program reads, so the two are the same build
measured in the same interleaved loop. Every difference the statistics
find between them is a false one.

    .venv/bin/python -m harness publish RUN_DIR --name DATE-MACHINE-calibration

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
import random
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from ..analyse.analysis import Group, group_runs, headline
from ..analyse.questions import rankings
from ..analyse.standings import BEHIND, LEVEL_WORD
from ..core.formatting import fmt_share, fmt_share_fine, fmt_sig
from ..core.metrics import METRICS
from ..core.schema import Env, Row
from ..core.stats import LEVEL, discoveries, ratio_interval, ratio_p, smallest_p
from ..analyse.gate import NOT_GATEABLE, Verdict, compare_groups
from ..analyse.noise import AA, Noise, aa_pairs, pooled_rows
GATE = 0.05  # --fail-above 5%
FACTORS = [1 + i / 100 for i in range(1, 301)]  # planted slowdowns: +1% .. +300%
GOAL = 0.05
ENOUGH = 100  # comparisons before the share is judged against GOAL
TRIALS = 40  # A/A gate trials
PLANTED_TRIALS = 20  # planted trials per workload
PLANT = 1.10  # the planted slowdown of one workload's headline figures
SEED = 51  # the trials' splits are the same each time the page is made


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


def _planted(row: Row) -> Row:
    """The run PLANT times worse on its workload's headline figures."""
    worse = {}
    for metric in headline(row.workload):
        if (value := row.figure(metric)) is not None:
            worse[metric] = value / PLANT if METRICS[metric].higher_is_better else value * PLANT
    return replace(row, **worse)


def gate_trial(pairs: list[tuple[Group, Group]], noise: Noise, rng: random.Random,
               plant: str | None = None) -> Verdict:
    """One A/A gate trial: every configuration's runs under both names split
    at random into two equal sides (an odd one left out), compared with
    `--fail-above 5%` and the run's own noise; with `plant`, the second
    side's runs of that workload planted PLANT worse."""
    old: list[Row] = []
    new: list[Row] = []
    for base, aa in pairs:
        rows = pooled_rows(base, aa)
        rng.shuffle(rows)
        half = len(rows) // 2
        old += rows[:half]
        new += [_planted(r) if r.workload == plant else r for r in rows[half:2 * half]]
    return Verdict(compare_groups(group_runs(old), group_runs(new)), Env({}), Env({}),
                   Path("A"), Path("B"), GATE, noise=noise)


@dataclass(frozen=True)
class GateTrials:
    """What the gate as a whole made of the trials."""
    exits: Counter  # exit status -> trials, on no change
    planted: dict[str, Counter]  # workload -> exit status -> trials, its figures planted worse
    figures: int  # headline figures compared
    not_gateable: int
    family: int
    runs: int  # the smaller side's ok runs, at least
    runs_to_fail: int


def gate_trials(groups: Iterable[Group], trials: int = TRIALS,
                planted_trials: int = PLANTED_TRIALS) -> GateTrials | None:
    """The gate's exit statuses over random A/A splits, and a planted slowdown
    of each workload in turn, caught (exit 1) in how many."""
    groups = list(groups)
    pairs = aa_pairs(groups)
    if not pairs:
        return None
    noise = Noise.of(groups, "this run")
    rng = random.Random(SEED)
    verdicts = [gate_trial(pairs, noise, rng) for _ in range(trials)]
    planted = {workload: Counter(gate_trial(pairs, noise, rng, workload).exit_status
                                 for _ in range(planted_trials))
               for workload in dict.fromkeys(base.workload for base, _ in pairs)}
    first = verdicts[0]
    return GateTrials(Counter(v.exit_status for v in verdicts), planted, len(first.gate_figures),
                      len(first.gated(NOT_GATEABLE)), first.family,
                      min((min(ch.runs) for _, ch in first.gate_figures), default=0),
                      first.runs_to_fail)


def _gate_lines(t: GateTrials) -> list[str]:
    reach = ("can" if t.runs >= t.runs_to_fail else
             f"cannot: {t.runs_to_fail} runs a side could")
    lines = [
        f"**The gate as a whole, `--fail-above 5%`, on no change: of {sum(t.exits.values())} "
        f"A/A gate trials, {t.exits[1]} exit 1 (a false alarm), {t.exits[3]} exit 3 "
        f"(undecided), {t.exits[0]} exit 0.** Each trial splits every configuration's runs "
        f"under both names at random into two sides of {t.runs} and compares them as "
        f"`compare A B --fail-above 5%` would, with this run's own noise: {t.not_gateable} of "
        f"the {t.figures} headline figures are not gateable at 5% here (their floor, the change "
        f"nine in ten no-change comparisons at {t.runs} runs a side stay within, is above 5%), "
        f"and Holm's rule over the other {t.family} asks a p-value of "
        f"{fmt_sig((1 - LEVEL) / max(t.family, 1), 2)}, which {t.runs} runs a side (at best "
        f"{fmt_sig(smallest_p(t.runs, t.runs), 2)}) {reach}.\n",
        f"A planted slowdown: the second side's runs of one workload {fmt_share(PLANT - 1)} "
        "worse on "
        "its headline figures (a factor on the measured runs, each run's own noise kept); "
        "exit 1 (caught), 3 and 0 (missed) in that many trials: "
        + "; ".join(f"{w}: {e[1]}, {e[3]}, {e[0]} of {sum(e.values())}"
                    for w, e in t.planted.items()) + ".\n",
    ]
    return lines


def _factor(f: float) -> str:
    return f"+{fmt_share(f - 1)}" if math.isfinite(f) else f"beyond +{fmt_share(FACTORS[-1] - 1)}"


def _ranking_lines(groups: list[Group]) -> list[str]:
    """The rankings' family (questions.rankings) on the two names: where X
    and X[AA] are neighbours in a ranking, how often they are called apart
    (every such call is false) or level."""
    pairs = [p for r in rankings(groups) for p in r.pairs
             if p.leader.impl.removesuffix(AA) == p.other.impl.removesuffix(AA)]
    if not pairs:
        return []
    apart = sum(p.verdict == BEHIND for p in pairs)
    return [f"**The rankings' neighbour pairs of one build under its two names: {apart} of "
            f"{len(pairs)} called apart ({fmt_share_fine(apart / len(pairs))}); goal at most "
            f"{fmt_share(GOAL)}.** Level within the figure's margin: "
            f"{sum(p.verdict == LEVEL_WORD for p in pairs)}; the rest not settled. Each ranking "
            "of the run is decided as in a report (docs/statistics.md, \"Rankings and "
            "claims\"), every neighbour pair of the run one family.\n"]


def _workload_table(found: list[Comparison]) -> list[str]:
    """A row per workload: its comparisons, those called different, its
    gate questions' false failures and undecided ones, the level ones, and
    the smallest change a figure's gate alone finds (median, 90%)."""
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
    header = ["workload", "comparisons", "called different", "alone: false failures",
              "alone: undecided", "level", "detectable change alone (median)",
              "detected by 90%"]
    return (["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
            + ["| " + " | ".join(r) + " |" for r in rows])


def section(groups: Iterable[Group], trials: int = TRIALS,
            planted_trials: int = PLANTED_TRIALS) -> str | None:
    """The calibration section's body (its heading is present/outline.py's);
    None when the run has no A/A pair.
    trials, planted_trials: the gate trials' counts (gate_trials)."""
    found_groups = list(groups)
    found = comparisons(found_groups)
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
        "From `harness/publish/calibration.py`. Each runtime ran under two names, X and "
        f"`X{AA}`, a variable no program reads: the same build, interleaved as usual, "
        f"{'/'.join(map(str, runs))} runs a side. Every difference found between them is a "
        "false one. Each comparison is one headline figure of one configuration.\n",
        f"**A/A comparisons called different: {len(different)} of {total} "
        f"({fmt_share_fine(len(different) / total)}); goal at most {fmt_share(GOAL)}: {verdict}.** "
        f"After the report's family control (Benjamini–Hochberg, false discovery rate 5%): "
        f"{sum(family)} of {total}. Each figure's one-sided gate question on its own at 5% "
        f"(`--fail-above 5%` before it was one decision over the figures): "
        f"{gates.count('fails')} false failures, {gates.count('passes')} passes, "
        f"{gates.count('undecided')} undecided. Level within the figure's margin: "
        f"{sum(c.level for c in found)} of {total}.\n",
        *_ranking_lines(found_groups),
        *(_gate_lines(measured) if (measured := gate_trials(found_groups, trials, planted_trials)) else []),
        "The smallest change one figure's own gate question finds, per workload: a slowdown "
        "(or growth, for memory) planted by multiplying the second name's measured values by a "
        "factor, the smallest factor at which that figure alone fails at 5%; the median over "
        "the workload's "
        "comparisons, and the factor that 90% of them detect.\n",
    ]
    lines += _workload_table(found)
    wrong = sorted(different, key=lambda c: (c.workload, c.impl, c.where, c.metric))
    if wrong:
        lines.append("\nThe comparisons called different: " + "; ".join(
            f"{c.impl} {c.workload} {c.where} {METRICS[c.metric].label}" for c in wrong) + ".")
    return "\n".join(lines) + "\n"
