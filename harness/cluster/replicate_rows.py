"""The rows a cluster's run merges: each replicate's as its task left
them, and a row with a status and the reason for every planned run that
no replicate recorded (a task that failed, was cancelled or never
started, or a language the build job could not build)."""

from __future__ import annotations

import sys
from typing import Iterable

from .. import relative
from ..core.schema import Row, Status
from ..execute.executor import make_row
from ..execute.toolchains import detect_runtime
from ..plan.plan import Planned
from ..record.merge import Replicate
from ..record.rundir import RunDirError, latest
from .layout import BuildRecord, Layout, TaskRecord, failed_builds
from .replicates import missing, replicate
from .sbatch import JobState, last_line


def collect(layout: Layout, numbers: Iterable[int]) -> list[Replicate]:
    """Each replicate's run directory as its task left it (none: never started)."""
    found = []
    for r in numbers:
        run = latest(layout.task_dir(r))
        if run is None:
            continue
        try:
            table = run.runs()
            env, samples = run.env(), run.samples()
        except RunDirError as exc:
            print(f"note: replicate {r}: {exc}; its rows are left out", file=sys.stderr)
            continue
        if table.torn:
            print(f"note: replicate {r}: {table.torn}", file=sys.stderr)
        node = layout.task_record(r).node or env.host.get("hostname") or ""
        found.append(Replicate(r, node, env, table.rows, samples, run.path))
    return found


def failure_rows(layout: Layout, runs: list[Planned], found: list[Replicate], run_id: str,
                 build: JobState | None, tasks: dict[int, JobState | None]) -> list[Row]:
    """A row for every planned run of these replicates that no replicate
    recorded, with the status and the reason: the build job's failure for
    what it could not build, else how the task ended (a Slurm time limit is
    a timeout, its memory limit an oom, anything else a crash)."""
    by_number = {rep.number: rep for rep in found}
    kinds = {rep.machine for rep in found}
    build_info = layout.build_record() or BuildRecord()
    failed_langs, failed_impls = failed_builds(build_info)
    rows = []
    for r in tasks:
        rep = by_number.get(r)
        record = layout.task_record(r)
        tail = layout.output_tail(layout.task_dir(r), f"slurm-*_{r}.out")
        gone = missing(replicate(runs, r), rep.rows if rep else [])
        for p in gone:
            detect_runtime(p.impl)  # the runtime column, as found here
            node = (rep.node if rep else record.node) or None
            machine = rep.machine if rep else (next(iter(kinds)) if len(kinds) == 1 else None)
            built_by_job = record.build != "task"
            if built_by_job and (p.impl.language.name in failed_langs or p.impl.id in failed_impls):
                ready = (build_info.impls[p.impl.id] if p.impl.id in failed_impls
                         else build_info.languages[p.impl.language.name])
                rows.append(make_row(run_id, p, ready.status, error=(
                    f"{ready.reason} (the build job on {build_info.node}: "
                    f"{relative(layout.slurm)})"), node=node, machine=machine))
                continue
            status, error = task_failure(layout, r, record, tasks[r], build, tail)
            rows.append(make_row(run_id, p, status, error=error, stderr_tail=tail or None,
                                 node=node, machine=machine))
    return rows


def task_failure(layout: Layout, r: int, record: TaskRecord, state: JobState | None,
                 build: JobState | None, tail: str) -> tuple[Status, str]:
    """(status, error) of the runs a replicate's task left without a row."""
    limit = (state is not None and state.state in ("TIMEOUT", "DEADLINE")) or "DUE TO TIME LIMIT" in tail
    oom = state is not None and state.state == "OUT_OF_MEMORY"
    status = Status.TIMEOUT if limit else Status.OOM if oom else Status.CRASHED
    ended = state.state if state is not None else "forgotten by the controller"
    if not record.node:
        error = f"replicate {r} never started: its array task ended {ended}"
        if state is not None and state.reason not in ("", "None"):
            error += f" ({state.reason})"
        if build is not None and build.ended and build.state != "COMPLETED":
            out = last_line(layout.output_tail(layout.slurm, f"build-{build.job}.out"))
            error += f"; the build job {build.job} ended {build.state}: {out}"
        return status, error
    how = f"Slurm: {ended}" + (f", harness exit {record.exit}" if record.exit is not None else "")
    cause = "stopped at its time limit (--slurm-opt='--time=...' gives more)" if limit else "ended"
    # slurmstepd's own line ("*** JOB 12 ON vm CANCELLED AT ... ***") says why, when there is one
    said = next((line for line in reversed(tail.splitlines()) if "***" in line), last_line(tail))
    return status, (f"replicate {r}'s task on {record.node} {cause} ({how}) before this run: "
                    f"{said.strip()}")
