"""How busy the machine was while a program ran, from /proc: the load
average when it started, and the share of the machine's CPU that other
processes used during the run (not the program, not the launcher's sampler,
not the harness). A timing taken while other processes held the cores is
worth less, and the report says so next to it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

TICK_S = 1 / os.sysconf("SC_CLK_TCK")
# Above this share of all cores used by other processes, a run "ran under load".
LOADED_FRAC = 0.10


def _busy_s() -> float | None:
    """CPU seconds all cores have spent busy since boot (/proc/stat's first
    line: user nice system idle iowait irq softirq steal ...)."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    ticks = [int(v) for v in fields[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) * TICK_S  # all but idle and iowait


def _own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def load_avg_1m() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


@dataclass
class LoadProbe:
    """Take one before a run, then `other_cpu_frac` after it."""
    busy_s: float | None
    own_s: float
    started: float
    load_avg_1m: float | None

    @classmethod
    def start(cls) -> LoadProbe:
        return cls(_busy_s(), _own_cpu_s(), time.monotonic(), load_avg_1m())

    def other_cpu_frac(self, measured_cpu_s: float) -> float | None:
        """The share of all cores' time since start() that went to other
        processes: every busy second, minus the program's and the launcher's
        (measured_cpu_s) and the harness's own. None when /proc says nothing,
        or the span was too short for /proc's clock ticks to tell (under 20
        ticks of all cores' time: one tick would be over 5%)."""
        end = _busy_s()
        capacity = (time.monotonic() - self.started) * (os.cpu_count() or 1)
        if self.busy_s is None or end is None or capacity < 20 * TICK_S:
            return None
        others = (end - self.busy_s) - measured_cpu_s - (_own_cpu_s() - self.own_s)
        return min(1.0, max(0.0, others / capacity))  # ticks round: keep it a share
