"""Under --until-settled, a configuration whose smaller size failed by a
limit that grows with size (a timeout, out of memory, tasks that did not
overlap) is recorded skipped, not run (sequential.outgrown): driven through
the scheduler by a fake executor with known answers, no process, no clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import sequential
from harness.analyse.analysis import analyse, by_design, design_notes, group_runs, warnings
from harness.core.registry import resolve
from harness.core.schema import ConfigKey, Status
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.execute.progress import Progress
from harness.plan.options import Options
from harness.plan.plan import Planned, plan
from harness.plan.settings import settings_from
from harness.record.rundir import RunDir

from ..conftest import FAKES


class SizedExecutor:
    """Every run ok below its limit; at or above it, the status given."""

    def __init__(self, run_id: str, limit: int, status: Status) -> None:
        self.run_id, self.limit, self.status = run_id, limit, status
        self.ran: list[Planned] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append(p)
        failed = p.key.n >= self.limit
        return Executed(make_row(self.run_id, p, self.status if failed else Status.OK,
                                 wall_s=1.0, result=None if failed else p.key.n,
                                 error="made up" if failed else None))


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def _plan(until_settled: bool = True, workload: str = "sleep") -> list[Planned]:
    s = settings_from(Options.from_record({
        "impl": "fake-good", "workload": workload, "n": "1000,10000,100000,1000000",
        "repeat": 1, "until_settled": until_settled}), ram_bytes=1 << 30)
    return plan(resolve(s.impls), s)


def _run(tmp_path: Path, runs: list[Planned], limit: int, status: Status,
         rules: object = sequential) -> tuple[RunDir, SizedExecutor]:
    run = RunDir.create_new(tmp_path)
    executor = SizedExecutor(run.name, limit, status)
    scheduler.execute(run, runs, rules, lambda p: Readiness("ready"), executor,
                      Progress(len(runs), [0.0] * len(runs)))
    return run, executor


@pytest.mark.parametrize("status", [Status.TIMEOUT, Status.OOM, Status.INVALID])
def test_the_sizes_above_a_growing_failure_are_recorded_not_run(tmp_path: Path,
                                                                status: Status) -> None:
    run, executor = _run(tmp_path, _plan(), 10000, status)
    assert [p.key.n for p in executor.ran] == [1000, 10000]
    rows = run.runs().rows
    assert [(r.n, r.status, r.outgrown_at) for r in rows] == [
        (1000, Status.OK, None), (10000, status, None),
        (100000, Status.SKIPPED, "N=10000"), (1000000, Status.SKIPPED, "N=10000")]
    assert all(f"({status})" in r.error for r in rows[2:])


def test_a_crash_or_a_run_without_until_settled_does_not_stop_the_larger_sizes(
        tmp_path: Path) -> None:
    """A crash may be the machine's once (sequential.repeated); a plain run
    runs what it was asked to."""
    _, executor = _run(tmp_path / "crash", _plan(), 10000, Status.CRASHED)
    assert len(executor.ran) == 4
    _, executor = _run(tmp_path / "plain", _plan(until_settled=False), 10000, Status.TIMEOUT)
    assert len(executor.ran) == 4


def test_a_size_with_an_ok_run_or_another_family_stops_nothing() -> None:
    [p] = [p for p in _plan() if p.key.n == 1000000]
    small = ConfigKey("fake-good", "sleep", 10000, None)
    assert sequential.outgrown(p, {small: [Status.TIMEOUT]}) == small
    assert sequential.outgrown(p, {small: [Status.TIMEOUT, Status.OK]}) is None
    assert sequential.outgrown(p, {small: [Status.CRASHED, Status.CRASHED]}) is None
    assert sequential.outgrown(p, {ConfigKey("fake-good", "chain", 10000, None):
                                   [Status.TIMEOUT]}) is None  # another workload
    assert sequential.outgrown(p, {ConfigKey("other", "sleep", 10000, None):
                                   [Status.TIMEOUT]}) is None  # another implementation
    big = ConfigKey("fake-good", "sleep", 10000000, None)
    assert sequential.outgrown(p, {big: [Status.TIMEOUT]}) is None  # a larger size


def test_bounded_sizes_compare_within_one_buffer() -> None:
    s = settings_from(Options.from_record({
        "impl": "fake-good", "workload": "bounded", "n": "10,10000", "buffer": "1,10000", "repeat": 1,
        "until_settled": True}), ram_bytes=1 << 30)
    [p] = [p for p in plan(resolve(s.impls), s) if p.key.n == 10000 and p.key.buffer == 1]
    assert sequential.outgrown(p, {ConfigKey("fake-good", "bounded", 10, 10000):
                                   [Status.TIMEOUT]}) is None
    assert sequential.outgrown(p, {ConfigKey("fake-good", "bounded", 10, 1):
                                   [Status.TIMEOUT]}) is not None


def test_an_http_load_grows_with_its_users_requests_and_a_ladder_step_not_at_all() -> None:
    def key(**params: object) -> ConfigKey:
        dims = {"users": None, "requests": None, "delay_ms": 100, "pool_threads": None,
                "style": "sync", "rate": None, "step_s": None} | params
        return ConfigKey("go", "http", None, None, tuple(dims.items()))

    assert key(users=50, requests=20).size == 1000
    assert key(users=2000, requests=5).size == 10000
    assert key(users=50, requests=20).family == key(users=2000, requests=5).family
    assert key(users=50, requests=20).family != key(users=50, requests=20, style="async").family
    assert key(rate=400, step_s=10).size is None


def test_the_analysis_tells_an_outgrown_size_from_one_skipped_by_design(tmp_path: Path) -> None:
    run, _ = _run(tmp_path, _plan(), 10000, Status.INVALID)
    result = analyse(run)
    groups = group_runs(run.runs().rows)
    assert not any(by_design(g, groups) for g in groups)
    assert ("fake-good sleep not run at N=100000, N=1000000: it failed at N=10000, by a limit "
            "that grows with size (--until-settled; the runs' errors say how).") \
        in design_notes(groups)
    assert not any(line.startswith("fake-good: skipped") for line in
                   warnings(result.groups, run.env()))
