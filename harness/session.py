"""One `run`, wired: plan → prepare and execute each run → record its row →
report. Each stage is its own module (docs/harness.md, "The pipeline");
this one only connects them, says what happens, and stops cleanly on a
signal (INT, TERM, HUP)."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import ROOT, HarnessError, UsageError, ab_gate, relative, sequential
from .analyse.noise import Noise
from .core.envinfo import host
from .core.formatting import fmt_duration, fmt_percent
from .core.registry import Impl, Language, languages, resolve
from .core.schema import Row, RowKey, Status
from .execute.builder import Preparation, build_estimate
from .execute.executor import ProcessExecutor
from .execute.perfstat import find_perf
from .execute.progress import Progress
from .execute.scheduler import execute_until_settled
from .execute.toolchains import detect_toolchain
from .plan.plan import Planned
from .plan.runplan import RunPlan, estimated, plan_run
from .plan.settings import Settings
from .present.compare import calibration_noise, compare_baseline, render
from .processes.interrupts import Interrupted, interruptible
from .processes.launcher import LauncherError, ensure_launcher
from .record import published_timings
from .record.run_env import end_run, start_run, write_env
from .record.rundir import (RowWriteError, RunDir, RunDirError, check_out, earlier_runs, latest,
                            new_env, open_run_dir, point_latest)
from .releases.versions import check as check_releases


# run's exit status when every row is skipped (no toolchain, no load
# generator): nothing was measured, which a script must not take for success.
ALL_SKIPPED = 3


def _builds(runs: list[Planned], build: bool, langs: list[Language] | None = None) -> str:
    """The builds' share of a plan's estimate, in words ("" with --no-build)."""
    if not build:
        return "no builds (--no-build)"
    if langs is None:
        langs = languages([p.impl for p in runs])
    return build_estimate(langs, any(p.workload.kind == "server" for p in runs))[1]


def _open(out: Path, runs: list[Planned], resume: bool, suite: str | None = None
          ) -> tuple[RunDir, list[Planned], dict[str, Any]]:
    """The run directory to record into (new, or the newest for --resume,
    which must be a run of the suite named, if one is: another suite's plan
    would mix two runs in one directory; options alone may resume any run,
    a narrower selection of it too), the runs still to do, and its env.json
    so far."""
    try:
        check_out(out)
        if resume:
            run = latest(out)
            if run is None:
                raise UsageError(f"--resume: no previous run in {out}")
            if suite is not None and (was := run.env().settings.suite) != suite:
                raise UsageError(f"--resume: the newest run, {run.name}, is "
                                 + (f"the {was} suite's" if was else "a run without a suite")
                                 + ", not " + (f"the {suite} suite's" if suite else
                                               "one without a suite")
                                 + ": resume it with its own options, or start a new run")
            run.lock()
            kept, torn = run.prepare_resume({p.row_key for p in runs})
            if torn:
                print(f"note: {torn}")
            print(f"resuming {run.name}: {sum(1 for p in runs if p.row_key in kept)} runs already ok")
            runs = [p for p in runs if p.row_key not in kept]
            env = run.env()
        else:
            run = RunDir.create_new(out, lambda run_id: new_env(run_id, host()))
            run.lock()
            env = run.env()
        point_latest(out, run)
    except OSError as exc:
        raise UsageError(f"--out: cannot write {out}: {exc.strerror}") from None
    except RunDirError as exc:
        raise UsageError(str(exc)) from None
    return run, runs, env


def run_suite(s: Settings, out: Path, resume: bool = False, dry_run: bool = False,
              report: bool = True,
              only: Callable[[list[Planned]], list[Planned]] | None = None) -> int:
    """The `run` command. Returns the exit status: 0 when every row is ok or
    skipped, 1 otherwise, ALL_SKIPPED (3) when every row is skipped: nothing
    was measured (the reasons and what would set each up are printed).
    only: the part of the plan this invocation runs (a cluster's task: its
    replicate, slurm_task.py)."""
    impls = resolve(s.impls, s.registries, Path(s.source) if s.source else None)
    gate = _gate(s, impls)  # bad input: said before anything is written
    past = earlier_runs(out)
    planned = _planned(s, impls, past, out, only)
    if dry_run:
        _print_dry_run(s, gate, planned)
        return 0
    try:
        ensure_launcher()
    except LauncherError as exc:
        raise HarnessError(str(exc)) from None
    perf = find_perf() if s.counters else None

    run, runs, env = _open(out, planned.runs, resume, s.suite)
    ticks = start_run(env, s, impls, planned.recorded, resume)
    write_env(run, env)
    estimates = [planned.estimates[p.row_key] for p in runs]
    # --resume with a budget: the runs recorded already spent part of it
    spent = sequential.spent_before(run.runs().rows) if resume and s.budget_s else 0.0
    _announce(s, planned, runs, estimates, gate, run, spent)

    progress = Progress(len(runs), estimates)
    measured = _measure(s, run, runs, planned, past, gate, perf, progress, spent)
    if isinstance(measured, int):
        return measured
    end_run(env, impls, ticks)
    write_env(run, env)
    counts = measured.counts
    if any(p.until_settled for p in planned.runs):
        print("; ".join(filter(None, [measured.budget.stopped if measured.budget is not None
                                      else "", sequential.forecast(run.runs().rows, planned.runs)])))
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing new"
    print(f"done: {summary}; rows in {relative(run.runs_path)}")
    if report and (stopped := _report_unless_stopped(run)):
        return stopped
    if counts and set(counts) == {Status.SKIPPED}:
        print("harness: nothing was measured: every run was skipped (exit status "
              f"{ALL_SKIPPED})", file=sys.stderr)
        for line in measured.prepared.hints():
            print(f"  {line}", file=sys.stderr)
        return ALL_SKIPPED
    if gate is not None and measured.gating is not None:
        return _gate_status(s, gate[0], run, measured.gating.stopped)
    return 0 if set(counts) <= {Status.OK, Status.SKIPPED} else 1


def _print_dry_run(s: Settings, gate: tuple[str, Noise | None] | None, planned: RunPlan) -> None:
    """run --dry-run's printout: the plan, its builds and, with --gate, the
    gate's plan."""
    first, *rest = planned.dry_run
    print("\n".join([f"{first}; {_builds(planned.runs, s.build) or 'no builds'}",
                     *([f"then {_gate_plan(s, gate, planned.runs, planned.estimates)}"]
                       if gate else []), *rest]))


def _report_unless_stopped(run: RunDir) -> int:
    """Write the run's report: 0, or 128 + the signal that stopped it (every
    row is kept, and the command that writes it is said)."""
    try:
        with interruptible():
            write_report(run.path)
    except Interrupted as exc:  # the report process dies with it (children.py)
        print(f"\ninterrupted while writing the report; every row is kept: write it with "
              f"`python -m harness report {relative(run.path)}`", file=sys.stderr)
        return 128 + exc.signum
    return 0


def _planned(s: Settings, impls: list[Impl], past: list[Row], out: Path,
             only: Callable[[list[Planned]], list[Planned]] | None) -> RunPlan:
    """The run's plan, its notes said; refused when nothing would run."""
    published = published_timings.newest(ROOT / "docs" / "results", s.suite)
    planned = plan_run(impls, s, past, out, only,
                       (published.times, published.source) if published else None)
    # a release that does not exist is bad input: said before anything is written
    for line in check_releases(impls):
        print(f"note: {line}", file=sys.stderr)
    for line in planned.notes:
        print(line, file=sys.stderr)
    if not planned.runs:
        raise UsageError("nothing to run: no selected implementation supports those workloads")
    return planned


def _announce(s: Settings, planned: RunPlan, runs: list[Planned], estimates: list[float],
              gate: tuple[str, Noise | None] | None, run: RunDir, spent: float) -> None:
    """What will run, for how long (spent: the budget's seconds a resumed
    run's rows took), and where it is recorded."""
    builds = _builds(runs, s.build, [lang for lang in languages([p.impl for p in runs])
                                     if detect_toolchain(lang).present])
    minimum = sum(estimates)
    print(f"{len(runs)} runs of {len({p.impl.id for p in runs})} implementations, "
          f"{estimated(minimum, minimum if spent else planned.expected_s)}; "
          f"{planned.basis}" + (f"; {builds}" if builds else ""))
    if spent:  # the plan's line is the whole run's: what is left of it
        print(f"resumed: {len(run.runs().rows)} runs recorded took {fmt_duration(spent)} of the "
              f"budget of {fmt_duration(s.budget_s)}; {len(runs)} runs of the minimum left "
              f"(about {fmt_duration(sum(estimates))}), at most about "
              f"{fmt_duration(max(sum(estimates), s.budget_s - spent))} with the passes")
    elif planned.sequential:
        print(f"that is {planned.sequential}")
    if gate:
        print(f"then {_gate_plan(s, gate, planned.runs, planned.estimates)}")
    print(f"recording to {relative(run.path)}")


@dataclass(frozen=True)
class _Measured:
    """What measuring left: each status's count, the builds (their hints
    when every run was skipped), and the rule that stopped the passes."""
    counts: dict[Status, int]
    prepared: Preparation
    budget: sequential.Budgeted | None
    gating: ab_gate.Gate | None


def _measure(s: Settings, run: RunDir, runs: list[Planned], planned: RunPlan, past: list[Row],
             gate: tuple[str, Noise | None] | None, perf: str | None,
             progress: Progress, spent: float) -> _Measured | int:
    """The builds and the runs, pass after pass; an exit status instead
    when a signal stopped them or a row could not be written."""
    may_run = runs + planned.extra
    try:
        with interruptible():
            # every runtime's version command, after its build and installs
            # (a release's is its own program) and before its first measured
            # run; a check's runs start as their language is built
            # (overlap_builds), beside the builds still going on
            prepared = Preparation([p.impl for p in may_run], run.path, s.build,
                                   any(p.workload.kind == "server" for p in may_run),
                                   progress.message, overlap=s.overlap_builds,
                                   board=progress.beside() if s.overlap_builds else None)

            def wait() -> None:
                progress.waiting()
                prepared.wait()

            # the budget counts from here: after the builds, from the first run
            budget = (sequential.Budgeted(s.budget_s, spent_s=spent)
                      if s.budget_s and not gate else None)
            gating = (ab_gate.Gate(gate[0], s.gate, s.max_repeat or s.repeat,
                                   s.budget_s or 0.0, gate[1]) if gate else None)
            counts = execute_until_settled(
                run, runs, planned.runs, gating or budget or sequential,
                lambda p: prepared.readiness(p.impl, p.key.workload, p.workload.kind == "server"),
                ProcessExecutor(run.name, s, lambda: prepared.loadgen, perf), progress,
                # a gate's extra run: its configuration's first run's estimate
                lambda p: planned.estimates.get(p.row_key, planned.estimates[(p.key, 1)]),
                past, wait)
            prepared.finish()
    except Interrupted as exc:
        progress.close()
        kept_rows = len(run.runs().rows)
        print(f"\ninterrupted: {kept_rows} completed rows kept in {relative(run.runs_path)}; "
              f"continue with --resume", file=sys.stderr)
        return 128 + exc.signum
    except RowWriteError as exc:
        progress.close()
        figures = {k: v for k, v in exc.row.as_dict().items() if v not in (None, "")}
        print(f"harness: error: {exc}\nharness: the lost row's figures: {json.dumps(figures)}",
              file=sys.stderr)
        return 1
    finally:
        progress.close()
    return _Measured(counts, prepared, budget, gating)


def _gate(s: Settings, impls: list[Impl]) -> tuple[str, Noise | None] | None:
    """run --gate: the baseline (the first of the two implementations) and
    the calibration's noise; None without a gate."""
    if s.gate is None:
        return None
    if len(impls) != 2:
        raise UsageError(f"--gate compares two implementations, the baseline first (e.g. "
                         f"--impl X@git:BASE,X@git:HEAD): --impl names {len(impls)}"
                         + (f" ({', '.join(i.id for i in impls)})" if impls else ""))
    return impls[0].id, (calibration_noise(open_run_dir(s.calibration).path) if s.calibration
                         else None)


def _gate_plan(s: Settings, gate: tuple[str, Noise | None], runs: list[Planned],
               estimates: dict[RowKey, float]) -> str:
    """What the gate adds after the minimum, in words, with the most runs
    and time it may take (ab_gate.most_runs)."""
    most, seconds = ab_gate.most_runs(runs, lambda p: estimates[p.row_key],
                                      s.max_repeat or s.repeat, s.budget_s or 0.0)
    return (f"--gate {fmt_percent(s.gate or 0)}: the configurations with a figure undecided "
            f"against {gate[0]} run again on both sides, up to {s.max_repeat} runs a side, within "
            f"a budget of {fmt_duration(s.budget_s or 0)} for all the runs: at most {most} runs "
            f"({len(runs)} of the minimum, then up to {most - len(runs)} more), about "
            f"{fmt_duration(seconds)} of runs at most"
            + (f"; the figures calibration run {gate[1].source} cannot gate are named, not "
               "gated" if gate[1] is not None else ""))


def _gate_status(s: Settings, baseline: str, run: RunDir, stopped: str) -> int:
    """The gate's table and decision, as compare --baseline prints them; its
    exit status is the run's: 0 pass, 1 fail, 3 undecided."""
    verdict = compare_baseline(run.path, baseline, s.gate,
                               calibration=Path(s.calibration) if s.calibration else None)
    # the command that prints it again, in any --format (a job summary's github)
    again = ["compare", relative(run.path), "--baseline", baseline,
             "--fail-above", fmt_percent(s.gate or 0)]
    again += ["--calibration", s.calibration] if s.calibration else []
    print(f"\nthe gate, as {shlex.join(again)} prints it:")
    print(render(verdict))
    if stopped:
        print(stopped)
    return verdict.exit_status


def write_report(run_dir: Path) -> None:
    """report.md and plots, drawn in a separate process: the measuring
    process never imports matplotlib."""
    from .processes.children import run_contained  # contained: it dies with the harness
    proc = run_contained([sys.executable, "-m", "harness", "report", str(run_dir)], ROOT,
                         capture=False)
    if proc.returncode != 0:
        print("harness: the report could not be written (the rows are kept)", file=sys.stderr)
