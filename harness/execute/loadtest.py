"""One row of a server workload (http): start the server through the
launcher, wait for its `listening` line, drive it with the load generator
(closed model: U users sending U x R requests, each user its next when its
last is answered; open model: one step of a rate ladder, RATE requests a
second for STEP_S seconds on a fixed schedule after an uncounted warm-up at
that rate, each request's latency from its scheduled send; every response
checked), stop it with SIGTERM and judge the whole (docs/protocol.md, "The
HTTP server", "The rate ladder").

The generator (loadgen.py) runs through the same launcher as the server, so
it dies with the harness and leaves nothing behind. Where the server is
pinned (--cpus K), the generator runs on the cores left. Traffic goes to
127.0.0.1 only, bounded in count (U x R, or RATE x (STEP_S + the warm-up))
and in time (the run's timeout, a step's length, warm-up and graces).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..core.formatting import fmt_fixed, fmt_number, fmt_share
from ..processes.launcher import Ended, Outcome, run_process, start_process
from .loadgen import generator_argv, generator_env
from ..core.schema import Status, StepVerdict
from ..core.workloads import (CPUS, DELAY_MS, GEN_BUSY_LIMIT, GEN_LAG_LIMIT_S, GENERATOR_FAULT,
                              LADDER_GRACE_S, LADDER_WARMUP_S, RATE, REQUESTS, STEP_S, STYLE,
                              USERS, WORKLOADS, Request, ladder_p99_bound_s, ladder_vus,
                              style_floor_ms, unsent_allowed)

GENERATOR_SAMPLE_S = 0.1  # how soon the launcher notices the generator's time limit
READY_S = 60.0  # a server that does not print its listening line by then is a timeout
STOP_S = 10.0  # SIGTERM to exit
MS = 1000.0


@dataclass
class LoadFigures:
    """What the load test measured: the http workload's own row columns
    (its declaration's row_columns, checked below), None where not measured."""
    requests_done: int | None = None
    http_errors: int | None = None
    # throughput counts only the answers the generator checked right, so that a row
    # cut short by its timeout records what the server really served
    rps: float | None = None
    latency_p50_s: float | None = None
    latency_p90_s: float | None = None
    latency_p99_s: float | None = None
    latency_max_s: float | None = None
    gen_cpu_s: float | None = None
    load_s: float | None = None
    latency_p999_s: float | None = None
    # the open loop's (a ladder step's): requests due, not sent for want of
    # a free virtual user, sent but unanswered by the step's end and grace
    offered: int | None = None
    dropped: int | None = None
    unanswered: int | None = None
    # the generator's cores, the share of their time it used, and the p99
    # of how late its probe ran against the schedule (open loop)
    gen_cpus: int | None = None
    gen_busy: float | None = None
    gen_lag_p99_s: float | None = None
    step_verdict: StepVerdict | None = None


assert [f.name for f in fields(LoadFigures)] == [
    name for name, _ in next(w for w in WORKLOADS.values() if w.kind == "server").row_columns]


@dataclass
class ServerRun:
    """What happened: the launcher's outcome for the server, and a verdict."""
    outcome: Outcome
    status: Status | None = None  # None: judge the outcome (exit, signal) as for any program
    error: str = ""
    figures: LoadFigures = field(default_factory=LoadFigures)
    # The load generator's CPU: the machine's load, but part of the measurement.
    generator_cpu_s: float | None = None


def _listening(text: str) -> dict[str, Any] | None:
    """The server's first stdout line, once complete and valid."""
    line, newline, _ = text.partition("\n")
    if not newline:
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _health(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as resp:
            return None if resp.status == 200 else f"GET /health answered {resp.status}"
    except (urllib.error.URLError, OSError) as exc:
        return f"GET /health failed: {exc}"


@dataclass
class Generated:
    """A run of the generator: its summary (None: it wrote none), its CPU
    seconds and wall time, the cores it had, its last stderr line."""
    summary: dict[str, Any] | None
    cpu_s: float
    wall_s: float
    cpus: int
    last: str


def generator_cpus(server_cpus: int | None) -> list[int] | None:
    """The cores the generator runs on: those the launcher leaves the server
    (it pins to the first K the harness may use); None, all of them, where
    the server is not pinned or takes every core, or taskset is missing."""
    allowed = sorted(os.sched_getaffinity(0))
    if server_cpus is None or server_cpus >= len(allowed) or shutil.which("taskset") is None:
        return None
    return allowed[server_cpus:]


def _generate(binary: Path, port: int, req: Request, max_s: float,
              scratch: str | None) -> Generated:
    """Run the generator on the cores the server does not have
    (generator_cpus), through the launcher: it dies with the harness, and
    nothing of it outlives this call; its temporary folder is removed."""
    rate = req.param(RATE.name)
    step_s = req.param(STEP_S.name)
    workers = (ladder_vus(rate, req.param(DELAY_MS.name)) if rate is not None
               else req.param(USERS.name))
    cpus = generator_cpus(req.param(CPUS.name))
    pin = ["taskset", "-c", ",".join(map(str, cpus))] if cpus else []
    count = len(cpus) if cpus else len(os.sched_getaffinity(0))
    # inside the run's cache folder (scratch): one a killed harness left is
    # swept with it by the next (executor.sweep_caches)
    with tempfile.TemporaryDirectory(prefix="loadgen-", dir=scratch) as tmp:
        summary = Path(tmp) / "summary.json"
        warmup_s = LADDER_WARMUP_S if rate is not None else 0
        argv = [*pin, *generator_argv(
            binary, f"http://127.0.0.1:{port}/{req.param(STYLE.name)}/", summary, rate, step_s,
            # the grace ends within the run's time limit
            max(0, min(LADDER_GRACE_S, int(max_s) - (step_s or 0) - warmup_s)), workers,
            workers * (req.param(REQUESTS.name) or 0), max(1.0, max_s), warmup_s)]
        # the warm-up waits for its answers within a grace of its own
        out = run_process(argv, generator_env(tmp), tmp,
                          max_s + LADDER_GRACE_S + (warmup_s and warmup_s + LADDER_GRACE_S),
                          None, GENERATOR_SAMPLE_S)
        cpu = (out.cpu_user_s or 0.0) + (out.cpu_sys_s or 0.0)
        wall = out.wall_s or 0.0
        lines = [line.strip() for line in out.stderr_tail.splitlines() if line.strip()]
        last = lines[-1] if lines else (f"exit {out.exit_code}" if out.signal is None
                                        else f"killed by signal {out.signal}")
        try:
            return Generated(json.loads(summary.read_text()), cpu, wall, count, last)
        except (OSError, ValueError):
            return Generated(None, cpu, wall, count, f"no summary ({last})")


def _latencies(figures: LoadFigures, trend: dict[str, float], done: int) -> None:
    """The response-time columns from the generator's trend (ms)."""
    def at(stat: str) -> float | None:
        return trend.get(stat, 0) / MS if done else None
    figures.latency_p50_s, figures.latency_p90_s, figures.latency_p99_s = (
        at("p50_ms"), at("p90_ms"), at("p99_ms"))
    figures.latency_p999_s, figures.latency_max_s = at("p999_ms"), at("max_ms")


def _below_floor(req: Request, median_ms: float) -> str | None:
    floor = style_floor_ms(req.param(STYLE.name), req.param(DELAY_MS.name))
    if median_ms < floor:
        return (f"median response {fmt_fixed(median_ms, 1)} ms is below the style's floor "
                f"{fmt_number(floor)} ms: "
                f"the handler did not wait")
    return None


def _busy(figures: LoadFigures, gen: Generated) -> str | None:
    """The generator's share of its cores' time (gen_busy), and why the run measured it
    if it was over GEN_BUSY_LIMIT."""
    figures.gen_busy = gen.cpu_s / (gen.wall_s * gen.cpus) if gen.wall_s > 0 else None
    if figures.gen_busy is not None and figures.gen_busy > GEN_BUSY_LIMIT:
        return (f"{GENERATOR_FAULT} used {fmt_share(figures.gen_busy)} of its {gen.cpus} "
                f"core{'s' if gen.cpus != 1 else ''} (limit {fmt_share(GEN_BUSY_LIMIT)}): the run "
                f"measured the generator, not the server")
    return None


def _judge(summary: dict[str, Any], req: Request, figures: LoadFigures,
           gen: Generated) -> tuple[Status, str]:
    """(status, error) of a closed loop from the generator's summary, its
    figures filled in. Unless the server is pinned, the generator shares its
    cores: one busy over the limit on all of them left the server too little
    to measure it."""
    users, requests = req.param(USERS.name), req.param(REQUESTS.name)
    expected = users * requests
    done = int(summary.get("answered", 0))
    bad_status, bad_body = int(summary.get("bad_status", 0)), int(summary.get("bad_body", 0))
    latency = summary.get("latency", {})
    load_s = float(summary.get("elapsed_s", 0))
    errors = bad_status + bad_body  # the body is checked on a 200 only
    figures.requests_done, figures.http_errors = done, errors
    figures.rps = (done - errors) / load_s if load_s > 0 else None
    figures.load_s = load_s or None
    _latencies(figures, latency, done)
    if done < expected:  # the generator stopped at the run's time limit
        return Status.TIMEOUT, (f"only {done} of {expected} requests answered within the "
                                f"run's --timeout")
    if bad_status:
        return Status.INVALID, (f"{bad_status} of {done} responses were not 200 "
                                f"({summary.get('first_error', '')})")
    if bad_body:
        return Status.INVALID, f"{bad_body} of {done} response bodies were not 2*NUM + NUM/2"
    if (busy := _busy(figures, gen)) is not None:
        return Status.INVALID, busy
    if (low := _below_floor(req, latency.get("p50_ms", 0))) is not None:
        return Status.INVALID, low
    return Status.OK, ""


def _step_counts(summary: dict[str, Any], req: Request, figures: LoadFigures) -> int:
    """A step's counts into its figures; returns the requests neither sent
    nor dropped. A request not sent by the step's end is dropped where the
    server held every worker (the most in flight reached them all), else the
    generator fell behind its schedule."""
    sent, done = int(summary.get("sent", 0)), int(summary.get("answered", 0))
    due = req.param(RATE.name) * req.param(STEP_S.name)
    unsent = max(0, due - sent)
    held = int(summary.get("max_in_flight", 0)) >= int(summary.get("workers", 1))
    figures.offered = max(due, sent)
    figures.dropped = unsent if held else 0
    figures.unanswered = int(summary.get("cut_at_end", 0))
    bad = int(summary.get("bad_status", 0)) + int(summary.get("bad_body", 0))
    figures.requests_done, figures.http_errors = done, bad
    figures.rps = (done - bad) / req.param(STEP_S.name)
    figures.load_s = float(summary.get("elapsed_s", 0)) or None
    return 0 if held else unsent


def _judge_step(summary: dict[str, Any], req: Request, figures: LoadFigures,
                gen: Generated) -> tuple[Status, str]:
    """(status, error) of a ladder step from the generator's summary, its
    figures and its verdict filled in. A step is `ok` when it measured the
    server (saturated or not); `invalid` on a wrong answer, an answer below
    the style's floor, or a generator too busy or too late to keep the
    schedule."""
    unscheduled = _step_counts(summary, req, figures)
    done = figures.requests_done or 0
    bad_status, bad_body = int(summary.get("bad_status", 0)), int(summary.get("bad_body", 0))
    refused = int(summary.get("refused", 0))
    latency, lag = summary.get("latency", {}), summary.get("lag", {})
    _latencies(figures, latency, done)
    figures.gen_lag_p99_s = lag.get("p99_ms", 0) / MS if lag.get("count") else None
    busy = _busy(figures, gen)
    if figures.dropped or figures.unanswered or refused:
        figures.step_verdict = StepVerdict.SATURATED
    elif done and figures.latency_p99_s > ladder_p99_bound_s(req.param(DELAY_MS.name)):
        figures.step_verdict = StepVerdict.SLOW
    else:
        figures.step_verdict = StepVerdict.SUSTAINED
    if bad_body:
        return Status.INVALID, f"{bad_body} of {done} response bodies were not 2*NUM + NUM/2"
    if bad_status > refused:
        return Status.INVALID, (f"{bad_status - refused} of {done} responses were neither 200 "
                                f"nor an overloaded server's 503")
    if unscheduled > unsent_allowed(req.param(RATE.name)):
        return Status.INVALID, (f"{GENERATOR_FAULT} fell behind its schedule: {unscheduled} of "
                                f"the {figures.offered} requests due were neither sent nor dropped")
    if busy is not None:
        return Status.INVALID, busy
    if figures.gen_lag_p99_s is not None and figures.gen_lag_p99_s > GEN_LAG_LIMIT_S:
        return Status.INVALID, (f"{GENERATOR_FAULT} ran 1% of its schedule over "
                                f"{fmt_fixed(figures.gen_lag_p99_s * MS, 0)} ms late (limit "
                                f"{fmt_number(GEN_LAG_LIMIT_S * MS)} ms): it could not keep the "
                                "schedule")
    if not done:
        return Status.INVALID, f"none of the {figures.offered} requests due was answered"
    if (low := _below_floor(req, latency.get("p50_ms", 0))) is not None:
        return Status.INVALID, low
    return Status.OK, ""


def measure_server(argv: list[str], env: dict[str, str], cwd: str, req: Request, generator: Path,
                   timeout_s: float, max_rss_bytes: int | None,
                   sample_interval_s: float, perf: str | None = None) -> ServerRun:
    """Serve, load, stop: one row. Whatever happens, the server's tree is
    gone when this returns (start_process)."""
    deadline = time.monotonic() + timeout_s
    with start_process(argv, env, cwd, timeout_s, max_rss_bytes, sample_interval_s,
                       req.param(CPUS.name), perf) as server:
        ready = None
        ready_by = min(deadline, time.monotonic() + READY_S)
        while ready is None and server.running() and time.monotonic() < ready_by:
            ready = _listening(server.stdout_now())
            if ready is None:
                time.sleep(0.02)
        if ready is None:
            if not server.running():  # died before listening: judged as any crash
                return ServerRun(server.finish(STOP_S))
            server.signal(signal.SIGKILL)
            return ServerRun(server.finish(STOP_S), Status.TIMEOUT,
                             f"the server printed no listening line within {fmt_number(READY_S)} s")
        port = ready.get("listening")
        if not isinstance(port, int) or not 0 < port < 65536:
            server.signal(signal.SIGKILL)
            return ServerRun(server.finish(STOP_S), Status.INVALID,
                             f"the first stdout line is not {{\"listening\": PORT, ...}}: "
                             f"{server.stdout_now().partition(chr(10))[0][:200]!r}")
        style = req.param(STYLE.name)
        if style not in (ready.get("styles") or []):
            server.signal(signal.SIGTERM)
            return ServerRun(server.finish(STOP_S), Status.SKIPPED,
                             f"this server has no {style!r} style (its README says why)")
        figures = LoadFigures()
        cpu = None
        status, error = Status.OK, ""
        if (problem := _health(port)) is not None:
            status, error = Status.INVALID, problem
        else:
            gen = _generate(generator, port, req, deadline - time.monotonic(),
                            env.get("XDG_CACHE_HOME"))
            cpu = figures.gen_cpu_s = gen.cpu_s
            figures.gen_cpus = gen.cpus
            if gen.summary is None:
                status, error = Status.INVALID, f"{GENERATOR_FAULT} failed: {gen.last}"
            elif req.param(RATE.name) is not None:
                status, error = _judge_step(gen.summary, req, figures, gen)
            else:
                status, error = _judge(gen.summary, req, figures, gen)
        if not server.running():  # died under load: a crash, with what the generator saw
            out = server.finish(STOP_S)
            return ServerRun(out, None, error, figures, cpu)
        server.signal(signal.SIGTERM)
        out = server.finish(STOP_S)
        if out.status == Ended.EXITED and out.signal is None and out.exit_code == 0:
            return ServerRun(out, status, error, figures, cpu)
        if out.status == Ended.TIMEOUT:  # still busy (a blocked event loop's backlog): killed
            return ServerRun(out, Status.TIMEOUT, f"the server did not exit within {fmt_number(STOP_S)} s "
                             f"of SIGTERM, and was killed"
                             + (f"; {GENERATOR_FAULT}: {error}" if error else ""),
                             figures, cpu)
        return ServerRun(out, None, error, figures, cpu)  # did not exit 0 on SIGTERM: judged as a crash
