"""The http workload end to end with fake servers (fakes/fake/server.py)
and the real load generator: the rows, their statuses and that no server
outlives its row. The real servers are loaded by test_smoke."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from harness.execute.loadgen import Unavailable, ensure_generator
from harness.core.ladder import GENERATOR_RETRIES
from harness.core.schema import PAST_END
from harness.core.workloads import LADDER_WARMUP_S, STYLES, style_floor_ms

from ..conftest import FAKES, ROOT, gone_within, harness, leftovers, read_rows, tool_missing

# FAKE_TOKEN marks the fakes a test started: the programs get it only because
# the test asks (the programs' environment is an allow-list).
HTTP = ["run", "--no-report", "--repeat", "1", "--inherit-env", "FAKE_TOKEN", "--workload", "http",
        "--users", "3", "--requests", "2", "--delay-ms", "20"]


@pytest.fixture(scope="module", autouse=True)
def loadgen() -> None:
    try:
        ensure_generator()
    except Unavailable as exc:
        tool_missing("the load generator", str(exc))


def _run(out: Path, impl: str, *extra: str) -> tuple[list[dict[str, str]], str]:
    token = uuid.uuid4().hex
    # a ladder step (--rate) is an open loop: no users, no requests
    base = [a for i, a in enumerate(HTTP) if not ("--rate" in extra and (
        a in ("--users", "--requests") or HTTP[i - 1] in ("--users", "--requests")))]
    proc = harness(*base, "--impl", impl, "--out", str(out), *extra,
                   extra_env={"FAKE_TOKEN": token})
    rows = read_rows(out)
    assert not leftovers(token), "a server outlived its row"
    return rows, proc.stdout + proc.stderr


def test_a_good_server_gives_an_ok_row_per_style_with_its_figures(out: Path) -> None:
    rows, log = _run(out, "fake-serve")
    assert [r["style"] for r in rows] == list(STYLES), log
    for r in rows:
        assert r["status"] == "ok", (r["style"], r["error"])
        assert (r["users"], r["requests"], r["delay_ms"]) == ("3", "2", "20")
        assert int(r["requests_done"]) == 6 and r["http_errors"] == "0"
        assert float(r["latency_p50_s"]) * 1000 >= style_floor_ms(r["style"], 20)
        assert float(r["rps"]) > 0 and float(r["gen_cpu_s"]) > 0
        assert int(r["peak_rss_bytes"]) > 0 and r["exit_code"] == "0"  # exited 0 on SIGTERM
    assert "req/s" in log
    # the report: a table per implementation and the three http plots
    assert harness("report", str(out / "latest")).returncode == 0
    report = (out / "latest" / "report.md").read_text()
    assert "| users | requests | delay_ms | pool_threads | style | rate | step_s | impl |" in report
    assert {p.name for p in (out / "latest" / "plots").glob("http_*.png")} == {
        "http_throughput.png", "http_threads.png", "http_latency.png"}


def test_a_server_dying_under_load_is_crashed(out: Path) -> None:
    rows, _ = _run(out, "fake-serve-die", "--style", "async")
    [row] = rows
    assert row["status"] == "crashed" and row["exit_code"] == "3", row
    assert "the load generator: " in row["error"], row["error"]


def test_a_server_that_never_listens_is_a_timeout(out: Path) -> None:
    rows, _ = _run(out, "fake-serve-silent", "--style", "async", "--timeout", "3")
    [row] = rows
    assert row["status"] == "timeout", row


def test_a_wrong_body_is_invalid(out: Path) -> None:
    rows, _ = _run(out, "fake-serve-wrong", "--style", "when-all")
    [row] = rows
    assert row["status"] == "invalid" and "bodies" in row["error"], row
    # throughput counts right answers only: none here
    assert row["http_errors"] == "6" and float(row["rps"]) == 0, row


def test_an_answer_below_the_styles_floor_is_invalid(out: Path) -> None:
    rows, _ = _run(out, "fake-serve-fast", "--style", "sync")
    [row] = rows
    assert row["status"] == "invalid" and "floor" in row["error"], row


def test_bad_http_options_are_one_line_exit_2(out: Path) -> None:
    for args in (["--style", "blocking"], ["--users", "0"], ["--requests", "x"],
                 ["--threads", "-2"]):
        proc = harness(*HTTP, "--impl", "fake-serve", "--out", str(out), *args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (args, proc)


# ---------------------------------------------------------------- the rate ladder

LADDER = ["--delay-ms", "5", "--style", "sync"]
STALL_S = 0.6  # fakes/fake/server.py's stall


def _generator_kept_up(row: dict[str, str]) -> bool:
    """A step is ok, or invalid only because the machine's load held the
    generator back (the run says so rather than keep the figures)."""
    return row["status"] == "ok" or "load generator" in row["error"]


def test_a_ladder_gives_a_row_per_step_with_its_columns(out: Path) -> None:
    rows, log = _run(out, "fake-serve", *LADDER, "--rate", "20,40", "--step-s", "2")
    assert [r["rate"] for r in rows] == ["20", "40"], log
    if rows[0]["status"] != "ok" or rows[0]["step_verdict"] == "saturated":
        # a loaded machine held the generator back (or the server): the ladder ends there
        assert (rows[1]["status"], rows[1]["step_verdict"]) == ("skipped", PAST_END), log
        rows = rows[:1]
    for r in rows:
        assert _generator_kept_up(r), r["error"]
        # an open loop has no users; its step's length is recorded
        assert (r["users"], r["requests"], r["step_s"]) == ("", "", "2")
        # every request due is answered, dropped or unanswered, unless the
        # generator fell behind its schedule (then the step is invalid)
        sent = int(r["requests_done"]) + int(r["dropped"]) + int(r["unanswered"])
        assert int(r["offered"]) >= 2 * int(r["rate"])
        assert sent == int(r["offered"]) or "fell behind" in r["error"], r
        assert r["step_verdict"] in ("sustained", "slow", "saturated")
        assert float(r["latency_p50_s"]) <= float(r["latency_p99_s"]) \
            <= float(r["latency_p999_s"]) <= float(r["latency_max_s"])
        assert int(r["gen_cpus"]) >= 1 and 0 < float(r["gen_busy"]) < 1
        assert r["gen_lag_p99_s"] != "" and int(r["max_threads"]) > 0


def test_a_stall_is_in_the_open_loops_tail_and_hidden_by_the_closed_loops_p99(
        out: Path) -> None:
    """Coordinated omission: through the fake's 0.6 s stall, the open loop
    keeps its schedule, and every request due in it is timed from when it
    was due, whether it waited in the server or for a free connection: p99
    holds the stall, and the step is no sustained one (its ladder ends
    there). The closed loop's two users each wait out the stall with one
    request and send nothing meanwhile: 2 of 300 requests, below its p99
    (its slowest still shows it). The open loop's stall comes a second into
    the measured step, past the uncounted warm-up before it."""
    rows, log = _run(out / "open", f"fake-serve-stall[FAKE_STALL_AT_S={LADDER_WARMUP_S + 1.0}]",
                     *LADDER, "--rate", "100", "--step-s", "3")
    [step] = rows
    assert _generator_kept_up(step), step["error"]
    if step["status"] == "ok":
        assert step["step_verdict"] in ("slow", "saturated"), step
        assert step["unanswered"] == "0", log
        assert float(step["latency_p99_s"]) >= 0.8 * STALL_S, step
    rows, log = _run(out / "closed", "fake-serve-stall", *LADDER, "--users", "2",
                     "--requests", "150")
    [closed] = rows
    assert closed["status"] == "ok", closed["error"]
    assert float(closed["latency_max_s"]) >= 0.8 * STALL_S, closed
    assert float(closed["latency_p99_s"]) < 0.8 * STALL_S, closed


def _stop_generator_once(after_s: float, for_s: float, stopped: list[int]) -> None:
    """SIGSTOP this test's load generator (a descendant of this process)
    after_s after it starts, for for_s, then SIGCONT: a generator the
    machine held back, as a pause of its own would."""
    binary = str(ensure_generator())
    me, deadline = os.getpid(), time.monotonic() + 60
    while time.monotonic() < deadline:
        # /proc's exe link read afresh: psutil keeps a process's first one,
        # taskset's before it execs the generator
        for pid in (int(d) for d in os.listdir("/proc") if d.isdigit()):
            try:
                if os.readlink(f"/proc/{pid}/exe") != binary or \
                        me not in (q.pid for q in psutil.Process(pid).parents()):
                    continue
                time.sleep(after_s)
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
                time.sleep(for_s)
                os.kill(pid, signal.SIGCONT)
                return
            except (OSError, psutil.Error):
                continue
        time.sleep(0.02)


def test_a_stalled_generator_makes_the_step_invalid_never_a_good_one(out: Path) -> None:
    """A generator stopped for 0.5 s in the middle of a step sent nothing
    meanwhile, then its late requests in a burst: the step measured the
    generator, and says so (its own reason), whatever the server did; the
    step then runs again. (Stopped a second into the step: past its warm-up.)"""
    stopped: list[int] = []
    thread = threading.Thread(target=_stop_generator_once,
                              args=(LADDER_WARMUP_S + 1.0, 0.5, stopped))
    thread.start()
    try:
        rows, log = _run(out, "fake-serve", *LADDER, "--rate", "100", "--step-s", "3")
    finally:
        thread.join()
    assert stopped, "the generator was never found running"
    step, *again = rows
    assert step["status"] == "invalid", (step["status"], step["step_verdict"], log)
    assert step["error"].startswith("the load generator"), step["error"]
    # run again in its repeat (ladder.GENERATOR_RETRIES), each attempt a row
    assert 1 <= len(again) <= GENERATOR_RETRIES and {r["rate"] for r in again} == {step["rate"]}


def _generators_of(root: int, binary: str, within_s: float) -> list[psutil.Process]:
    """The load generators descended from root, waited for up to within_s."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        found = []
        for p in psutil.Process(root).children(recursive=True):
            try:
                if os.readlink(f"/proc/{p.pid}/exe") == binary:
                    found.append(p)
            except OSError:
                continue
        if found:
            return found
        time.sleep(0.05)
    return []


@pytest.mark.parametrize("how", ["KILL", "KILL-group", "TERM", "INT-group"])
def test_the_generator_and_the_server_die_with_a_killed_harness(how: str, tmp_path: Path,
                                                                 token: str) -> None:
    """A harness killed in the middle of a ladder step (alone or with its
    process group) leaves neither the load generator sending load nor the
    server it loads; the next run completes and removes the run's caches
    (the generator's folder among them) that a killed harness left."""
    binary = str(ensure_generator())
    base = [a for i, a in enumerate(HTTP) if a not in ("--users", "--requests")
            and HTTP[i - 1] not in ("--users", "--requests")]
    argv = [sys.executable, "-m", "harness", *base, "--impl", "fake-serve", *LADDER,
            "--rate", "20", "--step-s", "30", "--out", str(tmp_path / "out")]
    scratch = tmp_path / "tmp"  # TMPDIR: the run's caches and the generator's folder
    scratch.mkdir()
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), FAKE_TOKEN=token, TMPDIR=str(scratch))
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        generators = _generators_of(proc.pid, binary, 60)
        assert generators, "the load generator was never found running"
        time.sleep(1)  # in the step, load flowing
        name, _, group = how.partition("-")
        signum = getattr(signal, f"SIG{name}")
        os.killpg(proc.pid, signum) if group else os.kill(proc.pid, signum)
        proc.wait(timeout=30)
        _, alive = psutil.wait_procs(generators, timeout=10)
        assert not alive, f"the load generator outlived the harness: {[p.pid for p in alive]}"
        assert not gone_within(token, 10), "the server outlived the harness"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    left = list(scratch.glob(f"harness-cache-{proc.pid}-*/**/loadgen-*"))
    assert left or name != "KILL", "a SIGKILL leaves the generator's folder, for the next run"
    after = harness(*HTTP, "--impl", "fake-serve", "--out", str(tmp_path / "next"),
                    extra_env={"FAKE_TOKEN": token, "TMPDIR": str(scratch)})
    assert after.returncode == 0, after.stderr
    assert not list(scratch.glob(f"harness-cache-{proc.pid}-*")), list(scratch.iterdir())
