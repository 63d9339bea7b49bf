"""Start one measured process through the native launcher (launch.c beside
this file) and collect what it reports: exit status, wall time, CPU, peak RSS
from wait4, and RSS and thread count over time.

What it promises (docs/promises.md; tests in test_processes.py):
- nothing is left running: the launcher kills the program's whole tree (its
  cgroup where cgroup v2 is writable, else every descendant, found through
  the launcher being their subreaper) on a timeout, on --max-rss, when the
  program's stdout passes STDOUT_CAP_BYTES, when the program exits leaving
  processes behind, and when the harness dies (even by SIGKILL);
- nothing is left on disk: stdout, stderr and samples go to unnamed
  temporary files, which vanish with the last process holding them;
- memory held per run is bounded: at most STDOUT_CAP_BYTES of stdout and
  the last STDERR_TAIL_LINES lines of stderr are read.

The launcher forks and execs the program, so the program's peak RSS is its
own and not the Python parent's; between ppoll waits on a pidfd it samples
/proc/PID/statm and /proc/PID/status (not /proc/PID/stat, whose cost grows
with the thread count) and appends "t_ns rss_bytes threads" lines to a file:
a few microseconds a sample, where a Python thread cost over 100
(benchmarks/sampler_overhead.py).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator

SOURCE = Path(__file__).resolve().parent / "launch.c"
BINARY = SOURCE.with_suffix("")
METHOD = "wait4-launcher"
KILL_GRACE_S = 10.0
STDOUT_CAP_BYTES = 1 << 20  # more than this on stdout: truncated, and the program is killed
STDERR_TAIL_LINES = 20
STDERR_TAIL_BYTES = 64 << 10  # the most of stderr ever read
STDERR_LINE_CHARS = 1000
# BENCH_LAUNCHER_CGROUP=0 in the harness's environment: track the process
# tree only, never a cgroup (the fallback where cgroup v2 is not writable).
CGROUP_SWITCH = "BENCH_LAUNCHER_CGROUP"


class LauncherError(Exception):
    pass


@dataclass
class Sample:
    t_s: float
    rss_bytes: int
    threads: int


def read_samples(path: Path) -> list[Sample]:
    with path.open("rb") as f:
        return _parse_samples(f)


def _parse_samples(f: IO[bytes]) -> list[Sample]:
    samples = []
    for line in f:
        parts = line.split()
        if len(parts) == 3 and line.endswith(b"\n"):  # a line cut short by a kill is dropped
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
    status: str  # "exited", "timeout", "oom" (passed --max-rss)
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
    stdout: str = ""  # at most STDOUT_CAP_BYTES of it
    stderr: str = ""  # the same as stderr_tail (the whole of it is never read)
    samples: list[Sample] = field(default_factory=list)
    # stdout passed STDOUT_CAP_BYTES: `stdout` is its first STDOUT_CAP_BYTES,
    # and the program was killed (SIGKILL) within a sample interval of passing it.
    stdout_truncated: bool = False
    # The last STDERR_TAIL_LINES lines of stderr (from at most its last
    # STDERR_TAIL_BYTES, each line cut at STDERR_LINE_CHARS).
    stderr_tail: str = ""
    # Killed by SIGKILL from the kernel's OOM killer: True when the kernel
    # counted an OOM kill during the run (in the program's cgroup when it has
    # a memory controller, else on the machine) and no one else here killed
    # it; None when it died of SIGKILL and the count could not be read;
    # False otherwise.
    oom_killed: bool | None = False
    # Processes the program left running when it exited (all killed).
    strays: int = 0
    # How the tree was held: "cgroup" or "process-tree" (subreaper).
    containment: str = ""


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
        try:
            values.update({parts[i]: int(parts[i + 1]) for i in range(0, len(parts) - 1, 2)})
        except ValueError:
            continue  # a line cut short
    return values


def _stop_launcher(proc: subprocess.Popen[bytes], program_pid: int | None) -> None:
    """Ask the launcher to kill its tree and exit (TERM); if it does not
    within KILL_GRACE_S, kill it and the program's group outright."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        kill_group(program_pid)
        proc.wait()


def _head(f: IO[bytes], cap: int) -> tuple[str, bool]:
    f.seek(0)
    data = f.read(cap + 1)
    return data[:cap].decode(errors="replace"), len(data) > cap


def _tail_lines(f: IO[bytes]) -> str:
    size = f.seek(0, os.SEEK_END)
    f.seek(max(0, size - STDERR_TAIL_BYTES))
    lines = f.read(STDERR_TAIL_BYTES).decode(errors="replace").splitlines()
    if size > STDERR_TAIL_BYTES and lines:
        lines = lines[1:]  # the first one is cut
    return "\n".join(line[:STDERR_LINE_CHARS] for line in lines[-STDERR_TAIL_LINES:])


def run_process(argv: list[str], env: dict[str, str], cwd: str, timeout_s: float,
                max_rss_bytes: int | None, sample_interval_s: float,
                cpus: int | None = None) -> Outcome:
    """Start argv through the launcher and measure it until it exits (or the
    launcher kills it: timeout_s, max_rss_bytes, STDOUT_CAP_BYTES). The
    launcher runs in its own session, dies with this process (it must be
    called from a thread that outlives the run, as any blocking call is), and
    leaves nothing running when it exits."""
    with start_process(argv, env, cwd, timeout_s, max_rss_bytes, sample_interval_s,
                       cpus) as running:
        return running.finish()


class Running:
    """A process started by start_process, while it runs: its pid, its
    stdout so far, a signal to it, and finish() to wait and measure."""

    def __init__(self, proc: subprocess.Popen[bytes], report: IO[str], out: IO[bytes],
                 err: IO[bytes], samples: IO[bytes], timeout_s: float) -> None:
        self._proc, self._report = proc, report
        self._out, self._err, self._samples = out, err, samples
        self._timeout_s = timeout_s
        self._started = time.monotonic()
        self.program_pid: int | None = _parse_report(report.readline()).get("pid")

    def stdout_now(self) -> str:
        """What the program has written to stdout so far (at most the cap)."""
        return os.pread(self._out.fileno(), STDOUT_CAP_BYTES, 0).decode(errors="replace")

    def running(self) -> bool:
        return self._proc.poll() is None

    def signal(self, sig: int) -> None:
        """Signal the program itself (not its tree): e.g. a server's SIGTERM."""
        if self.program_pid and self.running():
            try:
                os.kill(self.program_pid, sig)
            except ProcessLookupError:
                pass

    def finish(self, timeout_s: float | None = None) -> Outcome:
        """Wait for the program to end (at most timeout_s more, else the
        launcher's own limit) and measure it."""
        limit = self._timeout_s if timeout_s is None else timeout_s
        stuck = False
        try:
            # The launcher ends the program at its timeout; this is in case it cannot.
            self._proc.wait(timeout=limit + KILL_GRACE_S if math.isfinite(limit) else None)
        except subprocess.TimeoutExpired:
            stuck = True
            _stop_launcher(self._proc, self.program_pid)
        rest = self._report.read()
        elapsed = time.monotonic() - self._started
        _stop_launcher(self._proc, self.program_pid)
        stdout, truncated = _head(self._out, STDOUT_CAP_BYTES)
        tail = _tail_lines(self._err)
        self._samples.seek(0)
        outcome = Outcome(status="exited", stdout=stdout, stderr=tail, stdout_truncated=truncated,
                          stderr_tail=tail, samples=_parse_samples(self._samples))
        return _measured(outcome, _parse_report(rest), self._proc, stuck, elapsed)


@contextlib.contextmanager
def start_process(argv: list[str], env: dict[str, str], cwd: str, timeout_s: float,
                  max_rss_bytes: int | None, sample_interval_s: float,
                  cpus: int | None = None) -> Iterator[Running]:
    """Start argv through the launcher (pinned to the first `cpus` CPUs of
    ours when given); on leaving the block, whatever happened (including
    Ctrl-C), nothing it started is left running."""
    launcher = ensure_launcher()
    limit_kb = (max_rss_bytes + 1023) // 1024 if max_rss_bytes else 0
    interval_us = max(1, round(sample_interval_s * 1e6))
    timeout_ms = max(1, math.ceil(timeout_s * 1000)) if math.isfinite(timeout_s) else 0  # 0: none
    use_cgroup = os.environ.get(CGROUP_SWITCH, "1") != "0"
    # Unnamed files (O_TMPFILE): nothing in the temporary directory outlives
    # the processes, whatever kills them.
    with tempfile.TemporaryFile(prefix="harness-") as out, \
            tempfile.TemporaryFile(prefix="harness-") as err, \
            tempfile.TemporaryFile(prefix="harness-") as samples:
        report_r, report_w = os.pipe()
        try:
            proc = subprocess.Popen(
                [str(launcher), str(report_w), str(samples.fileno()), str(interval_us),
                 str(limit_kb), str(timeout_ms), str(STDOUT_CAP_BYTES), str(os.getpid()),
                 "1" if use_cgroup else "0", str(cpus or 0), *argv],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd,
                pass_fds=(report_w, samples.fileno()), start_new_session=True)
        except BaseException:
            os.close(report_r)
            raise
        finally:
            os.close(report_w)
        running: Running | None = None
        try:
            with os.fdopen(report_r, "r") as report:
                running = Running(proc, report, out, err, samples, timeout_s)
                yield running
        finally:
            _stop_launcher(proc, running.program_pid if running else None)


def _measured(outcome: Outcome, values: dict[str, int], proc: subprocess.Popen[bytes],
              stuck: bool, elapsed: float) -> Outcome:
    """Fill an Outcome from the launcher's final report."""
    if values.get("oom"):
        outcome.status = "oom"
    elif values.get("timeout") or stuck:
        outcome.status = "timeout"
    outcome.strays = values.get("strays", 0)
    outcome.containment = "cgroup" if values.get("cgroup") else "process-tree"
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
    killed_here = any(values.get(k) for k in ("oom", "timeout", "output_limit", "stopped")) or stuck
    if outcome.signal == signal.SIGKILL and not killed_here and "status" in values:
        kills = values.get("oom_kills", -1)
        outcome.oom_killed = None if kills < 0 else kills > 0
    return outcome
