"""Progress display: a live status line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from .formatting import fmt_bytes, fmt_duration
from .metrics import METRICS, fmt_metric


class Progress:
    def __init__(self, total: int, estimates: list[float], stream: TextIO = sys.stdout) -> None:
        self.total = total
        self.estimates = estimates  # rough seconds per planned run, in order
        self.stream = stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.index = 0
        self.label = ""
        self.run_started = self.started
        self.spent_estimated = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.tty:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def eta(self) -> float:
        """Remaining estimate, scaled by how fast the estimates have proved so far."""
        elapsed = time.monotonic() - self.started
        remaining = sum(self.estimates[self.index:])
        if self.spent_estimated > 0:
            remaining *= elapsed / max(self.spent_estimated, 1e-9)
        current = time.monotonic() - self.run_started
        return max(0.0, remaining - current)

    def _status(self) -> str:
        elapsed = time.monotonic() - self.started
        return (f"[{self.index + 1}/{self.total}] {self.label}  "
                f"elapsed {fmt_duration(elapsed)}  ETA {fmt_duration(self.eta())}")

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                if self.label:
                    self.stream.write("\r\033[K" + self._status())
                    self.stream.flush()

    def start(self, index: int, label: str) -> None:
        with self._lock:
            if index == 0:
                self.started = time.monotonic()  # builds are not part of the ETA's pace
            self.index, self.label = index, label
            self.run_started = time.monotonic()
            if self.tty:
                self.stream.write("\r\033[K" + self._status())
                self.stream.flush()

    def finish(self, row: dict[str, Any]) -> None:
        with self._lock:
            self.spent_estimated += self.estimates[self.index]
            wall = row.get("wall_s")
            detail = f"wall {wall:.2f} s  peak RSS {fmt_bytes(row.get('peak_rss_bytes'))}" \
                if wall is not None else ""
            # the figures metrics.py declares live: threads, a server's throughput and response
            detail += "".join(f"  {m.live.format(fmt_metric(m.name, row[m.name]))}"
                              for m in METRICS.values() if m.live and row.get(m.name) is not None)
            note = f"  ({row['error']})" if row.get("error") else ""
            line = f"[{self.index + 1}/{self.total}] {row['status']:<12} {self.label:<44} {detail}{note}"
            self.stream.write(("\r\033[K" if self.tty else "") + line + "\n")
            self.index += 1
            self.label = ""
            self.stream.flush()

    def message(self, text: str) -> None:
        with self._lock:
            self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
            self.stream.flush()

    def close(self) -> None:
        self._stop.set()
        if self._ticker:
            self._ticker.join()
