"""Discover implementations from each language folder's impls.toml."""

from __future__ import annotations

import os
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Sequence

from . import ROOT, UsageError
from .children import run_contained
from .envinfo import passed_to_programs
from .workloads import WORKLOADS

DETECT_TIMEOUT_S = 60
# When sleeping tasks start their clocks: see workloads._sleep_check.
TASKS_START = ("when-spawned", "after-spawning")


@dataclass
class Toolchain:
    present: bool
    version: str = ""  # the version line, when present
    reason: str = ""  # why not, when missing


@dataclass
class Language:
    name: str
    dir: Path
    detect: list[str]
    build: list[str]
    test: list[str]
    setup: list[str] = field(default_factory=list)

    def expand(self, argv: list[str]) -> list[str]:
        return [expand(a, self.dir) for a in argv]

    @cached_property
    def toolchain(self) -> Toolchain:
        return detect(self.expand(self.detect), self.dir)


def detect(argv: list[str], cwd: Path) -> Toolchain:
    """Run a detect command: exit 0 = present, first stdout line = version;
    otherwise the last stderr line says why not."""
    try:
        # contained: a hung detect is cut at DETECT_TIMEOUT_S with all its children
        proc = run_contained(argv, cwd, timeout_s=DETECT_TIMEOUT_S)
    except FileNotFoundError:
        return Toolchain(False, reason=f"{argv[0]} not found")
    except OSError as exc:
        return Toolchain(False, reason=f"{argv[0]}: {exc}")
    if proc.timed_out:
        return Toolchain(False, reason=f"{argv[0]}: timed out after {DETECT_TIMEOUT_S} s")
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"detect exited {proc.returncode}"]
        return Toolchain(False, reason=lines[-1])
    lines = proc.stdout.strip().splitlines()
    return Toolchain(True, lines[0] if lines else "unknown version")


@dataclass
class Impl:
    id: str
    language: Language
    runtime_label: str
    run: list[str]
    workloads: list[str]
    description: str = ""
    version: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    check: list[str] = field(default_factory=list)
    tasks_start: str = "when-spawned"
    source: Path | None = None  # the impls.toml it was declared in
    # The runtime's own knob for its CPU count, "{cpus}" standing for K
    # (e.g. GOMAXPROCS): set, with the pinning, only in runs given --cpus.
    cpus_env: dict[str, str] = field(default_factory=dict)
    # The floor the report reads every other runtime against (cpp-coroutines).
    floor: bool = False

    def argv(self) -> list[str]:
        return self.language.expand(self.run)

    def env_for(self, cpus: int | None) -> dict[str, str]:
        """The program's extra environment, for a run pinned to `cpus` CPUs
        (None: not pinned)."""
        if cpus is None:
            return dict(self.env)
        return self.env | {k: v.replace("{cpus}", str(cpus)) for k, v in self.cpus_env.items()}

    def available(self) -> Toolchain:
        """After the build: can this implementation run here? (Its optional
        `check` command, e.g. a runtime binary that a package manager
        installs only on some platforms.)"""
        if not self.check:
            return Toolchain(True)
        return detect(self.language.expand(self.check), self.language.dir)

    @cached_property
    def runtime(self) -> str:
        """Name and version for the runtime column."""
        tool = self.language.toolchain
        version = tool.version if tool.present else "not available"
        if tool.present and self.version:
            try:
                proc = run_contained(self.language.expand(self.version), self.language.dir,
                                     timeout_s=DETECT_TIMEOUT_S)
                if proc.returncode == 0 and proc.stdout.strip():
                    version = proc.stdout.strip().splitlines()[0]
            except OSError:
                pass
        return f"{self.runtime_label} ({version})"


def expand(arg: str, lang_dir: Path) -> str:
    return (arg.replace("{dir}", str(lang_dir)).replace("{root}", str(ROOT))
            .replace("{python}", sys.executable))


class RegistryError(Exception):
    pass


def _argv(table: dict, key: str, where: str, required: bool = True) -> list[str]:
    value = table.get(key, [] if not required else None)
    if value is None or not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise RegistryError(f"{where}: '{key}' must be a list of strings")
    if required and not value:
        raise RegistryError(f"{where}: '{key}' must not be empty")
    return value


def registry_files() -> list[Path]:
    """The repository's language folders, then any folders named in
    BENCH_IMPLS_PATH (colon-separated), for implementations kept elsewhere."""
    roots = [ROOT] + [Path(p).resolve() for p in os.environ.get("BENCH_IMPLS_PATH", "").split(":") if p]
    return [path for root in roots for path in sorted(root.glob("*/impls.toml"))]


def _table(value: object, where: str) -> dict:
    if not isinstance(value, dict):
        raise RegistryError(f"{where} must be a table")
    return value


def _text(table: dict, key: str, where: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise RegistryError(f"{where}: '{key}' must be a string")
    return value


def _env(table: dict, key: str, where: str) -> dict[str, str]:
    """An environment table: names to strings."""
    env = _table(table.get(key, {}), f"{where}: '{key}'")
    if not all(isinstance(v, str) for v in env.values()):
        raise RegistryError(f"{where}: every value of '{key}' must be a string")
    return {str(k): v for k, v in env.items()}


def _registry_path(text: str | Path) -> Path:
    """A --registry FILE, resolved: a symlink loop is bad input, not a crash."""
    try:
        return Path(text).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python 3.11's "Symlink loop"
        raise RegistryError(f"{text}: cannot be read ({exc})") from None


def load_registry(extra: Sequence[Path] = ()) -> list[Impl]:
    """Every implementation, in language-folder then declaration order, then
    those of the extra files (`--registry FILE`: the same format, kept
    outside the tree, `{dir}` being the file's folder). A malformed file
    raises RegistryError naming the file and the key."""
    impls: list[Impl] = []
    seen: dict[str, Path] = {}  # each implementation id, and the file that declares it
    languages: dict[str, Path] = {}
    files = [(path, True) for path in registry_files()] + [(_registry_path(p), False) for p in extra]
    for path, in_tree in files:
        where = str(path)
        try:
            if path.exists() and not path.is_file():  # a FIFO would block the read forever
                raise RegistryError(f"{where}: not a regular file")
            data = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RegistryError(f"{where}: {exc}") from None
        except OSError as exc:
            raise RegistryError(f"{where}: {exc.strerror}") from None
        lang_table = _table(data.get("language", {}), f"{where}: [language]")
        name = lang_table.get("name")
        if in_tree and name != path.parent.name:
            raise RegistryError(f"{where}: language.name must be {path.parent.name!r}")
        if not isinstance(name, str) or not name:
            raise RegistryError(f"{where}: [language] needs a name")
        if name in languages:
            raise RegistryError(f"{where}: language {name!r} is already declared in "
                                f"{languages[name]}: choose another name")
        languages[name] = path
        lang = Language(name=name, dir=path.parent, detect=_argv(lang_table, "detect", where),
                        build=_argv(lang_table, "build", where), test=_argv(lang_table, "test", where),
                        setup=_argv(lang_table, "setup", where, required=False))
        lang_cpus_env = _env(lang_table, "cpus_env", f"{where}: [language]")
        entries = data.get("impl", [])
        if not isinstance(entries, list):
            raise RegistryError(f"{where}: 'impl' must be an array of tables ([[impl]])")
        for entry in entries:
            entry = _table(entry, f"{where}: every [[impl]]")
            impl_id = entry.get("id")
            if not isinstance(impl_id, str) or not impl_id:
                raise RegistryError(f"{where}: every impl needs a unique id (got {impl_id!r})")
            if impl_id in seen:
                raise RegistryError(f"{where}: impl id {impl_id!r} is already declared in "
                                    f"{seen[impl_id]}: every impl needs a unique id")
            seen[impl_id] = path
            at = f"{where}: impl {impl_id}"
            workloads = entry.get("workloads", [])
            if not isinstance(workloads, list) or not workloads or \
                    any(not isinstance(w, str) or w not in WORKLOADS for w in workloads):
                raise RegistryError(f"{at}: 'workloads' must be a non-empty list of "
                                    f"{', '.join(WORKLOADS)}")
            tasks_start = entry.get("tasks_start", "when-spawned")
            if tasks_start not in TASKS_START:
                raise RegistryError(f"{at}: tasks_start must be one of {', '.join(TASKS_START)}")
            env = _env(entry, "env", at)
            floor = entry.get("floor", False)
            if not isinstance(floor, bool):
                raise RegistryError(f"{at}: 'floor' must be true or false")
            impls.append(Impl(
                id=impl_id, language=lang, runtime_label=_text(entry, "runtime", at, impl_id),
                run=_argv(entry, "run", at), workloads=list(workloads),
                description=_text(entry, "description", at, ""),
                version=_argv(entry, "version", at, required=False),
                check=_argv(entry, "check", at, required=False), tasks_start=tasks_start,
                env=env, source=path, cpus_env=lang_cpus_env | _env(entry, "cpus_env", at), floor=floor))
    return impls


def select(impls: list[Impl], names: list[str]) -> list[Impl]:
    """Resolve --impl: a language folder name selects all its implementations
    (a name that is both a language and an id means the language)."""
    languages = {i.language.name for i in impls}
    chosen: list[Impl] = []
    for name in names:
        if name in languages:
            matches = [i for i in impls if i.language.name == name]
        else:
            matches = [i for i in impls if i.id == name]
        if not matches:
            known = ", ".join(sorted(languages | {i.id for i in impls}))
            raise UsageError(f"unknown implementation or language {name!r} (known: {known})")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def resolve(names: list[str], registries: Sequence[str] = ()) -> list[Impl]:
    """--impl and --registry: every implementation for ["all"], else the
    named ones (select)."""
    impls = load_registry([Path(r) for r in registries])
    return impls if names == ["all"] else select(impls, names)


def languages(impls: list[Impl]) -> list[Language]:
    """The languages of these implementations, each once, in their order."""
    langs: list[Language] = []
    for i in impls:
        if i.language not in langs:
            langs.append(i.language)
    return langs


def program_env(extra: dict[str, str] | None = None, inherit: Sequence[str] = ()) -> dict[str, str]:
    """The environment measured programs run with: of ours, only the
    allow-list (envinfo.passed_to_programs: the runtime variables, HOME,
    TMPDIR, the user, and what --inherit-env names), so that no secret of
    the shell reaches a program that may print it; no pycache prefix, and
    Python writing no bytecode. A prefix would hide the bytecode installed
    with the standard library, which every run would then compile from
    source (PyPy +188 MB, CPython +4.4 MB and 0.2 s at N = 1); writing none
    means no run leaves the program's own modules compiled for the next
    (docs/protocol.md, "Every run starts cold"). make's own variables
    (MAKEFLAGS carries `LANG=go` from `make bench LANG=go`) are not on the
    allow-list."""
    env = {k: v for k, v in os.environ.items()
           if passed_to_programs(k, inherit) and k != "PYTHONPYCACHEPREFIX"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env
