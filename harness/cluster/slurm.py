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

The run directory (OUT/<run-id>/, OUT/latest pointing at it):

    runs.csv, samples.csv, env.json, report   the merged rows
    slurm/options.json       the run's options, credentials masked (the tasks get them
                             unmasked in their environment, BENCH_SLURM_OPTIONS)
    slurm/build.sh, task.sh  the batch scripts submitted (slurm_task.py does their work)
    slurm/jobs.json          every submission: its build job, its array, its replicates
    slurm/build.json         the build job's outcome: its node, each language's readiness
    slurm/build-JOB.out      the build job's output (and build-LANG.log, as a run's)
    tasks/R/                 replicate R's results folder: its run directory and latest,
                             task.json (node, exit status), slurm-JOB_R.out (its output)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from .. import ROOT, HarnessError, UsageError, relative
from ..execute.builder import BUILD_TIMEOUT_S, Readiness
from ..processes.children import run_contained
from ..core.envinfo import git, host, mask_text
from ..execute.executor import make_row
from ..execute.toolchains import detect_runtime
from ..core.formatting import fmt_duration
from ..processes.interrupts import Interrupted, interruptible
from ..record.merge import Replicate, merge_replicates, replicates_env
from ..plan.plan import Planned, estimate_s, history_from, plan
from ..execute.progress import StatusLine
from ..core.registry import languages, resolve
from .slurm_options import check as check_slurm_opt
from .replicates import complete, count, missing, replicate
from ..record.rundir import (RunDir, RunDirError, add_invocation, check_out, earlier_runs,
                             end_invocation, invocation, latest, new_env, point_latest)
from ..core.schema import Env, Row, row_key, utc_now
from ..session import ALL_SKIPPED, run_suite, write_report
from ..plan.options import Options
from ..plan.settings import MAX_REPEAT, Settings

PLACES = ("local", "slurm")
# The run's options reach each job in its environment (sbatch exports the
# submitter's): a credential in a variant's setting must reach the program,
# and never a file of the run directory (options.json is masked).
OPTIONS_ENV = "BENCH_SLURM_OPTIONS"
# What a task of this run is given again: every `run` option but these,
# which say where and how to run it, not what to measure.
SUBMIT_ONLY = ("on", "partition", "nodes", "slurm_opt", "out")
COMMANDS = ("sbatch", "squeue", "scancel", "sinfo")
COMMAND_TIMEOUT_S = 60  # one call of a Slurm command (a squeue that fails is asked again)
POLL_S = 3.0
# squeue failing this many times in a row (the controller down) ends the wait
POLL_FAILURES = 40
# A task that left the queue without its exit status in task.json is read
# again for this long: a shared file system may show the file late.
SETTLE_S = 30.0
# Per planned run, beyond its timeout: the process's start, validation, the row.
RUN_OVERHEAD_S = 10.0
# Exit statuses of a task's `run` that mean it recorded its replicate (ok,
# some rows failed, every row skipped): session.run_suite's.
RECORDED = (0, 1, 3)
PENDING = ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD")
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
         "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT")
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


# ---------------------------------------------------------------- the scheduler

@dataclass(frozen=True)
class JobState:
    """One job, or one task of an array, as squeue lists it."""
    job: str  # the job's id (an array task's: its array's)
    task: int | None  # an array task's index
    state: str  # Slurm's: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
    node: str
    reason: str

    @property
    def ended(self) -> bool:
        return self.state in ENDED


class Scheduler(Protocol):
    """The cluster, as the harness uses it; Slurm's commands are the real
    one, and a test may put a fake in its place."""

    def partitions(self) -> dict[str, bool]:
        """Each partition's name, and whether it is the default."""

    def submit(self, options: list[str], script: Path, env: dict[str, str]) -> str:
        """sbatch, with env added to the environment the job gets: the job's id."""

    def states(self, jobs: list[str]) -> list[JobState] | None:
        """The jobs and array tasks the controller still knows, ended ones
        too; None when it could not be asked."""

    def cancel(self, jobs: list[str]) -> None:
        """scancel: every task of these jobs."""


class Slurm:
    """Slurm's own commands, each run contained and bounded in time."""

    def __init__(self) -> None:
        for name in COMMANDS:
            if shutil.which(name) is None:
                raise UsageError(f"--on slurm: no {name} on PATH: run from a host with Slurm's "
                                 f"commands (Debian's slurm-client), or start a one-node cluster "
                                 f"here with cluster/slurm-local.sh up")

    def _call(self, argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
        done = run_contained(argv, ROOT, timeout_s=COMMAND_TIMEOUT_S,
                             env=os.environ | env if env else None)
        err = done.stderr.strip() or ("timed out" if done.timed_out else "")
        return done.returncode, done.stdout, err

    def partitions(self) -> dict[str, bool]:
        code, out, err = self._call(["sinfo", "--noheader", "--format=%P"])
        if code != 0:
            raise HarnessError(f"sinfo: {last_line(err)}: is the Slurm controller up?")
        names = [line.strip() for line in out.splitlines() if line.strip()]
        return {name.rstrip("*"): name.endswith("*") for name in names}

    def submit(self, options: list[str], script: Path, env: dict[str, str]) -> str:
        code, out, err = self._call(["sbatch", "--parsable", *options, str(script)], env)
        if code != 0:
            raise HarnessError(f"sbatch refused the job: {last_line(err)}")
        return out.strip().split(";")[0]

    def states(self, jobs: list[str]) -> list[JobState] | None:
        code, out, err = self._call(["squeue", "--noheader", "--array", "--states=all",
                                     f"--jobs={','.join(jobs)}", "--format=%F|%K|%T|%N|%r"])
        if code != 0:
            # every one of them ended long enough ago to be forgotten (MinJobAge)
            return [] if "Invalid job id" in err else None
        found = []
        for line in out.splitlines():
            fields = line.strip().split("|")
            if len(fields) == 5:
                job, task, state, node, reason = fields
                found.append(JobState(job, int(task) if task.isdigit() else None,
                                      state.split()[0], node, reason))
        return found

    def cancel(self, jobs: list[str]) -> None:
        self._call(["scancel", *jobs])


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


# ---------------------------------------------------------------- the run directory

class Layout:
    """The files of a run on a cluster, in its run directory (above)."""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.slurm = run / "slurm"
        self.tasks = run / "tasks"
        self.options_path = self.slurm / "options.json"
        self.jobs_path = self.slurm / "jobs.json"
        self.build_path = self.slurm / "build.json"
        self.build_script = self.slurm / "build.sh"
        self.task_script = self.slurm / "task.sh"

    def task_dir(self, r: int) -> Path:
        return self.tasks / str(r)

    def task_path(self, r: int) -> Path:
        return self.task_dir(r) / "task.json"

    def options(self) -> Options:
        """The run's options, as the job's environment holds them."""
        try:
            options = json.loads(os.environ[OPTIONS_ENV])
        except (KeyError, ValueError):
            raise UsageError(f"no run options in this job's environment ({OPTIONS_ENV}): was it "
                             f"submitted with an sbatch --export that leaves it out?") from None
        if not isinstance(options, dict) or not all(
                v is None or isinstance(v, (bool, int, float, str))
                or isinstance(v, list) and all(isinstance(w, str) for w in v)
                for v in options.values()):
            raise UsageError(f"{OPTIONS_ENV} is not a JSON object of options (each a value or "
                             f"a list of strings)")
        return Options.from_record(options)

    def task_record(self, r: int) -> TaskRecord:
        return TaskRecord.of(read_json(self.task_path(r)), self.task_path(r))

    def build_record(self) -> BuildRecord | None:
        found = read_json(self.build_path)
        return BuildRecord.of(found, self.build_path) if found else None

    def jobs(self) -> list[dict[str, Any]]:
        """jobs.json's submissions, each checked: its build job (an id or
        null), its array's id and its replicates."""
        found = read_json(self.jobs_path).get("submissions", [])
        if not isinstance(found, list):
            raise UsageError(f"{self.jobs_path}: `submissions` is not a list")
        for sub in found:
            if not (isinstance(sub, dict) and isinstance(sub.get("array"), str)
                    and (sub.get("build") is None or isinstance(sub.get("build"), str))
                    and isinstance(sub.get("replicates"), list)
                    and all(type(r) is int for r in sub["replicates"])):
                raise UsageError(f"{self.jobs_path}: a submission is not {{\"build\": ID or null, "
                                 f"\"array\": ID, \"replicates\": [numbers]}}: {json.dumps(sub)[:80]}")
        return found

    def check_records(self) -> None:
        """Every record a --resume reads back, by shape, before it writes
        anything: jobs.json, build.json, each replicate's task.json."""
        self.jobs()
        self.build_record()
        for folder in sorted(self.tasks.iterdir()) if self.tasks.is_dir() else ():
            if folder.name.isdigit():
                self.task_record(int(folder.name))

    def output_tail(self, folder: Path, pattern: str, lines: int = 20) -> str:
        """The last lines of a job's output file (the newest that matches)."""
        found = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime)
        if not found:
            return ""
        try:
            text = found[-1].read_text(errors="replace")
        except OSError:
            return ""
        return "".join(text.splitlines(keepends=True)[-lines:])


def read_json(path: Path) -> dict[str, Any]:
    """A file this module wrote, or {} when it is absent or half-written;
    JSON that is not an object is no file of this module's: a UsageError."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a JSON object")
    return data


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Written aside and moved into place: a reader on another node never
    sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


@dataclass
class TaskRecord:
    """A replicate's task.json, written by its task (slurm_task.task): the
    node and job it ran as, how it built (job, task or none), and, once it
    ended, the harness's exit status."""
    node: str | None = None
    job: str | None = None
    started_at: str | None = None
    build: str | None = None
    exit: int | None = None
    finished_at: str | None = None

    @classmethod
    def of(cls, data: dict[str, Any], path: Path) -> TaskRecord:
        found = {f.name: data.get(f.name) for f in dataclasses.fields(cls)}
        for name, value in found.items():
            wanted = int if name == "exit" else str
            if value is not None and type(value) is not wanted:
                raise UsageError(f"{path}: {name} is {json.dumps(value)[:40]}, not "
                                 f"{'an integer' if wanted is int else 'a string'}")
        return cls(**found)

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass
class BuildRecord:
    """slurm/build.json, written by the build job (slurm_task.build): its
    node, the token a task that shares its checkout finds, and each
    language's and release's readiness."""
    node: str | None = None
    token: str | None = None
    finished_at: str | None = None
    languages: dict[str, Readiness] = dataclasses.field(default_factory=dict)
    impls: dict[str, Readiness] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, data: dict[str, Any], path: Path) -> BuildRecord:
        def ready(table: Any) -> dict[str, Readiness]:
            if not isinstance(table, dict) or not all(
                    isinstance(r, dict) and set(r) <= {"status", "reason"}
                    and all(isinstance(v, str) for v in r.values()) and "status" in r
                    for r in table.values()):
                raise UsageError(f"{path}: a readiness table is not {{NAME: {{\"status\": TEXT, "
                                 f"\"reason\": TEXT}}}}")
            return {name: Readiness(**r) for name, r in table.items()}
        texts = [data.get(BUILD_NODE), data.get(BUILD_TOKEN), data.get(BUILD_FINISHED)]
        if not all(v is None or isinstance(v, str) for v in texts):
            raise UsageError(f"{path}: its node, token and finished_at are not strings")
        return cls(*texts, ready(data.get(BUILD_LANGUAGES, {})),
                   ready(data.get(BUILD_IMPLS, {})))

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


BUILD_NODE, BUILD_TOKEN, BUILD_FINISHED, BUILD_LANGUAGES, BUILD_IMPLS = (
    f.name for f in dataclasses.fields(BuildRecord))


def failed_builds(build: BuildRecord | None) -> tuple[set[str], set[str]]:
    """The languages whose build failed in the build job, and the
    implementations (releases) it could not install: a task leaves them
    out, and the merge records that failure as their rows."""
    if not build:
        return set(), set()
    return ({name for name, r in build.languages.items() if r.status == "build-failed"},
            {name for name, r in build.impls.items() if not r.ready})


def masked(options: dict[str, Any]) -> dict[str, Any]:
    """The options as options.json records them: every credential masked."""
    def mask(value: Any) -> Any:
        if isinstance(value, str):
            return mask_text(value)
        return [mask(v) for v in value] if isinstance(value, list) else value
    return {k: mask(v) for k, v in options.items()}


def task_options(opts: Options) -> dict[str, Any]:
    """The options each task gives settings_from again on its node, its
    paths absolute (a task starts in the repository, not here)."""
    kept = {k: v for k, v in opts.record().items() if k not in SUBMIT_ONLY}
    kept["registry"] = [str(Path(f).resolve()) for f in kept.get("registry") or []]
    if kept.get("source"):
        kept["source"] = str(Path(kept["source"]).expanduser().resolve())
    return kept


def write_scripts(layout: Layout) -> None:
    """The batch scripts: each starts slurm_task.py with this Python, which
    must be at the same path on every node (a shared checkout, or one at the
    same place on each)."""
    start = f"exec {shlex.quote(sys.executable)} -m harness.cluster.slurm_task"
    run = shlex.quote(str(layout.run))
    for script, what, command in (
            (layout.build_script, "the build job: every language of the plan built once, "
                                  "before any replicate measures", f"{start} build {run}"),
            (layout.task_script, "replicate $SLURM_ARRAY_TASK_ID of the plan, on the node "
                                 "Slurm gave this task",
             f'{start} task {run} "$SLURM_ARRAY_TASK_ID"')):
        script.write_text(f"#!/bin/sh\n# Written by `python -m harness run --on slurm`: {what}\n"
                          f"# (harness/cluster/slurm_task.py; slurm/options.json holds the run's "
                          f"options).\n{command}\n")
        script.chmod(0o755)


def ranges(numbers: Iterable[int]) -> str:
    """1,2,3,5 -> '1-3,5' (an --array list)."""
    parts: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(parts)


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


# ---------------------------------------------------------------- waiting

@dataclass
class Submission:
    build: str | None
    array: str
    replicates: list[int]


class Tally:
    """The tasks' progress line: pending, running, done, failed."""

    def __init__(self, sub: Submission, layout: Layout) -> None:
        self.sub, self.layout = sub, layout
        self.line = StatusLine(sys.stdout)
        self.started = time.monotonic()
        self.last = ""

    def show(self, build: JobState | None, tasks: dict[int, JobState | None]) -> None:
        counts = dict.fromkeys(("pending", "running", "done", "failed"), 0)
        for r, state in tasks.items():
            counts[self.kind(r, state)] += 1
        text = (f"slurm job {self.sub.array}: {len(tasks)} replicate"
                f"{'s' if len(tasks) != 1 else ''}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
        if build is not None and not build.ended:
            text += f"; build job {self.sub.build} {build.state.lower()}" + (
                f" on {build.node}" if build.node else "")
        if self.line.tty:
            self.line.update(f"{text}  elapsed {fmt_duration(time.monotonic() - self.started)}")
        elif text != self.last:  # a log gets a line when something changed
            print(text, flush=True)
        self.last = text

    def kind(self, r: int, state: JobState | None) -> str:
        if state is not None and state.state in PENDING:
            return "pending"
        if state is not None and not state.ended:
            return "running"
        return "done" if self.layout.task_record(r).exit in RECORDED else "failed"

    def close(self) -> None:
        self.line.clear()


def wait(sched: Scheduler, layout: Layout, sub: Submission,
         poll_s: float = POLL_S) -> tuple[JobState | None, dict[int, JobState | None]]:
    """Until every task of the array has left the queue or ended: the build
    job's last state and each replicate's (None: forgotten by the
    controller, its task.json says the rest)."""
    jobs = [j for j in (sub.build, sub.array) if j]
    build: JobState | None = None
    tasks: dict[int, JobState | None] = dict.fromkeys(sub.replicates)
    tally = Tally(sub, layout)
    failures = 0
    try:
        while True:
            listed = sched.states(jobs)
            if listed is None:
                failures += 1
                if failures >= POLL_FAILURES:
                    raise HarnessError(f"squeue failed {failures} times in a row: the jobs may "
                                       f"still run; `run --on slurm --resume` merges what they "
                                       f"wrote and submits the rest")
                time.sleep(poll_s)
                continue
            failures = 0
            for state in listed:
                if state.job == sub.build:
                    build = state
                elif state.job == sub.array and state.task in tasks:
                    tasks[state.task] = state
            seen = {s.task for s in listed if s.job == sub.array}
            tally.show(build, tasks)
            # an array task the controller no longer lists has ended
            if all(r not in seen or (tasks[r] is not None and tasks[r].ended) for r in tasks):
                break
            time.sleep(poll_s)
    finally:
        tally.close()
    settle(layout, tasks)
    return build, tasks


def settle(layout: Layout, tasks: dict[int, JobState | None], settle_s: float = SETTLE_S) -> None:
    """A task that started but whose exit status is not in its task.json yet
    (a shared file system's cache) is read again, up to settle_s."""
    deadline = time.monotonic() + settle_s
    while time.monotonic() < deadline:
        late = [r for r in tasks if layout.task_record(r).node
                and layout.task_record(r).exit is None
                and (tasks[r] is None or tasks[r].state == "COMPLETED")]
        if not late:
            return
        time.sleep(1.0)


# ---------------------------------------------------------------- rows

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
                 build: JobState | None, tail: str) -> tuple[str, str]:
    """(status, error) of the runs a replicate's task left without a row."""
    limit = (state is not None and state.state in ("TIMEOUT", "DEADLINE")) or "DUE TO TIME LIMIT" in tail
    status = ("timeout" if limit else
              "oom" if state is not None and state.state == "OUT_OF_MEMORY" else "crashed")
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
    write_json(layout.options_path, masked(task_options(opts)))
    write_scripts(layout)
    build: JobState | None = None
    tasks: dict[int, JobState | None] = {}
    interrupted = 0
    if numbers:
        for r in numbers:
            layout.task_dir(r).mkdir(parents=True, exist_ok=True)
        layout.build_path.unlink(missing_ok=True)  # this submission's build job writes it
        submitted: list[Submission] = []
        try:
            with interruptible():
                submitted.append(_submit(sched, layout, cluster, run.name, numbers,
                                         time_limits(runs, s), s.build,
                                         {OPTIONS_ENV: json.dumps(task_options(opts))}))
                build, tasks = wait(sched, layout, submitted[0], poll_s)
        except Interrupted as exc:
            for sub in submitted:
                sched.cancel([j for j in (sub.build, sub.array) if j])
            interrupted = exc.signum
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
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    nodes = sorted({rep.node for rep in found if rep.node})
    print(f"done: {', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'no rows'}; "
          f"{len(found)} of {total} replicates recorded (node{'s' if len(nodes) != 1 else ''} "
          f"{', '.join(nodes) or 'none'}); rows in {relative(run.runs_path)}")
    if report:
        write_report(run.path)
    if counts and set(counts) == {"skipped"}:
        print(f"harness: nothing was measured: every run was skipped (exit status "
              f"{ALL_SKIPPED})", file=sys.stderr)
        return ALL_SKIPPED
    return 0 if set(counts) <= {"ok", "skipped"} else 1


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
