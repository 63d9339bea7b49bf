"""Run the languages' set-ups and builds overlapped: a set-up (downloads and
installs) runs while other languages compile, at most one compile per core.

Set-ups run one at a time: several of them apt-get install system-wide, and
apt takes its lock without waiting, so two at once would fail one of them;
one lane of downloads also leaves the cores to the compiles. A compile
that keeps every core busy (Cargo, go, Ninja) never runs beside another
such one (measured on 2 cores: rust and the old load generator side by side took 173 s and
215 s, against 63 s and 93 s one after the other); a one-core compile
(javac, erlc) may run beside it, so that a language whose build is short
is ready long before the long ones end (a check's runs start as soon as
their language is built: builder.Preparation). Compiles take the longest
expected first (longest-processing-time order), so the slowest build does
not start last.

The scheduler knows nothing of languages: a job is a name, its steps (each
in a lane) and its expected seconds. Steps run in daemon threads, so a stop
(Ctrl-C) of the harness is not held up by a build: the build's launcher is
killed with the harness (its death signal) and its process tree with it.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import Callable, Literal

from ..core.envinfo import usable_cores

Lane = Literal["setup", "compile"]
LANES: tuple[Lane, ...] = ("setup", "compile")


@dataclass
class Step:
    lane: Lane
    run: Callable[[], bool]  # True when the step succeeded; a failed step ends its job


@dataclass
class Job:
    name: str
    steps: list[Step]
    expected_s: float = 0.0  # its compile's expected seconds: the longest starts first
    cores: int | None = None  # the cores its compile keeps busy; None: all of them


@dataclass
class _State:
    job: Job
    next_step: int = 0
    running: bool = False
    ok: bool = True

    @property
    def done(self) -> bool:
        return not self.ok or self.next_step >= len(self.job.steps)


@dataclass
class Limits:
    setup: int = 1  # set-ups at once
    compile: int = field(default_factory=lambda: cores())  # compiles at once: one a core

    def of(self, lane: Lane) -> int:
        return self.setup if lane == "setup" else self.compile

    def whole(self, job: Job, lane: Lane) -> bool:
        """Whether one step of this job keeps every core busy: a compile
        without a smaller `cores`."""
        return lane == "compile" and (job.cores is None or job.cores >= self.compile)

    def need(self, job: Job, lane: Lane) -> int:
        """The slots one step of this job takes of its lane: a set-up one,
        a compile its cores, except that one which keeps every core busy
        takes one, and no other such compile runs beside it."""
        if lane == "setup" or self.whole(job, lane):
            return 1
        return min(self.compile, job.cores or self.compile)


def cores() -> int:
    """The cores the builds may use (a test gives another count)."""
    return usable_cores()


class _Lanes:
    """The slots of each lane in use, the steps running in them and their
    results as they come (to the thread that runs the jobs)."""

    def __init__(self, states: list[_State], limits: Limits) -> None:
        self.states, self.limits = states, limits
        self.busy = {lane: 0 for lane in LANES}
        self.whole = 0  # compiles running that keep every core busy (at most one)
        self.finished: queue.Queue[tuple[_State, bool | BaseException]] = queue.Queue()

    def _work(self, state: _State, step: Step) -> None:
        try:
            result: bool | BaseException = bool(step.run())
        except BaseException as exc:  # handed to the main thread, raised there
            result = exc
        self.finished.put((state, result))

    def start_ready(self) -> None:
        """Start every waiting step whose lane has room."""
        # longest expected first in each lane; a job's set-up before its
        # compile. A step that finds its lane full holds back the shorter
        # ones of its lane, so a compile that needs every core is not
        # starved by one-core compiles starting around it; one that waits
        # only for another whole-machine compile lets one-core ones pass.
        waiting = sorted((s for s in self.states if not s.done and not s.running),
                         key=lambda s: -s.job.expected_s)
        held: set[Lane] = set()
        for state in waiting:
            step = state.job.steps[state.next_step]
            if step.lane in held:
                continue
            need = self.limits.need(state.job, step.lane)
            if self.busy[step.lane] + need > self.limits.of(step.lane):
                held.add(step.lane)
                continue
            if self.limits.whole(state.job, step.lane):
                if self.whole:
                    continue
                self.whole += 1
            self.busy[step.lane] += need
            state.running = True
            threading.Thread(target=self._work, args=(state, step), daemon=True,
                             name=f"build-{state.job.name}").start()

    def release(self, state: _State) -> None:
        """Give back the slots of state's step, which has ended."""
        lane = state.job.steps[state.next_step].lane
        self.busy[lane] -= self.limits.need(state.job, lane)
        self.whole -= self.limits.whole(state.job, lane)
        state.running = False
        state.next_step += 1


def run_jobs(jobs: list[Job], limits: Limits | None = None,
             on_done: Callable[[str, bool], None] | None = None) -> dict[str, bool]:
    """Run every job's steps in order, each job's next step as soon as its
    lane has a free slot; the jobs' results (True: every step succeeded),
    by name, each also handed to on_done (in this thread) as its job ends.
    An exception in a step ends its job as failed and is raised here once
    every running step has finished."""
    states = [_State(job) for job in jobs]
    lanes = _Lanes(states, limits or Limits())
    error: BaseException | None = None
    lanes.start_ready()
    while any(s.running for s in states):
        # a timeout keeps this thread waking, so a signal's handler runs at once
        try:
            state, result = lanes.finished.get(timeout=0.5)
        except queue.Empty:
            continue
        lanes.release(state)
        if isinstance(result, BaseException):
            state.ok = False
            error = error or result
        else:
            state.ok = result
        if error is None:
            lanes.start_ready()
            if state.done and on_done is not None:
                on_done(state.job.name, state.ok)
    if error is not None:
        raise error
    return {s.job.name: s.ok for s in states}
