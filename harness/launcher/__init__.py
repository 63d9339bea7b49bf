"""Start one measured process through the native launcher (launch.c beside
this file) and collect what it reports: exit status, wall time, CPU, peak RSS
from wait4, and RSS and thread count over time.

The launcher forks and execs the program, so the program's peak RSS is its
own and not the Python parent's; between ppoll waits on a pidfd it samples
/proc/PID/statm and /proc/PID/status (not /proc/PID/stat, whose cost grows
with the thread count) and appends "t_ns rss_bytes threads" lines to a file:
a few microseconds a sample, where a Python thread cost over 100
(benchmarks/sampler_overhead.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "launch.c"
BINARY = SOURCE.with_suffix("")
METHOD = "wait4-launcher"
KILL_GRACE_S = 10.0


class LauncherError(Exception):
    pass


@dataclass
class Sample:
    t_s: float
    rss_bytes: int
    threads: int


def read_samples(path: Path) -> list[Sample]:
    samples = []
    with path.open() as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:  # a line cut short by a kill is dropped
                samples.append(Sample(int(parts[0]) / 1e9, int(parts[1]), int(parts[2])))
    return samples


def ensure_launcher() -> Path:
    """Compile the launcher if it is missing or older than its source."""
    if BINARY.exists() and BINARY.stat().st_mtime >= SOURCE.stat().st_mtime:
        return BINARY
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise LauncherError("no C compiler (cc, gcc or clang) to build harness/launcher/launch.c")
    # Built beside and renamed into place: another harness may be using it.
    tmp = BINARY.with_name(f".launch.{os.getpid()}")
    proc = subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise LauncherError(f"building the launcher failed: {proc.stderr.strip()}")
    tmp.replace(BINARY)
    return BINARY


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
    sampler_cpu_s: float | None = None
    stdout: str = ""
    stderr: str = ""
    samples: list[Sample] = field(default_factory=list)


def kill_group(pgid: int | None) -> None:
    if pgid:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _parse_report(text: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        values.update({parts[i]: int(parts[i + 1]) for i in range(0, len(parts) - 1, 2)})
    return values


def run_process(argv: list[str], env: dict[str, str], cwd: str, timeout_s: float,
                max_rss_bytes: int | None, sample_interval_s: float) -> Outcome:
    """Start argv through the launcher and measure it until it exits. The
    launcher runs in its own session and the program in its own process
    group, so that whatever happens both trees can be killed."""
    launcher = ensure_launcher()
    limit_kb = (max_rss_bytes + 1023) // 1024 if max_rss_bytes else 0
    interval_us = max(1, round(sample_interval_s * 1e6))
    report_r, report_w = os.pipe()
    with tempfile.TemporaryDirectory(prefix="harness-") as tmp, \
            open(Path(tmp) / "stdout", "w+b") as out, open(Path(tmp) / "stderr", "w+b") as err:
        samples_path = Path(tmp) / "samples"
        try:
            proc = subprocess.Popen(
                [str(launcher), str(report_w), str(samples_path), str(interval_us), str(limit_kb),
                 *argv],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd,
                pass_fds=(report_w,), start_new_session=True)
        finally:
            os.close(report_w)
        program_pgid: int | None = None
        timed_out = False
        started = time.monotonic()
        try:
            with os.fdopen(report_r, "r") as report:
                program_pgid = _parse_report(report.readline()).get("pid")
                try:
                    proc.wait(timeout=max(0.0, started + timeout_s - time.monotonic()))
                except subprocess.TimeoutExpired:
                    # Kill the program's tree; the launcher then reports how it ended.
                    timed_out = True
                    kill_group(program_pgid)
                    proc.wait(timeout=KILL_GRACE_S)
                rest = report.read()
                elapsed = time.monotonic() - started
        finally:
            # Whatever happened (including Ctrl-C), leave no process behind.
            kill_group(program_pgid)
            kill_group(proc.pid)
            if proc.poll() is None:
                proc.wait(timeout=KILL_GRACE_S)
        out.seek(0)
        err.seek(0)
        outcome = Outcome(status="exited", stdout=out.read().decode(errors="replace"),
                          stderr=err.read().decode(errors="replace"))
        if samples_path.exists():
            outcome.samples = read_samples(samples_path)

    values = _parse_report(rest)
    if values.get("oom"):
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
        outcome.sampled_peak_rss_bytes = values["peak_kb"] * 1024 or None
        outcome.max_threads = values["max_threads"] or None
        outcome.sampler_cpu_s = values["self_cpu_us"] / 1e6
    else:
        # The launcher itself was killed from outside before it could report.
        outcome.wall_s = elapsed
        if proc.returncode is not None and proc.returncode < 0:
            outcome.signal = -proc.returncode
        else:
            outcome.exit_code = proc.returncode
        if outcome.samples:
            outcome.sampled_peak_rss_bytes = max(s.rss_bytes for s in outcome.samples)
            outcome.peak_rss_bytes = outcome.sampled_peak_rss_bytes
            outcome.peak_rss_method = "sampled"
    return outcome
