"""The files of a run on a cluster, in its run directory (OUT/<run-id>/),
and the records the jobs write there:

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
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import UsageError
from ..core.envinfo import mask_text
from ..core.schema import Status
from ..execute.builder import Readiness
from ..plan.options import Options, dimensions

# The run's options reach each job in its environment (sbatch exports the
# submitter's): a credential in a variant's setting must reach the program,
# and never a file of the run directory (options.json is masked).
OPTIONS_ENV = "BENCH_SLURM_OPTIONS"
# What a task of this run is given again: every `run` option but these,
# which say where and how to run it, not what to measure.
SUBMIT_ONLY = ("on", "partition", "nodes", "slurm_opt", "out")


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
            try:
                return {name: Readiness.of(**r) for name, r in table.items()}
            except ValueError as exc:
                raise UsageError(f"{path}: {exc}") from None
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
    return ({name for name, r in build.languages.items() if r.status == Status.BUILD_FAILED},
            {name for name, r in build.impls.items() if not r.ready})


def options_json(options: Options) -> dict[str, Any]:
    """The options a task is given (options.json, OPTIONS_ENV): each by
    argparse's name in the parser's order (the dimensions after --warmup-ms,
    as the parser adds them), but SUBMIT_ONLY's; Layout.options reads it."""
    record: dict[str, Any] = {}
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        if f.name == "params":
            record.update({name: options.params.get(name) for name in dimensions()})
        elif f.name not in SUBMIT_ONLY:
            record[f.name] = list(value) if isinstance(value, tuple) else value
    return record


def masked(options: dict[str, Any]) -> dict[str, Any]:
    """The options as options.json records them: every credential masked."""
    def mask(value: Any) -> Any:
        if isinstance(value, str):
            return mask_text(value)
        return [mask(v) for v in value] if isinstance(value, list) else value
    return {k: mask(v) for k, v in options.items()}


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
