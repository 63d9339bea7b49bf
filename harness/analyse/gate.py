"""The decision of compare, and of run --gate: NEW against OLD, configuration
by configuration, figure by figure, and what the gate makes of each
headline figure. docs/statistics.md ("Comparing two runs", "The gate")
says why; present/compare.py prints it.

For each compared figure (metrics.Metric.compared) of each configuration
both runs have, the change is new/old − 1, where new/old is the
Hodges–Lehmann estimate over the ok runs' pairwise ratios
(stats.ratio_interval), with its exact distribution-free interval; where
the runs carry several nodes (a cluster run), only runs of one node are
paired (analysis.node_blocks, stats.blocked_ratio_interval), so a slower
node cannot make a change. Its verdict:

- "regressed" / "improved": the whole settled interval lies on that side of
  1 (which side is worse comes from the metric's higher_is_better);
- "level": a settled interval wholly inside the metric's margin (±5% for
  times, ±2% for peak RSS: metrics.Metric.margin, or --margin);
- "no change detected": a settled interval that holds 1 but reaches past
  the margin;
- "not enough runs": fewer than two ok runs on a side, or an interval whose
  confidence is below 95% (4 ok runs a side reach it; 3 give 90%).

As a CI gate (`--fail-above 5%`) each of the figures a workload is read for
(its presentation's `headline`) asks one one-sided question: is NEW worse
than OLD by more than PCT? Answered by the exact one-sided test of
stats.ratio_p:
- fails: Holm's rule over every gated figure rejects "not worse by PCT"
  (stats.holm), so the whole gate fails on no change at most 5% of the time
  whatever the number of figures; a figure whose run counts cannot reach
  Holm's first step is asked by the moderated t with a variance borrowed
  across both runs' configurations instead (Verdict.borrowed,
  Change.p_worse_borrowed), chosen by run counts alone;
- passes: not worse by PCT at 95% (every figure must pass for the gate to,
  so the claim "none is worse" needs no correction over the figures);
- undecided: neither, with the runs it would need;
- not gateable: with a calibration run, a figure whose A/A noise on the
  machine reaches past PCT (noise.py): named with its floor, not gated.
The gate fails (exit 1) on a failing figure, on a configuration with ok runs
in OLD and none in NEW, on one whose runs failed in NEW and never in OLD,
and on two runs with nothing in common; it is undecided (exit 3) when any
headline figure is, or a configuration failed in both, more often in NEW,
unless --allow-undecided. Process wall and CPU time, which include the
runtime's start-up, are shown but not gated. run --gate looks after every
pass: it spends the 5% over its looks (gate_looks, Verdict.rate).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .. import UsageError
from ..core.formatting import fmt_change, fmt_percent, fmt_share
from ..core.metrics import METRICS, margins
from ..core.schema import ConfigKey, Env, Status
from ..core.stats import (LEVEL, Block, Interval, Prior, blocked_ratio_bound,
                          blocked_ratio_interval, blocked_ratio_p, blocked_smallest_p,
                          borrowed_p, holm, runs_to_reject, smallest_p)
from ..core.variants import base_of
from .analysis import Group, group_sort_key, headline, node_blocks
from .noise import Noise
from .ranks import calibrate

COMPARED = tuple(m.name for m in METRICS.values() if m.compared)
IMPROVED, REGRESSED, LEVEL_WITHIN, NO_CHANGE, NOT_ENOUGH = (
    "improved", "regressed", "level", "no change detected", "not enough runs")
VERDICTS = (REGRESSED, IMPROVED, LEVEL_WITHIN, NO_CHANGE, NOT_ENOUGH)
# The runs a side a one-sided gate question needs: its smallest p reaches 5%.
GATE_RUNS = next(n for n in range(1, 100) if smallest_p(n, n) <= 1 - LEVEL + 1e-12)
# What the gate makes of one headline figure.
FAILS, PASSES, UNDECIDED = "fails", "passes", "undecided"
NOT_GATEABLE = "not gateable"  # its calibration noise reaches past PCT (noise.py)
NOTHING_IN_COMMON = "the two runs have no configuration in common: nothing to compare"


@dataclass(frozen=True)
class Change:
    """One figure of one configuration, new against old."""
    metric: str
    old_values: tuple[float, ...]  # the ok runs' values
    new_values: tuple[float, ...]
    interval: Interval | None  # of new/old; None with fewer than two ok runs on a side
    margin: float = 0.0  # "level" within ±margin (a fraction); 0: never called level
    blocks: tuple[Block, ...] = ()  # the runs paired node by node (node_blocks); (): pooled

    @property
    def paired(self) -> tuple[Block, ...]:
        """The runs as the ratio pairs them: within each node (blocks), or
        every old run with every new one."""
        return self.blocks or ((self.old_values, self.new_values),)

    @property
    def old(self) -> float:
        return statistics.median(self.old_values)

    @property
    def new(self) -> float:
        return statistics.median(self.new_values)

    @property
    def runs(self) -> tuple[int, int]:
        return len(self.old_values), len(self.new_values)

    @property
    def identical(self) -> bool:
        """The same measurements on both sides (a copy of one run)."""
        return bool(self.old_values) and sorted(self.old_values) == sorted(self.new_values)

    @property
    def ratio(self) -> float:
        """new/old: the Hodges–Lehmann estimate (with one run on a side, the
        median of the few pairwise ratios there are)."""
        if self.interval is not None:
            return self.interval.estimate
        return statistics.median(y / x for a, b in self.paired for x in a for y in b)

    @property
    def change(self) -> float:
        return self.ratio - 1

    @property
    def higher_is_better(self) -> bool:
        return METRICS[self.metric].higher_is_better

    @property
    def settled(self) -> bool:
        return self.interval is not None and self.interval.settled

    @property
    def verdict(self) -> str:
        if self.interval is None or not self.interval.settled:
            return NOT_ENOUGH
        side = self.interval.side(1.0)
        if side == "within":
            inside = (self.margin > 0 and self.interval.low >= 1 / (1 + self.margin)
                      and self.interval.high <= 1 + self.margin)
            return LEVEL_WITHIN if inside else NO_CHANGE
        return REGRESSED if (side == "above") != self.higher_is_better else IMPROVED

    @property
    def why_not(self) -> str:
        """Why a figure has no verdict: its confidence, or its run counts."""
        if self.interval is not None:
            return f"{fmt_share(self.interval.confidence)} confidence"
        paired = (sum(len(a) for a, _ in self.paired), sum(len(b) for _, b in self.paired))
        return ", ".join(f"{n} ok run{'s' if n != 1 else ''} {side}"
                         for side, n in zip(("old", "new"), paired) if n < 2) + (
            " on the nodes both sides ran on" if self.blocks else "")

    @property
    def verdict_text(self) -> str:
        if self.verdict == NOT_ENOUGH:
            return f"{NOT_ENOUGH} ({self.why_not})"
        if self.verdict == LEVEL_WITHIN:
            return f"{LEVEL_WITHIN} (within ±{fmt_percent(self.margin)})"
        return self.verdict

    @property
    def interval_text(self) -> str:
        if self.interval is None:
            return "—"
        return f"[{fmt_change(self.interval.low - 1)}, {fmt_change(self.interval.high - 1)}]"

    @property
    def worse_by(self) -> float:
        """How much worse by the estimate, as a fraction (negative: better);
        for a higher-is-better figure, old/new − 1."""
        if self.higher_is_better:
            return 1 / self.ratio - 1 if self.ratio > 0 else math.inf
        return self.ratio - 1

    def limit(self, fail_above: float) -> float:
        """The ratio new/old beyond which this figure is worse by fail_above."""
        return 1 / (1 + fail_above) if self.higher_is_better else 1 + fail_above

    def p_worse(self, fail_above: float) -> float | None:
        """The exact one-sided p-value of "worse than OLD by more than
        fail_above"."""
        return blocked_ratio_p(self.paired, self.limit(fail_above),
                               above=not self.higher_is_better)

    def p_worse_borrowed(self, fail_above: float, prior: Prior | None,
                         reach: float) -> tuple[float | None, float]:
        """(p, floor) of "worse by more than fail_above": the exact test with
        its smallest attainable p where that reaches `reach` (Holm's first
        step: its run counts can fail it), or where there is no prior or the
        runs are paired within nodes; else the moderated t with a variance
        borrowed across the compared figures (prior: the figure's,
        calibrated on both runs' configurations; floor 0). The choice rests
        on run counts alone, never on the values, so Holm's guarantee holds."""
        floor = blocked_smallest_p(self.paired) or 1.0
        if prior is None or self.blocks or floor <= reach + 1e-12:
            return self.p_worse(fail_above), floor
        return borrowed_p(self.old_values, self.new_values, prior, self.limit(fail_above),
                          above=not self.higher_is_better), 0.0

    def p_within(self, fail_above: float) -> float | None:
        """The exact one-sided p-value of "not worse by fail_above"."""
        return blocked_ratio_p(self.paired, self.limit(fail_above), above=self.higher_is_better)

    @property
    def worse_at_least(self) -> float | None:
        """The one-sided 95% bound of how much worse NEW is, as a fraction
        (for a lower-is-better figure the lower bound of new/old, minus 1);
        None where the runs give no 95% bound."""
        b = blocked_ratio_bound(self.paired, lower=not self.higher_is_better)
        if b is None or not b.settled:
            return None
        return 1 / b.high - 1 if self.higher_is_better else b.low - 1

    def runs_to_decide(self, fail_above: float, family: int = 1,
                       rate: float = 1 - LEVEL) -> int | None:
        """Ok runs a side that would likely decide the gate: GATE_RUNS when a
        side has fewer; otherwise the count that would narrow the interval
        (as 1/√runs) to exclude the threshold if the estimate stayed: the
        two-sided 95% one for a pass, and for a fail the one-sided bound at
        Holm's first step over `family` figures (rate / family, rate the
        look's share of the 5%: Verdict.rate; and never fewer runs than
        can reach it: stats.runs_to_reject); None when the estimate sits
        on the threshold."""
        iv = self.interval
        if min(self.runs) < GATE_RUNS or iv is None:
            return max(GATE_RUNS, *self.runs)
        target = math.log(self.limit(fail_above))
        est = math.log(iv.estimate)
        reach = math.log(iv.high) - est if target > est else est - math.log(iv.low)
        gap = abs(target - est)
        if gap == 0:
            return None
        n = min(self.runs)
        failing = (est > target) != self.higher_is_better
        if failing:  # the bound at rate / family, one-sided, against the interval's 2.5%
            z = statistics.NormalDist().inv_cdf
            reach *= z(1 - rate / family) / z(1 - (1 - LEVEL) / 2)
        need = max(n + 1, math.ceil(n * (reach / gap) ** 2))
        return max(need, runs_to_reject(family, rate)) if failing else need


@dataclass
class GroupComparison:
    key: ConfigKey
    old_statuses: str | None  # None: the configuration is not in that run
    new_statuses: str | None
    old_ok: int = 0  # ok runs
    new_ok: int = 0
    old_failed: int = 0  # runs made that were not ok (skipped ones were not made)
    new_failed: int = 0
    changes: dict[str, Change] = field(default_factory=dict)
    apart: bool = False  # the sides ran on different nodes, none in common: nothing cancels them

    @property
    def in_both(self) -> bool:
        return self.old_statuses is not None and self.new_statuses is not None

    @property
    def lost(self) -> bool:
        """Ok runs in OLD, none in NEW (failed or absent): the gate's rule (b)."""
        return self.old_ok > 0 and self.new_ok == 0

    @property
    def broke(self) -> bool:
        """Ok runs on both sides, and failed runs in NEW where OLD had none:
        the change made a configuration fail, if not every time."""
        return self.old_ok > 0 and self.new_ok > 0 and self.new_failed > 0 and not self.old_failed

    @property
    def fails_more(self) -> bool:
        """Failed runs on both sides, a larger share of NEW's: a flaky
        configuration the change may or may not have made worse."""
        return (self.new_ok > 0 and self.old_failed > 0 and self.new_failed * (
            self.old_ok + self.old_failed) > self.old_failed * (self.new_ok + self.new_failed))

    @property
    def status_change(self) -> str:
        """'regressed' when ok runs turned into failures, 'fixed' the other way."""
        if not self.in_both:
            return ""
        if self.old_ok and not self.new_ok:
            return "regressed"
        if self.new_ok and not self.old_ok:
            return "fixed"
        return ""

    def figures(self) -> list[Change]:
        """Its changes, the workload's headline figures first."""
        first = headline(self.key.workload)
        order = [m for m in first if m in self.changes]
        order += [m for m in COMPARED if m in self.changes and m not in first]
        return [self.changes[m] for m in order]


def _change(metric: str, old: Group, new: Group, margin: float) -> Change | None:
    a, b = old.values(metric), new.values(metric)
    if not a or not b or min(a + b) <= 0:
        return None  # a side without the figure, or a ratio that cannot be taken
    blocks = tuple(node_blocks(old, new, metric) or ())
    return Change(metric, tuple(a), tuple(b),
                  blocked_ratio_interval(blocks or [(a, b)]), margin, blocks)


def _failed(g: Group) -> int:
    """Runs made that were not ok: a skipped run was never made."""
    return sum(n for status, n in g.status_counts.items() if status not in (Status.OK, Status.SKIPPED))


def _shown(g: Group | None) -> bool:
    """Groups of a language that never ran on either side are left out."""
    return g is not None and any(r.status != Status.SKIPPED for r in g.rows)


def compare_groups(old: list[Group], new: list[Group],
                   margin: dict[str, float] | None = None) -> list[GroupComparison]:
    margin = margin or margins(None)
    old_by = {g.key: g for g in old if _shown(g)}
    new_by = {g.key: g for g in new if _shown(g)}
    out = []
    for key in sorted(old_by.keys() | new_by.keys(), key=group_sort_key):
        a, b = old_by.get(key), new_by.get(key)
        cmp_ = GroupComparison(key, old_statuses=a.statuses if a else None,
                               new_statuses=b.statuses if b else None,
                               old_ok=a.ok if a else 0, new_ok=b.ok if b else 0,
                               old_failed=_failed(a) if a else 0,
                               new_failed=_failed(b) if b else 0)
        if a and b:
            cmp_.apart = len(a.nodes | b.nodes) > 1 and not a.nodes & b.nodes
            for metric in COMPARED:
                if (c := _change(metric, a, b, margin[metric])) is not None:
                    cmp_.changes[metric] = c
        out.append(cmp_)
    return out


def against_baseline(groups: list[Group], baseline: str) -> tuple[list[Group], list[Group]]:
    """Within one run (compare RUN --baseline IMPL): every other
    implementation, variant or release as NEW against the baseline's
    figures at the same configuration as OLD. A configuration the baseline
    did not run has no pair (listed as only in the new side)."""
    base = {dataclasses.replace(g.key, impl=""): g for g in groups if g.impl == baseline}
    if not base:
        raise UsageError(f"--baseline {baseline}: not in this run (it has "
                         f"{', '.join(sorted({g.impl for g in groups})) or 'no rows'})")
    old, new = [], []
    for g in groups:
        if g.impl == baseline:
            continue
        new.append(g)
        if (b := base.get(dataclasses.replace(g.key, impl=""))) is not None:
            old.append(dataclasses.replace(b, impl=g.impl))
    return old, new


Figure = tuple[GroupComparison, Change]


@dataclass
class Verdict:
    """What a comparison found, for every output format and the exit status."""
    comparisons: list[GroupComparison]
    old_env: Env
    new_env: Env
    old_dir: Path
    new_dir: Path
    fail_above: float | None = None  # the gate's threshold, a fraction
    baseline: str | None = None  # one run's implementation as OLD (--baseline)
    allow_undecided: bool = False  # --allow-undecided: an undecided gate passes
    noise: Noise | None = None  # a calibration run's A/A noise: figures it cannot gate
    # the looks at these runs the 5% is spent over: run --gate's, at most
    # one at each run count a figure can have (gate_looks); compare's own, 1
    looks: int = 1

    def __post_init__(self) -> None:
        # an env.json given as its JSON object (a caller's {}) reads as one
        self.old_env, self.new_env = (e if isinstance(e, Env) else Env(e)
                                      for e in (self.old_env, self.new_env))

    @property
    def common(self) -> list[GroupComparison]:
        return [c for c in self.comparisons if c.in_both]

    def only(self, side: str) -> list[GroupComparison]:
        missing = "new_statuses" if side == "old" else "old_statuses"
        return [c for c in self.comparisons if getattr(c, missing) is None]

    def figures(self, verdict: str | None = None) -> list[Figure]:
        """Every compared figure (or those of one verdict); changes, largest first."""
        found = [(c, ch) for c in self.common for ch in c.figures()
                 if verdict is None or ch.verdict == verdict]
        if verdict in (REGRESSED, IMPROVED):
            found.sort(key=lambda p: -abs(p[1].worse_by))
        return found

    @property
    def lost(self) -> list[GroupComparison]:
        """Configurations with ok runs in OLD and none in NEW."""
        return [c for c in self.comparisons if c.lost]

    @cached_property
    def _gate(self) -> list[tuple[Figure, str]]:
        """Every headline figure with the gate's answer for it. FAILS where
        Holm's rule at this look's rate rejects "not worse by more than
        PCT" over the gated figures (exact one-sided p-values, stats.holm):
        the chance that the gate fails on any figure that did not get worse
        by PCT is at most 5%, whatever the number of figures and of looks
        (rate). PASSES where "not worse by PCT" holds at 95% on its own: the
        gate passes only when every figure does, so that claim needs no
        correction. UNDECIDED otherwise. A figure whose runs are the same
        values on both sides (a copy of one run) did not change: it passes
        (compare refuses one directory given twice, a gate's likelier
        slip)."""
        if self.fail_above is None:
            return []
        fa, alpha = self.fail_above, 1 - LEVEL + 1e-12
        figures = [(c, ch) for c in self.common for ch in c.figures()
                   if ch.metric in headline(c.key.workload)]
        # a figure its calibration noise cannot gate at fa leaves the family:
        # chosen from other runs than these, it costs Holm's guarantee nothing
        gateable = [(f := self.floor_of(c, ch)) is None or f <= fa for c, ch in figures]
        reach = self.rate / max(1, sum(gateable))
        tests = [ch.p_worse_borrowed(fa, self.borrowed.get((c.key.workload, ch.metric)), reach)
                 for c, ch in figures]
        worse = holm([p if ok else None for (p, _), ok in zip(tests, gateable)],
                     [floor for _, floor in tests], self.rate)
        out = []
        for figure, ok, rejected in zip(figures, gateable, worse):
            ch = figure[1]
            within = ch.p_within(fa)
            state = (NOT_GATEABLE if not ok else PASSES if ch.identical else
                     FAILS if rejected else
                     PASSES if within is not None and within <= alpha else UNDECIDED)
            out.append((figure, state))
        return out

    @cached_property
    def borrowed(self) -> dict[tuple[str, str], Prior]:
        """Each (workload, figure)'s variance borrowed across the
        configurations of both runs (ranks.calibrate: each side's runs of a
        configuration are one sample, a change between the runs moving
        none of their spreads), with which 2 or 3 runs a side can fail a
        figure that Holm over the whole family needs 7 to fail exactly."""
        samples: dict[tuple[str, str], list[tuple[float, ...]]] = {}
        for c in self.common:
            for ch in c.figures():
                for side in (ch.old_values, ch.new_values):
                    if side and min(side) > 0:
                        samples.setdefault((c.key.workload, ch.metric), []).append(side)
        return {key: prior for key, found in samples.items()
                if (prior := calibrate(found)) is not None}

    def floor_of(self, c: GroupComparison, ch: Change) -> float | None:
        """The figure's floor on the calibration's machine at its runs a side
        (noise.Noise.floor); None without a calibration or one that did not
        measure it."""
        if self.noise is None:
            return None
        return self.noise.floor(self.noise_key(c.key, ch.metric), ch.metric, min(ch.runs))

    def noise_key(self, key: ConfigKey, metric: str) -> ConfigKey:
        """The configuration the calibration measured for this one: itself,
        else its stock build (a commit or a variant of it, such as run
        --gate's two names: the stock build's noise stands in)."""
        if self.noise is None or (key, metric) in self.noise.runs:
            return key
        return dataclasses.replace(key, impl=base_of(key.impl))

    @property
    def gate_figures(self) -> list[Figure]:
        """Every headline figure the gate read, whatever it made of it."""
        return [figure for figure, _ in self._gate]

    @property
    def family(self) -> int:
        """How many figures the gate's family-wise rule is taken over."""
        return sum(state != NOT_GATEABLE for _, state in self._gate)

    @property
    def rate(self) -> float:
        """This look's share of the 5% the gate may fail on no change: the
        whole of it for one look (compare), 5% / looks for run --gate's."""
        return (1 - LEVEL) / self.looks

    @property
    def runs_to_fail(self) -> int:
        """The fewest ok runs a side at which a figure of this family can
        fail at all at this look's rate (stats.runs_to_reject)."""
        return runs_to_reject(self.family, self.rate)

    def gated(self, state: str) -> list[Figure]:
        """The headline figures the gate finds in this state."""
        return [figure for figure, found in self._gate if found == state]

    def gate_of(self, c: GroupComparison, ch: Change) -> str | None:
        return next((found for (gc, gch), found in self._gate if gc is c and gch is ch), None)

    @property
    def failures(self) -> list[str]:
        """Why the gate fails (empty: it passes, or there is no gate)."""
        if self.fail_above is None:
            return []
        if not self.common:
            return [NOTHING_IN_COMMON]
        limit = fmt_percent(self.fail_above)
        out = [f"{c.key.label} {METRICS[ch.metric].heading} {fmt_change(ch.change)} "
               f"{ch.interval_text}: worse by more than {limit}"
               + (f" (by at least {fmt_change(w)}, one-sided 95%)"
                  if (w := ch.worse_at_least) is not None else "")
               for c, ch in sorted(self.gated(FAILS), key=lambda p: -p[1].worse_by)]
        out += [f"{c.key.label}: {c.old_statuses} → {c.new_statuses or 'absent'}, "
                "no ok run in the new run" for c in self.lost]
        out += [f"{c.key.label}: {c.old_statuses} → {c.new_statuses}, failed runs in the new "
                "run where the old had none" for c in self.common if c.broke]
        return out

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def unjudged(self) -> list[GroupComparison]:
        """Under a gate within one run (--baseline, run --gate): the
        configurations the others ran ok and the baseline did not: there is
        nothing to judge them against, and the gate cannot pass them."""
        if self.fail_above is None or not self.baseline:
            return []
        return [c for c in self.common if c.old_ok == 0 and c.new_ok > 0]

    @property
    def failing_more(self) -> list[GroupComparison]:
        """Under a gate: the configurations that failed in both runs, a
        larger share of the new one's runs (GroupComparison.fails_more):
        not a pass, and no proof of a change either."""
        if self.fail_above is None:
            return []
        return [c for c in self.common if c.fails_more]

    @property
    def undecided(self) -> bool:
        """The gate could not decide a headline figure or a configuration
        (and nothing failed)."""
        return not self.failures and bool(self.gated(UNDECIDED) or self.unjudged
                                          or self.failing_more)

    @property
    def exit_status(self) -> int:
        """1 when the gate fails, 3 when it is undecided (unless
        allow_undecided), else 0; without a gate always 0."""
        if self.failures:
            return 1
        return 3 if self.undecided and not self.allow_undecided else 0

    @property
    def notes(self) -> list[str]:
        """Where the two runs differ in what they measured on."""
        out = []
        if apart := [c for c in self.common if c.apart]:
            out.append(f"{len(apart)} configuration{'s' if len(apart) > 1 else ''} ran on "
                       "different nodes on the two sides, none in common: their changes "
                       "compare nodes as much as code")
        run_id = self.old_env.run_id
        if not self.baseline and run_id and run_id == self.new_env.run_id:
            out.append(f"both sides are run {run_id}: a copy of one run compared with itself "
                       f"(figures with the same values on both sides pass the gate unchanged)")
        old_host, new_host = self.old_env.host, self.new_env.host
        if self.noise is not None and self.noise.host and new_host.get("hostname") \
                and self.noise.host != new_host.get("hostname"):
            out.append(f"the calibration ran on {self.noise.host}, the new run on "
                       f"{new_host.get('hostname')}: its floors are another machine's noise")
        for field_, what in (("hostname", "hosts"), ("cpu_model", "CPUs"), ("cores", "core counts")):
            a, b = old_host.get(field_), new_host.get(field_)
            if a and b and a != b:
                out.append(f"different {what} ({a} vs {b}): the changes compare machines as "
                           "much as code")
        for what, a, b in (("toolchain", self.old_env.toolchains, self.new_env.toolchains),
                           ("runtime", self.old_env.runtimes, self.new_env.runtimes)):
            changed = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
            if changed:
                out.append(f"different {what} versions: " + "; ".join(
                    f"{k} {a[k]} → {b[k]}" for k in changed))
        return out


def gate_looks(max_repeat: int) -> int:
    """The most looks run --gate takes at a figure whose runs change, up to
    max_repeat runs a side: one at each run count it can have (its
    p-values change only when its configuration runs again). Holm at
    5% / this many a look keeps the whole A/B run's false failures at 5%
    (Bonferroni over the looks; docs/statistics.md, "What the looks
    cost")."""
    return max(1, max_repeat)


def run_looks(env: Env) -> int:
    """The looks a run's own gate took at its runs: run --gate's
    (gate_looks of its max_repeat, as its env.json records the settings),
    else 1."""
    settings = env.settings
    if settings.gate is None:
        return 1
    return gate_looks(int(settings.max_repeat or settings.repeat or 1))


def baseline_verdict(groups: list[Group], baseline: str, fail_above: float | None,
                     env: Env, run_dir: Path, margin: dict[str, float] | None = None,
                     allow_undecided: bool = False, noise: Noise | None = None,
                     looks: int = 1) -> Verdict:
    """One run's groups against its baseline's (against_baseline): what
    compare --baseline prints, and what run --gate decides after each pass
    (ab_gate.Gate) and at its end, spending the 5% over `looks`."""
    old, new = against_baseline(groups, baseline)
    return Verdict(compare_groups(old, new, margin), env, env, Path(run_dir), Path(run_dir),
                   fail_above, baseline, allow_undecided, noise, looks)
