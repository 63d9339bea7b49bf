"""The overlapped builds' scheduler, on jobs whose steps record what ran
alongside them: no timing, only events and counts."""

from __future__ import annotations

import threading

import pytest

from harness.execute.build_lanes import Job, Limits, Step, run_jobs


class Recorder:
    """Steps that count how many of each lane run at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = {"setup": 0, "compile": 0}
        self.most = {"setup": 0, "compile": 0}
        self.order: list[str] = []

    def step(self, lane: str, name: str, ok: bool = True,
             wait: threading.Event | None = None, then: threading.Event | None = None) -> Step:
        def run() -> bool:
            with self.lock:
                self.now[lane] += 1
                self.most[lane] = max(self.most[lane], self.now[lane])
                self.order.append(f"{lane}:{name}")
            if then is not None:
                then.set()
            if wait is not None:
                assert wait.wait(5), f"{name}'s {lane} never ran alongside what it waits for"
            with self.lock:
                self.now[lane] -= 1
            return ok
        return Step(lane, run)  # type: ignore[arg-type]


def test_a_setup_downloads_while_another_language_compiles() -> None:
    rec = Recorder()
    compiling, setting_up = threading.Event(), threading.Event()
    jobs = [Job("rust", [rec.step("compile", "rust", wait=setting_up, then=compiling)], 40),
            Job("python", [rec.step("setup", "python", wait=compiling, then=setting_up),
                           rec.step("compile", "python")], 5)]
    assert run_jobs(jobs, Limits(setup=1, compile=1)) == {"rust": True, "python": True}
    assert rec.order[-1] == "compile:python"  # its compile after its set-up


def test_at_most_one_setup_and_one_compile_a_core() -> None:
    rec = Recorder()
    jobs = [Job(f"lang{i}", [rec.step("setup", f"lang{i}"), rec.step("compile", f"lang{i}")], i)
            for i in range(12)]
    assert all(run_jobs(jobs, Limits(setup=1, compile=2)).values())
    assert rec.most["setup"] == 1
    assert rec.most["compile"] <= 2
    assert len(rec.order) == 24


def test_the_longest_compile_starts_first() -> None:
    rec = Recorder()
    jobs = [Job(name, [rec.step("compile", name)], seconds)
            for name, seconds in [("cpp", 4), ("loadgen", 75), ("rust", 44), ("go", 18)]]
    run_jobs(jobs, Limits(setup=1, compile=1))
    assert rec.order == ["compile:loadgen", "compile:rust", "compile:go", "compile:cpp"]


def test_a_failed_setup_ends_its_job_and_no_other() -> None:
    rec = Recorder()
    jobs = [Job("erlang", [rec.step("setup", "erlang", ok=False), rec.step("compile", "erlang")]),
            Job("go", [rec.step("compile", "go")])]
    assert run_jobs(jobs, Limits(setup=1, compile=2)) == {"erlang": False, "go": True}
    assert "compile:erlang" not in rec.order


def test_an_exception_in_a_step_is_raised_after_the_running_steps_end() -> None:
    rec = Recorder()
    release = threading.Event()

    def boom() -> bool:
        release.set()
        raise RuntimeError("disk full")

    jobs = [Job("slow", [rec.step("compile", "slow", wait=release)], 10),
            Job("bad", [Step("setup", boom)], 1),
            Job("later", [rec.step("compile", "later")], 0)]
    with pytest.raises(RuntimeError, match="disk full"):
        run_jobs(jobs, Limits(setup=1, compile=1))
    assert rec.now["compile"] == 0  # the running compile finished first
    assert "compile:later" not in rec.order  # nothing new starts after a fault


def test_no_jobs() -> None:
    assert run_jobs([]) == {}


def test_a_compile_on_every_core_runs_alone_one_core_compiles_share() -> None:
    rec = Recorder()
    both = threading.Event()
    first, second = threading.Event(), threading.Event()

    def pair(name: str, mine: threading.Event, other: threading.Event) -> Step:
        def run() -> bool:
            mine.set()
            if other.wait(5):
                both.set()
            return True
        return Step("compile", run)

    jobs = [Job("loadgen", [rec.step("compile", "loadgen")], 90),
            Job("rust", [rec.step("compile", "rust")], 60),
            Job("javac", [pair("javac", first, second)], 2, cores=1),
            Job("erlc", [pair("erlc", second, first)], 1, cores=1)]
    assert all(run_jobs(jobs, Limits(setup=1, compile=2)).values())
    assert rec.most["compile"] == 1  # the generator and rust one after the other
    assert rec.order == ["compile:loadgen", "compile:rust"]
    assert both.is_set()  # the two one-core compiles ran side by side
