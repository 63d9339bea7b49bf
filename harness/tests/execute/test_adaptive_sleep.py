"""run --adaptive-sleep (each sleep run lasts twice its configuration's
start time plus a second, at most --duration-ms) and --until-settled's
rule that a configuration whose runs all timed out is not run again. The
session is driven with a scripted executor: no process, no timing."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import sequential
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.plan.plan import Planned, plan
from harness.execute.progress import Progress
from harness.core.registry import resolve
from harness.core.schema import Row
from harness.record.rundir import RunDir
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.core.workloads import adaptive_sleep_ms

from ..conftest import FAKES, harness, read_rows


@pytest.fixture(autouse=True)
def fakes(monkeypatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def test_the_sleep_is_twice_the_start_plus_a_second_within_its_bounds() -> None:
    assert adaptive_sleep_ms(10_000, None) == 10_000  # nothing known yet: the full sleep
    assert adaptive_sleep_ms(10_000, 0.13) == 1_300  # 1.26 s, up to a tenth
    assert adaptive_sleep_ms(10_000, 2.8) == 6_600
    assert adaptive_sleep_ms(10_000, 6.0) == 10_000  # never past the ceiling
    assert adaptive_sleep_ms(10_000, 0.0) == 1_000  # never below a second
    assert adaptive_sleep_ms(500, 0.0) == 500  # a ceiling below the floor wins


class Scripted:
    """Sleep runs whose start takes spawn_s; chain runs that time out at N = 7
    and crash at N = 8 (at N = 9 only in the first run)."""

    def __init__(self, run_id: str, spawn_s: float | list[float]) -> None:
        self.run_id = run_id
        self.spawns = list(spawn_s) if isinstance(spawn_s, list) else None
        self.spawn_s = spawn_s if not isinstance(spawn_s, list) else 0.0
        self.ran: list[Planned] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append(p)
        if self.spawns:
            self.spawn_s = self.spawns.pop(0)
        if p.key.workload == "chain" and p.key.n == 7:
            return Executed(make_row(self.run_id, p, "timeout", error="no exit"))
        if p.key.workload == "chain" and (p.key.n == 8 or (p.key.n == 9 and p.rep == 1)):
            return Executed(make_row(self.run_id, p, "crashed", error="out of memory"))
        return Executed(make_row(self.run_id, p, "ok", wall_s=1.0, first_iter_s=1.0,
                                 warm_iter_s=1.0, spawn_s=self.spawn_s,
                                 peak_rss_bytes=100 << 20))


def _execute(tmp_path: Path, opts: dict, spawn_s: float | list[float] = 0.5,
             past: list[Row] = ()) -> tuple[Scripted, RunDir]:
    s = settings_from(Options.from_record({"impl": "fake-good", "repeat": 3, **opts}),
                      ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path)
    fake = Scripted(run.name, spawn_s)
    scheduler.execute_until_settled(
        run, runs, runs, sequential, lambda p: Readiness("ready"), fake,
        Progress(len(runs), [0.0] * len(runs)), lambda p: 0.0, past)
    return fake, run


def test_the_first_run_sleeps_in_full_the_next_from_its_start(tmp_path: Path) -> None:
    fake, run = _execute(tmp_path, {"workload": "sleep", "n": "10", "duration_ms": 5000,
                                    "adaptive_sleep": True})
    assert [p.duration_ms for p in fake.ran] == [5000, 2000, 2000]
    assert [p.argv()[-3] for p in fake.ran] == ["5000", "2000", "2000"]  # what the program got
    assert [r.duration_ms for r in run.runs().rows] == [5000, 2000, 2000]


def test_one_slow_start_lengthens_every_later_sleep(tmp_path: Path) -> None:
    fake, _ = _execute(tmp_path, {"workload": "sleep", "n": "10", "duration_ms": 10000,
                                  "adaptive_sleep": True, "repeat": 4}, [0.2, 2.0, 0.2, 0.2])
    assert [p.duration_ms for p in fake.ran] == [10000, 1400, 5000, 5000]


def test_an_earlier_run_in_out_sets_the_first_sleep(tmp_path: Path) -> None:
    s = settings_from(Options(impl="fake-good", workload="sleep", n="10"), ram_bytes=1 << 30)
    earlier = make_row("earlier", plan(resolve(s.impls), s)[0], "ok", spawn_s=1.0)
    fake, _ = _execute(tmp_path, {"workload": "sleep", "n": "10", "duration_ms": 5000,
                                  "adaptive_sleep": True}, past=[earlier])
    # the longest start, earlier or now: 1.0 s, so 3 s every time
    assert [p.duration_ms for p in fake.ran] == [3000, 3000, 3000]


def test_a_first_run_sleeps_from_a_smaller_size_grown_in_proportion(tmp_path: Path) -> None:
    fake, run = _execute(tmp_path, {"workload": "sleep", "n": "10,1000", "duration_ms": 5000,
                                    "adaptive_sleep": True, "repeat": 1}, 0.004)
    # N = 10 first: nothing known, the full 5 s; N = 1000: 0.004 s x 100 x 1.5
    # = 0.6 s to start, slept 2 x 0.6 + 1 s
    assert [(p.key.n, p.duration_ms) for p in fake.ran] == [(10, 5000), (1000, 2200)]


class FirstInvalid(Scripted):
    """The first run at N = 1000 invalid (its tasks did not all overlap)."""

    def run(self, p: Planned) -> Executed:
        if p.key.n == 1000 and p.rep == 1:
            self.ran.append(p)
            return Executed(make_row(self.run_id, p, "invalid", error="tasks did not overlap"))
        return super().run(p)


def test_after_a_failed_first_run_the_next_sleeps_in_full(tmp_path: Path) -> None:
    s = settings_from(Options.from_record({"impl": "fake-good", "repeat": 2, "workload": "sleep",
                                           "n": "10,1000", "duration_ms": 5000,
                                           "adaptive_sleep": True}), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path)
    fake = FirstInvalid(run.name, 0.004)
    scheduler.execute_until_settled(
        run, runs, runs, sequential, lambda p: Readiness("ready"), fake,
        Progress(len(runs), [0.0] * len(runs)), lambda p: 0.0)
    # no longer a first run, and no start of its own yet: the whole duration
    assert [(p.key.n, p.rep, p.duration_ms) for p in fake.ran] == [
        (10, 1, 5000), (1000, 1, 2200), (10, 2, 1100), (1000, 2, 5000)]


def test_without_the_option_every_run_sleeps_in_full(tmp_path: Path) -> None:
    fake, run = _execute(tmp_path, {"workload": "sleep", "n": "10", "duration_ms": 5000})
    assert [p.duration_ms for p in fake.ran] == [5000] * 3
    assert {r.duration_ms for r in run.runs().rows} == {5000}


def test_only_sleep_is_adapted_and_only_sleep_rows_carry_a_duration(tmp_path: Path) -> None:
    fake, run = _execute(tmp_path, {"workload": "chain", "n": "5", "adaptive_sleep": True})
    assert not any(p.adaptive_sleep for p in fake.ran)
    assert {r.duration_ms for r in run.runs().rows} == {None}


def test_until_settled_does_not_repeat_a_timeout(tmp_path: Path) -> None:
    fake, run = _execute(tmp_path, {"workload": "chain", "n": "5,7", "until_settled": True,
                                    "max_repeat": 4})
    ran = [(p.key.n, p.rep) for p in fake.ran]
    assert ran.count((7, 1)) == 1 and not [r for r in ran if r[0] == 7 and r[1] > 1]
    timeouts = [r for r in run.runs().rows if r.status == "timeout"]
    assert [(r.n, r.rep) for r in timeouts] == [(7, 1)]  # the row is kept
    assert [rep for n, rep in ran if n == 5] == [1, 2, 3]  # one configuration: no verdict


def test_until_settled_stops_a_configuration_after_two_failures_not_after_one(
        tmp_path: Path) -> None:
    fake, run = _execute(tmp_path, {"workload": "chain", "n": "8,9", "until_settled": True,
                                    "max_repeat": 4})
    ran = [(p.key.n, p.rep) for p in fake.ran]
    assert [rep for n, rep in ran if n == 8] == [1, 2]  # crashed twice: no third
    assert [rep for n, rep in ran if n == 9][:3] == [1, 2, 3]  # one crash, then ok


def test_a_fixed_repeat_repeats_a_failure(tmp_path: Path) -> None:
    fake, _ = _execute(tmp_path, {"workload": "chain", "n": "7,8"})
    assert [(p.key.n, p.rep) for p in fake.ran] == [(n, rep) for rep in (1, 2, 3)
                                                     for n in (7, 8)]


def test_the_option_from_the_command_line(out: Path) -> None:
    proc = harness("run", "--impl", "fake-good", "--workload", "sleep", "--n", "10",
                   "--duration-ms", "300", "--repeat", "2", "--adaptive-sleep", "--out", str(out),
                   "--no-report")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["duration_ms"] for r in read_rows(out)] == ["300", "300"]  # below the floor: 300


def test_a_second_run_in_out_starts_from_the_first_ones_starts(out: Path) -> None:
    """The fake starts its tasks at once: after one run at the 1.5 s ceiling,
    the next invocation in the same OUT sleeps about the 1 s floor from its first run."""
    for _ in range(2):
        proc = harness("run", "--impl", "fake-good", "--workload", "sleep", "--n", "10",
                       "--duration-ms", "1500", "--repeat", "1", "--adaptive-sleep",
                       "--out", str(out), "--no-report")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    [row] = read_rows(out)
    assert 1000 <= int(row["duration_ms"]) < 1500, row["duration_ms"]
