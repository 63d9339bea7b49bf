"""Slurm's commands as the harness uses them (sbatch, squeue, scancel,
sinfo), each run contained and bounded in time, behind a Scheduler a test
may replace with a fake."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

from .. import ROOT, HarnessError, UsageError
from ..processes.children import run_contained

COMMANDS = ("sbatch", "squeue", "scancel", "sinfo")
COMMAND_TIMEOUT_S = 60  # one call of a Slurm command (a squeue that fails is asked again)
PENDING = ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD")
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
         "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT")


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
