"""One `run`'s plan, decided once before anything is written: the runs in
order, the notes to say first, the estimates from this machine's earlier
runs, and what --until-ci or --until-settled may add. The session asks for
it once (plan_run) and hands its parts to the execute stage."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..core.formatting import fmt_duration, fmt_percent
from ..core.registry import Impl
from ..core.schema import ConfigKey, Row
from ..core.stats import runs_needed
from .plan import (History, Planned, configurations, estimate_basis, estimate_s, history_from,
                   omitted, plan, start_times)
from .settings import Settings


@dataclass
class RunPlan:
    settings: Settings
    runs: list[Planned]  # the minimum, in the interleaved order
    history: History  # this machine's earlier times (plan.history_from)
    past_spawns: dict[ConfigKey, list[float]]  # earlier start times (--adaptive-sleep)
    notes: list[str]  # said before anything runs

    def estimate(self, p: Planned) -> float:
        return estimate_s(p, self.history)

    @property
    def most(self) -> list[Planned]:
        """The plan with every sequential configuration at its max_repeat:
        the most a run may take."""
        return most_runs(self.runs)

    def may_run(self, todo: list[Planned]) -> list[Planned]:
        """What may run of it: the runs still to do, and (--until-ci,
        --until-settled) more of any sequential configuration."""
        return todo + [p for p in configurations(self.runs).values() if p.max_repeat is not None]

    def sequential_note(self) -> str:
        """What --until-ci or --until-settled may add, in words ("" without)."""
        most = self.most
        if len(most) == len(self.runs):
            return ""
        ceilings = sorted({p.max_repeat for p in configurations(self.runs).values()
                           if p.max_repeat})
        targets = sorted({p.until_ci for p in self.runs if p.until_ci is not None})
        rules = ([f"--until-ci {'/'.join(map(fmt_percent, targets))}"] if targets else []) + (
            ["--until-settled"] if any(p.until_settled for p in self.runs) else [])
        return (f"a minimum: {' and '.join(rules)} may add passes, up to "
                f"{'/'.join(map(str, ceilings))} runs each (at most {len(most)} runs in all, "
                f"{fmt_duration(sum(self.estimate(p) for p in most))})")

    def dry_run(self, out: Path, builds: str) -> list[str]:
        """run --dry-run's lines: the count, the estimate and each command."""
        lines = [f"{len(self.runs)} runs, estimated "
                 f"{fmt_duration(sum(self.estimate(p) for p in self.runs))} for the runs; "
                 f"{estimate_basis(self.runs, self.history, out)}; {builds or 'no builds'}"]
        if note := self.sequential_note():
            lines.append(f"the plan is {note}")
        for p in self.runs:
            settings = [f"{k}={v}" for k, v in p.impl.settings_env]  # a variant's own environment
            lines.append(f"  {p.label}: {shlex.join(settings + p.argv())}")
        return lines


def most_runs(runs: list[Planned]) -> list[Planned]:
    """The plan with every sequential configuration at its max_repeat."""
    extra = [dataclasses.replace(last, rep=rep) for key, last in configurations(runs).items()
             if last.max_repeat is not None for rep in range(last.rep + 1, last.max_repeat + 1)]
    return runs + extra


def plan_run(impls: list[Impl], s: Settings, past: list[Row],
             only: Callable[[list[Planned]], list[Planned]] | None = None) -> RunPlan:
    """The plan of one `run` from the settings, the implementations and the
    rows of earlier runs in its results folder (record.rundir.earlier_runs).
    only: the part of the plan this invocation runs (a cluster's task: its
    replicate). The session says the notes, and refuses a plan with no runs."""
    runs = plan(impls, s)
    if only is not None:
        runs = only(runs)
    found = RunPlan(s, runs, history_from(past), start_times(past), omitted(s))
    if found.sequential_note() and any(
            p.max_repeat < runs_needed()[0] for p in configurations(runs).values()
            if p.max_repeat and p.until_ci is not None):
        found.notes.append(f"note: --max-repeat below {runs_needed()[0]}: no interval of fewer "
                           f"runs is settled at 95%, so those configurations run --max-repeat "
                           f"times")
    return found
