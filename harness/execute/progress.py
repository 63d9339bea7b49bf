"""Progress display: a live status line on a terminal, plain lines otherwise."""

from __future__ import annotations

import re
import shutil
import sys
import threading
import time
from typing import Callable, TextIO

from ..core.formatting import fmt_bytes, fmt_duration, fmt_fixed
from ..core.metrics import METRICS
from ..core.formatting import fmt_metric
from ..core.schema import Row


class Progress:
    def __init__(self, total: int, estimates: list[float], stream: TextIO = sys.stdout) -> None:
        self.board: Board | None = None  # builds going on beside the runs, shown on its line
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
        """The live line, cut to the terminal's width: a line that wrapped
        would not be erased by the next."""
        elapsed = time.monotonic() - self.started
        builds = self.board.summary() if self.board is not None else ""
        return fit(f"[{self.index + 1}/{self.total}] {self.label}  "
                   f"elapsed {fmt_duration(elapsed)}  ETA {fmt_duration(self.eta())}"
                   + (f" · {builds}" if builds else ""))

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

    def finish(self, row: Row) -> None:
        with self._lock:
            self.spent_estimated += self.estimates[self.index]
            wall = row.wall_s
            detail = f"wall {fmt_fixed(wall, 2)} s  peak RSS {fmt_bytes(row.peak_rss_bytes)}" \
                if wall is not None else ""
            # the figures metrics.py declares live: threads, a server's throughput and response
            detail += "".join(f"  {m.live.format(fmt_metric(m.name, row.figure(m.name)))}"
                              for m in METRICS.values()
                              if m.live and row.figure(m.name) is not None)
            note = f"  ({row.error})" if row.error else ""
            line = f"[{self.index + 1}/{self.total}] {row.status:<12} {self.label:<44} {detail}{note}"
            self.stream.write(("\r\033[K" if self.tty else "") + line + "\n")
            self.index += 1
            self.label = ""
            self.stream.flush()

    def message(self, text: str) -> None:
        with self._lock:
            self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
            self.stream.flush()

    def waiting(self) -> None:
        """No run can start yet: its line says so (and, on a terminal, what
        is being built) until the next run starts."""
        with self._lock:
            if not self.label:
                self.label = "waiting for a build"
                self.run_started = time.monotonic()

    def beside(self) -> Board:
        """A Board for builds that go on while runs do: drawn on this
        progress line, its announcements said as this line's messages."""
        self.board = Board(line=_Said(self.message))
        return self.board

    def close(self) -> None:
        self._stop.set()
        if self._ticker:
            self._ticker.join()


# --- a build's progress: its tools' own progress lines, as one status line ---

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Cargo's status lines: a verb right-aligned in 12 columns, then what it works on.
CARGO = re.compile(r"^\s*(Compiling|Downloaded|Downloading|Updating|Locking|Checking|Building|"
                   r"Finished|Fresh|Adding|Installing|Documenting)\s+(\S.*)$")
# Maven's: "[INFO] Downloading from central: https://.../kotlin-stdlib-2.4.21.pom",
# "[INFO] --- kotlin:2.4.21:compile (compile) @ bench ---", "[INFO] Building bench 1.0".
MAVEN_TRANSFER = re.compile(r"^\[INFO\] (Downloading|Downloaded) from [^:]+: \S*?([^/\s]+)(?:\s.*)?$")
MAVEN_GOAL = re.compile(r"^\[INFO\] --- ([\w.\-]+):[\w.\-]+:([\w.\-]+)\b.*---\s*$")
MAVEN_BUILDING = re.compile(r"^\[INFO\] Building (\S.*)$")
# Go's: "go: downloading github.com/x/y v1.2.3" (and finding, extracting, ...),
# and with `go install -v` each package path as it is compiled.
GO_MODULE = re.compile(r"^go: (downloading|finding|extracting|found|added|upgraded|downgraded) (.+)$")
GO_PACKAGE = re.compile(r"^[\w.\-~+]+(?:/[\w.\-~+]+)+$")


def tool_progress(line: str) -> str | None:
    """A build tool's own progress line, in a few words ("Compiling tokio
    v1.47.1", "Downloading kotlin-stdlib-2.4.21.pom", "downloading
    github.com/x/y v1.2.3", "compiling golang.org/x/net/http2"), or None for any
    other line (an announcement, a warning, an error)."""
    line = ANSI.sub("", line).rstrip()
    if m := CARGO.match(line):
        return f"{m[1]} {m[2]}"
    if m := MAVEN_TRANSFER.match(line):
        return f"{m[1]} {m[2]}"
    if m := MAVEN_GOAL.match(line):
        return f"{m[1]}:{m[2]}"
    if m := MAVEN_BUILDING.match(line):
        return f"Building {m[1]}"
    if m := GO_MODULE.match(line):
        return f"{m[1]} {m[2]}"
    if GO_PACKAGE.match(line):
        return f"compiling {line}"
    return None


class BuildStatus:
    """The status line of one build: "building rust: Compiling tokio v1.47.1
    (37/90)", its count of the tools' progress lines out of the last build's
    (when one was recorded and this one has not outgrown it)."""

    def __init__(self, name: str, total: int | None = None) -> None:
        self.name = name
        self.total = total
        self.steps = 0
        self.verb = "building"  # "setting up" while its set-up downloads and installs

    def feed(self, line: str) -> str | None:
        """The status line after this line of the build's output, or None
        when the line is not a tool's progress."""
        what = tool_progress(line)
        if what is None:
            return None
        self.steps += 1
        count = f"{self.steps}/{self.total}" if self.total and self.steps <= self.total \
            else str(self.steps)
        return f"{self.verb} {self.name}: {what} ({count})"


def fit(text: str) -> str:
    """A status line cut to the terminal's width."""
    width = shutil.get_terminal_size((100, 24)).columns - 1
    return text if len(text) <= width else text[:width - 1] + "…"


class StatusLine:
    """One line that updates in place on a terminal (\\r, erase to the end),
    cut to its width; nothing at all elsewhere (a log keeps the lines that
    say something, not the progress)."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        try:
            self.tty = stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.shown = False

    def update(self, text: str) -> None:
        if not self.tty:
            return
        self.stream.write("\r\033[K" + fit(text))
        self.stream.flush()
        self.shown = True

    def say(self, text: str) -> None:
        """A line that stays, printed over the status line."""
        self.stream.write(("\r\033[K" if self.shown else "") + text + "\n")
        self.stream.flush()
        self.shown = False

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


class _Said:
    """A StatusLine that draws nothing itself (the runs' progress line shows
    the builds): what stays is said through another writer."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say

    def update(self, text: str) -> None:
        pass

    def clear(self) -> None:
        pass


class Board:
    """The status line of builds that run at once: each one's last progress,
    joined ("setting up python: ... · building rust: Compiling tokio
    v1.47.1 (37/90)"). Its views (one a build) have StatusLine's methods,
    and may be called from several threads."""

    def __init__(self, stream: TextIO = sys.stderr, line: StatusLine | _Said | None = None) -> None:
        self.line = line or StatusLine(stream)
        self.lock = threading.Lock()
        self.parts: dict[str, str] = {}
        self.text = ""  # the parts joined, read without the lock (Progress's line)

    def summary(self) -> str:
        return self.text

    def _show(self) -> None:
        self.text = " · ".join(self.parts.values())
        if self.parts:
            self.line.update(self.text)
        else:
            self.line.clear()

    def update(self, key: str, text: str) -> None:
        with self.lock:
            self.parts[key] = text
            self._show()

    def clear(self, key: str) -> None:
        with self.lock:
            self.parts.pop(key, None)
            self._show()

    def say(self, text: str) -> None:
        with self.lock:
            self.line.say(text)
            self._show()

    def tell(self, say: Callable[[str], None], text: str) -> None:
        """A line said by another writer (the run's own progress), the status
        line put aside while it is."""
        with self.lock:
            self.line.clear()
            say(text)
            self._show()

    def view(self, key: str) -> BoardView:
        return BoardView(self, key)


class BoardView:
    """One build's share of a Board, used where a StatusLine would be."""

    def __init__(self, board: Board, key: str) -> None:
        self.board, self.key = board, key

    def update(self, text: str) -> None:
        self.board.update(self.key, text)

    def say(self, text: str) -> None:
        self.board.say(text)

    def clear(self) -> None:
        self.board.clear(self.key)
