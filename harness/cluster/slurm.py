"""`run --on slurm`: the plan measured as replicates on a Slurm cluster's
nodes, then merged into one run directory (docs/usage.md, "On a cluster").

R replicates (the plan's repeats: --repeat, or the suite's) are the R
tasks of one job array, at most --nodes K of them at once, each on a whole
node (--exclusive): every replicate is the whole plan once, in its usual
interleaved order (replicates.py), so no comparison between two
implementations is ever one between two nodes. A build job on one node of
the partition builds everything first; the array waits for it (afterok).
The harness waits, saying how many tasks are pending, running, done and
failed, then merges every replicate's rows into the run directory, each
with its node and machine kind (merge.merge_replicates), and a row with a
status for every planned run that no replicate recorded (a task that
failed, was cancelled or never started). --resume submits again only the
replicates that have a planned run without an ok row.

Its modules: sbatch.py (Slurm's commands), layout.py (the run
directory's files and the records the jobs write), waiting.py (the queue
watched), replicate_rows.py (the rows merged, and those no replicate
recorded); this one checks the options, submits and merges.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import ROOT, UsageError, relative
from ..core.envinfo import git, host
from ..core.formatting import fmt_duration
from ..core.registry import languages, resolve
from ..core.schema import Env, Row, Status, row_key, utc_now
from ..execute.builder import BUILD_TIMEOUT_S
from ..plan.options import Options
from ..plan.plan import Planned, estimate_s, history_from, plan
from ..plan.settings import MAX_REPEAT, Settings
from ..processes.interrupts import Interrupted, interruptible
from ..record.merge import merge_replicates, replicates_env
from ..record.rundir import (RunDir, RunDirError, add_invocation, check_out, earlier_runs,
                             end_invocation, invocation, latest, new_env, point_latest)
from ..session import ALL_SKIPPED, run_suite, write_report
from .layout import (OPTIONS_ENV, BuildRecord, Layout, masked, options_json, write_json,
                     write_scripts)
from .replicate_rows import collect, failure_rows
from .replicates import complete, count, replicate
from .sbatch import JobState, Scheduler, Slurm, ranges
from .slurm_options import check as check_slurm_opt
from .waiting import POLL_S, Submission, wait

PLACES = ("local", "slurm")
# Per planned run, beyond its timeout: the process's start, validation, the row.
RUN_OVERHEAD_S = 10.0
TOKENS = ROOT / ".tools" / "slurm-builds"  # the build job's tokens: a task seeing one shares its folder


@dataclass(frozen=True)
class Cluster:
    """Where a run goes: --partition (None: the cluster's default), --nodes
    (the most replicates at once) and --slurm-opt (for every sbatch)."""
    partition: str | None
    nodes: int
    sbatch: tuple[str, ...]


def cluster_options(opts: Options) -> Cluster | None:
    """The cluster a `run` goes to, from its options (None: this machine).
    Bad input is a UsageError."""
    place = opts.on
    given = [name for value, name in ((opts.partition, "--partition"), (opts.nodes, "--nodes"),
                                      (opts.slurm_opt, "--slurm-opt")) if value is not None]
    if place is None or place == "local":
        if given:
            raise UsageError(f"{given[0]} is for --on slurm")
        return None
    if place not in PLACES:
        raise UsageError(f"--on {place!r}: unknown (known: {', '.join(PLACES)})")
    for value, name in ((opts.until_ci, "--until-ci"), (opts.until_settled, "--until-settled"),
                        (opts.max_repeat, "--max-repeat")):
        if value:
            raise UsageError(f"{name} picks runs from every node's rows as they come; --on slurm "
                             f"runs whole replicates of the plan: give --repeat instead")
    nodes = opts.nodes
    if nodes is not None and nodes < 1:
        raise UsageError("--nodes must be a positive integer")
    if nodes is not None and nodes > MAX_REPEAT:
        # a replicate a node at most, and a run has at most MAX_REPEAT replicates
        raise UsageError(f"--nodes {nodes}: from 1 to {MAX_REPEAT} (a run's most replicates, "
                         f"each on one node)")
    partition = opts.partition
    if partition is not None and (not partition.strip() or any(c in partition for c in ", \t\n")):
        raise UsageError(f"--partition {partition!r}: name one partition (one machine kind; "
                         f"run each kind on its own and `harness merge` the runs)")
    try:
        extra = shlex.split(opts.slurm_opt or "")
    except ValueError as exc:
        raise UsageError(f"--slurm-opt: {exc}") from None
    check_slurm_opt(extra)
    return Cluster(partition, nodes or 1, tuple(extra))


# ---------------------------------------------------------------- the submission

def task_options(options: Options) -> Options:
    """The options each task gives settings_from again on its node, its
    paths absolute (a task starts in the repository, not here)."""
    source = str(Path(options.source).expanduser().resolve()) if options.source else options.source
    return dataclasses.replace(options, source=source,
                               registry=tuple(str(Path(f).resolve()) for f in options.registry))


def minutes(seconds: float) -> int:
    return max(1, math.ceil(seconds / 60))


def time_limits(runs: list[Planned], s: Settings) -> tuple[int, int]:
    """(the build job's, a task's) --time in minutes, from the bounds
    already in force: each build step's BUILD_TIMEOUT_S, each run's timeout.
    A task may build too, where the build folder is not shared."""
    langs = len(languages([p.impl for p in runs])) + any(p.workload.kind == "server" for p in runs)
    build_s = langs * 2 * BUILD_TIMEOUT_S  # a set-up and a compile each
    measure_s = max((sum(p.timeout_s + RUN_OVERHEAD_S for p in replicate(runs, r))
                     for r in range(1, count(runs) + 1)), default=0.0)
    return minutes(build_s + 60), minutes(measure_s + (build_s if s.build else 0) + 60)


def sbatch_options(layout: Layout, cluster: Cluster, run_id: str, numbers: list[int],
                   limits: tuple[int, int]) -> tuple[list[str], list[str]]:
    """(the build job's, the array's) sbatch options; --slurm-opt last, so
    that its --time, say, wins."""
    common = ["--nodes=1", "--ntasks=1", "--exclusive", f"--chdir={ROOT}"]
    if cluster.partition:
        common.append(f"--partition={cluster.partition}")
    build = [f"--job-name=bench-{run_id}-build", *common, f"--time={limits[0]}",
             f"--output={layout.slurm}/build-%j.out", *cluster.sbatch]
    array = [f"--job-name=bench-{run_id}", f"--array={ranges(numbers)}%{cluster.nodes}", *common,
             f"--time={limits[1]}", f"--output={layout.tasks}/%a/slurm-%A_%a.out", *cluster.sbatch]
    return build, array


# ---------------------------------------------------------------- the command

def run_on_slurm(s: Settings, cluster: Cluster, opts: Options, out: Path,
                 resume: bool = False, dry_run: bool = False, report: bool = True,
                 scheduler: Callable[[], Scheduler] = Slurm, poll_s: float = POLL_S) -> int:
    """`run --on slurm`. Returns the exit status as a local run's: 0 when
    every row is ok or skipped, 1 otherwise, 3 when every row is skipped;
    128 + the signal when interrupted (the jobs are cancelled)."""
    impls = resolve(s.impls, s.registries, Path(s.source) if s.source else None)
    runs = plan(impls, s)
    if not runs:
        raise UsageError("nothing to run: no selected implementation supports those workloads")
    if dry_run:
        _describe(s, cluster, runs, out)
        return _dry_run(s, cluster, runs, out)
    sched = _cluster(scheduler, cluster)  # a missing command or partition: said before anything
    _describe(s, cluster, runs, out)
    run, layout, env = _open(out, resume, sched)
    inv = invocation(sys.argv, resume, git(), [i.id for i in impls], s.record(), None)
    add_invocation(env, inv)
    run.write_env(env)
    print(f"recording to {relative(run.path)}")
    total = count(runs)
    numbers = [r for r in range(1, total + 1)
               if not complete(replicate(runs, r), _task_rows(layout, r))]
    if resume:
        print(f"resuming {run.name}: replicate{'s' if len(numbers) != 1 else ''} "
              f"{ranges(numbers) or 'none'} to run again, {total - len(numbers)} complete")
        # their rows not ok go to retried.csv, as a local --resume's
        run.prepare_resume({row_key(row) for row in run.runs().rows if row.rep in numbers})
    write_json(layout.options_path, masked(options_json(task_options(opts))))
    write_scripts(layout)
    build, tasks, interrupted = _submit_and_wait(sched, layout, cluster, run.name, numbers,
                                                 runs, s, opts, poll_s)
    found = collect(layout, range(1, total + 1))
    failures = [] if interrupted else failure_rows(layout, runs, found, run.name, build, tasks)
    end_invocation(inv)
    rows = merge_replicates(run, found, failures, replicates_env(run.name, env, found))
    _forget_token(layout)
    if interrupted:
        print(f"\ninterrupted: the jobs were cancelled; the {len(rows)} rows of the replicates "
              f"that finished are kept in {relative(run.runs_path)}; continue with --resume",
              file=sys.stderr)
        return 128 + interrupted
    nodes = sorted({rep.node for rep in found if rep.node})
    return _done(run, rows, f"{len(found)} of {total} replicates recorded "
                 f"(node{'s' if len(nodes) != 1 else ''} {', '.join(nodes) or 'none'})", report)


def _submit_and_wait(sched: Scheduler, layout: Layout, cluster: Cluster, run_id: str,
                     numbers: list[int], runs: list[Planned], s: Settings, opts: Options,
                     poll_s: float) -> tuple[JobState | None, dict[int, JobState | None], int]:
    """Submit the build job and the replicates `numbers` as an array, and wait
    for them: (the build job's state, each task's, 0 or the signal that
    interrupted the wait, the jobs then cancelled)."""
    build: JobState | None = None
    tasks: dict[int, JobState | None] = {}
    if not numbers:
        return build, tasks, 0
    for r in numbers:
        layout.task_dir(r).mkdir(parents=True, exist_ok=True)
    layout.build_path.unlink(missing_ok=True)  # this submission's build job writes it
    submitted: list[Submission] = []
    try:
        with interruptible():
            submitted.append(_submit(sched, layout, cluster, run_id, numbers,
                                     time_limits(runs, s), s.build,
                                     {OPTIONS_ENV: json.dumps(options_json(task_options(opts)))}))
            build, tasks = wait(sched, layout, submitted[0], poll_s)
    except Interrupted as exc:
        for sub in submitted:
            sched.cancel([j for j in (sub.build, sub.array) if j])
        return build, tasks, exc.signum
    return build, tasks, 0


def _done(run: RunDir, rows: list[Row], recorded: str, report: bool) -> int:
    """Say what the rows came to (recorded: which replicates, where), write
    the report, and give the exit status of a local run with those rows."""
    counts: dict[Status, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    print(f"done: {', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'no rows'}; "
          f"{recorded}; rows in {relative(run.runs_path)}")
    if report:
        write_report(run.path)
    if counts and set(counts) == {Status.SKIPPED}:
        print(f"harness: nothing was measured: every run was skipped (exit status "
              f"{ALL_SKIPPED})", file=sys.stderr)
        return ALL_SKIPPED
    return 0 if set(counts) <= {Status.OK, Status.SKIPPED} else 1


def _describe(s: Settings, cluster: Cluster, runs: list[Planned], out: Path) -> None:
    """What will run where, and what --on slurm leaves out, before it runs."""
    if s.until_settled or any(s.target(part) is not None for part in s.parts):
        print("note: --on slurm: the suite's until_settled or until_ci adds no runs on a "
              "cluster (each replicate is the plan once, on one node): give --repeat for more "
              "replicates", file=sys.stderr)
    total = count(runs)
    if cluster.nodes > total:
        print(f"note: --nodes {cluster.nodes}: {total} replicate{'s' if total != 1 else ''}, so "
              f"at most {total} node{'s' if total != 1 else ''} at once", file=sys.stderr)
    elif 1 < cluster.nodes and total < 2 * cluster.nodes:
        # Ratios pair runs within a node (docs/statistics.md, "Blocks"): with
        # one run a side on each node the smallest p is 2^-K two-sided, and
        # the family cannot settle a verdict from four nodes of that.
        print(f"note: --nodes {cluster.nodes} with {total} replicates: a node may hold one run "
              f"of each configuration, and ratios pair runs within a node, so verdicts may never "
              f"settle; give --repeat {2 * cluster.nodes} or more (2 a node), or fewer --nodes",
              file=sys.stderr)
    history = history_from(earlier_runs(out))
    block = replicate(runs, 1)
    where = f"partition {cluster.partition}" if cluster.partition else "the default partition"
    print(f"{total} replicate{'s' if total != 1 else ''} of {len(block)} runs "
          f"({len({p.impl.id for p in runs})} implementations), each one task of a Slurm job "
          f"array on a whole node of {where}, at most {min(cluster.nodes, total)} at once; "
          f"estimated {fmt_duration(sum(estimate_s(p, history) for p in block))} a replicate")


def _dry_run(s: Settings, cluster: Cluster, runs: list[Planned], out: Path) -> int:
    """The sbatch commands a run would give (RUN: its directory), and a
    replicate's plan."""
    build, array = sbatch_options(Layout(out / "RUN"), cluster, "RUN",
                                  list(range(1, count(runs) + 1)), time_limits(runs, s))
    if s.build:
        print(f"  sbatch {shlex.join(build)} RUN/slurm/build.sh")
        array.append("--dependency=afterok:BUILD_JOB")
    print(f"  sbatch {shlex.join(array)} RUN/slurm/task.sh")
    print("each replicate runs:")
    return run_suite(s, out, dry_run=True, only=lambda planned: replicate(planned, 1))


def _cluster(scheduler: Callable[[], Scheduler], cluster: Cluster) -> Scheduler:
    """The scheduler, its commands found and the partition known to it, or
    a UsageError before anything is written."""
    sched = scheduler()
    partitions = sched.partitions()
    if cluster.partition is not None and cluster.partition not in partitions:
        raise UsageError(f"--partition {cluster.partition}: no such partition (sinfo lists "
                         f"{', '.join(partitions) or 'none'})")
    if cluster.partition is None and not any(partitions.values()):
        raise UsageError(f"this cluster has no default partition: give --partition (one of "
                         f"{', '.join(partitions) or 'none'})")
    return sched


def _task_rows(layout: Layout, r: int) -> list[Row]:
    run = latest(layout.task_dir(r))
    try:
        return run.runs().rows if run is not None else []
    except RunDirError:
        return []


def _open(out: Path, resume: bool, sched: Scheduler) -> tuple[RunDir, Layout, Env]:
    """The run directory (new, or OUT's newest for --resume), held by this
    process, and its env.json so far."""
    try:
        check_out(out)
        if resume:
            run = latest(out)
            if run is None or not Layout(run.path).options_path.is_file():
                raise UsageError(f"--resume: no earlier run --on slurm in {out} (its newest run "
                                 f"has no slurm/ folder: resume it without --on slurm)")
            Layout(run.path).check_records()  # a wrong shape: refused before the lock
            run.lock()
            active = [j for sub in Layout(run.path).jobs() for j in (sub.get("build"), sub["array"])
                      if j]
            listed = sched.states(active) if active else []
            if listed is None or any(not state.ended for state in listed):
                raise UsageError(f"--resume: jobs of {run.name} are still queued or running "
                                 f"(squeue --jobs {','.join(active)}): wait for them, or scancel")
        else:
            run = RunDir.create_new(out, lambda run_id: new_env(run_id, host()))
            run.lock()
        point_latest(out, run)
        layout = Layout(run.path)
        layout.slurm.mkdir(exist_ok=True)
        layout.tasks.mkdir(exist_ok=True)
        return run, layout, run.env()
    except OSError as exc:
        raise UsageError(f"--out: cannot write {out}: {exc.strerror}") from None
    except RunDirError as exc:
        raise UsageError(str(exc)) from None


def _submit(sched: Scheduler, layout: Layout, cluster: Cluster, run_id: str, numbers: list[int],
            limits: tuple[int, int], build: bool, env: dict[str, str]) -> Submission:
    """The build job (unless --no-build), then the array, which starts only
    once the build job succeeded (and is cancelled if it fails)."""
    build_opts, array_opts = sbatch_options(layout, cluster, run_id, numbers, limits)
    build_job = sched.submit(build_opts, layout.build_script, env) if build else None
    if build_job is not None:
        array_opts += [f"--dependency=afterok:{build_job}", "--kill-on-invalid-dep=yes"]
    try:
        array = sched.submit(array_opts, layout.task_script, env)
    except BaseException:  # sbatch refused the array, or the harness was stopped meanwhile
        if build_job is not None:
            sched.cancel([build_job])
        raise
    sub = Submission(build_job, array, numbers)
    write_json(layout.jobs_path, {"submissions": layout.jobs() + [
        {"submitted_at": utc_now(), "build": build_job, "array": array, "replicates": numbers}]})
    print("submitted " + (f"build job {build_job}, then " if build_job else "")
          + f"array job {array}: replicates {ranges(numbers)}")
    return sub


def _forget_token(layout: Layout) -> None:
    """The build job's token, once every task has read it."""
    token = (layout.build_record() or BuildRecord()).token
    if isinstance(token, str) and token.isalnum():
        (TOKENS / token).unlink(missing_ok=True)
