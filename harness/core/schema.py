"""The run format's schema, declared once: runs.csv's and samples.csv's
columns (name, parser, the format version each came in), env.json's keys
and their types, the statuses, and a configuration's identity (ConfigKey).
The writer and the readers (record/rundir.py), the exports and every
reader of a run follow these declarations; docs/data-format.md documents
them. Frozen per format version: a column is written out here, not
computed from the workload declarations, so that removing a workload leaves
older runs readable."""

from __future__ import annotations

import dataclasses
import enum
import math
import json
import re
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any, Callable

from .. import UsageError
from .formatting import fmt_number
from .variants import ID, parse
from .workloads import COMMON_DIMENSIONS, WORKLOADS, Dimension, Param


class Status(enum.StrEnum):
    """A run's outcome: runs.csv's `status` cell. A StrEnum, so that a member
    is its cell's text (written, compared, counted and formatted as that
    text) and files of every version read as they always did."""
    OK = "ok"
    INVALID = "invalid"  # wrong answer or malformed output
    TIMEOUT = "timeout"
    OOM = "oom"  # RSS passed --max-rss
    CRASHED = "crashed"  # a non-zero exit or a signal
    SKIPPED = "skipped"  # not run: what it needs is missing here (its error says what)
    BUILD_FAILED = "build-failed"


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
#    the host of a replicate of a cluster run. 8: http's open loop, a rate
#    ladder: the dimensions `rate` and `step_s` (runs.csv and samples.csv),
#    and each step's offered, dropped and unanswered requests, p99.9, its
#    generator's cores, busy share and lateness, and its verdict. 9: a
#    ladder's steps past its first saturated or failed one are not run, but
#    recorded `skipped` with the step verdict `past-saturation`. 10:
#    runs.csv's `outgrown_at`: under --until-settled, a configuration whose
#    smaller size failed by a limit that grows with size (a timeout, out of
#    memory, a wrong answer) is not run but recorded `skipped`, this cell
#    naming the smaller size (sequential.outgrown). 11: runs.csv's
#    `expected_s`: under --budget, a configuration's first run expected to
#    take more than its share of the budget (sequential.SHARE) is not run
#    but recorded `skipped`, this cell the seconds it was expected to take.
FORMAT_VERSION = 11
FORMATS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
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
# The largest magnitude of a number a run file may hold (a time in seconds,
# a rate, a load): far above any real one, and low enough that sums over a
# million rows stay finite (1.7e308 would overflow math.fsum).
NUMBER_MAX = 1e15


def _int(text: str) -> int:
    """A 64-bit integer (a result, a count): a larger one is no figure of a run."""
    value = _any_int(text)
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise ValueError(f"{text!r} is out of range (a 64-bit integer)")
    return value


def _any_int(text: str) -> int:
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
    if abs(value) > NUMBER_MAX:
        raise ValueError(f"{text!r} is out of range (at most {fmt_number(NUMBER_MAX)} either "
                         "side of 0)")
    return value


def _seconds(text: str) -> float:
    """A time, a rate or a load: a finite number >= 0."""
    value = _finite(text)
    if value < 0:
        raise ValueError(f"{text!r} is negative")
    return value


def parse_status(text: str) -> Status:
    """A status cell (runs.csv, summary.csv's statuses) as its member."""
    try:
        return Status(text)
    except ValueError:
        raise ValueError(f"unknown status {text!r} (known: {', '.join(Status)})") from None


class StepVerdict(enum.StrEnum):
    """An http ladder step's verdict (loadtest._judge_step), frozen as the
    columns are; its values are runs.csv's step_verdict cells, as Status's;
    and (format 9) a step not run, its ladder ended below it (core/ladder.py)."""
    SUSTAINED = "sustained"
    SLOW = "slow"
    SATURATED = "saturated"
    PAST_END = "past-saturation"


PAST_END = StepVerdict.PAST_END


def _step_verdict(text: str) -> StepVerdict:
    try:
        return StepVerdict(text)
    except ValueError:
        raise ValueError(f"unknown step verdict {text!r} (known: {', '.join(StepVerdict)})") \
            from None


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


def parse_date(text: str) -> str:
    """An ISO 8601 time, as utc_now() writes it."""
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time") from None
    return text


def _column(parse: Callable[[str], Any], added_in: int = 1, dimension: bool = False) -> Any:
    """A field of Row that is a column of runs.csv: its parser, the format
    version it came in, and whether it is one of a configuration's
    dimensions (beyond impl, workload, n and buffer)."""
    return field(default=None, metadata={"parse": parse, "added_in": added_in,
                                         "dimension": dimension})


@dataclass
class Row:
    """One run of one configuration: a line of runs.csv, typed. Its fields
    are the declaration of runs.csv, in column order: RUN_COLUMNS,
    DIMENSIONS and ADDED_IN are read off them. A field is None when its
    cell is empty or absent (format 1 files may lack later columns). The
    dimensions are the http workload's own (users, requests, delay_ms,
    pool_threads, style, rate, step_s) and the harness's (--cpus, merge's
    machine)."""
    run_id: str | None = _column(str)
    impl: str | None = _column(_label)
    variant: str | None = _column(str, added_in=3)
    version: str | None = _column(str, added_in=3)
    language: str | None = _column(_id)
    runtime: str | None = _column(str)
    workload: str | None = _column(_workload)
    n: int | None = _column(_count)
    buffer: int | None = _column(_count)
    rep: int | None = _column(_count)
    users: int | None = _column(_count, dimension=True)
    requests: int | None = _column(_count, dimension=True)
    delay_ms: int | None = _column(_count, dimension=True)
    pool_threads: int | None = _column(_count, dimension=True)
    style: str | None = _column(str, dimension=True)
    rate: int | None = _column(_count, added_in=8, dimension=True)
    step_s: int | None = _column(_count, added_in=8, dimension=True)
    cpus: int | None = _column(_count, dimension=True)
    machine: str | None = _column(str, dimension=True)
    node: str | None = _column(str, added_in=7)
    status: Status | None = _column(parse_status)
    exit_code: int | None = _column(_signed)
    signal: int | None = _column(_signed)
    wall_s: float | None = _column(_seconds)
    cpu_user_s: float | None = _column(_seconds)
    cpu_sys_s: float | None = _column(_seconds)
    ctx_switches_voluntary: int | None = _column(_count, added_in=6)
    ctx_switches_involuntary: int | None = _column(_count, added_in=6)
    minor_faults: int | None = _column(_count, added_in=6)
    major_faults: int | None = _column(_count, added_in=6)
    cgroup_cpu_user_s: float | None = _column(_seconds, added_in=7)
    cgroup_cpu_sys_s: float | None = _column(_seconds, added_in=7)
    cgroup_page_faults: int | None = _column(_count, added_in=7)
    cgroup_major_faults: int | None = _column(_count, added_in=7)
    perf_task_clock_s: float | None = _column(_seconds, added_in=7)
    perf_context_switches: int | None = _column(_count, added_in=7)
    perf_cpu_migrations: int | None = _column(_count, added_in=7)
    perf_page_faults: int | None = _column(_count, added_in=7)
    perf_cycles: int | None = _column(_count, added_in=7)
    perf_instructions: int | None = _column(_count, added_in=7)
    peak_rss_bytes: int | None = _column(_count)
    peak_rss_method: str | None = _column(str)
    sampled_peak_rss_bytes: int | None = _column(_count)
    max_threads: int | None = _column(_count)
    result: int | None = _column(_int)
    expected: int | None = _column(_int)
    capacity: int | None = _column(_count)
    iterations: int | None = _column(_count)
    warmup_ms: int | None = _column(_count)
    duration_ms: int | None = _column(_count, added_in=5)
    warmup_runs: int | None = _column(_count)
    warmup_s: float | None = _column(_seconds)
    first_iter_s: float | None = _column(_seconds)
    warm_iter_s: float | None = _column(_seconds)
    spawn_s: float | None = _column(_seconds)
    sleep_wait_s: float | None = _column(_seconds)
    load_avg_1m: float | None = _column(_seconds)
    other_cpu_frac: float | None = _column(_finite)
    strays: int | None = _column(_count)
    started_at: str | None = _column(parse_date)
    command: str | None = _column(str)
    error: str | None = _column(str)
    stderr_tail: str | None = _column(str)
    output: str | None = _column(str)
    requests_done: int | None = _column(_count)
    http_errors: int | None = _column(_count)
    rps: float | None = _column(_seconds)
    latency_p50_s: float | None = _column(_seconds)
    latency_p90_s: float | None = _column(_seconds)
    latency_p99_s: float | None = _column(_seconds)
    latency_max_s: float | None = _column(_seconds)
    gen_cpu_s: float | None = _column(_seconds)
    load_s: float | None = _column(_seconds)
    latency_p999_s: float | None = _column(_seconds, added_in=8)
    offered: int | None = _column(_count, added_in=8)
    dropped: int | None = _column(_count, added_in=8)
    unanswered: int | None = _column(_count, added_in=8)
    gen_cpus: int | None = _column(_count, added_in=8)
    gen_busy: float | None = _column(_seconds, added_in=8)
    gen_lag_p99_s: float | None = _column(_seconds, added_in=8)
    step_verdict: StepVerdict | None = _column(_step_verdict, added_in=8)
    outgrown_at: str | None = _column(str, added_in=10)
    expected_s: float | None = _column(_seconds, added_in=11)
    # Added by the reader, never written: CPU time, user + system.
    cpu_s: float | None = field(default=None, metadata={"derived": True})
    # A ladder's row (core/ladder.py, made by the analysis): its sustained
    # rate and knee, and whether the sustained rate is a bound from below (its
    # top step, or the step above it measured the generator: ladder.figures).
    sustained_rps: float | None = field(default=None, metadata={"derived": True})
    knee_rps: float | None = field(default=None, metadata={"derived": True})
    ladder_top: bool | None = field(default=None, metadata={"derived": True})

    def figure(self, name: str) -> Any:
        """A figure named by a declaration (metrics.METRICS, a workload's
        columns), None where this row has none."""
        return getattr(self, name)

    def as_dict(self) -> dict[str, Any]:
        """The row as a JSON object (results.json), in column order."""
        return dataclasses.asdict(self)


_RUN_FIELDS = [f for f in fields(Row) if "parse" in f.metadata]
# The dimensions of a configuration beyond impl, workload, n and buffer: the
# http workload's own, then the harness's (--cpus, merge's machine). Part of
# a row's key in runs.csv and samples.csv alike.
DIMENSIONS: tuple[Column, ...] = tuple(Column(f.name, f.metadata["parse"])
                                       for f in _RUN_FIELDS if f.metadata["dimension"])
# runs.csv (format 1 files may hold any subset that includes REQUIRED; a
# column is in the files from the version ADDED_IN names, else 1).
RUN_COLUMNS: tuple[Column, ...] = tuple(Column(f.name, f.metadata["parse"]) for f in _RUN_FIELDS)
RUN_NAMES = tuple(c.name for c in RUN_COLUMNS)
ADDED_IN = {f.name: f.metadata["added_in"] for f in _RUN_FIELDS if f.metadata["added_in"] > 1}
# A runs.csv of any version must have these.
REQUIRED = ("impl", "workload", "n", "buffer", "rep", "status")
# Added by the reader, never written: CPU time, user + system.
DERIVED = tuple(f.name for f in fields(Row) if f.metadata.get("derived"))

# samples.csv: the run's key, then the sample.
SAMPLE_KEY = ("run_id", "impl", "workload", "n", "buffer", *(c.name for c in DIMENSIONS), "rep")
_BY_NAME = {c.name: c for c in RUN_COLUMNS}
SAMPLE_COLUMNS: tuple[Column, ...] = tuple(_BY_NAME[name] for name in SAMPLE_KEY) + (
    Column("t_s", _seconds), Column("rss_bytes", _count), Column("threads", _count))
SAMPLE_NAMES = tuple(c.name for c in SAMPLE_COLUMNS)
SAMPLE_REQUIRED = ("run_id", "impl", "workload", "n", "buffer", "rep", "t_s", "rss_bytes",
                   "threads")


@dataclass
class SampleRow:
    """One line of samples.csv, typed: the run's key (SAMPLE_KEY), then the
    sample. Its fields are SAMPLE_NAMES, in column order; a field is None
    where its cell is empty or absent."""
    run_id: str | None = None
    impl: str | None = None
    workload: str | None = None
    n: int | None = None
    buffer: int | None = None
    users: int | None = None
    requests: int | None = None
    delay_ms: int | None = None
    pool_threads: int | None = None
    style: str | None = None
    rate: int | None = None
    step_s: int | None = None
    cpus: int | None = None
    machine: str | None = None
    rep: int | None = None
    t_s: float | None = None
    rss_bytes: int | None = None
    threads: int | None = None


assert tuple(f.name for f in fields(SampleRow)) == SAMPLE_NAMES, "SampleRow is samples.csv"


@dataclass
class VariantRecord:
    """An entry of env.json's `variants`, by label: what a variant or a
    release is (its implementation, its release, the environment and flags
    its settings give, a local build's source)."""
    impl: str | None = None
    version: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    local: Any = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> VariantRecord:
        """As read from a file: keys it does not know are left out."""
        found = {f.name: data.get(f.name) for f in fields(cls)}
        return cls(found["impl"], found["version"], found["env"] or {}, found["flags"] or [],
                   found["local"])

    def as_json(self) -> dict[str, Any]:
        record = {"impl": self.impl, "version": self.version, "env": self.env,
                  "flags": self.flags}
        return record | ({"local": self.local} if self.local else {})


class _Key:
    """A top-level key of env.json, read through Env: its value, or the
    empty default when the file lacks it (format 1 files may lack any). The
    JSON types a reader accepts (None: null) are ENV_TYPES'."""

    def __init__(self, *types: type, default: Callable[[], Any] = lambda: None) -> None:
        self.types, self.default = types, default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, env: Env | None, owner: type) -> Any:
        if env is None:
            return self
        value = env.data.get(self.name)
        return self.default() if value is None else value

    def __set__(self, env: Env, value: Any) -> None:
        env.data[self.name] = value


class _SettingsKey(_Key):
    """env.json's settings, read as the typed record (RecordedSettings: every
    format's keys, an absent one its default) and written from one."""

    def __get__(self, env: Env | None, owner: type) -> Any:
        if env is None:
            return self
        return RecordedSettings.of(env.data.get(self.name))

    def __set__(self, env: Env, value: Any) -> None:
        env.data[self.name] = value.as_json()


_NULL = type(None)


class Env:
    """env.json, typed: one attribute per top-level key (the declaration of
    its keys: ENV_KEYS and ENV_TYPES are read off them), over the JSON
    object itself (data), which keeps the file's order for whoever writes it
    again. An absent object or list reads as empty, an absent text as None."""

    format_version = _Key()
    run_id = _Key(str)
    started_at = _Key(str, _NULL)
    finished_at = _Key(str, _NULL)
    host = _Key(dict, default=dict)
    git = _Key(dict, _NULL, default=dict)
    settings = _SettingsKey(dict)
    toolchains = _Key(dict, default=dict)
    runtimes = _Key(dict, default=dict)
    program_env = _Key(dict, default=dict)
    registries = _Key(dict, default=dict)
    floor_impls = _Key(list, default=list)
    invocations = _Key(list, default=list)
    machine_state = _Key(dict, _NULL, default=dict)
    variants = _Key()
    # a merged run directory (harness merge)
    merged_at = _Key(str, _NULL)
    machines = _Key(dict, default=dict)

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        self.data = {} if data is None else data

    def variant(self, label: str) -> VariantRecord | None:
        """What the variant or release of this label is, if recorded."""
        found = (self.variants or {}).get(label)
        return VariantRecord.of(found) if isinstance(found, dict) else None

    def __bool__(self) -> bool:
        return bool(self.data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Env) and self.data == other.data

    def elapsed_s(self) -> float | None:
        """The run's own time: each invocation's, start to finish, summed (a
        resumed run lay interrupted between them, and that is not the run's);
        from started_at to finished_at where an invocation's ends are not
        recorded. None: not finished."""
        if not self.started_at or not self.finished_at:
            return None
        spans = [(i.get("started_at"), i.get("finished_at")) for i in self.invocations
                 if isinstance(i, dict)]
        if not spans or not all(a and b for a, b in spans):
            spans = [(self.started_at, self.finished_at)]
        return sum((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
                   for a, b in spans)


_ENV_DECLARED = {name: key for name, key in vars(Env).items() if isinstance(key, _Key)}
# env.json's top-level keys (formats 2 and later; format 1 files may hold any).
ENV_KEYS = frozenset(_ENV_DECLARED)
# What a merged directory keeps of each machine's env.json.
MACHINE_KEYS = ("run_id", "started_at", "finished_at", "host", "git", "toolchains", "settings",
                "runtimes", "machine_state")


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
        declared = WORKLOADS.get(self.workload)
        params = declared.key_rule(self.params) if declared and declared.key_rule else self.params
        object.__setattr__(self, "params", tuple(
            (name, value) for name, value in params if value is not None or name not in common))

    @classmethod
    def of(cls, row: Row | SampleRow) -> ConfigKey:
        declared = WORKLOADS.get(row.workload)
        params = tuple((d.name, getattr(row, d.name)) for d in declared.dimensions) \
            if declared else ()
        return cls(row.impl, row.workload, row.n, row.buffer, params)

    def param(self, name: str) -> Any:
        return dict(self.params).get(name)

    @property
    def size(self) -> int | None:
        """What its runs' time and footprint grow with (the workload's
        grows_with, multiplied), None where it declares none or one is unset."""
        declared = WORKLOADS.get(self.workload)
        if declared is None:
            return None
        size = 1
        for name in declared.grows_with:
            value = self.n if name == "n" else self.param(name)
            if value is None:
                return None
            size *= value
        return size

    @property
    def family(self) -> tuple[object, ...]:
        """The configuration with its size left out: the keys of one family
        differ by size alone."""
        declared = WORKLOADS.get(self.workload)
        grows = declared.grows_with if declared else ()
        return (self.impl, self.workload, None if "n" in grows else self.n, self.buffer,
                tuple((name, value) for name, value in self.params if name not in grows))

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
# A configuration's columns where one is written out (summary.csv, results.json's
# groups), in runs.csv's order: ConfigKey's, the implementation's language and
# runtime, then the dimensions.
CONFIG_COLUMNS = tuple(f.name for f in fields(Row) if f.metadata.get("dimension")
                       or f.name in {k.name for k in fields(ConfigKey)} | {"language", "runtime"})


def row_key(row: Row) -> RowKey:
    return ConfigKey.of(row), row.rep


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# The known keys' types, in every version (None: null is allowed). A reader
# relies on them: a host that is a list is an error here, not a traceback later.
ENV_TYPES: dict[str, tuple[type, ...]] = {name: key.types for name, key in _ENV_DECLARED.items()
                                          if key.types}

# Cells no row may leave empty: a row is a configuration's run.
FILLED = ("impl", "workload", "rep")
# The workloads whose configuration has no N (frozen, as WORKLOAD_NAMES):
# every other row's `n` is filled.
WITHOUT_N = ("http",)
RUN_FILLED = FILLED + ("status",)
SAMPLE_FILLED = FILLED + ("t_s", "rss_bytes", "threads")


# ---------------------------------------------------------------- env.json to the leaf
# Every value env.json's readers use, declared by type and range: a run
# directory travels (a CI artifact, a colleague's results), and whoever made
# it wrote every byte of it. env_problem walks a file against them: a value
# of another type, out of range, or a number that is not finite and bounded
# is one line naming the field and the value. Any value may be null (older
# formats left fields empty); keys not declared here are not read, but their
# numbers are bounded too.


@dataclass(frozen=True)
class Leaf:
    """A scalar of env.json: its types and, for numbers, its range."""
    what: str
    types: tuple[type, ...]
    low: float = -NUMBER_MAX
    high: float = NUMBER_MAX

    def wrong(self, value: Any) -> str | None:
        if isinstance(value, bool) != (bool in self.types) or not isinstance(value, self.types):
            return f"must be {self.what}"
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and not self.low <= value <= self.high:
            return f"must be {self.what} from {fmt_number(self.low)} to {fmt_number(self.high)}"
        if self is DATE:
            try:
                parse_date(value)
            except ValueError:
                return "must be an ISO 8601 time"
        return None


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class MapOf:
    item: Any


TEXT = Leaf("a string", (str,))
COUNT = Leaf("an integer", (int,), 0, INT64_MAX)
SECONDS = Leaf("a number", (int, float), 0)
REAL = Leaf("a number", (int, float))
FLAG = Leaf("true or false", (bool,))
DATE = Leaf("a time (a string)", (str,))
SCALAR = Leaf("a string or a number", (str, int, float))
HOST = {"hostname": TEXT, "cpu_model": TEXT, "cores": COUNT, "ram_bytes": COUNT,
        "kernel": TEXT, "os": TEXT, "python": TEXT}
GIT = {"commit": TEXT, "dirty": FLAG}


# ---------------------------------------------------------------- the settings
# What a run was asked to do, as env.json records it (and each invocation,
# and each machine of a merged run): one typed record, read back by
# Env.settings in every format (a key an older format lacks is its default)
# and written as plan/settings.py's Settings.record() gives it. Each field
# declares its JSON type, which env_problem checks a file against.


def _recorded(spec: Any, default: Any = None, factory: Callable[[], Any] | None = None) -> Any:
    """A field of the record, its JSON type (env_problem's spec) beside it."""
    if factory is not None:
        return field(default_factory=factory, metadata={"json": spec})
    return field(default=default, metadata={"json": spec})


def _known(cls: type, data: Any) -> dict[str, Any]:
    """A JSON object's values of cls's fields, a null or absent one left to
    its default (older formats lacked keys, or left them empty)."""
    data = data if isinstance(data, dict) else {}
    return {f.name: data[f.name] for f in fields(cls) if data.get(f.name) is not None}


@dataclass(frozen=True)
class Part:
    """One block of a suite (suites.toml's [[NAME.part]], the command line's
    values overriding its own): these workloads at these sizes, optionally
    with their own repeat count, sleep time and iteration count."""
    workloads: list[str] = _recorded(ListOf(TEXT), factory=list)
    ns: list[int] = _recorded(ListOf(COUNT), factory=list)
    buffers: list[int] = _recorded(ListOf(COUNT), factory=list)
    repeat: int | None = _recorded(COUNT)
    duration_ms: int | None = _recorded(COUNT)
    iterations: int | None = _recorded(COUNT)
    warmup_ms: int | None = _recorded(COUNT)  # this part's own; --warmup-ms overrides it
    timeout_s: float | None = _recorded(SECONDS)  # this part's own; --timeout overrides it
    # --until-ci and --max-repeat, this part's own (a fraction; a run count);
    # the command line overrides them
    until_ci: float | None = _recorded(SECONDS)
    max_repeat: int | None = _recorded(COUNT)
    # False (suites.toml `judged = false`): a check that every program of
    # these workloads works, run too few times to judge: no verdicts, and
    # --until-settled gives it no more runs (standings.judged)
    judged: bool = _recorded(FLAG, True)
    # Values of the workloads' own dimensions (workloads.Dimension) by name;
    # a dimension absent here runs at its declared default.
    params: dict[str, list[Any]] = _recorded(MapOf(ListOf(SCALAR)), factory=dict)
    # suites.toml `impls`: the implementations this part runs (of those the
    # run selects); None: every one
    impls: list[str] | None = _recorded(ListOf(TEXT))

    @classmethod
    def of(cls, data: Any) -> Part:
        return cls(**_known(cls, data))

    def values(self, dimension: Dimension) -> list[Any]:
        return self.params.get(dimension.name) or list(dimension.default) or [None]


PART = {f.name: f.metadata["json"] for f in fields(Part)}


@dataclass(frozen=True)
class RecordedSettings:
    """env.json's `settings`: how the rows of an invocation were produced."""
    impls: list[str] = _recorded(ListOf(TEXT), factory=list)  # ids or language names, or ["all"]
    suite: str | None = _recorded(TEXT)
    parts: list[Part] = _recorded(ListOf(PART), factory=list)
    repeat: int | None = _recorded(COUNT)
    duration_ms: int | None = _recorded(COUNT)
    iterations: int | None = _recorded(COUNT)  # None: each workload's default (workloads.py)
    warmup_ms: int | None = _recorded(COUNT)  # None: each workload's default (workloads.py)
    timeout_s: float | None = _recorded(SECONDS)
    max_rss_bytes: int | None = _recorded(COUNT)
    sample_interval_s: float | None = _recorded(SECONDS)
    build: bool = _recorded(FLAG, True)
    registries: list[str] = _recorded(ListOf(TEXT), factory=list)  # --registry FILE
    source: str | None = _recorded(TEXT)  # --source DIR: the git checkout of IMPL@git:REV
    # --until-ci PCT as a fraction: after the repeat minimum, more passes of
    # the configurations whose headline interval is unsettled or wider than
    # ±PCT of the median (plan.more_runs), up to max_repeat runs each.
    # None: exactly `repeat` runs. Recorded, max_repeat is the run's ceiling
    # when until_ci or until_settled is set.
    until_ci: float | None = _recorded(SECONDS)
    max_repeat: int | None = _recorded(COUNT)
    # --until-settled: after the repeat minimum, more passes of the
    # configurations in a verdict not yet settled (sequential.more_runs), up
    # to max_repeat runs each
    until_settled: bool = _recorded(FLAG, False)
    # --budget DURATION (seconds): the runs' time, the minimum included, past
    # which no more sequential passes start (sequential.Budgeted); None: none
    budget_s: float | None = _recorded(SECONDS)
    # --gate PCT as a fraction: an A/B run that decides (ab_gate.Gate):
    # after the minimum, more runs of the configurations whose gated figures
    # are undecided, up to max_repeat a side within budget_s; the exit
    # status is the gate's
    gate: float | None = _recorded(SECONDS)
    # --calibration RUN_DIR (absolute): a calibrate run whose A/A noise names
    # the figures the gate cannot decide at PCT here (analyse/noise.py)
    calibration: str | None = _recorded(TEXT)
    # --adaptive-sleep: each sleep run lasts twice its configuration's
    # longest start time so far plus a second (workloads.adaptive_sleep_ms), at most duration_ms
    adaptive_sleep: bool = _recorded(FLAG, False)
    # --inherit-env NAME,...: variables the measured programs get besides the
    # allow-list (envinfo.passed_to_programs)
    inherit_env: list[str] = _recorded(ListOf(TEXT), factory=list)
    # --counters: perf stat counts every run (perfstat.find_perf)
    counters: bool = _recorded(FLAG, False)
    # suites.toml `overlap_builds` (a check that ranks nothing: the quick
    # suite): each language's runs start as soon as it is built, while
    # others still build (builder.Preparation), on a busy machine
    overlap_builds: bool = _recorded(FLAG, False)
    # every part's workloads, sizes and buffers, sorted: the run at a glance
    workloads: list[str] = _recorded(ListOf(TEXT), factory=list)
    n: list[int] = _recorded(ListOf(COUNT), factory=list)
    buffers: list[int] = _recorded(ListOf(COUNT), factory=list)

    @classmethod
    def of(cls, data: Any) -> RecordedSettings:
        """As env.json holds it (any format; its types checked by the
        reader, env_problem): unknown keys left out."""
        known = _known(cls, data)
        if isinstance(known.get("parts"), list):
            known["parts"] = [Part.of(p) for p in known["parts"] if isinstance(p, dict)]
        return cls(**known)

    def as_json(self) -> dict[str, Any]:
        """The JSON object env.json records, in the fields' order."""
        return {f.name: _as_json(getattr(self, f.name)) for f in fields(RecordedSettings)}


def _as_json(value: Any) -> Any:
    """A field's value as JSON: a part an object, lists and objects copied."""
    if isinstance(value, Part):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    return value


SETTINGS = {f.name: f.metadata["json"] for f in fields(RecordedSettings)}

# ---------------------------------------------------------------- env.json's other parts

MACHINE_STATE = {"governor": TEXT, "turbo": FLAG, "aslr": COUNT, "clocksource": TEXT,
                 "virtual_machine": FLAG, "isolated_cpus": TEXT}
INVOCATION = {"started_at": DATE, "finished_at": DATE, "command": ListOf(TEXT),
              "resumed": FLAG, "git": GIT, "impls": ListOf(TEXT), "settings": SETTINGS,
              "load_avg_1m": {"start": SECONDS, "end": SECONDS}, "steal_frac": REAL}
MACHINE = {"run_id": TEXT, "started_at": DATE, "finished_at": DATE, "host": HOST, "git": GIT,
           "toolchains": MapOf(TEXT), "settings": SETTINGS, "runtimes": MapOf(TEXT),
           "machine_state": MACHINE_STATE, "dir": TEXT}
VARIANT = {"impl": TEXT, "version": TEXT, "env": MapOf(TEXT), "flags": ListOf(TEXT)}
ENV_SPEC: dict[str, Any] = {
    "format_version": COUNT, "run_id": TEXT, "started_at": DATE, "finished_at": DATE,
    "merged_at": DATE, "host": HOST, "git": GIT, "settings": SETTINGS,
    "toolchains": MapOf(TEXT), "runtimes": MapOf(TEXT), "program_env": MapOf(TEXT),
    "registries": MapOf(TEXT), "floor_impls": ListOf(TEXT), "invocations": ListOf(INVOCATION),
    "machine_state": MACHINE_STATE, "variants": MapOf(VARIANT), "machines": MapOf(MACHINE)}


def _kind(spec: Any) -> str:
    return ("a list" if isinstance(spec, ListOf) else "an object" if isinstance(spec, (dict, MapOf))
            else spec.what)


def env_problem(value: Any, spec: Any = None, where: str = "") -> str | None:
    """The first value of env.json (or of its part at `where`) that is not
    what spec declares: 'FIELD must be ..., not VALUE'; None when all is."""
    spec = ENV_SPEC if spec is None else spec
    if value is None:
        return None
    if isinstance(spec, Leaf):
        problem = spec.wrong(value)
    elif isinstance(spec, ListOf):
        problem = None if isinstance(value, list) else f"must be {_kind(spec)}"
        items: Any = ((f"{where}[{i}]", v, spec.item) for i, v in enumerate(value)) \
            if problem is None else ()
    else:
        problem = None if isinstance(value, dict) else f"must be {_kind(spec)}"
        items = () if problem else ((f"{where}.{k}" if where else k, v,
                                     spec.item if isinstance(spec, MapOf) else spec.get(k))
                                    for k, v in value.items())
    if problem:
        return f"{where or 'the file'} {problem}, not {_shown(value)}"
    if isinstance(spec, Leaf):
        return None
    for at, item, inner in items:
        found = env_problem(item, inner, at) if inner is not None else _unread(item, at)
        if found:
            return found
    return None


def _unread(value: Any, where: str) -> str | None:
    """A key no reader uses: only its numbers are checked (finite, bounded)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return env_problem(value, REAL, where)
    children = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, item in children:
        if found := _unread(item, f"{where}.{key}" if isinstance(value, dict) else f"{where}[{key}]"):
            return found
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
