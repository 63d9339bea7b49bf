"""What the batch scripts of `run --on slurm` (slurm.py writes them) do,
on the node Slurm gives them:

    python -m harness.cluster.slurm_task build RUN     the build job
    python -m harness.cluster.slurm_task task RUN R    replicate R

The build job sets up and builds every language of the plan, installs
each release and finds the load generator, once, as a run's preparation does
(builder.Preparation), and writes its outcome to RUN/slurm/build.json with
a token it leaves in the repository's .tools/slurm-builds/. A task that
sees that token in its own checkout shares the build folder: it measures
what the build job built (as --no-build), leaving out what failed to build
(the merge records that failure as their rows, never a stale program's
figures). A task that does not see it has a build folder of its own: it
builds first, as any run does.

A task measures replicate R of the run's plan (replicates.replicate) into
RUN/tasks/R/ with session.run_suite, resuming the run directory already
there (--resume resubmits a replicate that has rows); RUN/tasks/R/task.json
says which node ran it and, at the end, the harness's exit status."""

from __future__ import annotations

import dataclasses
import os
import secrets
import socket
import sys
from pathlib import Path

from .. import HarnessError, UsageError
from ..execute.builder import Preparation
from ..core.envinfo import ram_bytes
from ..processes.interrupts import Interrupted, interruptible
from ..plan.plan import plan
from ..core.registry import RegistryError, resolve
from .replicates import replicate
from ..record.rundir import RunDirError, latest
from ..core.schema import utc_now
from ..session import run_suite
from ..plan.settings import settings_from
from .layout import BuildRecord, Layout, TaskRecord, failed_builds, write_json
from .slurm import TOKENS
from .waiting import RECORDED

USAGE = "usage: python -m harness.cluster.slurm_task build RUN_DIR | task RUN_DIR REPLICATE"


def node_name() -> str:
    """The node as Slurm names it (SLURMD_NODENAME), else the host's name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def build(layout: Layout) -> int:
    s = settings_from(layout.options(), ram_bytes())
    runs = plan(resolve(s.impls, s.registries, Path(s.source) if s.source else None), s)
    print(f"building on {node_name()} for {layout.run}", flush=True)
    prepared = Preparation([p.impl for p in runs], layout.slurm, True,
                           any(p.workload.kind == "server" for p in runs), print)
    token = secrets.token_hex(8)
    TOKENS.mkdir(parents=True, exist_ok=True)
    (TOKENS / token).write_text(f"{layout.run}\n")
    write_json(layout.build_path, BuildRecord(node_name(), token, utc_now(), prepared.languages,
                                              prepared.impls).as_json())
    for name, ready in prepared.languages.items():
        print(f"{name}: {'built' if ready.ready else f'{ready.status}, {ready.reason}'}")
    return 0


def task(layout: Layout, r: int) -> int:
    record = TaskRecord(node_name(), os.environ.get("SLURM_JOB_ID"), utc_now())
    layout.task_dir(r).mkdir(parents=True, exist_ok=True)
    write_json(layout.task_path(r), record.as_json())
    try:
        s = settings_from(layout.options(), ram_bytes())
        built = layout.build_record()
        shared = built is not None and (TOKENS / str(built.token)).is_file()
        langs, impls = failed_builds(built) if shared else (set(), set())
        if shared:
            s = dataclasses.replace(s, build=False)
        record.build = "job" if shared else "task" if s.build else "none"
        out = layout.task_dir(r)
        code = run_suite(s, out, resume=latest(out) is not None, report=False,
                         only=lambda runs: replicate(runs, r, langs, impls))
    except ERRORS as exc:
        code = said(exc)
    record.exit, record.finished_at = code, utc_now()
    write_json(layout.task_path(r), record.as_json())
    # A replicate whose rows are recorded, failures among them, is a task
    # done; Slurm calls anything else a failed task.
    return 0 if code in RECORDED else code


ERRORS = (UsageError, RegistryError, RunDirError, HarnessError)


def said(exc: Exception) -> int:
    """An expected error in one line, and its exit status (as the CLI's)."""
    print(f"harness: error: {' '.join(str(exc).splitlines())}", file=sys.stderr)
    return 1 if isinstance(exc, HarnessError) else 2


def main(argv: list[str]) -> int:
    if not ((len(argv) == 2 and argv[0] == "build")
            or (len(argv) == 3 and argv[0] == "task" and argv[2].isdigit())):
        print(USAGE, file=sys.stderr)
        return 2
    layout = Layout(Path(argv[1]))
    if not layout.options_path.is_file():
        print(f"harness: error: {layout.options_path}: missing (not a run --on slurm)",
              file=sys.stderr)
        return 2
    try:
        with interruptible():
            return build(layout) if argv[0] == "build" else task(layout, int(argv[2]))
    except Interrupted as exc:  # scancel, or the time limit: SIGTERM
        print(f"harness: stopped by signal {exc.signum}", file=sys.stderr)
        return 128 + exc.signum
    except ERRORS as exc:
        return said(exc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
