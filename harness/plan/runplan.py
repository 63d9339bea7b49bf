"""One `run`'s plan, decided once before anything is written: the runs in
order, the notes to say first, each run's estimate from this machine's
earlier runs (for every run --until-ci or --until-settled may add too),
what those may add, and --dry-run's lines. plan_run computes it all; the
session and the execute stage read its fields and call back into nothing
here."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..core.formatting import fmt_duration, fmt_percent
from ..core.registry import Impl
from ..core.schema import ConfigKey, RecordedSettings, Row, RowKey
from ..core.stats import runs_needed
from .plan import Planned, configurations, estimate_basis, estimate_s, history_from, omitted, plan
from .settings import Settings


@dataclass(frozen=True)
class RunPlan:
    runs: list[Planned]  # the minimum, in the interleaved order
    notes: list[str]  # said before anything runs
    estimates: dict[RowKey, float]  # each run's, and each run a pass may add
    basis: str  # what the estimates rest on, in words
    sequential: str  # what --until-ci or --until-settled may add, in words ("" without)
    # The runs' expected seconds: the minimum's; with a budget and passes,
    # the budget (the passes fill it), or the minimum where that is longer.
    expected_s: float
    extra: list[Planned]  # the configurations a pass may run again (their last planned run)
    dry_run: list[str]  # run --dry-run's lines (the first one's builds said by the session)
    recorded: RecordedSettings  # the settings as env.json records them (Settings.record)


def most_runs(runs: list[Planned]) -> list[Planned]:
    """The plan with every sequential configuration at its max_repeat: the
    most a run may take."""
    extra = [dataclasses.replace(last, rep=rep) for key, last in configurations(runs).items()
             if last.max_repeat is not None for rep in range(last.rep + 1, last.max_repeat + 1)]
    return runs + extra


def expected_s(minimum_s: float, most_s: float, budget_s: float | None, passes: bool) -> float:
    """How long the runs should take: the minimum, or with passes and a
    budget as long as the passes may go (the most they could take, the
    budget) but never less than the minimum, which runs whole."""
    if not passes or not budget_s:
        return minimum_s
    return max(minimum_s, min(budget_s, most_s))


def _sequential_note(runs: list[Planned], most: list[Planned], seconds: float,
                     budget_s: float | None = None, minimum_s: float = 0.0) -> str:
    if len(most) == len(runs):
        return ""
    ceilings = sorted({p.max_repeat for p in configurations(runs).values() if p.max_repeat})
    targets = sorted({p.until_ci for p in runs if p.until_ci is not None})
    rules = ([f"--until-ci {'/'.join(map(fmt_percent, targets))}"] if targets else []) + (
        ["--until-settled"] if any(p.until_settled for p in runs) else [])
    return (f"a minimum: {' and '.join(rules)} may add passes, up to "
            f"{'/'.join(map(str, ceilings))} runs each (at most {len(most)} runs in all, "
            f"{fmt_duration(seconds)})"
            + (f", within a budget of {fmt_duration(budget_s)} for all the runs, the minimum "
               f"included: about "
               f"{fmt_duration(expected_s(minimum_s, seconds, budget_s, True))} in all"
               if budget_s else ""))


def estimated(minimum_s: float, expected: float) -> str:
    """The first line's estimate: the runs', and where passes within a
    budget add to the minimum, both (a user decides on the first line)."""
    if expected > minimum_s:
        return (f"estimated {fmt_duration(expected)} for the runs with the passes within the "
                f"budget (the minimum {fmt_duration(minimum_s)})")
    return f"estimated {fmt_duration(minimum_s)} for the runs"


def plan_run(impls: list[Impl], s: Settings, past: list[Row], out: Path,
             only: Callable[[list[Planned]], list[Planned]] | None = None,
             published: tuple[dict[ConfigKey, float], str] | None = None) -> RunPlan:
    """The plan of one `run` from the settings, the implementations and the
    rows of earlier runs in its results folder OUT (record.rundir.earlier_runs).
    only: the part of the plan this invocation runs (a cluster's task: its
    replicate). published: the newest published run of the suite, its
    times by configuration and its name (record.published_timings), for
    what OUT never timed. The session says
    the notes, and refuses a plan with no runs."""
    runs = plan(impls, s)
    if only is not None:
        runs = only(runs)
    own = history_from(past)
    history = dict(own)
    most = most_runs(runs)
    times, source = published or ({}, "")
    for p in most:  # OUT's own times first; the page's where OUT has none
        key = (p.key, p.iterations, p.warmup_ms)
        if key not in own and p.key in times:
            history[key] = times[p.key]
    borrowed = sum((p.key, p.iterations, p.warmup_ms) not in own and p.key in times for p in runs)
    estimates = {p.row_key: estimate_s(p, history) for p in most}
    minimum_s, most_s = (sum(estimates[p.row_key] for p in group) for group in (runs, most))
    sequential = _sequential_note(runs, most, most_s, s.budget_s, minimum_s)
    expected = expected_s(minimum_s, most_s, s.budget_s, bool(sequential))
    notes = omitted(s)
    if sequential and any(p.max_repeat < runs_needed()[0] for p in configurations(runs).values()
                          if p.max_repeat and p.until_ci is not None):
        notes.append(f"note: --max-repeat below {runs_needed()[0]}: no interval of fewer runs is "
                     f"settled at 95%, so those configurations run --max-repeat times")
    basis = estimate_basis(runs, own, out)
    if borrowed:
        basis += f" ({borrowed} of them from {source}, the suite's newest published run)"
    dry_run = [f"{len(runs)} runs, {estimated(minimum_s, expected)}; {basis}"]
    if sequential:
        dry_run.append(f"the plan is {sequential}")
    for p in runs:
        dry_run.append(f"  {p.label}: {shlex.join(p.command(variant=True))}")
    return RunPlan(runs, notes, estimates, basis, sequential, expected,
                   [p for p in configurations(runs).values() if p.max_repeat is not None],
                   dry_run, s.record())
