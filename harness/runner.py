"""Run one measured process: launch, sample, enforce limits, classify."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from .launcher import METHOD, ensure_launcher
from .sampler import Sample, Sampler

KILL_GRACE_S = 5.0


@dataclass
class Outcome:
    """What happened to one process, before validation."""
    status: str  # "exited", "timeout", "oom"
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float | None = None
    cpu_user_s: float | None = None
    cpu_sys_s: float | None = None
    peak_rss_bytes: int | None = None
    peak_rss_method: str = ""
    sampled_peak_rss_bytes: int | None = None
    max_threads: int | None = None
    stdout: str = ""
    stderr: str = ""
    samples: list[Sample] = field(default_factory=list)


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _parse_report(text: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        values.update({parts[i]: int(parts[i + 1]) for i in range(0, len(parts) - 1, 2)})
    return values


def run_process(argv: list[str], env: dict[str, str], cwd: str, timeout_s: float,
                max_rss_bytes: int | None, sample_interval_s: float) -> Outcome:
    """Start argv through the launcher in its own session, so that the whole
    process tree can be killed at once, and measure it until it exits."""
    launcher = ensure_launcher()
    report_r, report_w = os.pipe()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen([str(launcher), str(report_w), *argv], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, env=env, cwd=cwd,
                                    pass_fds=(report_w,), start_new_session=True)
        finally:
            os.close(report_w)
        pgid = proc.pid
        started = time.monotonic()
        sampler: Sampler | None = None
        timed_out = False
        try:
            with os.fdopen(report_r, "r") as report:
                first = report.readline()
                pid = _parse_report(first).get("pid")
                if pid is not None:
                    sampler = Sampler(pid, sample_interval_s, max_rss_bytes,
                                      on_limit=lambda: kill_group(pgid))
                    sampler.start()
                deadline = time.monotonic() + timeout_s
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
                    kill_group(pgid)
                    proc.wait(timeout=KILL_GRACE_S)
                rest = report.read()
                elapsed = time.monotonic() - started
        finally:
            # Whatever happened (including Ctrl-C), leave no process behind.
            kill_group(pgid)
            if proc.poll() is None:
                proc.wait(timeout=KILL_GRACE_S)
            if sampler is not None:
                sampler.stop()
        out.seek(0)
        err.seek(0)
        outcome = Outcome(status="exited",
                          stdout=out.read().decode(errors="replace"),
                          stderr=err.read().decode(errors="replace"))

    values = _parse_report(rest)
    if sampler is not None:
        outcome.samples = sampler.samples
        outcome.sampled_peak_rss_bytes = sampler.peak_rss or None
        outcome.max_threads = sampler.max_threads or None
    if sampler is not None and sampler.hit_limit:
        outcome.status = "oom"
    elif timed_out:
        outcome.status = "timeout"
    if "status" in values:
        ws = values["status"]
        if os.WIFSIGNALED(ws):
            outcome.signal = os.WTERMSIG(ws)
        else:
            outcome.exit_code = os.WEXITSTATUS(ws)
        outcome.wall_s = values["wall_ns"] / 1e9
        outcome.cpu_user_s = values["utime_us"] / 1e6
        outcome.cpu_sys_s = values["stime_us"] / 1e6
        outcome.peak_rss_bytes = values["maxrss_kb"] * 1024
        outcome.peak_rss_method = METHOD
    else:
        # Killed before the launcher could report: our own clock will do.
        outcome.wall_s = elapsed
    if "status" not in values and outcome.status == "exited":
        # The launcher itself died without reporting (killed from outside).
        outcome.signal = -proc.returncode if proc.returncode and proc.returncode < 0 else None
        outcome.exit_code = proc.returncode if proc.returncode and proc.returncode > 0 else None
    if outcome.peak_rss_bytes is None and outcome.sampled_peak_rss_bytes:
        outcome.peak_rss_bytes = outcome.sampled_peak_rss_bytes
        outcome.peak_rss_method = "sampled"
    return outcome
