"""A check's runs start as soon as their language is built (suites.toml
overlap_builds): the preparation answers each language as its build ends,
the run loop takes the next run whose build is done and waits only when
there is none, and a compile on one core may run beside one that keeps
every core busy. Events, not timings."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from harness import sequential
from harness.execute import build_lanes, scheduler
from harness.execute.build_lanes import Job, Limits, Step, run_jobs
from harness.execute.builder import Preparation, Readiness
from harness.execute.progress import Progress
from harness.core.registry import resolve
from harness.plan import suites as suites_module
from harness.plan.plan import Planned, plan
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.record.rundir import RunDir
from harness import UsageError

from ..conftest import FAKES, fake_registry
from .test_pipeline import FakeExecutor


def test_a_one_core_compile_runs_beside_one_on_every_core_two_of_those_never() -> None:
    now = {"whole": 0, "one": 0}
    most = {"whole": 0, "both": 0}
    lock = threading.Lock()
    beside = threading.Event()

    def step(kind: str, name: str) -> Step:
        def run() -> bool:
            with lock:
                now[kind] += 1
                most["whole"] = max(most["whole"], now["whole"])
                if now["whole"] and now["one"]:
                    most["both"] = 1
                    beside.set()
            if kind == "whole" and name == "loadgen":
                beside.wait(5)  # the generator runs until a one-core compile has joined it
            with lock:
                now[kind] -= 1
            return True
        return Step("compile", run)

    ended: list[str] = []
    jobs = [Job("loadgen", [step("whole", "loadgen")], 90), Job("rust", [step("whole", "rust")], 60),
            Job("javac", [step("one", "javac")], 2, cores=1)]
    assert all(run_jobs(jobs, Limits(setup=1, compile=2),
                        on_done=lambda name, ok: ended.append(name)).values())
    assert most == {"whole": 1, "both": 1}
    assert sorted(ended) == ["javac", "loadgen", "rust"]  # each job told once, as it ended


def test_on_one_core_every_compile_runs_alone() -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def step() -> Step:
        def run() -> bool:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.01)
            with lock:
                running[0] -= 1
            return True
        return Step("compile", run)

    jobs = [Job("loadgen", [step()], 90), Job("javac", [step()], 2, cores=1),
            Job("erlc", [step()], 1, cores=1)]
    assert all(run_jobs(jobs, Limits(setup=1, compile=1)).values())
    assert most == [1]


class Gate:
    """Builds that end when the test says: a run of a language not yet
    built is answered None (builder.Preparation.readiness)."""

    def __init__(self, building: set[str], ends: list[str]) -> None:
        self.building, self.ends, self.waits = building, ends, 0

    def ready(self, p: Planned) -> Readiness | None:
        return None if p.impl.id in self.building else Readiness("ready")

    def wait(self) -> None:
        self.waits += 1
        self.building.discard(self.ends.pop(0))


def test_the_run_loop_takes_the_next_ready_run_and_waits_when_none_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    s = settings_from(Options(impl="fake-good,fake-wrong", workload="chain", n="3,4",
                              repeat=1), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    assert [p.impl.id for p in runs] == ["fake-good", "fake-good", "fake-wrong", "fake-wrong"]
    run = RunDir.create_new(tmp_path)
    fake = FakeExecutor(run.name)
    gate = Gate({"fake-good", "fake-wrong"}, ["fake-wrong", "fake-good"])
    estimates = [1.0, 2.0, 3.0, 4.0]
    progress = Progress(len(runs), list(estimates))
    counts = scheduler.execute(run, runs, sequential, gate.ready, fake, progress, wait=gate.wait)
    assert counts == {"ok": 4}
    # fake-wrong was built first: its runs went first, in plan order
    assert [r.impl for r in run.runs().rows] == ["fake-wrong", "fake-wrong", "fake-good",
                                                 "fake-good"]
    assert [r.n for r in run.runs().rows] == [3, 4, 3, 4]
    assert gate.waits == 2  # once before anything was built, once when fake-wrong's runs ran out
    assert progress.estimates == [3.0, 4.0, 1.0, 2.0]  # each estimate moved with its run


def test_without_a_gate_a_build_still_going_on_is_a_fault(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    s = settings_from(Options(impl="fake-good", workload="chain", n="3"), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path)
    with pytest.raises(AssertionError, match="still going on"):
        scheduler.execute(run, runs, sequential, lambda p: None, FakeExecutor(run.name),
                          Progress(len(runs), [0.0] * len(runs)))


def test_each_language_is_answered_as_its_own_build_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real builds (processes): the fast language's runs are answered
    while the slow one still builds; the slow one's once its build ends."""
    monkeypatch.setattr(build_lanes, "cores", lambda: 2)
    gate = tmp_path / "gate"
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir()
    slow.mkdir()
    fake_registry(fast, "fastlang", "fast-impl", language_extra="build_cores = 1")
    # its build waits for the test's gate file (at most 60 s)
    wait_for_gate = (f'build = ["{{python}}", "-c", "import pathlib, time\\n'
                     f'for _ in range(1200):\\n'
                     f'    if pathlib.Path({str(gate)!r}).exists(): break\\n'
                     f'    time.sleep(0.05)"]')
    registry = fake_registry(slow, "slowlang", "slow-impl", language_extra="build_cores = 1")
    registry.write_text(registry.read_text().replace(
        'build = ["{python}", "-c", "pass"]', wait_for_gate))
    impls = resolve(["fast-impl", "slow-impl"], [str(fast / "impls.toml"),
                                                 str(slow / "impls.toml")])
    by_id = {i.id: i for i in impls}
    said: list[str] = []
    prepared = Preparation(impls, tmp_path, True, False, said.append, overlap=True)
    try:
        for _ in range(600):
            if prepared.readiness(by_id["fast-impl"], "chain", False) is not None:
                break
            prepared.wait(0.1)
        assert prepared.readiness(by_id["fast-impl"], "chain", False) == Readiness("ready")
        assert by_id["fast-impl"].runtime  # its runtime asked before its first run
        assert prepared.readiness(by_id["slow-impl"], "chain", False) is None
    finally:
        gate.write_text("")
    prepared.finish()
    assert prepared.readiness(by_id["slow-impl"], "chain", False) == Readiness("ready")
    assert (tmp_path / "build-slowlang.log").read_text().rstrip().endswith("s]")


def test_a_fault_in_an_overlapped_build_reaches_the_run_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    impls = resolve(["fake-good"])

    def boom(*_args: object, **_kwargs: object) -> bool:
        raise OSError("disk full")

    monkeypatch.setattr("harness.execute.builder.run_jobs", boom)
    prepared = Preparation(impls, tmp_path, True, False, lambda _: None, overlap=True)
    with pytest.raises(OSError, match="disk full"):
        for _ in range(100):
            prepared.wait(0.1)
    with pytest.raises(OSError, match="disk full"):
        prepared.finish()


def test_the_quick_suite_overlaps_its_builds_and_nothing_else_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings_from(Options(suite="quick"), ram_bytes=1 << 30).overlap_builds
    assert settings_from(Options(suite="quick"), ram_bytes=1 << 30).record().overlap_builds
    assert not settings_from(Options(suite="default"), ram_bytes=1 << 30).overlap_builds
    assert not settings_from(Options(workload="chain"), ram_bytes=1 << 30).overlap_builds
    suites = tmp_path / "suites.toml"
    suites.write_text('[s]\noverlap_builds = "yes"\n[[s.part]]\nworkloads = ["chain"]\n')
    monkeypatch.setattr(suites_module, "SUITES_PATH", suites)
    with pytest.raises(UsageError, match="overlap_builds 'yes' must be true or false"):
        settings_from(Options(suite="s"), ram_bytes=1 << 30)
