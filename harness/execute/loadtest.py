"""One row of a server workload (http): start the server through the
launcher, wait for its `listening` line, drive it with k6 (closed model:
U users x R requests; open model: one step of a rate ladder, RATE requests
a second for STEP_S seconds; every response checked), stop it with SIGTERM
and judge the whole (docs/protocol.md, "The HTTP server", "The rate ladder").

k6 is the load generator: a well-kept tool (Grafana) that checks every
response body itself, runs JMeter's closed model as its per-vu-iterations
executor and an open one as constant-arrival-rate, and reports exact latency
percentiles; it is built from the Go module proxy into .tools/ (loadgen.py).
Where the server is pinned (--cpus K), k6 runs on the cores left. Traffic
goes to 127.0.0.1 only, bounded in count (U x R, or RATE x STEP_S) and in
time (the run's timeout, a step's length and grace).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..processes.launcher import Outcome, start_process
from .loadgen import SCRIPT, k6_env
from ..core.schema import Status, StepVerdict
from ..core.workloads import (CPUS, DELAY_MS, GEN_BUSY_LIMIT, GEN_LAG_LIMIT_S, GENERATOR_FAULT,
                              LADDER_GRACE_S, RATE, REQUESTS, STEP_S, STYLE, USERS, WORKLOADS, Request,
                              ladder_p99_bound_s, ladder_vus, style_floor_ms, unsent_allowed)

READY_S = 60.0  # a server that does not print its listening line by then is a timeout
STOP_S = 10.0  # SIGTERM to exit
MS = 1000.0


@dataclass
class LoadFigures:
    """What the load test measured: the http workload's own row columns
    (its declaration's row_columns, checked below), None where not measured."""
    requests_done: int | None = None
    http_errors: int | None = None
    # throughput counts only the answers k6 checked right, so that a row
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
    """A k6 run: its summary (None: it wrote none), its CPU seconds and
    wall time, the cores it had, its last stderr line."""
    summary: dict[str, Any] | None
    cpu_s: float
    wall_s: float
    cpus: int
    last: str


def generator_cpus(server_cpus: int | None) -> list[int] | None:
    """The cores k6 runs on: those the launcher leaves the server (it
    pins to the first K the harness may use); None, all of them, where the
    server is not pinned or takes every core, or taskset is missing."""
    allowed = sorted(os.sched_getaffinity(0))
    if server_cpus is None or server_cpus >= len(allowed) or shutil.which("taskset") is None:
        return None
    return allowed[server_cpus:]


def _k6(k6: Path, port: int, req: Request, max_s: float) -> Generated:
    """Run k6 on the cores the server does not have (generator_cpus)."""
    rate = req.param(RATE.name)
    load = ({"RATE": str(rate), "STEP_S": str(req.param(STEP_S.name)),
             "VUS": str(ladder_vus(rate, req.param(DELAY_MS.name))),
             # the grace ends within the run's time limit
             "GRACE_S": str(max(0, min(LADDER_GRACE_S, int(max_s) - req.param(STEP_S.name))))}
            if rate is not None else
            {"USERS": str(req.param(USERS.name)), "REQUESTS": str(req.param(REQUESTS.name)),
             "MAX_S": str(max(1, int(max_s)))})
    cpus = generator_cpus(req.param(CPUS.name))
    pin = ["taskset", "-c", ",".join(map(str, cpus))] if cpus else []
    with tempfile.TemporaryDirectory(prefix="harness-k6-") as tmp:
        summary = Path(tmp) / "summary.json"
        given = {"PORT": str(port), "STYLE": req.param(STYLE.name), **load,
                 "SUMMARY": str(summary)}
        argv = [*pin, str(k6), "run", "--quiet", "--no-color", "--no-usage-report",
                "--log-format", "raw", *(a for k, v in given.items() for a in ("-e", f"{k}={v}")),
                str(SCRIPT)]
        with open(Path(tmp) / "stderr", "w+") as err:
            started = time.monotonic()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, env=k6_env(tmp) | given, cwd=tmp,
                                    start_new_session=True)
            try:
                # wait4, not wait: k6's own CPU time (taskset execs it: the same process)
                _, status, usage = os.wait4(proc.pid, 0)
            except BaseException:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            wall = time.monotonic() - started
            proc.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            lines = [line.strip() for line in err.read().splitlines() if line.strip()]
        cpu = usage.ru_utime + usage.ru_stime
        count = len(cpus) if cpus else len(os.sched_getaffinity(0))
        last = lines[-1] if lines else f"exit {proc.returncode}"
        try:
            return Generated(json.loads(summary.read_text()), cpu, wall, count, last)
        except (OSError, ValueError):
            return Generated(None, cpu, wall, count, f"no summary ({last})")


def _values(summary: dict[str, Any], metric: str) -> dict[str, float]:
    return summary.get("metrics", {}).get(metric, {}).get("values", {})


def _fails(summary: dict[str, Any]) -> dict[str, int]:
    """Each check's failures, by its name (load.js)."""
    return {c["name"]: c.get("fails", 0)
            for c in summary.get("root_group", {}).get("checks", [])}


def _latencies(figures: LoadFigures, values: dict[str, float], done: int) -> None:
    """The response-time columns from a k6 trend (ms)."""
    def at(stat: str) -> float | None:
        return values.get(stat, 0) / MS if done else None
    figures.latency_p50_s, figures.latency_p90_s, figures.latency_p99_s = (
        at("med"), at("p(90)"), at("p(99)"))
    figures.latency_p999_s, figures.latency_max_s = at("p(99.9)"), at("max")


def _below_floor(req: Request, median_ms: float) -> str | None:
    floor = style_floor_ms(req.param(STYLE.name), req.param(DELAY_MS.name))
    if median_ms < floor:
        return (f"median response {median_ms:.1f} ms is below the style's floor {floor:g} ms: "
                f"the handler did not wait")
    return None


def _busy(figures: LoadFigures, gen: Generated) -> str | None:
    """k6's share of its cores' time (gen_busy), and why the run measured k6
    if it was over GEN_BUSY_LIMIT."""
    figures.gen_busy = gen.cpu_s / (gen.wall_s * gen.cpus) if gen.wall_s > 0 else None
    if figures.gen_busy is not None and figures.gen_busy > GEN_BUSY_LIMIT:
        return (f"{GENERATOR_FAULT} used {figures.gen_busy:.0%} of its {gen.cpus} "
                f"core{'s' if gen.cpus != 1 else ''} (limit {GEN_BUSY_LIMIT:.0%}): the run "
                f"measured k6, not the server")
    return None


def _judge(summary: dict[str, Any], req: Request, figures: LoadFigures,
           gen: Generated) -> tuple[Status, str]:
    """(status, error) of a closed loop from k6's summary, its figures filled
    in. Unless the server is pinned, k6 shares its cores: a k6 busy over the
    limit on all of them left the server too little to measure it."""
    users, requests = req.param(USERS.name), req.param(REQUESTS.name)
    expected = users * requests
    done = int(_values(summary, "http_reqs").get("count", 0))
    fails = _fails(summary)
    bad_status, bad_body = fails.get("status", 0), fails.get("body", 0)
    duration = _values(summary, "http_req_duration")
    load_s = summary.get("state", {}).get("testRunDurationMs", 0) / MS
    errors = bad_status + bad_body  # the body is checked on a 200 only
    figures.requests_done, figures.http_errors = done, errors
    figures.rps = (done - errors) / load_s if load_s > 0 else None
    figures.load_s = load_s or None
    _latencies(figures, duration, done)
    if done < expected:  # k6 stopped at the run's time limit (its maxDuration)
        return Status.TIMEOUT, (f"only {done} of {expected} requests answered within the "
                                f"run's --timeout")
    if bad_status:
        return Status.INVALID, f"{bad_status} of {done} responses were not 200"
    if bad_body:
        return Status.INVALID, f"{bad_body} of {done} response bodies were not 2*NUM + NUM/2"
    if (busy := _busy(figures, gen)) is not None:
        return Status.INVALID, busy
    if (low := _below_floor(req, duration.get("med", 0))) is not None:
        return Status.INVALID, low
    return Status.OK, ""


def _judge_step(summary: dict[str, Any], req: Request, figures: LoadFigures,
                gen: Generated) -> tuple[Status, str]:
    """(status, error) of a ladder step from k6's summary, its figures and
    its verdict filled in. A step is `ok` when it measured the server
    (saturated or not); `invalid` on a wrong answer, an answer below the
    style's floor, or a generator too busy or too late to keep the schedule."""
    step_s = req.param(STEP_S.name)
    done = int(_values(summary, "http_reqs").get("count", 0))
    lag = _values(summary, "schedule_lag")  # k6's probe's (load.js)
    started = int(_values(summary, "sent").get("count", 0))  # answered or not
    fails = _fails(summary)
    bad_status, bad_body, refused = (fails.get(k, 0) for k in ("status", "body", "answered"))
    latency = _values(summary, "latency")
    figures.dropped = int(_values(summary, "dropped_iterations{scenario:load}").get("count", 0))
    # The schedule's requests (and the one due at the step's very end, which
    # k6 may send): a k6 that fell behind leaves some neither sent nor dropped
    # (more than those due within its allowed lateness of the end).
    due = req.param(RATE.name) * step_s
    figures.offered = max(due, started + figures.dropped)
    unscheduled = due - started - figures.dropped
    figures.unanswered = max(0, started - done)
    figures.requests_done, figures.http_errors = done, bad_status + bad_body
    figures.rps = (done - bad_status - bad_body) / step_s
    figures.load_s = summary.get("state", {}).get("testRunDurationMs", 0) / MS or None
    _latencies(figures, latency, done)
    figures.gen_lag_p99_s = lag.get("p(99)", 0) / MS if lag.get("count") else None
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
                                f"the {due} requests due were neither sent nor dropped")
    if busy is not None:
        return Status.INVALID, busy
    if figures.gen_lag_p99_s is not None and figures.gen_lag_p99_s > GEN_LAG_LIMIT_S:
        return Status.INVALID, (f"{GENERATOR_FAULT} ran 1% of its schedule over "
                                f"{figures.gen_lag_p99_s * MS:.0f} ms late (limit "
                                f"{GEN_LAG_LIMIT_S * MS:g} ms): it could not keep the schedule")
    if not done:
        return Status.INVALID, f"none of the {started} requests sent was answered"
    if (low := _below_floor(req, latency.get("med", 0))) is not None:
        return Status.INVALID, low
    return Status.OK, ""


def measure_server(argv: list[str], env: dict[str, str], cwd: str, req: Request, k6: Path,
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
                             f"the server printed no listening line within {READY_S:g} s")
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
            gen = _k6(k6, port, req, deadline - time.monotonic())
            cpu = figures.gen_cpu_s = gen.cpu_s
            figures.gen_cpus = gen.cpus
            if gen.summary is None:
                status, error = Status.INVALID, f"k6 failed: {gen.last}"
            elif req.param(RATE.name) is not None:
                status, error = _judge_step(gen.summary, req, figures, gen)
            else:
                status, error = _judge(gen.summary, req, figures, gen)
        if not server.running():  # died under load: a crash, with what k6 saw
            out = server.finish(STOP_S)
            return ServerRun(out, None, error, figures, cpu)
        server.signal(signal.SIGTERM)
        out = server.finish(STOP_S)
        if out.status == "exited" and out.signal is None and out.exit_code == 0:
            return ServerRun(out, status, error, figures, cpu)
        if out.status == "timeout":  # still busy (a blocked event loop's backlog): killed
            return ServerRun(out, Status.TIMEOUT, f"the server did not exit within {STOP_S:g} s "
                             f"of SIGTERM, and was killed" + (f"; k6: {error}" if error else ""),
                             figures, cpu)
        return ServerRun(out, None, error, figures, cpu)  # did not exit 0 on SIGTERM: judged as a crash
