"""Every command the harness starts besides the measured programs (set-up,
build, detect, version and test commands, the `harness report` subprocess)
runs here: in a process tree the harness kills on every way out.

run_contained() runs the command under the native launcher
(harness/launcher), without measuring it, so it gets the same containment as
a measured program: its own cgroup (made, emptied and removed by this side)
where cgroup v2 is writable, else the launcher and this process as child
subreapers, so that descendants which setsid or double-fork are found; the
launcher gets SIGTERM when the harness dies, even by SIGKILL
(PR_SET_PDEATHSIG), and kills the whole tree. When the command ends, times
out, or the harness is interrupted (Ctrl-C, or SIGTERM/SIGHUP turned into an
exception by `stoppable`), nothing of it is left running.

Where the launcher cannot be built (no C compiler), the command runs
directly, in its own session, with PR_SET_PDEATHSIG (SIGKILL) set in the
child, its process group killed when it ends: its own descendants that
leave the group are then not caught if the harness is SIGKILLed.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .interrupts import Interrupted, interruptible
from .launcher import (KILL_GRACE_S, REPORT_STATUS, LauncherError, ensure_launcher, kill_group,
                       launch)

SAMPLE_INTERVAL_S = 0.1  # how soon the launcher notices a timeout or the harness's death


@dataclass
class Finished:
    """How a contained command ended."""
    returncode: int  # its exit status, or -N when killed by signal N
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    # the launcher died or hung (see launcher.Outcome.launcher_failure); the
    # tree was killed here
    launcher_failure: str = ""


def run_contained(argv: Sequence[str], cwd: str | Path, *, timeout_s: float = math.inf,
                  env: dict[str, str] | None = None, capture: bool = True,
                  on_stderr_line: Callable[[str], None] | None = None) -> Finished:
    """Run argv in cwd (stdin from /dev/null) to its end, at most timeout_s,
    and leave nothing of it running, whatever happens. capture: its stdout
    and stderr are returned (each stderr line also passed to on_stderr_line
    as it comes); else they are this process's. Raises OSError (e.g.
    FileNotFoundError) when argv cannot be executed."""
    argv = [str(a) for a in argv]
    try:
        ensure_launcher()
    except LauncherError:
        return _run_plain(argv, cwd, timeout_s, env, capture, on_stderr_line)
    with tempfile.TemporaryFile(prefix="harness-") as out, \
            open(os.devnull, "wb") as devnull:
        err_r = err_w = None
        if capture:
            err_r, err_w = os.pipe()
        try:
            with launch(argv, env, cwd, timeout_s, None, SAMPLE_INTERVAL_S, None,
                        out if capture else None, err_w, devnull.fileno(), 0) as launched:
                if err_w is not None:
                    os.close(err_w)
                    err_w = None
                deadline = (time.monotonic() + timeout_s + KILL_GRACE_S
                            if math.isfinite(timeout_s) else math.inf)
                err = _read_lines(err_r, deadline, on_stderr_line) if err_r is not None else ""
                launched.wait(max(0.0, deadline - time.monotonic())
                              if math.isfinite(deadline) else None)
                values = launched.final_report()
                failure = launched.failure(values, timeout_s)
        finally:
            for fd in (err_r, err_w):
                if fd is not None:
                    os.close(fd)
        if values.get("exec_errno"):
            code = values["exec_errno"]
            raise OSError(code, os.strerror(code), argv[0]) if code != errno.ENOENT else \
                FileNotFoundError(code, os.strerror(code), argv[0])
        if REPORT_STATUS in values:
            status = values[REPORT_STATUS]
            returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else \
                os.WEXITSTATUS(status)
        else:
            returncode = -signal.SIGKILL
        out.seek(0)
        stdout = out.read().decode(errors="replace") if capture else ""
        return Finished(returncode, stdout, err, bool(values.get("timeout")) or launched.overran,
                        failure)


def _read_lines(fd: int, deadline: float, on_line: Callable[[str], None] | None) -> str:
    """Read a pipe to its end (every writer gone) or the deadline."""
    lines: list[str] = []
    pending = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if not sel.select(None if math.isinf(left) else left):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            *done, pending = pending.split(b"\n")
            for raw in done:
                line = raw.decode(errors="replace") + "\n"
                lines.append(line)
                if on_line is not None:
                    on_line(line)
    if pending:
        lines.append(pending.decode(errors="replace"))
    return "".join(lines)


def _die_with_parent() -> None:  # in the child, between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _run_plain(argv: list[str], cwd: str | Path, timeout_s: float, env: dict[str, str] | None,
               capture: bool, on_line: Callable[[str], None] | None) -> Finished:
    """Without the launcher: own session, death signal, group killed at the end."""
    pipe = subprocess.PIPE if capture else None
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=pipe,
                            stderr=pipe, start_new_session=True, preexec_fn=_die_with_parent)
    try:
        stdout, stderr = proc.communicate(timeout=None if math.isinf(timeout_s) else timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        stdout, stderr = proc.communicate()
        timed_out = True
    finally:
        kill_group(proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = (stderr or b"").decode(errors="replace")
    if on_line is not None:
        for line in err.splitlines(keepends=True):
            on_line(line)
    return Finished(proc.returncode, (stdout or b"").decode(errors="replace"), err, timed_out)


def stoppable(command: Callable[..., int]) -> Callable[..., int]:
    """A subcommand that stops on SIGINT, SIGTERM and SIGHUP as `run` does: the
    exception unwinds through run_contained, which kills the command's tree;
    one line is said and the exit status is 128 + the signal."""
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            # SIGINT too, explicitly: a harness started where SIGINT is ignored
            # (a background job of a script) still stops on it, as `run` does
            with interruptible():
                return command(*args, **kwargs)
        except Interrupted as exc:
            print(f"\nharness: stopped by {signal.Signals(exc.signum).name}; "
                  f"its commands were killed", file=sys.stderr)
            return 128 + exc.signum
    return wrapper
