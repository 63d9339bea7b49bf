"""Compare two run directories, configuration by configuration, figure by
figure: how much NEW differs from OLD, with a confidence interval, and
whether that is a change at all. docs/statistics.md ("Comparing two runs")
explains what is printed and why.

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
  whatever the number of figures;
- passes: not worse by PCT at 95% (every figure must pass for the gate to,
  so the claim "none is worse" needs no correction over the figures);
- undecided: neither, with the runs it would need;
- not gateable: with a calibration run, a figure whose A/A noise on the
  machine reaches past PCT (noise.py): named with its floor, not gated.
The gate fails (exit 1) on a failing figure, on a configuration with ok runs
in OLD and none in NEW, and on two runs with nothing in common; it is
undecided (exit 3) when any headline figure is, unless --allow-undecided.
Process wall and CPU time, which include the runtime's start-up, are shown
but not gated. Output as text (terminal), markdown (a pull request) or json.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from .. import UsageError
from ..analyse.analysis import Group, analyse, group_sort_key, headline, node_blocks
from ..core.formatting import GITHUB_LIMIT, fit_rows, fmt_change, fmt_percent
from ..core.metrics import METRICS, margins
from ..core.formatting import fmt_metric
from ..core.variants import base_of
from .noise import AA, Noise
from .report import md_text
from ..record.rundir import RunDir
from ..core.schema import ConfigKey, Env, Status
from ..core.stats import (LEVEL, Block, Interval, blocked_ratio_bound, blocked_ratio_interval,
                          blocked_ratio_p, blocked_smallest_p, holm, runs_needed, runs_to_reject,
                          smallest_p)

COMPARED = tuple(m.name for m in METRICS.values() if m.compared)
FORMATS = ("text", "markdown", "github", "json")

IMPROVED, REGRESSED, LEVEL_WITHIN, NO_CHANGE, NOT_ENOUGH = (
    "improved", "regressed", "level", "no change detected", "not enough runs")
VERDICTS = (REGRESSED, IMPROVED, LEVEL_WITHIN, NO_CHANGE, NOT_ENOUGH)
# The runs a side a one-sided gate question needs: its smallest p reaches 5%.
GATE_RUNS = next(n for n in range(1, 100) if smallest_p(n, n) <= 1 - LEVEL + 1e-12)
# What the gate makes of one headline figure.
FAILS, PASSES, UNDECIDED = "fails", "passes", "undecided"
NOT_GATEABLE = "not gateable"  # its calibration noise reaches past PCT (noise.py)
NOTHING_IN_COMMON = "the two runs have no configuration in common: nothing to compare"
MANY_RUNS = 1000  # beyond this, "how many runs" is not worth a number


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
            return f"{self.interval.confidence:.0%} confidence"
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

    def runs_to_decide(self, fail_above: float, family: int = 1) -> int | None:
        """Ok runs a side that would likely decide the gate: GATE_RUNS when a
        side has fewer; otherwise the count that would narrow the interval
        (as 1/√runs) to exclude the threshold if the estimate stayed: the
        two-sided 95% one for a pass, and for a fail the one-sided bound at
        Holm's first step over `family` figures (5% / family, and never
        fewer runs than can reach it: stats.runs_to_reject); None when the
        estimate sits on the threshold."""
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
        if failing:  # the bound at 5% / family, one-sided, against the interval's 2.5%
            z = statistics.NormalDist().inv_cdf
            reach *= z(1 - (1 - LEVEL) / family) / z(1 - (1 - LEVEL) / 2)
        need = max(n + 1, math.ceil(n * (reach / gap) ** 2))
        return max(need, runs_to_reject(family)) if failing else need


@dataclass
class GroupComparison:
    key: ConfigKey
    old_statuses: str | None  # None: the configuration is not in that run
    new_statuses: str | None
    old_ok: int = 0  # ok runs
    new_ok: int = 0
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
                               old_ok=a.ok if a else 0, new_ok=b.ok if b else 0)
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


def compare_runs(old_dir: Path, new_dir: Path, margin: dict[str, float] | None = None
                 ) -> tuple[list[GroupComparison], Env, Env]:
    """The structured comparison, with both runs' env.json. One directory
    on both sides is refused: a gate comparing a run with itself would pass
    whatever the code did."""
    if Path(old_dir).resolve() == Path(new_dir).resolve():
        raise UsageError(f"OLD and NEW are the same run directory ({new_dir}): comparing a run "
                         "with itself says nothing (for one run's implementations against one "
                         "of them, use --baseline IMPL)")
    old, new = analyse(RunDir(Path(old_dir))), analyse(RunDir(Path(new_dir)))
    return compare_groups(old.groups, new.groups, margin), old.env, new.env


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
        Holm's rule rejects "not worse by more than PCT" over the gated
        figures (exact one-sided p-values, stats.holm): the chance that the
        gate fails on any figure that did not get worse by PCT is at most
        5%, whatever the number of figures. PASSES where "not worse by PCT"
        holds at 95% on its own: the gate passes only when every figure
        does, so that claim needs no correction. UNDECIDED otherwise. A
        figure whose runs are the same values on both sides (a copy of one
        run) did not change: it passes (compare refuses one directory
        given twice, a gate's likelier slip)."""
        if self.fail_above is None:
            return []
        fa, alpha = self.fail_above, 1 - LEVEL + 1e-12
        figures = [(c, ch) for c in self.common for ch in c.figures()
                   if ch.metric in headline(c.key.workload)]
        # a figure its calibration noise cannot gate at fa leaves the family:
        # chosen from other runs than these, it costs Holm's guarantee nothing
        gateable = [(f := self.floor_of(c, ch)) is None or f <= fa for c, ch in figures]
        worse = holm([ch.p_worse(fa) if ok else None for (_, ch), ok in zip(figures, gateable)],
                     [blocked_smallest_p(ch.paired) or 1.0 for _, ch in figures])
        out = []
        for figure, ok, rejected in zip(figures, gateable, worse):
            ch = figure[1]
            within = ch.p_within(fa)
            state = (NOT_GATEABLE if not ok else PASSES if ch.identical else
                     FAILS if rejected else
                     PASSES if within is not None and within <= alpha else UNDECIDED)
            out.append((figure, state))
        return out

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
    def runs_to_fail(self) -> int:
        """The fewest ok runs a side at which a figure of this family can
        fail at all (stats.runs_to_reject)."""
        return runs_to_reject(self.family)

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
    def undecided(self) -> bool:
        """The gate could not decide a headline figure or a configuration
        (and nothing failed)."""
        return not self.failures and bool(self.gated(UNDECIDED) or self.unjudged)

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


def _describe(env: Env, run_dir: Path) -> str:
    host = env.host.get("hostname", "?")
    commit = (env.git.get("commit") or "?")[:12]
    return f"{env.run_id or run_dir.name} (host {host}, commit {commit})"


def _sides(v: Verdict) -> tuple[str, str]:
    """What OLD and NEW are, for the heading lines."""
    if v.baseline:
        run = _describe(v.new_env, v.new_dir)
        return f"{v.baseline}, the baseline, in {run}", "every other implementation of that run"
    return _describe(v.old_env, v.old_dir), _describe(v.new_env, v.new_dir)


HEADER = ["workload", "configuration", "impl", "runs old → new", "figure", "old", "new",
          "change", "interval", "verdict"]
NUMERIC = {5, 6, 7}  # right-aligned in the text table


def _figure_name(c: GroupComparison, ch: Change) -> str:
    star = " *" if ch.metric in headline(c.key.workload) else ""
    return METRICS[ch.metric].heading + star


def _rows(v: Verdict) -> list[list[str]]:
    """One row per figure; the configuration is named on its first row."""
    rows = []
    for c in v.common:
        runs = f"{c.old_statuses} → {c.new_statuses}"
        if c.status_change:
            runs += " (NO OK RUN NOW)" if c.status_change == "regressed" else " (FIXED)"
        config = [c.key.workload, c.key.settings or "—", c.key.impl, runs]
        figures = c.figures()
        if not figures:
            rows.append(config + ["—"] + [""] * 5)
        for i, ch in enumerate(figures):
            rows.append((config if i == 0 else [""] * 4)
                        + [_figure_name(c, ch), fmt_metric(ch.metric, ch.old),
                           fmt_metric(ch.metric, ch.new), fmt_change(ch.change), ch.interval_text,
                           ch.verdict_text])
    return rows


def _legend(v: Verdict) -> str:
    higher = " and ".join(METRICS[m].label for m in COMPARED if METRICS[m].higher_is_better)
    blocked = any(ch.blocks for _, ch in v.figures())
    return ("change = new/old − 1: the median of the pairwise ratios of the ok runs "
            "(Hodges–Lehmann" + ("; only runs of one node are paired: the nodes are blocks"
                                 if blocked else "")
            + f"), with its exact {LEVEL:.0%} interval (Mann–Whitney); a verdict "
            f"needs {runs_needed()[1]} ok runs a side; level: the interval inside the figure's "
            f"margin. * a headline figure, the gate's (exact one-sided tests at 95%, from "
            f"{GATE_RUNS} ok runs a side); wall and CPU are shown, never gated"
            + (f"; for {higher} higher is better" if higher else "") + ".")


def _figure_line(c: GroupComparison, ch: Change) -> str:
    return (f"{c.key.label} {METRICS[ch.metric].heading} {fmt_metric(ch.metric, ch.old)} → "
            f"{fmt_metric(ch.metric, ch.new)}, {fmt_change(ch.change)} {ch.interval_text}")


def _undecided(v: Verdict) -> list[str]:
    """The gate's undecided headline figures: how many, why, and the runs
    that would decide them."""
    undecided = v.gated(UNDECIDED)
    if not undecided or v.fail_above is None:
        return []
    limit = fmt_percent(v.fail_above)
    few = [p for p in undecided if min(p[1].runs) < GATE_RUNS]
    wide = [p for p in undecided if min(p[1].runs) >= GATE_RUNS]
    n = len(undecided)
    lines = [f"undecided: {n} headline figure{'s' if n != 1 else ''} could not be decided "
             f"against {limit}:"]
    if few:
        least = min(few, key=lambda p: min(p[1].runs))[1]
        lines.append(f"  {len(few)} with fewer than {GATE_RUNS} ok runs on a side (the least: "
                     f"{least.runs[0]} old, {least.runs[1]} new): the gate needs {GATE_RUNS} "
                     f"a side (run with --repeat {GATE_RUNS} or more):")
        lines += [f"    {_figure_line(c, ch)}" for c, ch in _listed_pairs(few)]
        if len(few) > LISTED:
            lines.append(f"    ... and {len(few) - LISTED} more")
    if wide:
        lines.append(f"  {len(wide)} whose evidence reaches both sides of {limit}; the runs a "
                     "side that would likely decide each, were its spread and estimate to stay:")
        for c, ch in _listed_pairs(wide):
            need = ch.runs_to_decide(v.fail_above, v.family)
            p = ch.p_worse(v.fail_above)
            alone = (f" (worse by more than {limit} on its own, p = {p:.2g}; not over the "
                     f"family of {v.family})" if p is not None and p <= 1 - LEVEL + 1e-12
                     else "")
            lines.append(f"    {_figure_line(c, ch)}{alone}: "
                         + (f"about {need}" if need is not None and need <= MANY_RUNS else
                            f"over {MANY_RUNS}" if need is not None else
                            f"no number of runs (the estimate is {limit})"))
        if len(wide) > LISTED:
            lines.append(f"    ... and {len(wide) - LISTED} more")
    return lines


LISTED = 10


def _not_gateable(v: Verdict) -> list[str]:
    """The figures the calibration's noise cannot gate, with their floors."""
    named = v.gated(NOT_GATEABLE)
    if not named or v.fail_above is None or v.noise is None:
        return []
    limit = fmt_percent(v.fail_above)
    n = len(named)
    worst = sorted(named, key=lambda p: -(v.floor_of(*p) or 0))
    lines = [f"not gateable at {limit} here: {n} headline figure{'s' if n != 1 else ''} whose "
             f"no-change comparisons at these runs reach past {limit} in more than one in ten "
             f"(calibration run {v.noise.source}); each with its floor, the change that nine "
             "in ten stay within:"]
    lines += [f"  {c.key.label} {METRICS[ch.metric].heading}: "
              + (f"floor {fmt_change(fl)} at "
                 f"{v.noise.side(v.noise_key(c.key, ch.metric), ch.metric, min(ch.runs))} "
                 "runs a side" if math.isfinite(fl := v.floor_of(c, ch) or math.inf)
                 else "no floor (too few calibration runs)") for c, ch in worst[:LISTED]]
    if n > LISTED:
        lines.append(f"  ... and {n - LISTED} more")
    return lines


def _listed_pairs(pairs: list[Figure]) -> list[Figure]:
    return sorted(pairs, key=lambda p: -p[1].worse_by)[:LISTED]


def _summary(v: Verdict) -> list[str]:
    lines = [_legend(v)]
    counts = {verdict: len(v.figures(verdict)) for verdict in VERDICTS}
    lines.append(f"{len(v.figures())} figures of {len(v.common)} configurations: "
                 + ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) + ".")
    for verdict in (REGRESSED, IMPROVED):
        lines += [f"  {verdict}: {_figure_line(c, ch)}" for c, ch in v.figures(verdict)]
    if v.lost:
        lines.append(f"{len(v.lost)} configuration{'s' if len(v.lost) > 1 else ''} of the old "
                     f"run {'have' if len(v.lost) > 1 else 'has'} no ok run in the new one:")
        lines += [f"  {c.key.label}: {c.old_statuses} → {c.new_statuses or 'absent'}"
                  for c in v.lost]
    lines += _only_lines(v)
    if v.fail_above is not None:
        limit = fmt_percent(v.fail_above)
        if v.failures:
            n = len(v.failures)
            lines.append(f"FAIL (--fail-above {limit}): {n} reason{'s' if n > 1 else ''}:")
            lines += [f"  {f}" for f in v.failures]
        elif v.undecided:
            n, k = len(v.gated(UNDECIDED)), len(v.unjudged)
            verdict = ("PASS, with undecided figures allowed (--allow-undecided)"
                       if v.allow_undecided else "UNDECIDED (exit 3)")
            why = ([f"{n} could not be shown to be within it (below)"] if n else []) + (
                [f"{k} configuration{'s have' if k != 1 else ' has'} no ok run of the "
                 f"baseline, {v.baseline}, to judge against:"] if k else [])
            lines.append(f"{verdict} (--fail-above {limit}): no headline figure is shown worse "
                         f"by more than {limit}, but {' and '.join(why)}" + ("" if k else "."))
            lines += [f"  {c.key.label}: the baseline {c.old_statuses}, this one "
                      f"{c.new_statuses}" for c in v.unjudged]
        else:
            gated = "every gated headline figure" if v.gated(NOT_GATEABLE) else \
                "every headline figure"
            lines.append(f"PASS (--fail-above {limit}): {gated} is within {limit} "
                         "at 95% (one-sided), and every configuration of the old run has ok runs "
                         "in the new one.")
        lines += [_rule(v)] if v.family else []
        lines += _not_gateable(v)
        lines += _undecided(v)
    return lines


def _rule(v: Verdict) -> str:
    """The gate's family-wise rule, and the runs below which it cannot fail."""
    m, need = v.family, v.runs_to_fail
    short = [ch for _, ch in v.gated(UNDECIDED) if min(ch.runs) < need]
    return (f"The gate's rule: Holm over the {m} gated figure{'s' if m != 1 else ''} (exact "
            f"one-sided p-values; when none is worse by more than {fmt_percent(v.fail_above)}, it "
            f"fails on one at most {1 - LEVEL:.0%} of the time, whatever their number): the smallest p must reach {(1 - LEVEL) / m:.2g}"
            + (f"; {len(short)} undecided figure{'s have' if len(short) != 1 else ' has'} fewer "
               f"than the {need} ok runs a side that can reach it" if short else "") + ".")


def _nothing(v: Verdict) -> str:
    """The one line of a comparison with nothing to compare."""
    return "compare: " + NOTHING_IN_COMMON + (", the gate fails" if v.fail_above is not None
                                              else "")


def _only_lines(v: Verdict) -> list[str]:
    out = []
    for side in ("old", "new"):
        only = v.only(side)
        if only:
            names = ", ".join(c.key.label for c in only[:20])
            more = f" and {len(only) - 20} more" if len(only) > 20 else ""
            out.append(f"only in the {side} run: {len(only)} configurations: {names}{more}")
    return out


def render(v: Verdict) -> str:
    """Text for the terminal: an aligned table, a figure a row."""
    old, new = _sides(v)
    lines = [f"old: {old}", f"new: {new}"]
    lines += [f"note: {n}" for n in v.notes] + [""]
    if not v.common:
        return "\n".join(lines + [_nothing(v)] + _only_lines(v))
    rows = _rows(v)
    widths = [max(len(r[i]) for r in [HEADER] + rows) for i in range(len(HEADER))]

    def fmt(row: list[str]) -> str:
        return "  ".join(val.rjust(w) if i in NUMERIC else val.ljust(w)
                         for i, (val, w) in enumerate(zip(row, widths))).rstrip()

    lines += [fmt(HEADER), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows]
    return "\n".join(lines + [""] + _summary(v))


def render_markdown(v: Verdict, limit: int | None = None) -> str:
    """For a pull request: a heading, the notes, a table, the summary, every
    text from the data escaped (report.md_text). With `limit` (bytes, the
    github format's): the summary before the table, and the table's last
    rows left out, and counted, where the whole would not fit."""
    old, new = _sides(v)
    against = v.baseline or v.old_env.run_id or v.old_dir.name
    lines = [f"### Benchmark comparison: {md_text(v.new_env.run_id or v.new_dir.name)} "
             f"against {md_text(against)}", "", f"- old: {md_text(old)}", f"- new: {md_text(new)}"]
    lines += [f"- **note**: {md_text(n)}" for n in v.notes] + [""]
    if not v.common:
        return "\n".join(lines + [f"**{md_text(_nothing(v))}**"]
                         + [md_text(x) for x in _only_lines(v)]) + "\n"
    table = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    # the configuration's cells come from the data; the figures are ours
    table += ["| " + " | ".join(md_text(cell) if i < 4 else cell.replace("|", "\\|")
                                for i, cell in enumerate(r)) + " |" for r in _rows(v)]
    summary = []
    for line in _summary(v):  # a paragraph each, its indented lines as a (nested) list
        indent = len(line) - len(line.lstrip())
        text = md_text(line.strip())
        summary += ["", text] if not indent else ["  " * (indent // 2 - 1) + "- " + text]
    if limit is None:
        return "\n".join(lines + table + summary) + "\n"
    head = "\n".join(lines + summary[1:] + ["", "<details><summary>every figure</summary>", ""])
    tail = "\n</details>\n"
    kept, left = fit_rows([head, *table[:2]], table[2:], [tail], limit)
    note = ["", f"... {left} more rows: `compare --format markdown` has them all."] if left else []
    return "\n".join([head, *table[:2], *kept, *note, tail])


def _change_json(v: Verdict, c: GroupComparison, ch: Change) -> dict[str, Any]:
    fail_above = v.fail_above
    iv = ch.interval
    gated = ch.metric in headline(c.key.workload)
    return {"old": ch.old, "new": ch.new, "estimate": ch.ratio, "change": ch.change,
            "low": iv.low if iv else None, "high": iv.high if iv else None,
            "confidence": iv.confidence if iv else None,
            "runs": {"old": ch.runs[0], "new": ch.runs[1]}, "verdict": ch.verdict,
            "headline": gated,
            "margin": ch.margin,
            "gate": v.gate_of(c, ch) if gated and fail_above is not None else None,
            "floor": fl if gated and fail_above is not None and (fl := v.floor_of(c, ch))
            is not None and math.isfinite(fl) else None,
            "p_worse": ch.p_worse(fail_above) if gated and fail_above is not None else None,
            "p_within": ch.p_within(fail_above) if gated and fail_above is not None else None}


@dataclass(frozen=True)
class Side:
    """A side of the comparison as the json output names it: its directory
    and its run's id (env.json's)."""
    dir: str
    run_id: str | None


# A configuration's identity in the json output: ConfigKey's fields, its
# dimensions (params) spread beside them.
KEY_FIELDS = tuple(f.name for f in fields(ConfigKey) if f.name != "params")


def to_json(v: Verdict) -> dict[str, Any]:
    undecided = v.gated(UNDECIDED)
    return {
        "old": {**dataclasses.asdict(Side(str(v.old_dir), v.old_env.run_id)),
                "baseline": v.baseline},
        "new": dataclasses.asdict(Side(str(v.new_dir), v.new_env.run_id)),
        "notes": v.notes,
        "level": LEVEL,
        "configurations": [{
            **{name: getattr(c.key, name) for name in KEY_FIELDS},
            **dict(c.key.params), "old_statuses": c.old_statuses, "new_statuses": c.new_statuses,
            "old_ok": c.old_ok, "new_ok": c.new_ok, "status_change": c.status_change or None,
            "changes": {ch.metric: _change_json(v, c, ch) for ch in c.figures()}}
            for c in v.comparisons],
        "counts": {verdict: len(v.figures(verdict)) for verdict in VERDICTS},
        "fail_above": v.fail_above, "failures": v.failures,
        "family": v.family if v.fail_above is not None else None,
        "runs_to_fail": v.runs_to_fail if v.fail_above is not None else None,
        "undecided": len(undecided),
        "not_gateable": len(v.gated(NOT_GATEABLE)),
        "calibration": v.noise.source if v.noise is not None else None,
        "runs_to_decide": max((r for _, ch in undecided
                               if (r := ch.runs_to_decide(v.fail_above, v.family)) is not None),
                              default=None) if v.fail_above is not None else None,
        "passed": v.passed,
        "decided": not v.undecided,
        "exit_status": v.exit_status,
    }


def calibration_noise(run_dir: Path) -> Noise:
    """The A/A noise of a calibrate run (noise.Noise); one without an A/A
    pair is refused."""
    analysed = analyse(RunDir(Path(run_dir)))
    noise = Noise.of(analysed.groups, analysed.env.run_id or Path(run_dir).name,
                     analysed.env.host.get("hostname"))
    if not noise.runs:
        raise UsageError(f"{run_dir}: no configuration ran under two names X and X{AA}: not a "
                         "run of the calibrate suite (python -m harness run --suite calibrate)")
    return noise


def compare_dirs(old_dir: Path, new_dir: Path, fail_above: float | None = None,
                 margin: dict[str, float] | None = None, allow_undecided: bool = False,
                 calibration: Path | None = None) -> Verdict:
    """NEW against OLD; with a calibration run, the figures its A/A noise
    cannot gate at fail_above are named, not gated."""
    comparisons, old_env, new_env = compare_runs(old_dir, new_dir, margin)
    noise = calibration_noise(calibration) if calibration is not None else None
    return Verdict(comparisons, old_env, new_env, Path(old_dir), Path(new_dir), fail_above,
                   allow_undecided=allow_undecided, noise=noise)


def baseline_verdict(groups: list[Group], baseline: str, fail_above: float | None,
                     env: Env, run_dir: Path, margin: dict[str, float] | None = None,
                     allow_undecided: bool = False, noise: Noise | None = None) -> Verdict:
    """One run's groups against its baseline's (against_baseline): what
    compare --baseline prints, and what run --gate decides after each pass
    (sequential.Gate) and at its end."""
    old, new = against_baseline(groups, baseline)
    return Verdict(compare_groups(old, new, margin), env, env, Path(run_dir), Path(run_dir),
                   fail_above, baseline, allow_undecided, noise)


def compare_baseline(run_dir: Path, baseline: str, fail_above: float | None = None,
                     margin: dict[str, float] | None = None,
                     allow_undecided: bool = False, calibration: Path | None = None) -> Verdict:
    """One run's implementations against one of them (--baseline); with a
    calibration run, as compare_dirs."""
    analysed = analyse(RunDir(Path(run_dir)))
    noise = calibration_noise(calibration) if calibration is not None else None
    return baseline_verdict(analysed.groups, baseline, fail_above, analysed.env, Path(run_dir),
                            margin, allow_undecided, noise)


def output(v: Verdict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_json(v), indent=2)
    if fmt == "github":
        return render_markdown(v, GITHUB_LIMIT)
    return render_markdown(v) if fmt == "markdown" else render(v)


def compare(old_dir: Path, new_dir: Path, fail_above: float | None = None) -> str:
    """NEW against OLD, as text for the terminal."""
    return render(compare_dirs(old_dir, new_dir, fail_above))
