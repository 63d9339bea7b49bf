"""run --counters: the perf binary the launcher attaches to each program.

perf stat counts in the kernel (perf_event_open) what the program does from
its exec, its threads and children included; the launcher starts it on the
forked child before the exec, so perf is never part of the measured process
(launch.c, start_perf). Here: find perf, install Debian's linux-perf when it
is missing (announced, as the language set-ups announce theirs), and check
that it can count on this machine, before anything is written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from .. import UsageError

PACKAGE = "linux-perf"
NO_INSTALL = "BENCH_NO_SYSTEM_INSTALL"


def _install() -> None:
    if os.environ.get(NO_INSTALL) == "1":
        raise UsageError(f"--counters needs perf (Debian's {PACKAGE}), and {NO_INSTALL}=1 refuses "
                         f"to apt-get install it")
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise UsageError(f"--counters needs perf: install Debian's {PACKAGE} "
                         f"(apt-get install {PACKAGE}) or put perf on PATH")
    print(f"--counters: installing Debian's {PACKAGE} system-wide with apt-get (perf, about 12 MB; "
          f"{NO_INSTALL}=1 refuses it)", file=sys.stderr, flush=True)
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "update", "-qq"],
                 ["apt-get", "install", "-y", "-qq", "--no-install-recommends", PACKAGE]):
        try:
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            raise UsageError(f"--counters: `{' '.join(argv)}` took more than 15 minutes") from None
        if proc.returncode != 0 and argv[1] == "install":
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise UsageError(f"--counters: apt-get install {PACKAGE} failed ({last})")


def find_perf() -> str:
    """The perf binary, once it has counted a task clock here; else one line
    saying why not (UsageError)."""
    perf = shutil.which("perf")
    if perf is None:
        _install()
        perf = shutil.which("perf")
        if perf is None:
            raise UsageError(f"--counters: {PACKAGE} is installed but no perf is on PATH")
    try:
        proc = subprocess.run([perf, "stat", "-x,", "-e", "task-clock", "true"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--counters: {perf} does not run ({exc})") from None
    if proc.returncode != 0 or ",task-clock" not in proc.stderr:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        try:
            paranoid = open("/proc/sys/kernel/perf_event_paranoid").read().strip()
        except OSError:
            paranoid = "unknown"
        raise UsageError(f"--counters: perf cannot count here ({last}; "
                         f"kernel.perf_event_paranoid is {paranoid})")
    return perf
