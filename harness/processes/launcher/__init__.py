"""Start one measured process through the native launcher (launch.c beside
this file) and collect what it reports: exit status, wall time, CPU, peak RSS
from wait4, and RSS and thread count over time.

What it promises (docs/promises.md; tests in test_processes.py):
- nothing is left running: the launcher kills the program's whole tree (its
  cgroup where cgroup v2 is writable, else every descendant, found through
  the launcher being their subreaper) on a timeout, on --max-rss, when the
  program's stdout passes STDOUT_CAP_BYTES, when the program exits leaving
  processes behind, and when the harness dies (even by SIGKILL);
- nothing is left running when the launcher itself dies or hangs: this side
  owns the program's cgroup (it makes it, and empties and removes it after
  the launcher has exited, whatever ended it), or, without a writable cgroup
  v2, is a child subreaper itself and kills what the dead launcher's tree
  left re-parented to it; it kills a launcher still running past timeout +
  KILL_GRACE_S (stopped, or stuck), and the Outcome names a launcher that
  died (launcher_failure) instead of blaming the program;
- nothing is left on disk: stdout, stderr and samples go to unnamed
  temporary files, which vanish with the last process holding them; the
  program's stderr goes through a pipe to the launcher, which keeps only its
  last STDERR_TAIL_BYTES (a program writing gigabytes to stderr uses none of
  the disk);
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
import ctypes
import enum
import errno
import itertools
import math
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any, Iterator

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
# The cgroups this side makes for programs: harness-run.<our pid>.<n>,
# below our own cgroup.
CGROUP_PREFIX = "harness-run."
RELEASE_S = 5.0  # the most time spent emptying what a launcher left


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
        raise LauncherError("no C compiler (cc, gcc or clang) to build harness/processes/launcher/launch.c")
    # Built beside and renamed into place: another harness may be using it.
    tmp = BINARY.with_name(f".launch.{os.getpid()}")
    proc = subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise LauncherError(f"building the launcher failed: {proc.stderr.strip()}")
    tmp.replace(BINARY)
    return BINARY


# launch.c's report is "key value" pairs; these keys are read by name. A few
# are spelled like runs.csv's columns, but they are the launcher's protocol
# (launch.c), declared here once: the run format's names are not read here.
REPORT_STATUS = "status"  # the program's wait status; absent: the launcher died first
REPORT_STRAYS = "strays"
REPORT_MAX_THREADS = "max_threads"


def _counter(key: str, scale: float = 1) -> Any:
    """A field of Counters: the launcher's report key it comes from and the
    scale to the field's unit."""
    return field(default=None, metadata={"key": key, "scale": scale})


@dataclass
class Counters:
    """The kernel's accounting of the program: wait4's rusage (every run);
    the program's cgroup's cpu.stat and memory.stat (where it has one: they
    also count what escaped the wait, and memory.stat needs the memory
    controller); perf stat's events (run --counters; cycles and instructions
    where the machine has them). Its fields are named as runs.csv's counter
    columns, which the executor fills from them; None: not counted."""
    ctx_switches_voluntary: int | None = _counter("nvcsw")
    ctx_switches_involuntary: int | None = _counter("nivcsw")
    minor_faults: int | None = _counter("minflt")
    major_faults: int | None = _counter("majflt")
    cgroup_cpu_user_s: float | None = _counter("cg_user_us", 1e-6)
    cgroup_cpu_sys_s: float | None = _counter("cg_system_us", 1e-6)
    cgroup_page_faults: int | None = _counter("cg_pgfault")
    cgroup_major_faults: int | None = _counter("cg_pgmajfault")
    perf_task_clock_s: float | None = _counter("perf_task_clock_us", 1e-6)
    perf_context_switches: int | None = _counter("perf_context_switches")
    perf_cpu_migrations: int | None = _counter("perf_cpu_migrations")
    perf_page_faults: int | None = _counter("perf_page_faults")
    perf_cycles: int | None = _counter("perf_cycles")
    perf_instructions: int | None = _counter("perf_instructions")

    def counted(self) -> dict[str, float | int]:
        """The counters counted, by field name."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}


def counters(values: dict[str, int]) -> Counters:
    """The counters a launcher's report fills (-1: not counted)."""
    counted = {}
    for f in fields(Counters):
        v = values.get(f.metadata["key"], -1)
        if v >= 0:
            scale = f.metadata["scale"]
            counted[f.name] = v * scale if scale != 1 else v
    return Counters(**counted)


class Ended(enum.StrEnum):
    """How a launched process ended (Outcome.status): a StrEnum, as the run
    record's Status, so that no caller spells an ending as a string."""
    EXITED = "exited"
    TIMEOUT = "timeout"
    OOM = "oom"  # passed --max-rss


@dataclass
class Outcome:
    """What happened to one process, before validation."""
    status: Ended
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float | None = None
    cpu_user_s: float | None = None
    cpu_sys_s: float | None = None
    # The kernel's accounting of the program: what can explain a change in time.
    counters: Counters = field(default_factory=Counters)
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
    # The launcher itself ended without its report (killed from outside, or
    # stopped or stuck past timeout + KILL_GRACE_S and then killed here):
    # what happened to it, e.g. "was killed (SIGKILL)". The program's tree
    # was killed by this side; exit_code and signal are then None (the
    # program's own were never known).
    launcher_failure: str = ""


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


# ---- what this side holds a launcher's tree by ----

def _own_cgroup() -> str | None:
    """Our cgroup v2 directory, or None (no cgroup2 mount, or a path the
    mount does not show): the same rules as the launcher's own_cgroup."""
    try:
        mounts = open("/proc/self/mountinfo").read().splitlines()
        lines = open("/proc/self/cgroup").read().splitlines()
    except OSError:
        return None
    root = mnt = None
    for line in mounts:
        left, sep, right = line.partition(" - ")
        if sep and right.startswith("cgroup2 ") and "\\" not in line:
            parts = left.split()
            root, mnt = parts[3], parts[4]
            break
    rel = next((line[3:] for line in lines if line.startswith("0::")), None)
    if mnt is None or root is None or rel is None or not rel.startswith("/") \
            or rel.endswith(" (deleted)"):
        return None
    if root != "/":
        if rel != root and not rel.startswith(root + "/"):
            return None
        rel = rel[len(root):]
    return mnt + ("" if rel in ("", "/") else rel)


_cgroup_seq = itertools.count()
_subreaper = False
_live_launchers: set[int] = set()  # this process's launchers still running
_lock = threading.Lock()


def alive(pid: int) -> bool:
    """Whether a process with this pid runs (another user's counts): the
    one check every sweep of what a dead harness left makes."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _make_cgroup() -> str | None:
    """A new, empty cgroup for one program (below ours), or None where
    cgroup v2 is not writable. Empty ones left by a harness that died are
    removed on the way."""
    own = _own_cgroup()
    if own is None:
        return None
    with contextlib.suppress(OSError):
        for name in os.listdir(own):
            if name.startswith(CGROUP_PREFIX):
                owner = name[len(CGROUP_PREFIX):].split(".")[0]
                if owner.isdigit() and int(owner) != os.getpid() and not alive(int(owner)):
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.join(own, name))
    path = os.path.join(own, f"{CGROUP_PREFIX}{os.getpid()}.{next(_cgroup_seq)}")
    try:
        os.mkdir(path)
    except OSError:
        return None
    if not os.access(os.path.join(path, "cgroup.procs"), os.W_OK):
        with contextlib.suppress(OSError):
            os.rmdir(path)
        return None
    return path


def _become_subreaper() -> bool:
    """Make this process a child subreaper (once): what a dead launcher's
    tree leaves is re-parented here, not to init, and can be found."""
    global _subreaper
    if not _subreaper:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            return False
    return _subreaper


def _proc_table() -> dict[int, tuple[int, int, int, str]]:
    """pid -> (ppid, process group, session, state) of every process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) >= 4:
            table[int(name)] = (int(fields[1]), int(fields[2]), int(fields[3]), fields[0])
    return table


def _children_now() -> set[int]:
    me = os.getpid()
    return {pid for pid, (ppid, *_rest) in _proc_table().items() if ppid == me}


class Holder:
    """What this side holds one launcher's program tree by, so that it can
    empty it whatever happened to the launcher: the program's cgroup (made
    here, joined by the program, emptied with cgroup.kill and removed here
    after the launcher has exited), or, without a writable cgroup v2, this
    process being a child subreaper: what the launcher's tree leaves when
    the launcher dies is re-parented here, and killed and reaped by
    release()."""

    def __init__(self, use_cgroup: bool) -> None:
        self.cgroup = _make_cgroup() if use_cgroup else None
        self.before: set[int] = set()
        self.subreaper = False
        if self.cgroup is None:
            self.subreaper = _become_subreaper()
            self.before = _children_now() if self.subreaper else set()
        self.launcher_pid: int | None = None
        self.program_pid: int | None = None
        self.released = False

    def launcher_options(self) -> list[str]:
        return [f"--cgroup-dir={self.cgroup}"] if self.cgroup else []

    def started(self, launcher_pid: int) -> None:
        self.launcher_pid = launcher_pid
        with _lock:
            _live_launchers.add(launcher_pid)

    def release(self, thorough: bool = True) -> int:
        """After the launcher has exited (and been reaped): kill everything
        left of its tree and remove its cgroup. Returns how many processes
        were found left (0 when the launcher cleaned up, as it does). Not
        thorough (the launcher reported, so it cleaned up): only the cgroup
        is checked and removed, nothing is scanned."""
        if self.released:
            return 0
        self.released = True
        if self.launcher_pid is not None:
            with _lock:
                _live_launchers.discard(self.launcher_pid)
        if self.cgroup is not None:
            return self._empty_cgroup()
        if not thorough or self.launcher_pid is None:
            return 0
        kill_group(self.program_pid)
        return self._sweep() if self.subreaper else 0

    def _empty_cgroup(self) -> int:
        assert self.cgroup is not None
        procs = os.path.join(self.cgroup, "cgroup.procs")
        deadline = time.monotonic() + RELEASE_S
        found = 0
        while True:
            try:
                with open(procs) as f:
                    pids = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                pids = []
            if not pids:
                break
            found = max(found, len(pids))
            try:
                with open(os.path.join(self.cgroup, "cgroup.kill"), "w") as f:
                    f.write("1")
            except OSError:  # before Linux 5.14: one by one
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            self._reap_mine(set(pids))
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        for _ in range(100):
            try:
                os.rmdir(self.cgroup)
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    break
                time.sleep(0.01)
        return found

    def _sweep(self) -> int:
        """Kill (and reap) what the dead launcher's tree left: processes in
        its session or the program's group, and every process re-parented
        to this subreaper since the launcher started (that no other
        launcher of ours runs), until none is left."""
        me, sid, pgid = os.getpid(), self.launcher_pid, self.program_pid
        deadline = time.monotonic() + RELEASE_S
        found, quiet = 0, 0
        while time.monotonic() < deadline and quiet < 3:
            with _lock:
                keep = self.before | _live_launchers
            targets = {pid for pid, (ppid, group, session, state) in _proc_table().items()
                       if state not in "ZX" and pid != me
                       and ((ppid == me and pid not in keep) or session == sid
                            or (pgid and group == pgid))}
            if not targets:
                quiet += 1
                time.sleep(0.02)
                continue
            quiet = 0
            found += len(targets)
            for pid in targets:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            self._reap_mine(targets)
        return found

    @staticmethod
    def _reap_mine(pids: set[int]) -> None:
        """Reap the ones among pids that are our children (re-parented here)."""
        for pid in pids:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _launcher_state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
        return text[text.rfind(")") + 2:].split()[0]
    except (OSError, IndexError):
        return ""


def _kill_launcher(proc: subprocess.Popen[bytes]) -> str:
    """Kill a launcher that is still running past its deadline; says how it
    was found (stopped, or stuck)."""
    state = _launcher_state(proc.pid)
    proc.kill()
    proc.wait()
    return "stopped" if state in ("T", "t") else "stuck"


def _stop_launcher(proc: subprocess.Popen[bytes], holder: Holder | None,
                   thorough: bool = True) -> None:
    """Ask the launcher to kill its tree and exit (TERM; a stopped one is
    killed at once); if it does not within KILL_GRACE_S, kill it. Then
    whatever is left of its tree is killed here."""
    if proc.poll() is None:
        try:
            if _launcher_state(proc.pid) in ("T", "t"):
                proc.kill()
            else:
                proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if holder is not None:
        holder.release(thorough)


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


class Launched:
    """One launcher as this side holds it: the process, its report pipe, and
    the Holder of its program's tree. wait() waits for the launcher, killing
    it past a deadline; release() (on leaving launch()) leaves nothing of
    the tree running, whatever happened to the launcher."""

    def __init__(self, proc: subprocess.Popen[bytes], report: IO[str], holder: Holder) -> None:
        self.proc, self.report, self.holder = proc, report, holder
        self.started = time.monotonic()
        self.program_pid: int | None = _parse_report(report.readline()).get("pid")
        holder.program_pid = self.program_pid
        self.overran = False  # still running at the deadline given to wait()
        self.killed_here = ""  # "stopped" or "stuck": this side killed the launcher
        self.reported = False  # its final report was read

    def wait(self, deadline_s: float | None) -> None:
        """Wait for the launcher to exit, at most deadline_s (None: no
        limit). Past it, the launcher is told to stop (TERM: it kills the
        tree and reports); one that is stopped (SIGSTOP), or does not exit
        within KILL_GRACE_S, is killed here."""
        try:
            self.proc.wait(timeout=deadline_s)
            return
        except subprocess.TimeoutExpired:
            self.overran = True
        if _launcher_state(self.proc.pid) in ("T", "t"):
            self.killed_here = _kill_launcher(self.proc)
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            self.killed_here = _kill_launcher(self.proc)

    def final_report(self) -> dict[str, int]:
        """The launcher's last report (read once it has exited); empty if it
        died before writing it."""
        values = _parse_report(self.report.read())
        self.reported = REPORT_STATUS in values
        return values

    def failure(self, values: dict[str, int], timeout_s: float) -> str:
        """What happened to a launcher that ended without its report ("" if
        it reported)."""
        if REPORT_STATUS in values:
            return ""
        code = self.proc.returncode
        if self.killed_here:
            state = "stopped (SIGSTOP)" if self.killed_here == "stopped" else "unresponsive"
            # formatted here, not by core.formatting: this stage imports nothing of core
            limit = f"{timeout_s:g} s timeout" if math.isfinite(timeout_s) else "stop"
            return f"was {state} past its {limit} and was killed by the harness"
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed ({name})"
        return f"exited {code} without a report"


@contextlib.contextmanager
def launch(argv: list[str], env: dict[str, str] | None, cwd: str | Path, timeout_s: float,
           max_rss_bytes: int | None, sample_interval_s: float, cpus: int | None,
           stdout: int | IO[bytes] | None, stderr: int | IO[bytes] | None,
           samples_fd: int, stdout_cap: int, stderr_keep: int = 0,
           perf: str | None = None) -> Iterator[Launched]:
    """Start argv through the launcher (its stdout and stderr given, or
    inherited when None; with stderr_keep, the program's stderr reaches the
    launcher's only as its last stderr_keep bytes, at its end; with perf,
    that perf binary counts the program's events). On leaving
    the block, whatever happened (Ctrl-C, the launcher killed or stopped),
    nothing it started is left running."""
    launcher = ensure_launcher()
    limit_kb = (max_rss_bytes + 1023) // 1024 if max_rss_bytes else 0
    interval_us = max(1, round(sample_interval_s * 1e6))
    timeout_ms = max(1, math.ceil(timeout_s * 1000)) if math.isfinite(timeout_s) else 0  # 0: none
    holder = Holder(os.environ.get(CGROUP_SWITCH, "1") != "0")
    options = (holder.launcher_options() + ([f"--stderr-keep={stderr_keep}"] if stderr_keep else [])
               + ([f"--perf={perf}"] if perf else []))
    report_r, report_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [str(launcher), *options, str(report_w), str(samples_fd), str(interval_us),
             str(limit_kb), str(timeout_ms), str(stdout_cap), str(os.getpid()), "0",
             str(cpus or 0), *argv],
            stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=env, cwd=cwd,
            pass_fds=(report_w, samples_fd), start_new_session=True)
    except BaseException:
        os.close(report_r)
        os.close(report_w)
        holder.release()
        raise
    os.close(report_w)
    holder.started(proc.pid)
    launched: Launched | None = None
    try:
        with os.fdopen(report_r, "r") as report:
            launched = Launched(proc, report, holder)
            yield launched
    finally:
        _stop_launcher(proc, holder, thorough=launched is None or not launched.reported)


def run_process(argv: list[str], env: dict[str, str], cwd: str, timeout_s: float,
                max_rss_bytes: int | None, sample_interval_s: float,
                cpus: int | None = None, perf: str | None = None) -> Outcome:
    """Start argv through the launcher and measure it until it exits (or the
    launcher kills it: timeout_s, max_rss_bytes, STDOUT_CAP_BYTES). The
    launcher runs in its own session, dies with this process (it must be
    called from a thread that outlives the run, as any blocking call is), and
    leaves nothing running when it exits."""
    with start_process(argv, env, cwd, timeout_s, max_rss_bytes, sample_interval_s,
                       cpus, perf) as running:
        return running.finish()


class Running:
    """A process started by start_process, while it runs: its pid, its
    stdout so far, a signal to it, and finish() to wait and measure."""

    def __init__(self, launched: Launched, out: IO[bytes], err: IO[bytes], samples: IO[bytes],
                 timeout_s: float) -> None:
        self._launched, self._proc = launched, launched.proc
        self._out, self._err, self._samples = out, err, samples
        self._timeout_s = timeout_s
        self.program_pid: int | None = launched.program_pid

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
        launcher's own limit) and measure it. A launcher still running
        KILL_GRACE_S past that (stopped, stuck) is killed here; whatever
        ended the launcher, its program's tree is emptied here."""
        limit = self._timeout_s if timeout_s is None else timeout_s
        launched = self._launched
        launched.wait(limit + KILL_GRACE_S if math.isfinite(limit) else None)
        values = launched.final_report()
        elapsed = time.monotonic() - launched.started
        _stop_launcher(self._proc, launched.holder, thorough=not launched.reported)
        stdout, truncated = _head(self._out, STDOUT_CAP_BYTES)
        tail = _tail_lines(self._err)
        self._samples.seek(0)
        outcome = Outcome(status=Ended.EXITED, stdout=stdout, stderr=tail,
                          stdout_truncated=truncated, stderr_tail=tail,
                          samples=_parse_samples(self._samples))
        outcome.launcher_failure = launched.failure(values, limit)
        outcome = _measured(outcome, values, self._proc, launched.overran, elapsed)
        if outcome.launcher_failure:
            outcome.containment = "cgroup" if launched.holder.cgroup else "process-tree"
        return outcome


@contextlib.contextmanager
def start_process(argv: list[str], env: dict[str, str], cwd: str, timeout_s: float,
                  max_rss_bytes: int | None, sample_interval_s: float,
                  cpus: int | None = None, perf: str | None = None) -> Iterator[Running]:
    """Start argv through the launcher (pinned to the first `cpus` CPUs of
    ours when given); on leaving the block, whatever happened (including
    Ctrl-C, or the launcher killed), nothing it started is left running."""
    # Unnamed files (O_TMPFILE): nothing in the temporary directory outlives
    # the processes, whatever kills them. The program's stderr reaches `err`
    # only as its last STDERR_TAIL_BYTES (the launcher's ring buffer).
    with tempfile.TemporaryFile(prefix="harness-") as out, \
            tempfile.TemporaryFile(prefix="harness-") as err, \
            tempfile.TemporaryFile(prefix="harness-") as samples:
        with launch(argv, env, cwd, timeout_s, max_rss_bytes, sample_interval_s, cpus, out, err,
                    samples.fileno(), STDOUT_CAP_BYTES, STDERR_TAIL_BYTES, perf) as launched:
            yield Running(launched, out, err, samples, timeout_s)


def _measured(outcome: Outcome, values: dict[str, int], proc: subprocess.Popen[bytes],
              stuck: bool, elapsed: float) -> Outcome:
    """Fill an Outcome from the launcher's final report."""
    if values.get("oom"):
        outcome.status = Ended.OOM
    elif values.get("timeout") or stuck:
        outcome.status = Ended.TIMEOUT
    outcome.strays = values.get(REPORT_STRAYS, 0)
    outcome.containment = "cgroup" if values.get("cgroup") else "process-tree"
    if REPORT_STATUS in values:
        ws = values[REPORT_STATUS]
        if os.WIFSIGNALED(ws):
            outcome.signal = os.WTERMSIG(ws)
        else:
            outcome.exit_code = os.WEXITSTATUS(ws)
        outcome.wall_s = values["wall_ns"] / 1e9
        outcome.cpu_user_s = values["utime_us"] / 1e6
        outcome.cpu_sys_s = values["stime_us"] / 1e6
        outcome.counters = counters(values)
        outcome.peak_rss_bytes = values["maxrss_kb"] * 1024
        outcome.peak_rss_method = METHOD
        outcome.sampled_peak_rss_bytes = values["peak_kb"] * 1024 or None
        outcome.max_threads = values[REPORT_MAX_THREADS] or None
        outcome.sampler_cpu_s = values["self_cpu_us"] / 1e6
    else:
        # The launcher itself died (or was killed here) before it could
        # report: the program's own exit is unknown, and is not blamed.
        outcome.wall_s = elapsed
        if not outcome.launcher_failure:
            outcome.launcher_failure = f"exited {proc.returncode} without a report"
        if outcome.samples:
            outcome.sampled_peak_rss_bytes = max(s.rss_bytes for s in outcome.samples)
            outcome.peak_rss_bytes = outcome.sampled_peak_rss_bytes
            outcome.peak_rss_method = "sampled"
    killed_here = any(values.get(k) for k in ("oom", "timeout", "output_limit", "stopped")) or stuck
    if outcome.signal == signal.SIGKILL and not killed_here and REPORT_STATUS in values:
        kills = values.get("oom_kills", -1)
        outcome.oom_killed = None if kills < 0 else kills > 0
    return outcome
