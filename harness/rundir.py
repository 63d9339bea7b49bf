"""The run directory and its format, one owner: runs.csv and samples.csv
(typed columns, the writer, checked readers), env.json (its keys and their
assembly), retried.csv, the directory's creation and results/latest.
docs/data-format.md documents every column and key, and each version.

The format is versioned (env.json's `format_version`) and frozen per
version: its columns are written out below, not computed from the workload
declarations, so that removing a workload leaves older runs readable. A
reader takes every version up to FORMAT_VERSION; a newer one is refused in
one line. Rows are dicts keyed by column name with typed values (None when
empty). A reader checks the header and every row: a last row cut short (a
power cut mid-write) is reported and ignored, anything else malformed
raises RunDirError, which the CLI prints as one line. Writers refuse a key
that is not in the format: a new figure is a new format version, never a
silently dropped one.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import json
import math
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from . import UsageError
from .envinfo import mask_value
from .formatting import csv_number
from .variants import ID, masked_spec, parse
from .workloads import COMMON_DIMENSIONS, WORKLOADS, Param

STATUSES = ("ok", "invalid", "timeout", "oom", "crashed", "skipped", "build-failed")

# 1: the format before it had a version (no format_version in env.json; a
#    runs.csv may lack the columns added over time). 2: the version recorded,
#    the header complete, env.json's keys a closed set (ENV_KEYS). 3: variants
#    and releases (IMPL[K=V;-flag], IMPL@VERSION): runs.csv's `variant` and
#    `version` columns, env.json's `variants`. 4: a text cell that a
#    spreadsheet would take for a formula is written with a leading `'`
#    (FORMULA); the reader takes it off. 5: runs.csv's `duration_ms`, the
#    sleep a run was given (run --adaptive-sleep makes it differ by run).
#    6: runs.csv's counters (context switches, page faults: wait4's rusage).
#    7: the cgroup's and perf stat's counters (run --counters), and `node`:
#    the host of a replicate of a cluster run.
FORMAT_VERSION = 7
FORMATS = (1, 2, 3, 4, 5, 6, 7)
# OWASP's rule for CSV cells from untrusted text: a cell starting with one of
# = + - @ tab CR is a formula to a spreadsheet, so it is written after a `'`.
# A cell already starting with `'`s before one of them gets one more, so the
# reader's taking one off gives back every text exactly.
FORMULA = re.compile(r"'*[=+\-@\t\r]")
FORMULA_STARTS = "=+-@\t\r"
FIRST_ESCAPED = 4  # the first format whose text cells carry the `'`


def escape_cell(text: str) -> str:
    """A text cell as written to any CSV of the harness (FORMULA)."""
    return "'" + text if FORMULA.match(text) else text


def unescape_cell(text: str) -> str:
    """escape_cell undone: the text as it was given."""
    return text[1:] if text.startswith("'") and FORMULA.match(text, 1) else text


@dataclass(frozen=True)
class Column:
    name: str
    parse: Callable[[str], Any]


INT64_MAX = 2**63 - 1


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)  # tolerate "1e6"-style writers
    except ValueError:
        raise ValueError(f"{text!r} is not an integer") from None
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"{text!r} is not an integer")
    return int(value)


def _count(text: str) -> int:
    """A size, a count or a number of repeats: an integer from 0 to 2^63-1."""
    value = _int(text)
    if not 0 <= value <= INT64_MAX:
        raise ValueError(f"{text!r} is out of range (0 to 2^63-1)")
    return value


def _signed(text: str) -> int:
    """An exit code or a signal: a 64-bit integer."""
    value = _int(text)
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise ValueError(f"{text!r} is out of range (a 64-bit integer)")
    return value


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def _seconds(text: str) -> float:
    """A time, a rate or a load: a finite number >= 0."""
    value = _finite(text)
    if value < 0:
        raise ValueError(f"{text!r} is negative")
    return value


def _status(text: str) -> str:
    if text not in STATUSES:
        raise ValueError(f"unknown status {text!r}")
    return text


def _label(text: str) -> str:
    """An implementation's label as the harness writes it (variants.parse
    reads it; a registry id follows variants.ID, checked when loaded), with
    no control character: a NUL or a newline is no name of ours."""
    try:
        parse(text)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    if not text.isprintable():
        raise ValueError(f"{text!r} holds a control character")
    return text


def _id(text: str) -> str:
    """A language's name (variants.ID, as the registry requires)."""
    if not ID.fullmatch(text):
        raise ValueError(f"{text!r} is not a name of letters, digits, '.', '_' or '-'")
    return text


# The workloads rows may name: these, frozen as the columns are (a workload
# removed from workloads.py leaves its older rows readable), and any declared.
WORKLOAD_NAMES = ("sleep", "chain", "chain-await", "bounded", "skynet", "http")


def _workload(text: str) -> str:
    if text not in WORKLOAD_NAMES and text not in WORKLOADS:
        known = dict.fromkeys([*WORKLOAD_NAMES, *WORKLOADS])
        raise ValueError(f"unknown workload {text!r} (known: {', '.join(known)})")
    return text


def _date(text: str) -> str:
    """An ISO 8601 time, as utc_now() writes it."""
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time") from None
    return text


def _columns(*pairs: tuple[str, Callable[[str], Any]]) -> tuple[Column, ...]:
    return tuple(Column(name, parse) for name, parse in pairs)


# The dimensions of a configuration beyond impl, workload, n and buffer: the
# http workload's own, then the harness's (--cpus, merge's machine). Part of
# a row's key in runs.csv and samples.csv alike.
DIMENSIONS: tuple[Column, ...] = _columns(
    ("users", _count), ("requests", _count), ("delay_ms", _count), ("pool_threads", _count),
    ("style", str), ("cpus", _count), ("machine", str))

# runs.csv, formats 1 to 3 (format 1 files may hold any subset that includes
# REQUIRED; a column is in the files from the version ADDED_IN names, else 1).
RUN_COLUMNS: tuple[Column, ...] = _columns(
    ("run_id", str), ("impl", _label), ("variant", str), ("version", str), ("language", _id),
    ("runtime", str), ("workload", _workload),
    ("n", _count), ("buffer", _count), ("rep", _count)) + DIMENSIONS + _columns(
    ("node", str), ("status", _status), ("exit_code", _signed), ("signal", _signed), ("wall_s", _seconds),
    ("cpu_user_s", _seconds), ("cpu_sys_s", _seconds), ("ctx_switches_voluntary", _count),
    ("ctx_switches_involuntary", _count), ("minor_faults", _count), ("major_faults", _count),
    ("cgroup_cpu_user_s", _seconds), ("cgroup_cpu_sys_s", _seconds),
    ("cgroup_page_faults", _count), ("cgroup_major_faults", _count),
    ("perf_task_clock_s", _seconds), ("perf_context_switches", _count),
    ("perf_cpu_migrations", _count), ("perf_page_faults", _count), ("perf_cycles", _count),
    ("perf_instructions", _count),
    ("peak_rss_bytes", _count),
    ("peak_rss_method", str), ("sampled_peak_rss_bytes", _count), ("max_threads", _count),
    ("result", _int), ("expected", _int), ("capacity", _count), ("iterations", _count),
    ("warmup_ms", _count), ("duration_ms", _count), ("warmup_runs", _count), ("warmup_s", _seconds), ("first_iter_s", _seconds),
    ("warm_iter_s", _seconds), ("spawn_s", _seconds), ("sleep_wait_s", _seconds),
    ("load_avg_1m", _seconds), ("other_cpu_frac", _finite), ("strays", _count), ("started_at", _date),
    ("command", str), ("error", str), ("stderr_tail", str), ("output", str),
    ("requests_done", _count), ("http_errors", _count), ("rps", _seconds), ("latency_p50_s", _seconds),
    ("latency_p90_s", _seconds), ("latency_p99_s", _seconds), ("latency_max_s", _seconds),
    ("gen_cpu_s", _seconds), ("load_s", _seconds))
RUN_NAMES = tuple(c.name for c in RUN_COLUMNS)
ADDED_IN = {"variant": 3, "version": 3, "duration_ms": 5, "ctx_switches_voluntary": 6,
            "ctx_switches_involuntary": 6, "minor_faults": 6, "major_faults": 6,
            **dict.fromkeys(("node", "cgroup_cpu_user_s", "cgroup_cpu_sys_s", "cgroup_page_faults",
                             "cgroup_major_faults", "perf_task_clock_s", "perf_context_switches",
                             "perf_cpu_migrations", "perf_page_faults", "perf_cycles",
                             "perf_instructions"), 7)}
# A runs.csv of any version must have these.
REQUIRED = ("impl", "workload", "n", "buffer", "rep", "status")
# Added by the reader, never written: CPU time, user + system.
DERIVED = ("cpu_s",)

# samples.csv: the run's key, then the sample.
SAMPLE_KEY = ("run_id", "impl", "workload", "n", "buffer", *(c.name for c in DIMENSIONS), "rep")
_BY_NAME = {c.name: c for c in RUN_COLUMNS}
SAMPLE_COLUMNS: tuple[Column, ...] = tuple(_BY_NAME[name] for name in SAMPLE_KEY) + _columns(
    ("t_s", _seconds), ("rss_bytes", _count), ("threads", _count))
SAMPLE_NAMES = tuple(c.name for c in SAMPLE_COLUMNS)
SAMPLE_REQUIRED = ("run_id", "impl", "workload", "n", "buffer", "rep", "t_s", "rss_bytes",
                   "threads")

# env.json's top-level keys (formats 2 and 3; format 1 files may hold any).
ENV_KEYS = frozenset({
    "format_version", "run_id", "started_at", "finished_at", "host", "git", "settings",
    "toolchains", "runtimes", "program_env", "registries", "floor_impls", "invocations",
    "machine_state", "variants",
    # a merged run directory (harness merge)
    "merged_at", "machines",
})
# What a merged directory keeps of each machine's env.json.
MACHINE_KEYS = ("run_id", "started_at", "finished_at", "host", "git", "toolchains", "settings",
                "runtimes", "machine_state")


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



def format_version(env: dict[str, Any], where: Path) -> int:
    """The format a run directory was written in, from its env.json (read_env's
    dict): 1 when it names none (written before the format had a version)."""
    version = env.get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RunDirError(f"{where}: format_version {version!r} is not a format this harness knows")
    if version > FORMAT_VERSION:
        raise RunDirError(f"{where}: written in format {version} by a newer harness; this one "
                          f"reads formats {FORMATS[0]} to {FORMAT_VERSION}: update the harness")
    return version


def _dir_version(csv_path: Path) -> int:
    env_path = csv_path.parent / "env.json"
    return format_version(read_env(env_path), env_path)


# Cells no row may leave empty: a row is a configuration's run.
FILLED = ("impl", "workload", "rep")
# The workloads whose configuration has no N (frozen, as WORKLOAD_NAMES):
# every other row's `n` is filled.
WITHOUT_N = ("http",)
RUN_FILLED = FILLED + ("status",)
SAMPLE_FILLED = FILLED + ("t_s", "rss_bytes", "threads")


def _regular(path: Path) -> None:
    """A file of the run directory must be a regular file: reading a FIFO
    would block forever."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # the read says why
    if not stat.S_ISREG(mode):
        raise RunDirError(f"{path}: not a regular file")


def _read_table(path: Path, columns: tuple[Column, ...], required: Iterable[str],
                version: int, filled: Iterable[str] = ()) -> Table:
    by_name = {c.name: c for c in columns}
    _regular(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunDirError(f"{path}: cannot read: {exc.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    escaped = version >= FIRST_ESCAPED
    reader = csv.reader(text.splitlines(keepends=True))
    try:
        header, *lines = list(reader)
    except ValueError:
        raise RunDirError(f"{path}: empty, no header") from None
    except csv.Error as exc:
        raise RunDirError(f"{path}: not CSV: {exc}") from None
    unknown = [h for h in header if h not in by_name]
    # Format 1 grew its columns over time; from format 2 on, the header is whole.
    missing = [r for r in (required if version == 1 else by_name)
               if r not in header and ADDED_IN.get(r, 1) <= version]
    if unknown or missing or len(set(header)) != len(header):
        what = f"unknown columns {unknown}" if unknown else f"missing columns {missing}" \
            if missing else "repeated columns"
        raise RunDirError(f"{path}: not a format {version} file of this harness ({what})")
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
                if escaped and by_name[name].parse is str and value[:1] and value[0] in FORMULA_STARTS:
                    # the writer puts a ' before such a text: this cell was made elsewhere
                    raise ValueError(f"{name}: a text starting with {value[0]!r} without the "
                                     "' this format writes before it (a spreadsheet would run "
                                     "it as a formula)")
                if escaped:
                    value = unescape_cell(value)
                try:
                    row[name] = by_name[name].parse(value) if value != "" else None
                except ValueError as exc:  # the status names itself
                    raise ValueError(str(exc) if name == "status" else f"{name}: {exc}") from None
            empty = [name for name in filled if name in header and row[name] is None]
            if "n" in header and row["n"] is None and row["workload"] not in WITHOUT_N:
                empty.append("n")
            if empty:
                raise ValueError(f"{empty[0]} is empty")
            rows.append(row)
        except ValueError as exc:
            raise RunDirError(f"{path}: line {number}: {exc}") from None
    return Table(rows, torn)


def read_runs(path: Path) -> Table:
    """runs.csv, typed and checked (see the module's docstring), in the
    format its directory's env.json names."""
    table = _read_table(path, RUN_COLUMNS, REQUIRED, _dir_version(path), RUN_FILLED)
    for row in table.rows:
        user, system = row.get("cpu_user_s"), row.get("cpu_sys_s")
        row["cpu_s"] = user + system if user is not None and system is not None else None
    return table


def read_samples(path: Path) -> list[dict[str, Any]]:
    """samples.csv, typed; an absent file means no samples."""
    if not (path.exists() or path.is_symlink()):  # a symlink loop is no absent file
        return []
    return _read_table(path, SAMPLE_COLUMNS, SAMPLE_REQUIRED, _dir_version(path),
                       SAMPLE_FILLED).rows


def read_env(path: Path) -> dict[str, Any]:
    """env.json, or {} when absent; a file of format 2 or later holds only ENV_KEYS."""
    if not (path.exists() or path.is_symlink()):  # a symlink loop is no absent file
        return {}
    _regular(path)
    try:
        env = json.loads(path.read_text(), parse_constant=_no_constant)
    except (OSError, ValueError, RecursionError) as exc:
        raise RunDirError(f"{path}: not readable JSON: {exc}") from None
    if not isinstance(env, dict):
        raise RunDirError(f"{path}: not a JSON object")
    if format_version(env, path) >= 2 and (unknown := sorted(set(env) - ENV_KEYS)):
        raise RunDirError(f"{path}: not a format {env['format_version']} file of this harness "
                          f"(unknown keys {unknown})")
    _check_env_types(env, path)
    return env


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


# The known keys' types, in every version (None: null is allowed). A reader
# relies on them: a host that is a list is an error here, not a traceback later.
ENV_TYPES: dict[str, tuple[type, ...]] = {
    "run_id": (str,), "started_at": (str, type(None)), "finished_at": (str, type(None)),
    "merged_at": (str, type(None)), "host": (dict,), "git": (dict, type(None)),
    "settings": (dict,), "toolchains": (dict,), "runtimes": (dict,), "program_env": (dict,),
    "registries": (dict,), "floor_impls": (list,), "invocations": (list,),
    "machine_state": (dict, type(None)), "machines": (dict,),
}
_TYPE_NAMES = {str: "a string", dict: "an object", list: "a list", type(None): "null"}


def _check_env_types(env: dict[str, Any], path: Path) -> None:
    def wrong(key: str, value: Any, types: tuple[type, ...]) -> RunDirError:
        return RunDirError(f"{path}: {key} must be {' or '.join(_TYPE_NAMES[t] for t in types)}, "
                           f"not {json.dumps(value)[:40]}")

    for key, types in ENV_TYPES.items():
        if key in env and not isinstance(env[key], types):
            raise wrong(key, env[key], types)
    for key in ("started_at", "finished_at", "merged_at"):
        if isinstance(env.get(key), str):
            try:
                _date(env[key])
            except ValueError as exc:
                raise RunDirError(f"{path}: {key}: {exc}") from None
    if not all(isinstance(i, str) for i in env.get("floor_impls") or ()):
        raise wrong("floor_impls", env["floor_impls"], (list,))
    if not all(isinstance(i, dict) for i in env.get("invocations") or ()):
        raise RunDirError(f"{path}: every invocation must be an object")
    for name, machine in (env.get("machines") or {}).items():
        if not isinstance(machine, dict):
            raise wrong(f"machines.{name}", machine, (dict,))
        for key in ("host", "git", "settings", "toolchains", "runtimes", "machine_state"):
            if machine.get(key) is not None and not isinstance(machine[key], dict):
                raise wrong(f"machines.{name}.{key}", machine[key], (dict,))


# ---------------------------------------------------------------- env.json

def new_env(run_id: str, host: dict[str, Any]) -> dict[str, Any]:
    """A new run's env.json, before anything ran."""
    return {"format_version": FORMAT_VERSION, "run_id": run_id, "started_at": utc_now(),
            "host": host}


def invocation(command: list[str], resumed: bool, git: dict[str, Any], impls: list[str],
               settings: dict[str, Any], load_start: float | None) -> dict[str, Any]:
    """One `run` (or --resume) that writes rows into the directory. A
    credential in the command line or in a variant named there is masked
    (envinfo.mask_value), as in the rows' labels."""
    settings = settings | {"impls": [_masked_name(n) for n in settings.get("impls") or ()]}
    return {"started_at": utc_now(), "finished_at": None,
            "command": [mask_value(arg) for arg in command],
            "resumed": resumed, "git": git, "impls": impls, "settings": settings,
            "load_avg_1m": {"start": load_start, "end": None}}


def _masked_name(name: str) -> str:
    """An --impl name as its rows' label shows it (settings masked one by one)."""
    try:
        return masked_spec(parse(name)).label if name != "all" else name
    except UsageError:
        return mask_value(name)


def start_invocation(env: dict[str, Any], inv: dict[str, Any], toolchains: dict[str, Any],
                     program_env: dict[str, str], registries: dict[str, str],
                     floor_impls: Iterable[str], machine_state: dict[str, Any],
                     variants: dict[str, dict[str, Any]] | None = None) -> None:
    """The newest invocation's settings and commit at the top; every one of
    them in `invocations`; each variant and release by its label in
    `variants`. A resumed directory is brought to this format."""
    env.update(format_version=FORMAT_VERSION, finished_at=None, settings=inv["settings"],
               git=inv["git"], toolchains=toolchains, program_env=program_env,
               registries=registries, machine_state=machine_state,
               # the implementations the report reads the others against (×floor)
               floor_impls=sorted(set(env.get("floor_impls", [])) | set(floor_impls)))
    if variants or "variants" in env:
        env["variants"] = env.get("variants", {}) | (variants or {})
    env["invocations"] = env.get("invocations", []) + [inv]


def finish_invocation(env: dict[str, Any], runtimes: dict[str, str],
                      load_end: float | None, steal_frac: float | None) -> None:
    """Runtime versions come from the built programs, so only at the end;
    so does the share of CPU time a hypervisor took during the invocation."""
    inv = env["invocations"][-1]
    env["runtimes"] = runtimes
    env["finished_at"] = inv["finished_at"] = utc_now()
    inv["load_avg_1m"]["end"] = load_end
    inv["steal_frac"] = steal_frac


def merged_env(run_id: str, envs: list[dict[str, Any]], names: list[str],
               dirs: list[Path]) -> dict[str, Any]:
    """A merged directory's env.json: each machine's environment under
    `machines` (a merge of merges keeps the machines it names)."""
    machines: dict[str, Any] = {}
    for env, name, path in zip(envs, names, dirs):
        if "machines" in env:
            machines.update(env["machines"])
        else:
            machines[name] = {k: env.get(k) for k in MACHINE_KEYS} | {"dir": str(path)}
    started = [e["started_at"] for e in envs if e.get("started_at")]
    finished = [e["finished_at"] for e in envs if e.get("finished_at")]
    return {
        "format_version": FORMAT_VERSION, "run_id": run_id, "merged_at": utc_now(),
        "started_at": min(started, default=None), "finished_at": max(finished, default=None),
        "host": {"hostname": f"{len(machines)} machines merged"},
        "floor_impls": sorted({i for e in envs for i in e.get("floor_impls") or ()}),
        "machines": machines,
        # A figure's machine is in its row; settings and toolchains per machine above.
        "settings": envs[0].get("settings") or {},
    }


# ---------------------------------------------------------------- the directory

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
        self._files: dict[str, tuple[int, int]] = {}  # (device, inode) of each file appended to
        self._held: TextIO | None = None  # the lock's file, while this process writes here
        self.runs_path = path / "runs.csv"
        self.samples_path = path / "samples.csv"
        self.env_path = path / "env.json"
        self.retried_path = path / "retried.csv"

    @property
    def name(self) -> str:
        return self.path.name

    @classmethod
    def create_new(cls, out: Path, env: Callable[[str], dict[str, Any]] | None = None) -> RunDir:
        """A new directory named for the local time, created atomically: two
        runs started in the same second get different directories. Its
        env.json (env(run_id), at least the format and the run's id) is
        written first, so that its format is known before any row is."""
        out.mkdir(parents=True, exist_ok=True)
        run = cls(_reserve(out))
        run.write_env(env(run.name) if env else {"format_version": FORMAT_VERSION,
                                                    "run_id": run.name})
        run._write_headers()
        return run

    @classmethod
    def create_staged(cls, out: Path, env: Callable[[str], dict[str, Any]],
                      fill: Callable[[RunDir], None]) -> RunDir:
        """A new directory (named as create_new names it) written aside, in
        a hidden folder of OUT, by fill(run), and renamed into place at the
        end; on any error it is removed, with OUT if this made it, and an
        OSError (a read-only folder, a full disk) is a RunDirError."""
        made = [p for p in (out, *out.parents) if not (p.exists() or p.is_symlink())]
        tmp = final = None
        try:
            out.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".writing-", dir=out))
            final = _reserve(out)  # the name, held by an empty folder until the rename
            run = cls(tmp)
            run.write_env(env(final.name))
            run._write_headers()
            fill(run)
            tmp.replace(final)
            return cls(final)
        except BaseException as exc:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            for folder in ([final] if final is not None else []) + made:
                try:
                    folder.rmdir()
                except OSError:
                    pass
            if isinstance(exc, OSError):
                raise RunDirError(f"cannot write {exc.filename or out}: "
                                  f"{exc.strerror or exc}") from None
            if isinstance(exc, RowWriteError):
                raise RunDirError(str(exc)) from None
            raise

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
        Files of an older format are rewritten in this one (whole headers);
        the caller records the version in env.json. Returns the keys of the
        rows kept, and the torn-row note if any. Every file is read and
        checked before any is written, and the rewritten ones are written
        aside and moved into place together: a malformed file or a full disk
        leaves the directory as it was."""
        table = self.runs()
        self.check_resumable()
        moved = [r for r in table.rows if r["status"] != "ok" and row_key(r) in rerun]
        kept = [r for r in table.rows if not (r["status"] != "ok" and row_key(r) in rerun)]
        samples = (_read_table(self.samples_path, SAMPLE_COLUMNS, SAMPLE_REQUIRED,
                               _dir_version(self.samples_path), SAMPLE_FILLED)
                   if self.samples_path.exists() else None)
        # Cells written before FIRST_ESCAPED: rewritten, so that the
        # appended rows and the old ones read by one rule.
        old = _dir_version(self.runs_path) < FIRST_ESCAPED
        retried = (_read_table(self.retried_path, RUN_COLUMNS, REQUIRED,
                               _dir_version(self.retried_path), RUN_FILLED).rows
                   if (moved or old) and self.retried_path.exists() else [])
        writes: list[tuple[Path, tuple[str, ...], list[dict[str, Any]]]] = []
        # An older format, or a last line cut short that the next append
        # would run into: rewritten whole.
        if samples is None or samples.torn or old or \
                _header(self.samples_path) != list(SAMPLE_NAMES):
            writes.append((self.samples_path, SAMPLE_NAMES, samples.rows if samples else []))
        if moved or table.torn or old or _header(self.runs_path) != list(RUN_NAMES):
            if moved or retried:
                writes.append((self.retried_path, RUN_NAMES, retried + moved))
            writes.append((self.runs_path, RUN_NAMES, kept))
        _rewrite_all(writes)
        return {row_key(r) for r in kept}, table.torn

    def check_resumable(self) -> None:
        """env.json's keys are this format's: --resume rewrites it in this format."""
        env = self.env()
        if unknown := sorted(set(env) - ENV_KEYS):
            raise RunDirError(f"--resume: {self.env_path} holds keys this format does not "
                              f"know ({', '.join(unknown)}): start a new run")

    def _append(self, path: Path) -> TextIO:
        """A file of the directory opened to append to: never created here
        (a file removed during the run would come back without its header)
        and still the file this writer first appended to (not a copy put in
        its place)."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except FileNotFoundError:
            raise OSError(errno.ENOENT, "removed during the run") from None
        st = os.fstat(fd)
        if self._files.setdefault(path.name, (st.st_dev, st.st_ino)) != (st.st_dev, st.st_ino):
            os.close(fd)
            raise OSError(errno.ESTALE, "replaced by another file during the run")
        return os.fdopen(fd, "w", newline="")

    def append_run(self, row: dict[str, Any]) -> None:
        cells = _row_cells(row)
        try:
            with self._append(self.runs_path) as f:
                csv.writer(f).writerow(cells)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise RowWriteError(self.runs_path, row, exc) from None

    def append_samples(self, row: dict[str, Any], samples: Iterable[Any]) -> None:
        """The launcher's samples (t_s, rss_bytes, threads) of one run."""
        prefix = _cells(row, SAMPLE_KEY)
        try:
            with self._append(self.samples_path) as f:
                csv.writer(f).writerows(prefix + [f"{s.t_s:.4f}", s.rss_bytes, s.threads]
                                        for s in samples)
        except OSError as exc:
            raise RowWriteError(self.samples_path, row, exc) from None

    def lock(self) -> None:
        """An exclusive hold on the directory for one writing run (two
        --resume runs on one directory would duplicate rows), kept until the
        process exits."""
        if self.runs_path.exists():  # --resume: nothing is written into a malformed directory
            self.runs()
            self.samples()
        f = (self.path / ".lock").open("a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip()
            f.close()
            raise RunDirError(f"{self.path} is in use by another run"
                              + (f" (process {holder})" if holder else "")
                              + ": wait for it to finish") from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        self._held = f

    def write_env(self, env: dict[str, Any]) -> None:
        unknown = sorted(set(env) - ENV_KEYS)
        if unknown:  # a key docs/data-format.md does not describe: a new format version
            raise ValueError(f"env.json keys outside format {FORMAT_VERSION}: {unknown}")
        tmp = self.env_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(env, indent=2) + "\n")
        tmp.replace(self.env_path)


def _reserve(out: Path) -> Path:
    """A new run directory's name in OUT, for the local time, made atomically
    with mkdir: a taken name gets a suffix."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    for suffix in range(1, 1000):
        path = out / (stamp if suffix == 1 else f"{stamp}-{suffix}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise RunDirError(f"{out}: no free run directory name for {stamp}")


def _header(path: Path) -> list[str]:
    with path.open(newline="") as f:
        return next(csv.reader(f), [])


def _rewrite(path: Path, names: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    _rewrite_all([(path, names, rows)])


def _rewrite_all(files: list[tuple[Path, tuple[str, ...], list[dict[str, Any]]]]) -> None:
    """Each file written whole beside itself, then all moved into place; on
    an error (a full disk) every one written so far is removed."""
    written: list[tuple[Path, Path]] = []
    try:
        for path, names, rows in files:
            tmp = path.with_suffix(".tmp")
            written.append((tmp, path))
            with tmp.open("w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(names)
                writer.writerows(_cells(r, names) for r in rows)
                f.flush()
                os.fsync(f.fileno())
    except BaseException:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, path in written:
        tmp.replace(path)


def _cells(row: dict[str, Any], names: Iterable[str]) -> list[str]:
    """Numbers as csv_number writes them (a negative one stays a number);
    text escaped (escape_cell)."""
    return [escape_cell(v) if isinstance(v := row.get(name), str) else csv_number(v)
            for name in names]


def _row_cells(row: dict[str, Any]) -> list[str]:
    """A runs.csv row; a key the format has no column for is an error, not
    a figure silently lost."""
    unknown = sorted(set(row) - set(RUN_NAMES) - set(DERIVED))
    if unknown:
        raise ValueError(f"runs.csv has no column for {unknown} (format {FORMAT_VERSION})")
    return _cells(row, RUN_NAMES)


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
    """Before anything is written: OUT, if present, must be a folder, and
    OUT/latest, if present, ours (a symlink); a file or directory of that
    name is the user's."""
    if not str(out).strip():
        raise RunDirError("--out is empty: name the results folder")
    if (out.exists() or out.is_symlink()) and not out.is_dir():
        raise RunDirError(f"{out} exists and is not a folder: --out names the results folder")
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


class Outputs:
    """Files a command writes into a run directory (report.md, summary.csv,
    results.json, plots/), written aside first, into a hidden folder of the
    directory, and moved into place together at the end. On any error the
    folder is removed and no output is left half-written; an OSError (a
    read-only directory, a full disk) becomes a RunDirError naming the file.

        with Outputs(run_dir) as staged:
            write(staged.dir / "report.md")
    """

    def __init__(self, run_dir: Path) -> None:
        self.final = run_dir
        self.dir = run_dir  # the hidden folder, once entered

    def __enter__(self) -> Outputs:
        try:
            self.dir = Path(tempfile.mkdtemp(prefix=".writing-", dir=self.final))
        except OSError as exc:
            raise RunDirError(f"cannot write into {self.final}: {exc.strerror or exc}") from None
        return self

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is None:
                self._commit()
        except OSError as error:
            exc = error
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
        if isinstance(exc, OSError):
            where = exc.filename or self.final
            raise RunDirError(f"cannot write {where}: {exc.strerror or exc}") from None

    def _commit(self) -> None:
        staged = sorted(p for p in self.dir.rglob("*") if not p.is_dir())
        targets = [self.final / p.relative_to(self.dir) for p in staged]
        for target in targets:  # checked first: nothing moves when one cannot
            if target.exists() and not target.is_file() or \
                    target.parent.exists() and not target.parent.is_dir():
                raise RunDirError(f"{target}: in the way of an output (not a file): move it away")
        for folder in sorted({p for p in self.dir.rglob("*") if p.is_dir()}):
            (self.final / folder.relative_to(self.dir)).mkdir(exist_ok=True)
        for path, target in zip(staged, targets):
            path.replace(target)
