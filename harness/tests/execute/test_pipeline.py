"""The pipeline's stages apart: the plan decides, an executor runs, the run
directory records. A fake executor (hyperfine's mock executor) drives the
session's loop without starting a process."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness import sequential
from harness.execute import scheduler
from harness.execute.builder import Preparation, Readiness
from harness.execute.executor import Executed, make_row
from harness.plan.plan import Planned, plan
from harness.execute.progress import Progress
from harness.core.registry import resolve
from harness.execute.toolchains import detect_runtime, detect_toolchain
from harness.record.rundir import RunDir
from harness.plan.options import Options
from harness.plan.settings import settings_from

HARNESS = Path(__file__).resolve().parents[2]


class FakeExecutor:
    """Answers each planned run with a made-up row: no process, no clock."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.ran: list[str] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append(p.label)
        status = "ok" if p.rep == 1 else "crashed"
        return Executed(make_row(self.run_id, p, status, wall_s=0.5 * p.key.n,
                                 error="" if status == "ok" else "exit 1: boom"))


def test_the_session_records_what_the_executor_returns(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(HARNESS / "tests" / "fakes"))
    s = settings_from(Options(impl="fake-good,fake-wrong", workload="chain", n="3,4",
                              repeat=2), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path)
    fake = FakeExecutor(run.name)
    # fake-wrong cannot start: its rows are skipped rows, and the executor never sees it
    ready = lambda p: Readiness("ready") if p.impl.id == "fake-good" else Readiness(  # noqa: E731
        "skipped", "toolchain missing: none here")
    counts = scheduler.execute(run, runs, sequential, ready, fake,
                               Progress(len(runs), [0.0] * len(runs)))
    rows = run.runs().rows
    assert [(r.impl, r.n, r.rep, r.status) for r in rows] == [
        (p.impl.id, p.key.n, p.rep, "skipped" if p.impl.id == "fake-wrong" else
         "ok" if p.rep == 1 else "crashed") for p in runs]
    assert fake.ran == [p.label for p in runs if p.impl.id == "fake-good"]
    assert counts == {"ok": 2, "crashed": 2, "skipped": 4}
    assert rows[0].wall_s == 1.5 and rows[-1].error == "toolchain missing: none here"



def _properties(obj: object) -> list[str]:
    return [name for name, attr in inspect.getmembers(type(obj))
            if isinstance(attr, (property, functools.cached_property))]


def _refuse_processes(patched: pytest.MonkeyPatch, started: list[Any]) -> None:
    """Every way to start a process raises, each attempt noted in started."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        started.append(args[0] if args else kwargs)
        raise AssertionError(f"a process started: {started[-1]}")

    patched.setattr(subprocess, "Popen", refuse)
    for name in ("fork", "posix_spawn", "posix_spawnp", "system"):
        if hasattr(os, name):
            patched.setattr(os, name, refuse)


def test_no_property_starts_a_process_and_a_row_reads_the_runtime_found_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading an implementation (every field and property of an Impl, its
    Language and a Planned run) or building its row starts no process: the
    detect and version commands run only when toolchains is asked, before
    the runs, and the row takes the runtime found then."""
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(HARNESS / "tests" / "fakes"))
    s = settings_from(Options(
        impl="fake-good,fake-good[FAKE_X=1],fake-releases@1.0.0,fake-unavailable",
        workload="chain", n="3"), ram_bytes=1 << 30)
    impls = resolve(s.impls)
    runs = plan(impls, s)
    started: list[Any] = []
    with monkeypatch.context() as patched:
        _refuse_processes(patched, started)
        read: list[str] = []
        for obj in [*impls, *(i.language for i in impls), *runs]:
            for field in dataclasses.fields(obj):
                getattr(obj, field.name)
            for name in _properties(obj):
                read.append(name)
                try:
                    getattr(obj, name)
                except AssertionError:
                    pass  # Impl.install of an implementation without releases
        assert "install" in read and "label" in read
        rows = [make_row("r", p, "ok") for p in runs]
        assert started == []
        assert [r.runtime for r in rows] == [""] * len(rows)  # not found yet: never run here
        with pytest.raises(AssertionError):  # the guard sees the toolchains' commands
            detect_toolchain(dataclasses.replace(impls[0].language))
        assert started
    for impl in impls:
        detect_runtime(impl)
    assert detect_toolchain(impls[0].language).version.startswith("Python 3.")
    assert [make_row("r", p, "ok").runtime for p in runs] == [p.impl.runtime for p in runs]
    runtimes = {p.impl.id: p.impl.runtime for p in runs}
    assert runtimes["fake-good"].startswith("Fake (Python 3.")
    assert runtimes["fake-good[FAKE_X=1]"] == runtimes["fake-good"]
    assert runtimes["fake-releases@1.0.0"] == "Fake (1.0.0)"


def test_whether_a_run_can_start_is_known_before_the_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each implementation's own check runs while the runs are prepared:
    asking whether one can start, between measured runs, starts nothing."""
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(HARNESS / "tests" / "fakes"))
    impls = resolve(["fake-good", "fake-unavailable"])
    prepared = Preparation(impls, tmp_path, False, False, lambda _: None)
    with monkeypatch.context() as patched:
        _refuse_processes(patched, [])
        good, unavailable = (prepared.readiness(i, "chain", False) for i in impls)
    assert good.ready
    assert unavailable.status == "skipped" and "no runtime binary" in unavailable.reason
    assert prepared.hints() == [f"fake-unavailable: {unavailable.reason}"]
