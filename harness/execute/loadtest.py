"""One row of a server workload (http): start the server through the
launcher, wait for its `listening` line, drive it with k6 (closed model:
U users x R requests, every response checked), stop it with SIGTERM and
judge the whole (docs/protocol.md, "The HTTP server").

k6 is the load generator: a well-kept tool (Grafana) that checks every
response body itself, runs JMeter's closed model as its per-vu-iterations
executor and reports exact latency percentiles; it is built from the Go
module proxy into .tools/ (loadgen.py). Traffic goes to 127.0.0.1 only,
bounded in count (U x R) and in time (the run's timeout).
"""

from __future__ import annotations

import json
import os
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
from ..core.workloads import (CPUS, DELAY_MS, REQUESTS, STYLE, USERS, WORKLOADS, Request,
                              style_floor_ms)

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


assert [f.name for f in fields(LoadFigures)] == [
    name for name, _ in next(w for w in WORKLOADS.values() if w.kind == "server").row_columns]


@dataclass
class ServerRun:
    """What happened: the launcher's outcome for the server, and a verdict."""
    outcome: Outcome
    status: str | None = None  # None: judge the outcome (exit, signal) as for any program
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


def _k6(k6: Path, port: int, req: Request, max_s: float) -> tuple[dict[str, Any] | None, float, str]:
    """Run k6; (its summary or None, its CPU seconds, its last stderr line)."""
    with tempfile.TemporaryDirectory(prefix="harness-k6-") as tmp:
        summary = Path(tmp) / "summary.json"
        env = k6_env(tmp) | {
            "PORT": str(port), "STYLE": req.param(STYLE.name), "USERS": str(req.param(USERS.name)),
            "REQUESTS": str(req.param(REQUESTS.name)), "MAX_S": str(max(1, int(max_s))),
            "SUMMARY": str(summary)}
        argv = [str(k6), "run", "--quiet", "--no-color", "--no-usage-report", "--log-format",
                "raw", *(a for k in ("PORT", "STYLE", "USERS", "REQUESTS", "MAX_S", "SUMMARY")
                         for a in ("-e", f"{k}={env[k]}")), str(SCRIPT)]
        with open(Path(tmp) / "stderr", "w+") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, env=env, cwd=tmp, start_new_session=True)
            try:
                # wait4, not wait: k6's own CPU time, which shares the cores with the server
                _, status, usage = os.wait4(proc.pid, 0)
            except BaseException:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            proc.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            lines = [line.strip() for line in err.read().splitlines() if line.strip()]
        cpu = usage.ru_utime + usage.ru_stime
        last = lines[-1] if lines else f"exit {proc.returncode}"
        try:
            return json.loads(summary.read_text()), cpu, last
        except (OSError, ValueError):
            return None, cpu, f"no summary ({last})"


def _judge(summary: dict[str, Any], req: Request, figures: LoadFigures) -> tuple[str, str]:
    """(status, error) from k6's summary, its figures filled in."""
    metrics = summary.get("metrics", {})
    users, requests = req.param(USERS.name), req.param(REQUESTS.name)
    expected = users * requests
    done = int(metrics.get("http_reqs", {}).get("values", {}).get("count", 0))
    checks = {c["name"]: c for c in summary.get("root_group", {}).get("checks", [])}
    bad_status = checks.get("status", {}).get("fails", 0)
    bad_body = checks.get("body", {}).get("fails", 0)
    duration = metrics.get("http_req_duration", {}).get("values", {})
    load_s = summary.get("state", {}).get("testRunDurationMs", 0) / MS
    errors = max(bad_status, bad_body)
    figures.requests_done, figures.http_errors = done, errors
    figures.rps = (done - errors) / load_s if load_s > 0 else None
    figures.load_s = load_s or None
    figures.latency_p50_s = duration.get("med", 0) / MS if done else None
    figures.latency_p90_s = duration.get("p(90)", 0) / MS if done else None
    figures.latency_p99_s = duration.get("p(99)", 0) / MS if done else None
    figures.latency_max_s = duration.get("max", 0) / MS if done else None
    if done < expected:  # k6 stopped at the run's time limit (its maxDuration)
        return "timeout", (f"only {done} of {expected} requests answered within the run's "
                           f"--timeout")
    if bad_status:
        return "invalid", f"{bad_status} of {done} responses were not 200"
    if bad_body:
        return "invalid", f"{bad_body} of {done} response bodies were not 2*NUM + NUM/2"
    floor = style_floor_ms(req.param(STYLE.name), req.param(DELAY_MS.name))
    median_ms = duration.get("med", 0)
    if median_ms < floor:
        return "invalid", (f"median response {median_ms:.1f} ms is below the style's floor "
                           f"{floor:g} ms: the handler did not wait")
    return "ok", ""


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
            return ServerRun(server.finish(STOP_S), "timeout",
                             f"the server printed no listening line within {READY_S:g} s")
        port = ready.get("listening")
        if not isinstance(port, int) or not 0 < port < 65536:
            server.signal(signal.SIGKILL)
            return ServerRun(server.finish(STOP_S), "invalid",
                             f"the first stdout line is not {{\"listening\": PORT, ...}}: "
                             f"{server.stdout_now().partition(chr(10))[0][:200]!r}")
        style = req.param(STYLE.name)
        if style not in (ready.get("styles") or []):
            server.signal(signal.SIGTERM)
            return ServerRun(server.finish(STOP_S), "skipped",
                             f"this server has no {style!r} style (its README says why)")
        figures = LoadFigures()
        cpu = None
        status, error = "ok", ""
        if (problem := _health(port)) is not None:
            status, error = "invalid", problem
        else:
            summary, cpu, k6_error = _k6(k6, port, req, deadline - time.monotonic())
            figures.gen_cpu_s = cpu
            if summary is None:
                status, error = "invalid", f"k6 failed: {k6_error}"
            else:
                status, error = _judge(summary, req, figures)
        if not server.running():  # died under load: a crash, with what k6 saw
            out = server.finish(STOP_S)
            return ServerRun(out, None, error, figures, cpu)
        server.signal(signal.SIGTERM)
        out = server.finish(STOP_S)
        if out.status == "exited" and out.signal is None and out.exit_code == 0:
            return ServerRun(out, status, error, figures, cpu)
        return ServerRun(out, None, error, figures, cpu)  # did not exit 0 on SIGTERM: judged as a crash
