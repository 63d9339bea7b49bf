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
import dataclasses
import errno
import fcntl
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

from .. import UsageError
from ..core.envinfo import mask_value
from ..core.formatting import csv_number, csv_seconds
from ..core.variants import masked_spec, parse
from .safe_output import alive
from ..core.schema import (ADDED_IN, ENV_KEYS, ENV_TYPES, FIRST_ESCAPED, FORMAT_VERSION,
                           FORMATS, FORMULA_STARTS, MACHINE_KEYS, REQUIRED, RUN_COLUMNS, RUN_NAMES,
                           SAMPLE_COLUMNS, SAMPLE_KEY, SAMPLE_NAMES, SAMPLE_REQUIRED, Column,
                           ConfigKey, Env, RecordedSettings, Row, RowKey, RUN_FILLED, SAMPLE_FILLED,
                           SampleRow, Status, WITHOUT_N, env_problem, escape_cell, parse_date, row_key, unescape_cell,
                           utc_now)

class RunDirError(Exception):
    """A run directory's file is not what this harness writes."""


@dataclass
class Table:
    rows: list[dict[str, Any]]
    torn: str | None = None  # a note when a cut-short last row was ignored



def format_version(env: Env | dict[str, Any], where: Path) -> int:
    """The format a run directory was written in, from its env.json: 1 when
    it names none (written before the format had a version)."""
    version = (env.data if isinstance(env, Env) else env).get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RunDirError(f"{where}: format_version {version!r} is not a format this harness knows")
    if version > FORMAT_VERSION:
        raise RunDirError(f"{where}: format_version {version}: a newer harness's; this one "
                          f"reads formats {FORMATS[0]} to {FORMAT_VERSION}: update the harness")
    return version


def _dir_version(csv_path: Path) -> int:
    env_path = csv_path.parent / "env.json"
    return format_version(read_env(env_path), env_path)



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
    cells = [(name, by_name[name].parse) for name in header]
    for number, fields in enumerate(lines, start=2):
        try:
            if len(fields) != len(header):
                raise ValueError(f"{len(fields)} fields, expected {len(header)}")
            row = _typed(dict.fromkeys(by_name), cells, fields, escaped)
            empty = [name for name in filled if name in header and row[name] is None]
            if "n" in header and row["n"] is None and row["workload"] not in WITHOUT_N:
                empty.append("n")
            if empty:
                raise ValueError(f"{empty[0]} is empty")
            rows.append(row)
        except ValueError as exc:
            raise RunDirError(f"{path}: line {number}: {exc}") from None
    return Table(rows, torn)


def _typed(row: dict[str, Any], cells: list[tuple[str, Callable[[str], Any]]],
           fields: list[str], escaped: bool) -> dict[str, Any]:
    """One line's fields into row (every column None), each parsed by its
    column's parse (cells: the header's names and parses, in order); an
    empty field stays None. A hot loop (a large run has millions of
    cells): a cell is unescaped only where it starts with the ' the writer
    puts there, which is where unescape_cell changes one."""
    for (name, parse), value in zip(cells, fields):
        if not value:
            continue
        if escaped:
            if parse is str and value[0] in FORMULA_STARTS:
                # the writer puts a ' before such a text: this cell was made elsewhere
                raise ValueError(f"{name}: a text starting with {value[0]!r} without the "
                                 "' this format writes before it (a spreadsheet would run "
                                 "it as a formula)")
            if value[0] == "'":
                value = unescape_cell(value)
        try:
            row[name] = parse(value)
        except ValueError as exc:  # the status names itself
            raise ValueError(str(exc) if name == "status" else f"{name}: {exc}") from None
    return row


def read_runs(path: Path) -> Table:
    """runs.csv, typed and checked (see the module's docstring), in the
    format its directory's env.json names."""
    table = _read_table(path, RUN_COLUMNS, REQUIRED, _dir_version(path), RUN_FILLED)
    rows = [Row(**cells) for cells in table.rows]
    for row in rows:
        if row.cpu_user_s is not None and row.cpu_sys_s is not None:
            row.cpu_s = row.cpu_user_s + row.cpu_sys_s
    return Table(rows, table.torn)


def read_samples(path: Path) -> list[SampleRow]:
    """samples.csv, typed; an absent file means no samples."""
    if not (path.exists() or path.is_symlink()):  # a symlink loop is no absent file
        return []
    return [SampleRow(**cells) for cells in _read_table(
        path, SAMPLE_COLUMNS, SAMPLE_REQUIRED, _dir_version(path), SAMPLE_FILLED).rows]


def read_env(path: Path) -> Env:
    """env.json, or an empty Env when absent; a file of format 2 or later
    holds only ENV_KEYS."""
    if not (path.exists() or path.is_symlink()):  # a symlink loop is no absent file
        return Env()
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
    if problem := env_problem(env):
        raise RunDirError(f"{path}: {problem}")
    return Env(env)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


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
                parse_date(env[key])
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

def new_env(run_id: str, host: dict[str, Any]) -> Env:
    """A new run's env.json, before anything ran."""
    return Env({"format_version": FORMAT_VERSION, "run_id": run_id, "started_at": utc_now(),
                "host": host})


def invocation(command: list[str], resumed: bool, git: dict[str, Any], impls: list[str],
               settings: RecordedSettings, load_start: float | None) -> dict[str, Any]:
    """One `run` (or --resume) that writes rows into the directory. A
    credential in the command line or in a variant named there is masked
    (envinfo.mask_value), as in the rows' labels."""
    masked = dataclasses.replace(settings, impls=[_masked_name(n) for n in settings.impls])
    return {"started_at": utc_now(), "finished_at": None,
            "command": [mask_value(arg) for arg in command],
            "resumed": resumed, "git": git, "impls": impls, "settings": masked.as_json(),
            "load_avg_1m": {"start": load_start, "end": None}}


def _masked_name(name: str) -> str:
    """An --impl name as its rows' label shows it (settings masked one by one)."""
    try:
        return masked_spec(parse(name)).label if name != "all" else name
    except UsageError:
        return mask_value(name)


def start_invocation(env: Env, inv: dict[str, Any], toolchains: dict[str, Any],
                     program_env: dict[str, str], registries: dict[str, str],
                     floor_impls: Iterable[str], machine_state: dict[str, Any],
                     variants: dict[str, dict[str, Any]] | None = None) -> None:
    """The newest invocation's settings and commit at the top; every one of
    them in `invocations`; each variant and release by its label in
    `variants`. A resumed directory is brought to this format."""
    env = env.data if isinstance(env, Env) else env
    env.update(format_version=FORMAT_VERSION, finished_at=None, settings=inv["settings"],
               git=inv["git"], toolchains=toolchains, program_env=program_env,
               registries=registries, machine_state=machine_state,
               # the implementations the report reads the others against (×floor)
               floor_impls=sorted(set(env.get("floor_impls", [])) | set(floor_impls)))
    if variants or "variants" in env:
        env["variants"] = env.get("variants", {}) | (variants or {})
    env["invocations"] = env.get("invocations", []) + [inv]


def finish_invocation(env: Env, runtimes: dict[str, str],
                      load_end: float | None, steal_frac: float | None) -> None:
    """Runtime versions come from the built programs, so only at the end;
    so does the share of CPU time a hypervisor took during the invocation."""
    env = env.data if isinstance(env, Env) else env
    inv = env["invocations"][-1]
    env["runtimes"] = runtimes
    env["finished_at"] = inv["finished_at"] = utc_now()
    inv["load_avg_1m"]["end"] = load_end
    inv["steal_frac"] = steal_frac


def add_invocation(env: Env, inv: dict[str, Any]) -> None:
    """A cluster run's invocation (its tasks record their own): added to
    env.json, its settings (masked, as invocation records them) the run's."""
    env.invocations = env.invocations + [inv]
    env.data["settings"] = inv["settings"]


def end_invocation(inv: dict[str, Any]) -> None:
    inv["finished_at"] = utc_now()


def merged_env(run_id: str, read: list[Env], names: list[str], dirs: list[Path]) -> Env:
    """A merged directory's env.json: each machine's environment under
    `machines` (a merge of merges keeps the machines it names)."""
    envs = [e.data if isinstance(e, Env) else e for e in read]
    machines: dict[str, Any] = {}
    for env, name, path in zip(envs, names, dirs):
        if "machines" in env:
            machines.update(env["machines"])
        else:
            machines[name] = {k: env.get(k) for k in MACHINE_KEYS} | {"dir": str(path)}
    started = [e["started_at"] for e in envs if e.get("started_at")]
    finished = [e["finished_at"] for e in envs if e.get("finished_at")]
    return Env({
        "format_version": FORMAT_VERSION, "run_id": run_id, "merged_at": utc_now(),
        "started_at": min(started, default=None), "finished_at": max(finished, default=None),
        "host": {"hostname": f"{len(machines)} machines merged"},
        "floor_impls": sorted({i for e in envs for i in e.get("floor_impls") or ()}),
        "machines": machines,
        # A figure's machine is in its row; settings and toolchains per machine above.
        "settings": envs[0].get("settings") or {},
    })


# ---------------------------------------------------------------- the directory

class RowWriteError(Exception):
    """A finished row could not be written (a full disk, a removed
    directory): the message names the file and the row."""

    def __init__(self, path: Path, row: Row, exc: OSError) -> None:
        key = ConfigKey.of(row).label + f" rep {row.rep}"
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
            sweep_staging(out)
            final = _reserve(out)  # the name, held by an empty folder until the rename
            tmp = Path(tempfile.mkdtemp(prefix=f"{STAGING}{os.getpid()}-{final.name}-", dir=out))
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

    def rows(self) -> list[Row]:
        """runs.csv's rows (a cut-short last row left out)."""
        return self.runs().rows

    def env(self) -> Env:
        return read_env(self.env_path)

    def samples(self) -> list[SampleRow]:
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
        moved = [r for r in table.rows if r.status != Status.OK and row_key(r) in rerun]
        kept = [r for r in table.rows if not (r.status != Status.OK and row_key(r) in rerun)]
        samples = (_read_table(self.samples_path, SAMPLE_COLUMNS, SAMPLE_REQUIRED,
                               _dir_version(self.samples_path), SAMPLE_FILLED)
                   if self.samples_path.exists() else None)
        # Cells written before FIRST_ESCAPED: rewritten, so that the
        # appended rows and the old ones read by one rule.
        old = _dir_version(self.runs_path) < FIRST_ESCAPED
        retried = (read_runs(self.retried_path).rows
                   if (moved or old) and self.retried_path.exists() else [])
        writes: list[tuple[Path, tuple[str, ...], list[Row] | list[SampleRow]]] = []
        # An older format, or a last line cut short that the next append
        # would run into: rewritten whole.
        if samples is None or samples.torn or old or \
                _header(self.samples_path) != list(SAMPLE_NAMES):
            writes.append((self.samples_path, SAMPLE_NAMES,
                           [SampleRow(**r) for r in samples.rows] if samples else []))
        if moved or table.torn or old or _header(self.runs_path) != list(RUN_NAMES):
            if moved or retried:
                writes.append((self.retried_path, RUN_NAMES, retried + moved))
            writes.append((self.runs_path, RUN_NAMES, kept))
        _rewrite_all(writes)
        return {row_key(r) for r in kept}, table.torn

    def check_resumable(self) -> None:
        """env.json's keys are this format's: --resume rewrites it in this format."""
        if unknown := sorted(set(self.env().data) - ENV_KEYS):
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

    def append_run(self, row: Row) -> None:
        cells = _row_cells(row)
        try:
            with self._append(self.runs_path) as f:
                csv.writer(f).writerow(cells)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise RowWriteError(self.runs_path, row, exc) from None

    def append_runs(self, rows: Sequence[Row]) -> None:
        """Rows appended as append_run appends each, in one write and one
        flush to disk (merge: a flush per row took minutes for a large run)."""
        if not rows:
            return
        try:
            with self._append(self.runs_path) as f:
                csv.writer(f).writerows(_row_cells(row) for row in rows)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise RowWriteError(self.runs_path, rows[0], exc) from None

    def append_samples(self, row: Row | SampleRow, samples: Iterable[Any]) -> None:
        """The launcher's samples (t_s, rss_bytes, threads) of one run."""
        prefix = _cells(row, SAMPLE_KEY)
        try:
            with self._append(self.samples_path) as f:
                csv.writer(f).writerows(prefix + [csv_seconds(s.t_s), s.rss_bytes, s.threads]
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

    def write_env(self, written: Env) -> None:
        env = written.data if isinstance(written, Env) else written
        unknown = sorted(set(env) - ENV_KEYS)
        if unknown:  # a key docs/data-format.md does not describe: a new format version
            raise ValueError(f"env.json keys outside format {FORMAT_VERSION}: {unknown}")
        tmp = self.env_path.with_suffix(".tmp")
        try:  # a full disk leaves the file as it was, and no env.tmp beside it
            with tmp.open("w") as f:
                f.write(json.dumps(env, indent=2) + "\n")
                f.flush()
                os.fsync(f.fileno())
            tmp.replace(self.env_path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


# A staging folder: STAGING, the writer's pid, the run directory it will
# become (none for Outputs), "-", mkdtemp's letters.
STAGING = ".writing-"


def sweep_staging(folder: Path) -> None:
    """Remove what a killed merge, report or plot left in folder: staging
    folders of this user whose process is gone, and the empty run directory
    a merge had reserved."""
    for tmp in folder.glob(f"{STAGING}*") if folder.is_dir() else ():
        pid, _, rest = tmp.name[len(STAGING):].partition("-")
        name = rest.rpartition("-")[0]
        try:
            ours = tmp.lstat().st_uid == os.getuid() and tmp.is_dir() and not tmp.is_symlink()
        except OSError:
            continue
        if not (ours and pid.isdigit() and not alive(int(pid))):
            continue
        shutil.rmtree(tmp, ignore_errors=True)
        if name and "/" not in name and name not in (".", ".."):
            try:
                (folder / name).rmdir()  # only when empty: a finished run is never touched
            except OSError:
                pass


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


def _rewrite(path: Path, names: tuple[str, ...], rows: list[Row] | list[SampleRow]) -> None:
    _rewrite_all([(path, names, rows)])


def _rewrite_all(files: list[tuple[Path, tuple[str, ...], list[Row] | list[SampleRow]]]) -> None:
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


def _cells(row: Row | SampleRow, names: Iterable[str]) -> list[str]:
    """Numbers as csv_number writes them (a negative one stays a number);
    text escaped (escape_cell)."""
    return [escape_cell(v) if isinstance(v := getattr(row, name), str) else csv_number(v)
            for name in names]


def _row_cells(row: Row) -> list[str]:
    """A runs.csv row. A figure the format has no column for cannot be
    lost here: a Row has no field for it (a new figure is a new format
    version, core/schema.py)."""
    if not isinstance(row, Row):
        raise TypeError(f"runs.csv takes a Row, not {type(row).__name__}")
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
    try:
        os.stat(out)
    except FileNotFoundError:
        pass
    except OSError as exc:  # ELOOP (a symlink loop), ENOTDIR, EACCES
        raise RunDirError(f"--out {out}: {exc.strerror or exc}"
                          + (" (a symlink loop)" if exc.errno == errno.ELOOP else "")) from None
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


def earlier_runs(out: Path) -> list[dict[str, Any]]:
    """Every readable row of every earlier run in OUT (none when OUT does
    not exist), read once for the plan's estimates (plan.history_from) and
    --adaptive-sleep (plan.start_times); unreadable files are skipped: they
    only cost an estimate."""
    rows: list[dict[str, Any]] = []
    for path in sorted(out.glob("*/runs.csv")) if out.is_dir() else ():
        try:
            rows += read_runs(path).rows
        except RunDirError:
            continue
    return rows


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
            sweep_staging(self.final)
            self.dir = Path(tempfile.mkdtemp(prefix=f"{STAGING}{os.getpid()}--", dir=self.final))
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
