"""The run directory, its one owner: runs.csv and samples.csv (typed column
specs, the writer, checked readers), env.json, retried.csv, the directory's
creation and results/latest. results/README.md documents the files.

Rows are dicts keyed by column name with typed values (None when empty). A
reader checks the header and every row: a last row cut short (a power cut
mid-write) is reported and ignored, anything else malformed raises
RunDirError, which the CLI prints as one line.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from .formatting import csv_number
from .workloads import COMMON_DIMENSIONS, WORKLOADS, Param

STATUSES = ("ok", "invalid", "timeout", "oom", "crashed", "skipped", "build-failed")


@dataclass(frozen=True)
class Column:
    name: str
    parse: Callable[[str], Any]


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return int(float(text))  # tolerate "1e6"-style writers


def _status(text: str) -> str:
    if text not in STATUSES:
        raise ValueError(f"unknown status {text!r}")
    return text


_BASE_RUN_COLUMNS = (
    ("run_id", str), ("impl", str), ("language", str), ("runtime", str), ("workload", str),
    ("n", _int), ("buffer", _int), ("rep", _int), ("status", _status), ("exit_code", _int),
    ("signal", _int), ("wall_s", float), ("cpu_user_s", float), ("cpu_sys_s", float),
    ("peak_rss_bytes", _int), ("peak_rss_method", str), ("sampled_peak_rss_bytes", _int),
    ("max_threads", _int), ("result", _int), ("expected", _int), ("capacity", _int),
    ("iterations", _int), ("warmup_ms", _int), ("warmup_runs", _int), ("warmup_s", float),
    ("first_iter_s", float), ("warm_iter_s", float), ("spawn_s", float),
    ("sleep_wait_s", float), ("load_avg_1m", float), ("other_cpu_frac", float),
    ("strays", _int), ("started_at", str), ("command", str), ("error", str),
    ("stderr_tail", str), ("output", str),
)
_PARSERS: dict[type, Callable[[str], Any]] = {int: _int, float: float, str: str}


def _declared(pairs: Iterable[tuple[str, type]]) -> tuple[tuple[str, Callable[[str], Any]], ...]:
    return tuple((name, _PARSERS[kind]) for name, kind in pairs)


# The workloads' own dimensions (part of a configuration's key) and columns,
# in declaration order, then the harness's own (--cpus, merge's machine).
DIMENSIONS: tuple[tuple[str, type], ...] = tuple(dict.fromkeys(
    [(d.name, d.kind) for w in WORKLOADS.values() for d in w.dimensions
     if d not in COMMON_DIMENSIONS] + [(d.name, d.kind) for d in COMMON_DIMENSIONS]))
_WORKLOAD_COLUMNS = tuple(dict.fromkeys(c for w in WORKLOADS.values() for c in w.row_columns))

RUN_COLUMNS: tuple[Column, ...] = tuple(Column(n, p) for n, p in (
    _BASE_RUN_COLUMNS[:8] + _declared(DIMENSIONS) + _BASE_RUN_COLUMNS[8:]
    + _declared(_WORKLOAD_COLUMNS)))
RUN_NAMES = tuple(c.name for c in RUN_COLUMNS)
# A runs.csv must have these; columns added later may be absent from older runs.
REQUIRED = ("impl", "workload", "n", "buffer", "rep", "status")
# A sample's row: the run's key, then the sample.
SAMPLE_KEY = ("run_id", "impl", "workload", "n", "buffer", *(n for n, _ in DIMENSIONS), "rep")
SAMPLE_COLUMNS: tuple[Column, ...] = tuple(Column(n, p) for n, p in (
    (("run_id", str), ("impl", str), ("workload", str), ("n", _int), ("buffer", _int))
    + _declared(DIMENSIONS) + (("rep", _int), ("t_s", float), ("rss_bytes", _int),
                               ("threads", _int))))
SAMPLE_NAMES = tuple(c.name for c in SAMPLE_COLUMNS)
SAMPLE_REQUIRED = ("run_id", "impl", "workload", "n", "buffer", "rep", "t_s", "rss_bytes",
                   "threads")


class RunDirError(Exception):
    """A run directory's file is not what this harness writes."""


@dataclass(frozen=True, order=True)
class ConfigKey:
    """The identity of a configuration: what is compared across repeats, runs
    and machines. A recorded row is (ConfigKey, rep)."""
    impl: str
    workload: str
    n: int | None
    buffer: int | None
    params: tuple[Param, ...] = ()  # the workload's own dimensions, in declaration order

    def __post_init__(self) -> None:
        # The harness's own dimensions (--cpus, merge's machine) count only
        # where set: an unpinned run's key is the key it always was.
        common = {d.name for d in COMMON_DIMENSIONS}
        object.__setattr__(self, "params", tuple(
            (name, value) for name, value in self.params if value is not None or name not in common))

    @classmethod
    def of(cls, row: dict[str, Any]) -> ConfigKey:
        declared = WORKLOADS.get(row["workload"])
        params = tuple((d.name, row.get(d.name)) for d in declared.dimensions) if declared else ()
        return cls(row["impl"], row["workload"], row.get("n"), row.get("buffer"), params)

    def param(self, name: str) -> Any:
        return dict(self.params).get(name)

    @property
    def label(self) -> str:
        return f"{self.impl} {self.workload}" + (f" {self.settings}" if self.settings else "")

    @property
    def settings(self) -> str:
        """The configuration without impl and workload: 'N=1000 B=1'."""
        parts = [] if self.n is None else [f"N={self.n}"]
        if self.buffer is not None:
            parts.append(f"B={self.buffer}")
        parts += [f"{name}={value}" for name, value in self.params if value is not None]
        return " ".join(parts)

    @property
    def sort_key(self) -> tuple:
        """An order that never compares None with a number or text."""
        return (self.n is None, self.n or 0, self.buffer is None, self.buffer or 0,
                tuple((v is None, v if v is not None else 0) for _, v in self.params))


RowKey = tuple[ConfigKey, int]


def row_key(row: dict[str, Any]) -> RowKey:
    return ConfigKey.of(row), row["rep"]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class Table:
    rows: list[dict[str, Any]]
    torn: str | None = None  # a note when a cut-short last row was ignored


def _read_table(path: Path, columns: tuple[Column, ...], required: Iterable[str]) -> Table:
    by_name = {c.name: c for c in columns}
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunDirError(f"{path}: cannot read: {exc.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    reader = csv.reader(text.splitlines(keepends=True))
    try:
        header, *lines = list(reader)
    except ValueError:
        raise RunDirError(f"{path}: empty, no header") from None
    except csv.Error as exc:
        raise RunDirError(f"{path}: not CSV: {exc}") from None
    unknown = [h for h in header if h not in by_name]
    missing = [r for r in required if r not in header]
    if unknown or missing or len(set(header)) != len(header):
        what = f"unknown columns {unknown}" if unknown else f"missing columns {missing}" \
            if missing else "repeated columns"
        raise RunDirError(f"{path}: not a file this harness writes ({what})")
    rows: list[dict[str, Any]] = []
    torn = None
    # Every row the writer appends ends in a newline: without one, the last
    # row was cut short, even where what remains happens to parse.
    if lines and not text.endswith("\n"):
        lines.pop()
        torn = f"{path.name}: the last row was cut short (an interrupted write) and is ignored"
    for number, fields in enumerate(lines, start=2):
        try:
            if len(fields) != len(header):
                raise ValueError(f"{len(fields)} fields, expected {len(header)}")
            row: dict[str, Any] = {name: None for name in by_name}
            for name, value in zip(header, fields):
                row[name] = by_name[name].parse(value) if value != "" else None
            rows.append(row)
        except ValueError as exc:
            raise RunDirError(f"{path}: line {number}: {exc}") from None
    return Table(rows, torn)


def read_runs(path: Path) -> Table:
    """runs.csv, typed and checked (see the module's docstring)."""
    table = _read_table(path, RUN_COLUMNS, REQUIRED)
    for row in table.rows:
        user, system = row.get("cpu_user_s"), row.get("cpu_sys_s")
        row["cpu_s"] = user + system if user is not None and system is not None else None
    return table


def read_samples(path: Path) -> list[dict[str, Any]]:
    """samples.csv, typed; an absent file means no samples."""
    if not path.exists():
        return []
    return _read_table(path, SAMPLE_COLUMNS, SAMPLE_REQUIRED).rows


def read_env(path: Path) -> dict[str, Any]:
    """env.json, or {} when absent."""
    if not path.exists():
        return {}
    try:
        env = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path}: not readable JSON: {exc}") from None
    if not isinstance(env, dict):
        raise RunDirError(f"{path}: not a JSON object")
    return env


class RowWriteError(Exception):
    """A finished row could not be written (a full disk, a removed
    directory): the message names the file and the row."""

    def __init__(self, path: Path, row: dict[str, Any], exc: OSError) -> None:
        key = ConfigKey.of(row).label + f" rep {row.get('rep')}"
        super().__init__(f"cannot write {path}: {exc.strerror or exc}; the row for {key} is lost")
        self.row = row


class RunDir:
    """One run directory. Rows are appended and flushed to disk as runs
    finish, so an interrupted suite keeps every completed row."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.runs_path = path / "runs.csv"
        self.samples_path = path / "samples.csv"
        self.env_path = path / "env.json"
        self.retried_path = path / "retried.csv"

    @property
    def name(self) -> str:
        return self.path.name

    @classmethod
    def create_new(cls, out: Path) -> RunDir:
        """A new directory named for the local time, created atomically: two
        runs started in the same second get different directories."""
        out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        for suffix in range(1, 1000):
            path = out / (stamp if suffix == 1 else f"{stamp}-{suffix}")
            try:
                path.mkdir()
            except FileExistsError:
                continue
            run = cls(path)
            run._write_headers()
            return run
        raise RunDirError(f"{out}: no free run directory name for {stamp}")

    def _write_headers(self) -> None:
        for path, names in ((self.runs_path, RUN_NAMES), (self.samples_path, SAMPLE_NAMES)):
            if not path.exists():
                with path.open("w", newline="") as f:
                    csv.writer(f).writerow(names)

    def runs(self) -> Table:
        return read_runs(self.runs_path)

    def env(self) -> dict[str, Any]:
        return read_env(self.env_path)

    def samples(self) -> list[dict[str, Any]]:
        return read_samples(self.samples_path)

    def prepare_resume(self, rerun: set[RowKey]) -> tuple[set[RowKey], str | None]:
        """For --resume: rows that will run again (planned and not ok) move
        to retried.csv; every other row stays, whatever its status. A row cut
        short by an interrupted write is dropped (it has no complete figures).
        Returns the keys of the rows kept, and the torn-row note if any."""
        self._write_headers()
        table = self.runs()
        moved = [r for r in table.rows if r["status"] != "ok" and row_key(r) in rerun]
        kept = [r for r in table.rows if not (r["status"] != "ok" and row_key(r) in rerun)]
        if _header(self.samples_path) != list(SAMPLE_NAMES):  # written by an older harness
            _rewrite(self.samples_path, SAMPLE_NAMES, self.samples())
        if moved or table.torn or _header(self.runs_path) != list(RUN_NAMES):
            if moved:
                new = not self.retried_path.exists()
                with self.retried_path.open("a", newline="") as f:
                    writer = csv.writer(f)
                    if new:
                        writer.writerow(RUN_NAMES)
                    writer.writerows(_cells(r, RUN_NAMES) for r in moved)
            _rewrite(self.runs_path, RUN_NAMES, kept)
        return {row_key(r) for r in kept}, table.torn

    def append_run(self, row: dict[str, Any]) -> None:
        try:
            with self.runs_path.open("a", newline="") as f:
                csv.writer(f).writerow(_cells(row, RUN_NAMES))
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise RowWriteError(self.runs_path, row, exc) from None

    def append_samples(self, row: dict[str, Any], samples: Iterable[Any]) -> None:
        """The launcher's samples (t_s, rss_bytes, threads) of one run."""
        prefix = _cells(row, SAMPLE_KEY)
        try:
            with self.samples_path.open("a", newline="") as f:
                csv.writer(f).writerows(prefix + [f"{s.t_s:.4f}", s.rss_bytes, s.threads]
                                        for s in samples)
        except OSError as exc:
            raise RowWriteError(self.samples_path, row, exc) from None

    def write_env(self, env: dict[str, Any]) -> None:
        tmp = self.env_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(env, indent=2) + "\n")
        tmp.replace(self.env_path)


def _header(path: Path) -> list[str]:
    with path.open(newline="") as f:
        return next(csv.reader(f), [])


def _rewrite(path: Path, names: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        writer.writerows(_cells(r, names) for r in rows)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


def _cells(row: dict[str, Any], names: Iterable[str]) -> list[str]:
    return [csv_number(row.get(name)) for name in names]


def open_run_dir(text: str | Path) -> RunDir:
    """An existing run directory given by the user (report, plot, compare)."""
    path = Path(text)
    if not (path / "runs.csv").is_file():
        raise RunDirError(f"{text}: not a run directory (no runs.csv)")
    return RunDir(path.resolve())


def latest(out: Path) -> RunDir | None:
    """OUT/latest, the newest run, when there is one."""
    link = out / "latest"
    return RunDir(link.resolve()) if (link / "runs.csv").is_file() else None


def check_out(out: Path) -> None:
    """Before anything is written: OUT/latest, if present, must be ours (a
    symlink); a file or directory of that name is the user's."""
    link = out / "latest"
    if (link.exists() or link.is_symlink()) and not link.is_symlink():
        raise RunDirError(f"{link} exists and is not a symlink: move it away")


def point_latest(out: Path, run: RunDir) -> None:
    """OUT/latest -> the newest run directory (a relative symlink)."""
    check_out(out)
    link = out / "latest"
    tmp = out / f".latest.{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run.name)
    tmp.replace(link)


def past_runs(out: Path) -> Iterable[dict[str, Any]]:
    """Every readable row of every earlier run in OUT (for estimates);
    unreadable files are skipped: they only cost an estimate."""
    for path in sorted(out.glob("*/runs.csv")):
        try:
            yield from read_runs(path).rows
        except RunDirError:
            continue
