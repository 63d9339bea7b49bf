"""Waiting for a submission: the queue asked every few seconds, the tasks'
progress on one line (pending, running, done, failed), until every task
has ended and its task.json says how."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from .. import HarnessError
from ..core.formatting import fmt_duration
from ..execute.progress import StatusLine
from .layout import Layout
from .sbatch import PENDING, JobState, Scheduler

POLL_S = 3.0
# squeue failing this many times in a row (the controller down) ends the wait
POLL_FAILURES = 40
# A task that left the queue without its exit status in task.json is read
# again for this long: a shared file system may show the file late.
SETTLE_S = 30.0
# Exit statuses of a task's `run` that mean it recorded its replicate (ok,
# some rows failed, every row skipped): session.run_suite's.
RECORDED = (0, 1, 3)


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
