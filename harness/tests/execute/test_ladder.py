"""A rate ladder step judged from the load generator's summary (loadtest._judge_step), with
summaries written here: what marks a step saturated, slow or sustained,
and what makes it no measurement of the server; and, with a fake
executor, the steps past a ladder's end recorded, not run. No process is
started."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, TypeVar

import pytest

from harness import sequential
from harness.core.registry import resolve
from harness.core.ladder import (GENERATOR_RETRIES, ceiling_error, figures, ladder_rows, refinement,
                                 run_ceiling)
from harness.core.schema import PAST_END, ConfigKey, Row
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.execute.progress import Progress
from harness.plan.plan import Planned, plan
from harness.plan.settings import settings_from
from harness.plan.options import Options
from harness.record.rundir import RunDir
from harness.core.workloads import GEN_LAG_LIMIT_S, GENERATOR_FAULT, Request, ladder_p99_bound_s
from harness.execute.loadtest import Generated, LoadFigures, _judge, _judge_step, generator_cpus

HARNESS = Path(__file__).resolve().parents[2]
RATE, STEP_S, DELAY_MS = 100, 10, 100
KEY = ConfigKey("srv", "http", None, None, (
    ("users", None), ("requests", None), ("delay_ms", DELAY_MS), ("pool_threads", None),
    ("style", "async"), ("rate", RATE), ("step_s", STEP_S)))
QUIET = Generated(None, cpu_s=1.0, wall_s=12.0, cpus=1, last="")


def summary(sent: int = RATE * STEP_S, done: int | None = None, dropped: int = 0,
            p99_ms: float = 320.0, median_ms: float = 305.0, lag_p99_ms: float = 1.0,
            fails: dict[str, int] | None = None) -> dict[str, Any]:
    """The generator's summary as harness/execute/vegeta/main.go writes it
    (only what the judge reads). dropped: unsent requests while the server
    held every worker (the most in flight reached them all)."""
    done = sent if done is None else done
    fails = fails or {}
    trend = {"p50_ms": median_ms, "p90_ms": p99_ms, "p99_ms": p99_ms, "p999_ms": p99_ms,
             "max_ms": p99_ms, "count": done}
    workers = 200
    return {"due": RATE * STEP_S, "sent": sent, "answered": done, "cut_at_end": sent - done,
            "bad_status": fails.get("status", 0), "bad_body": fails.get("body", 0),
            "refused": fails.get("answered", 0), "workers": workers,
            "max_in_flight": workers if dropped else 10, "elapsed_s": STEP_S + 0.4,
            "latency": trend, "lag": {"p99_ms": lag_p99_ms, "count": 1000}}


def judge(data: dict[str, Any], gen: Generated = QUIET) -> tuple[str, str, LoadFigures]:
    figures = LoadFigures()
    status, error = _judge_step(data, Request("http", None, None, 1, 0, params=KEY.params),
                                figures, gen)
    return status, error, figures


def test_every_request_answered_in_the_bound_is_sustained() -> None:
    status, error, f = judge(summary())
    assert (status, f.step_verdict) == ("ok", "sustained"), error
    assert (f.offered, f.dropped, f.unanswered, f.requests_done) == (1000, 0, 0, 1000)
    assert f.rps == RATE and f.latency_p99_s == pytest.approx(0.32)


def test_a_p99_above_the_bound_is_slow_and_still_a_measurement() -> None:
    bound_ms = ladder_p99_bound_s(DELAY_MS) * 1000
    status, _, f = judge(summary(p99_ms=bound_ms + 1))
    assert (status, f.step_verdict) == ("ok", "slow")


@pytest.mark.parametrize("kind", ["dropped", "unanswered", "refused"])
def test_a_request_dropped_unanswered_or_refused_saturates_the_step(kind: str) -> None:
    data = {"dropped": summary(sent=990, dropped=10),
            "unanswered": summary(done=990),
            "refused": summary(fails={"status": 5, "answered": 5})}[kind]
    status, error, f = judge(data)
    assert (status, f.step_verdict) == ("ok", "saturated"), error
    assert f.offered == 1000 and f.offered == f.requests_done + f.dropped + f.unanswered


@pytest.mark.parametrize("data,words", [
    (summary(fails={"body": 1}), "bodies"),
    (summary(fails={"status": 3, "answered": 1}), "neither 200 nor"),
    (summary(median_ms=100.0), "floor"),
    (summary(lag_p99_ms=GEN_LAG_LIMIT_S * 1000 + 5), "could not keep the schedule"),
    (summary(sent=600), "fell behind its schedule: 400 of the 1000"),
])
def test_what_makes_a_step_invalid(data: dict[str, Any], words: str) -> None:
    status, error, _ = judge(data)
    assert status == "invalid" and words in error, error


def test_a_request_due_within_the_allowed_lateness_of_the_end_may_go_unsent() -> None:
    """At 100 a second, a generator up to 10 ms late may reach the step's end before
    the last request due: not behind its schedule; two unsent are."""
    assert judge(summary(sent=RATE * STEP_S - 1))[0] == "ok"
    status, error, _ = judge(summary(sent=RATE * STEP_S - 2))
    assert status == "invalid" and "fell behind its schedule: 2 of the 1000" in error, error


@pytest.mark.parametrize("data,gen,generator", [
    (summary(), Generated(None, cpu_s=10.0, wall_s=11.0, cpus=1, last=""), True),
    (summary(lag_p99_ms=GEN_LAG_LIMIT_S * 1000 + 5), QUIET, True),
    (summary(sent=600), QUIET, True),
    (summary(median_ms=100.0), QUIET, False),
    (summary(fails={"body": 1}), QUIET, False),
])
def test_the_generators_own_reasons_and_only_they_name_it(data: dict[str, Any], gen: Generated,
                                                           generator: bool) -> None:
    """ladder.generator_limited reads a step's recorded reason: each of the
    generator's (busy, late, behind) starts with GENERATOR_FAULT, no other
    does."""
    status, error, _ = judge(data, gen)
    assert status == "invalid" and error.startswith(GENERATOR_FAULT) == generator, error


def test_a_busy_generator_makes_the_step_invalid() -> None:
    status, error, f = judge(summary(), Generated(None, cpu_s=10.0, wall_s=11.0, cpus=1, last=""))
    assert status == "invalid" and "load generator used 91%" in error, error
    assert f.gen_busy == pytest.approx(10 / 11)


def test_a_closed_loop_whose_generator_took_the_machine_is_invalid() -> None:
    """A closed loop's generator shares the server's cores: its share of all
    of them is recorded, and over the limit the row measured the generator
    (Vaughan's 2000 users at D = 100 ms: every fast server at the old
    generator's ceiling)."""
    users, requests = 2000, 5
    closed = ConfigKey("srv", "http", None, None, (
        ("users", users), ("requests", requests), ("delay_ms", DELAY_MS), ("pool_threads", None),
        ("style", "when-all"), ("rate", None), ("step_s", None)))
    done = users * requests
    trend = {"p50_ms": 450.0, "p90_ms": 600.0, "p99_ms": 700.0, "p999_ms": 800.0,
             "max_ms": 900.0, "count": done}
    data = {"sent": done, "answered": done, "bad_status": 0, "bad_body": 0, "elapsed_s": 4.0,
            "latency": trend}
    req = Request("http", None, None, 1, 0, params=closed.params)

    def closed_judge(cpu_s: float) -> tuple[str, str, LoadFigures]:
        figures = LoadFigures()
        status, error = _judge(data, req, figures, Generated(None, cpu_s, 4.5, 2, ""))
        return status, error, figures

    status, error, f = closed_judge(7.3)  # go's generator in the seed004 run of 2026-11-29
    assert status == "invalid" and "load generator used 81% of its 2 cores" in error, error
    assert f.gen_busy == pytest.approx(7.3 / 9) and f.rps == done / 4.0  # its figures kept
    status, error, f = closed_judge(3.0)
    assert (status, error) == ("ok", "") and f.gen_busy == pytest.approx(3 / 9)


def test_the_generator_runs_on_the_cores_the_server_is_not_pinned_to(monkeypatch) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/taskset")
    assert generator_cpus(1) == [1, 2, 3] and generator_cpus(3) == [3]
    assert generator_cpus(None) is None and generator_cpus(4) is None  # shares them all


class SaturatingExecutor:
    """A server that saturates at 100 requests a second in repeat 1 and whose
    generator is too busy at 200 in repeat 2: made-up rows, no process."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.ran: list[tuple[int, int]] = []

    def run(self, p: Planned) -> Executed:
        rate = p.key.param("rate")
        self.ran.append((p.rep, rate))
        if p.rep == 1 and rate >= 100:
            return Executed(make_row(self.run_id, p, "ok", step_verdict="saturated", dropped=7,
                                     unanswered=0))
        if p.rep == 2 and rate >= 200:
            return Executed(make_row(self.run_id, p, "invalid", error="the generator too busy"))
        return Executed(make_row(self.run_id, p, "ok", step_verdict="sustained"))


E = TypeVar("E", bound=SaturatingExecutor)


def run_ladders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, executor: Callable[[str], E],
                options: dict[str, Any], reps: int | None = None) -> tuple[E, list[Row], int]:
    """The fake servers' ladders (rates 25 to 400) run by the scheduler with
    `executor` (made from the run's id): the executor, the recorded rows,
    and how many runs were planned (the first `reps` repeats only, if given)."""
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(HARNESS / "tests" / "fakes"))
    s = settings_from(Options.from_record({"workload": "http", "rate": "25,50,100,200,400"}
                                          | options), ram_bytes=1 << 30)
    runs = [p for p in plan(resolve(s.impls), s) if reps is None or p.rep <= reps]
    run = RunDir.create_new(tmp_path)
    fake = executor(run.name)
    scheduler.execute(run, runs, sequential, lambda p: Readiness("ready"), fake,
                      Progress(len(runs), [0.0] * len(runs)))
    return fake, run.runs().rows, len(runs)


def test_steps_above_the_one_that_ended_a_ladder_are_recorded_skipped_not_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake, rows, planned = run_ladders(tmp_path, monkeypatch, SaturatingExecutor, {
        "impl": "fake-serve", "style": "async,sync", "repeat": 2})
    # a row for every step planned, and the knee's refinement between 50 and
    # 100 in repeat 1: 71, 84 and 92 sustained, 92 within 10% of 100
    assert len(rows) == planned + 2 * 3
    for style in ("async", "sync"):
        got = [(r.rep, r.rate, r.status, r.step_verdict) for r in rows if r.style == style]
        assert got == [(1, 25, "ok", "sustained"), (1, 50, "ok", "sustained"),
                       (1, 100, "ok", "saturated"), (1, 71, "ok", "sustained"),
                       (1, 84, "ok", "sustained"), (1, 92, "ok", "sustained"),
                       (1, 200, "skipped", PAST_END),
                       (1, 400, "skipped", PAST_END), (2, 25, "ok", "sustained"),
                       (2, 50, "ok", "sustained"), (2, 100, "ok", "sustained"),
                       (2, 200, "invalid", None), (2, 400, "skipped", PAST_END)]
    assert fake.ran.count((1, 200)) == 0 and fake.ran.count((2, 400)) == 0
    skipped = next(r for r in rows if r.rep == 1 and r.rate == 400)
    assert skipped.error == ("not run: this ladder's step at 100 requests a second was saturated "
                             "(7 requests dropped, 0 unanswered) in repeat 1; no higher step is "
                             "measured")


def test_a_step_not_run_past_its_ladders_end_is_no_failure_for_until_settled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --until-settled a configuration that failed twice is not run
    again; 400 was not run in repeats 1 and 2 (skipped past the end), which
    is no failure: repeat 3, whose ladder does not end, runs it."""
    fake, rows, _ = run_ladders(tmp_path, monkeypatch, SaturatingExecutor, {
        "impl": "fake-serve", "style": "async", "repeat": 3, "until_settled": True,
        "max_repeat": 6}, reps=3)
    assert (3, 400) in fake.ran
    assert [r.status for r in rows if r.rate == 400] == ["skipped", "skipped", "ok"]


class CrashingExecutor(SaturatingExecutor):
    """A server that crashes at 100 requests a second in repeats 1 and 2,
    and would sustain every step after."""

    def run(self, p: Planned) -> Executed:
        rate = p.key.param("rate")
        self.ran.append((p.rep, rate))
        if p.rep <= 2 and rate == 100:
            return Executed(make_row(self.run_id, p, "crashed", error="exit 1"))
        return Executed(make_row(self.run_id, p, "ok", step_verdict="sustained"))


def test_a_step_not_run_again_for_its_failures_ends_its_ladder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --until-settled a step that failed twice is not run again; in
    repeat 3 its ladder ends there, as if it had failed a third time: the
    steps above are recorded skipped, not measured above a gap (a sustained
    rate is a range from no load up)."""
    fake, rows, _ = run_ladders(tmp_path, monkeypatch, CrashingExecutor, {
        "impl": "fake-serve", "style": "async", "repeat": 3, "until_settled": True,
        "max_repeat": 6})
    assert [rate for rep, rate in fake.ran if rep == 3] == [25, 50]
    third = [(r.rate, r.status, r.step_verdict) for r in rows if r.rep == 3]
    assert third == [(25, "ok", "sustained"), (50, "ok", "sustained"),
                     (200, "skipped", PAST_END), (400, "skipped", PAST_END)]
    assert next(r for r in rows if r.rep == 3 and r.rate == 400).error == (
        "not run: this ladder's step at 100 requests a second was not run again in repeat 3 "
        "(its earlier runs: crashed, crashed); no higher step is measured")


class LateGeneratorExecutor(SaturatingExecutor):
    """A generator that cannot keep its schedule at 100 requests a second
    for its first `late` attempts in repeat 1 (another process's burst), the
    server sustaining every step."""

    def __init__(self, run_id: str, late: int) -> None:
        super().__init__(run_id)
        self.late = late

    def run(self, p: Planned) -> Executed:
        rate = p.key.param("rate")
        self.ran.append((p.rep, rate))
        if p.rep == 1 and rate == 100 and self.ran.count((1, 100)) <= self.late:
            return Executed(make_row(self.run_id, p, "invalid", error=(
                f"{GENERATOR_FAULT} ran 1% of its schedule over 40 ms late")))
        return Executed(make_row(self.run_id, p, "ok", step_verdict="sustained"))


@pytest.mark.parametrize("late", [1, GENERATOR_RETRIES, GENERATOR_RETRIES + 1])
def test_a_step_the_generator_could_not_keep_is_run_again_before_it_ends_its_ladder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: int) -> None:
    """Each attempt is a row of its own (a failed run is never a gap); the
    ladder goes on past a step whose retry measured the server, and ends
    there when every attempt was the generator's, bisected below it to a
    bound from below."""
    fake, rows, _ = run_ladders(
        tmp_path, monkeypatch, lambda run_id: LateGeneratorExecutor(run_id, late), {
            "impl": "fake-serve", "style": "async", "repeat": 1, "until_settled": True,
            "max_repeat": 6})
    attempts = min(late + 1, GENERATOR_RETRIES + 1)
    assert fake.ran.count((1, 100)) == attempts
    assert [r.status for r in rows if r.rate == 100] == (
        ["invalid"] * late + ["ok"] if late <= GENERATOR_RETRIES else ["invalid"] * attempts)
    whole = ladder_rows(rows)
    assert len(whole) == 1
    if late <= GENERATOR_RETRIES:
        assert [r.status for r in rows if r.rate == 400] == ["ok"]
        assert (whole[0].sustained_rps, whole[0].ladder_top) == (400.0, True)
    else:
        # the rates between 50 and 100, which the generator kept: a narrower
        # bound from below, since nothing above it was measured of the server
        assert [r.status for r in rows if r.rate == 400] == ["skipped"]
        assert [(r.rate, r.status) for r in rows if 50 < r.rate < 100] == [
            (71, "ok"), (84, "ok"), (92, "ok")]
        assert (whole[0].sustained_rps, whole[0].ladder_top) == (92.0, True)


class CeilingExecutor(SaturatingExecutor):
    """A generator that can keep no rate from 100 a second on, whichever
    server and style it loads (its ceiling on this machine), the server
    sustaining every step it does keep; ran_at counts its attempts."""

    def run(self, p: Planned) -> Executed:
        rate = p.key.param("rate")
        self.ran.append((p.rep, rate))
        if rate >= 100:
            return Executed(make_row(self.run_id, p, "invalid", error=(
                f"{GENERATOR_FAULT} used 95% of its 1 core")))
        return Executed(make_row(self.run_id, p, "ok", step_verdict="sustained"))


@pytest.mark.parametrize("impls,styles,capped", [
    ("fake-serve,fake-serve-fast", "async", True),
    # one server's misses count once: they may be its own
    ("fake-serve", "async,sync", False)])
def test_a_rate_two_servers_missed_in_every_attempt_is_the_runs_ceiling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, impls: str, styles: str,
        capped: bool) -> None:
    """Repeat 1's ladders of two servers each spend their attempts at 100,
    the run's ceiling from then on: repeat 2's run nothing there or above
    (their rows skipped, the ceiling named) and are refined up to it, to
    the same bound from below, in 3 runs fewer each."""
    fake, rows, _ = run_ladders(tmp_path, monkeypatch, CeilingExecutor, {
        "impl": impls, "style": styles, "repeat": 2})
    attempts = GENERATOR_RETRIES + 1
    for rep, at_100 in ((1, attempts), (2, 0 if capped else attempts)):
        assert [rate for r, rate in fake.ran if r == rep] == 2 * (
            [25, 50] + [100] * at_100 + [71, 84, 92])
    at_100 = [(100, "skipped")] if capped else [(100, "invalid")] * attempts
    for impl, style in {(r.impl, r.style) for r in rows}:
        assert [(r.rate, r.status) for r in rows if (r.impl, r.style, r.rep) == (
            impl, style, 2)] == [(25, "ok"), (50, "ok"), *at_100, (71, "ok"), (84, "ok"),
                                 (92, "ok"), (200, "skipped"), (400, "skipped")]
    last = next(r for r in rows if r.rep == 2 and r.rate == 400)
    assert (last.error == ceiling_error(100)) is capped
    assert "100 requests a second" in ceiling_error(100)
    assert {(r.rep, r.sustained_rps, r.ladder_top) for r in ladder_rows(rows)} == {
        (1, 92.0, True), (2, 92.0, True)}


@pytest.mark.parametrize("missed,ceiling", [
    ([], None), ([9051], None), ([12800, 9051], 12800), ([12800, 7611, 9051], 9051)])
def test_the_runs_ceiling_is_the_rate_two_ladders_missed_at_or_below(missed, ceiling) -> None:
    assert run_ceiling(missed) == ceiling


def test_a_ladder_stopped_by_the_ceiling_is_refined_up_to_it() -> None:
    steps = [_step(3200), _step(6400)]
    assert refinement(steps) is None
    assert refinement(steps, ceiling=9051) == 7611
    assert refinement(steps + [_step(8300)], ceiling=9051) is None  # within 10%
    # a step that failed below the ceiling is what the ladder refines to
    assert refinement(steps + [_step(8300, "saturated")], ceiling=12800) == 7288


def test_a_retried_step_counts_only_its_attempt_that_measured_the_server() -> None:
    late = _step(200, None, "invalid")
    late.error = f"{GENERATOR_FAULT} used 95% of its 1 core"
    steps = [_step(100), late, _step(200, "saturated")]
    assert refinement(steps) == 141
    found = figures(steps)
    assert (found.sustained_rps, found.at_top) == (100.0, False)
    assert figures([_step(100), late]).at_top


def test_a_ladder_with_its_own_summary_line_is_not_made_again_from_its_steps() -> None:
    """summary.csv gives back a ladder's line beside its steps' (a ladder
    whose only measured step was invalid included): the line is the ladder."""
    step = _step(100, None, "invalid")
    line = Row(run_id="r", impl="srv", workload="http", rep=1, status="invalid")
    assert ladder_rows([step, line]) == []
    assert len(ladder_rows([step])) == 1


def _step(rate: int, verdict: str | None = "sustained", status: str = "ok") -> Row:
    return Row(run_id="r", impl="srv", workload="http", rep=1, rate=rate, status=status,
               step_verdict=verdict)


def _late(rate: int) -> Row:
    """A step whose every attempt the generator could not keep."""
    return Row(run_id="r", impl="srv", workload="http", rep=1, rate=rate, status="invalid",
               error=f"{GENERATOR_FAULT} ran 1% of its schedule over 40 ms late")


@pytest.mark.parametrize("steps,next_rate", [
    ([_step(100), _step(200), _step(400, "saturated")], 283),  # geometric middle
    ([_step(100), _step(200), _step(283, "slow"), _step(400, PAST_END, "skipped")], 238),
    ([_step(200), _step(219, "saturated")], None),  # within 10%: the knee is found
    ([_step(100), _step(200), _step(400)], None),  # not saturated yet
    ([_step(100, "saturated")], None),  # nothing sustained below it
    ([_step(100), _step(200, None, "invalid")], None),  # a wrong answer
    ([_step(100), _late(200)], 141),  # the generator's limit: the rates it may keep
    ([_step(100), _step(141), _late(200), _late(168)], 154),
    ([_step(100), _late(109)], None),  # within 10%: a bound from below
    ([_step(100), _step(200, None, "crashed")], None),
])
def test_a_knee_is_bisected_to_within_ten_percent(steps: list[Row], next_rate: int | None) -> None:
    assert refinement(steps) == next_rate
