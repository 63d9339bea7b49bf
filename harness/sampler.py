"""Sample a process's RSS and thread count from /proc while it runs.

One read of /proc/PID/stat per sample gives both numbers; at the default
10 ms interval that costs well under 1% of a core (see
benchmarks/sampler_overhead.py).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Sample:
    t_s: float
    rss_bytes: int
    threads: int


def parse_stat(raw: bytes) -> tuple[int, int] | None:
    """(rss_bytes, threads) from the text of /proc/PID/stat; None for a zombie."""
    # The command name may hold spaces or parentheses: split after the last ')'.
    fields = raw[raw.rfind(b")") + 2:].split()
    if not fields or fields[0] == b"Z":
        return None
    return int(fields[21]) * PAGE_SIZE, int(fields[17])


def read_stat(pid: int) -> tuple[int, int] | None:
    """(rss_bytes, threads) of pid, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return parse_stat(f.read())
    except OSError:
        return None


@dataclass
class Sampler:
    pid: int
    interval_s: float
    limit_bytes: int | None = None
    on_limit: Callable[[], None] | None = None
    samples: list[Sample] = field(default_factory=list)
    peak_rss: int = 0
    max_threads: int = 0
    hit_limit: bool = False

    def __post_init__(self) -> None:
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="sampler", daemon=True)

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        self._stop = True
        self._thread.join()

    def _loop(self) -> None:
        # One descriptor, re-read with pread: cheaper than opening the file
        # for every sample, which keeps the sampler well under 1% of a core.
        try:
            fd = os.open(f"/proc/{self.pid}/stat", os.O_RDONLY)
        except OSError:
            return
        try:
            next_at = self._t0
            while not self._stop:
                try:
                    reading = parse_stat(os.pread(fd, 4096, 0))
                except OSError:
                    return
                if reading is None:
                    return
                now = time.monotonic()
                rss, threads = reading
                # RSS 0 is no reading: between fork and exec, or tearing down.
                if rss:
                    self.samples.append(Sample(now - self._t0, rss, threads))
                    self.peak_rss = max(self.peak_rss, rss)
                    self.max_threads = max(self.max_threads, threads)
                if self.limit_bytes is not None and rss > self.limit_bytes:
                    self.hit_limit = True
                    if self.on_limit:
                        self.on_limit()
                    return
                next_at += self.interval_s
                if next_at > now:
                    time.sleep(next_at - now)
                else:
                    next_at = now  # fell behind (a busy machine): do not burst to catch up
        finally:
            os.close(fd)
