"""Discover implementations from each language folder's impls.toml."""

from __future__ import annotations

import dataclasses
import os
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import ROOT, UsageError
from . import local_builds
from .envinfo import passed_to_programs
from .variants import ID, Spec, masked_spec, parse
from .workloads import WORKLOADS

# When sleeping tasks start their clocks: see workloads._sleep_check.
TASKS_START = ("when-spawned", "after-spawning")
# Where a run command takes a variant's runtime flags (IMPL[-flag]): one
# element of `run` that stands for zero or more arguments.
FLAGS = "{flags}"
# Other releases' builds and installs (IMPL@VERSION): one folder per
# implementation and release, ignored by git, removed by `make clean`
# (BENCH_VERSIONS_DIR elsewhere: the tests' own).
VERSIONS_DIR = Path(os.environ.get("BENCH_VERSIONS_DIR") or ROOT / ".versions")
# Where [impl.versions] may list releases from (harness/releases/versions.py).
SOURCES = ("npm", "crates", "maven", "pypi", "go")


@dataclass
class Versions:
    """An implementation's [impl.versions] table: how another release of its
    runtime or library is listed, installed and run (docs/implementations.md)."""
    source: str  # "npm:PKG", "crates:CRATE", "maven:GROUP:ARTIFACT", "pypi:PKG", "go:toolchain"
    install: list[str]  # run in the language folder; {cache} and {version} expanded
    run: list[str]  # the release's program ({cache}, {version}, {flags})
    version: list[str] = field(default_factory=list)  # the release's version command
    list: list[str] = field(default_factory=list)  # instead of a source: prints releases, one a line
    stock: str = ""  # which release the stock build uses, in words (list --versions)
    workloads: list[str] = field(default_factory=list)  # a release's, when fewer than the stock build's
    origin: str = ""  # where a `list` command's releases come from, in words
    # IMPL@path:DIR (local_builds): how a local source or build is built into
    # {cache}, DIR being {path}; empty: the implementation takes none.
    path_install: list[str] = field(default_factory=list)
    path_run: list[str] = field(default_factory=list)  # a local build's program, when not `run`
    # A release's git tag in the source's repository, "{version}" standing
    # for the release ("tokio-{version}"): bisect goes on from two releases
    # into the commits between their tags.
    tag: str = ""


@dataclass
class Language:
    name: str
    dir: Path
    detect: list[str]
    build: list[str]
    test: list[str]
    setup: list[str] = field(default_factory=list)
    build_cores: int | None = None  # the cores its build keeps busy; None: every core

    def expand(self, argv: list[str]) -> list[str]:
        return [expand(a, self.dir) for a in argv]


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
    versions: Versions | None = None
    # A variant or a release (IMPL[K=V;-flag], IMPL@VERSION): `id` is then
    # its label (variants.Spec.label) and `base` the declared id.
    base: str = ""
    variant: str = ""  # the settings, as in the label ("GOGC=off;-flag")
    release: str = ""  # the release asked for; "" is the stock build
    flags: tuple[str, ...] = ()
    settings_env: tuple[tuple[str, str], ...] = ()  # the variant's own K=V (env adds them)
    cache: Path | None = None  # a release's build folder under VERSIONS_DIR
    # A local build's folder ({path}: DIR, or a git: commit's worktree) and
    # what env.json records of it (local_builds)
    local_dir: Path | None = None
    local: dict[str, Any] = field(default_factory=dict)
    # Name and version for the runtime column ("Go (go1.26.8)"): "" until
    # execute.toolchains.detect_runtime has run its version command, before
    # the runs (a declaration starts no process).
    runtime: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        self.base = self.base or self.id

    def expand(self, argv: list[str]) -> list[str]:
        """A command of this implementation: {flags} becomes the variant's
        runtime flags (none for the stock build), {cache} and {version} the
        release's folder and name."""
        out: list[str] = []
        for arg in argv:
            if arg == FLAGS:
                out += self.flags
                continue
            if self.cache is not None:
                arg = arg.replace("{cache}", str(self.cache)).replace("{version}", self.release)
                if self.local_dir is not None:
                    arg = arg.replace("{path}", str(self.local_dir))
            out.append(self.language.expand([arg])[0])
        return out

    def argv(self) -> list[str]:
        return self.expand(self.run)

    def derive(self, spec: Spec, source: Path | None = None) -> Impl:
        """This implementation as a variant or another release, or itself
        for a plain name; source is --source, the checkout of IMPL@git:REV.
        Raises UsageError when it has no releases to choose from, or no
        place for runtime flags."""
        if spec.plain:
            return self
        local_dir, local = None, {}
        if local_builds.is_git(spec.version):
            spec, local_dir, local = self._commit(spec, source)
        elif local_builds.is_local(spec.version):
            local_dir = local_builds.directory(spec.version)
            local = local_builds.record(spec.version)
        # a language's name: each impl's own; a credential in a setting is
        # masked in the label (every row and file) and kept in env and flags
        shown = masked_spec(dataclasses.replace(spec, base=self.id))
        label = shown.label
        run, version, check, cache = self.run, self.version, self.check, None
        workloads = self.workloads
        if spec.version:
            if self.versions is None:
                raise UsageError(f"{label}: {self.id} has no other releases to run "
                                 f"(its impls.toml declares no [impl.versions])")
            cache = VERSIONS_DIR / self.id / spec.version
            run, version, check = self.versions.run, self.versions.version, []
            if local_dir is not None:
                cache = VERSIONS_DIR / self.id / self._local_folder(label, spec.version)
                run = self.versions.path_run or run
            elif not (self.versions.source or self.versions.list):
                raise UsageError(f"{label}: {self.id} has no releases to name, only local builds "
                                 f"({self.id}@path:DIR)")
            workloads = self.versions.workloads or self.workloads
        if spec.flags and FLAGS not in run:
            raise UsageError(f"{label}: {self.id} takes no runtime flags (its run command has "
                             f"no {FLAGS}); set its environment with NAME=VALUE instead")
        return dataclasses.replace(self, id=label, base=self.id, variant=shown.settings,
                                   release=spec.version, flags=spec.flags, settings_env=spec.env,
                                   env=self.env | dict(spec.env),
                                   run=run, version=version, check=check, cache=cache,
                                   local_dir=local_dir, local=local, workloads=list(workloads),
                                   runtime="", floor=False)  # the floor is the stock build alone

    def _commit(self, spec: Spec, source: Path | None) -> tuple[Spec, Path, dict[str, Any]]:
        """IMPL@git:REV: the spec named by its commit, the commit's worktree
        (made at install), and its record."""
        typed = Spec(self.id, spec.version).label
        if source is None:
            raise UsageError(f"{typed}: a commit needs --source DIR, the git checkout it is in")
        try:
            commit, subject = local_builds.commit_of(source, spec.version[len(local_builds.GIT):])
        except local_builds.GitError as exc:
            raise UsageError(f"{typed}: {exc}") from None
        short = commit[:local_builds.SHORT]
        record = {"source": str(source), "commit": commit, "subject": subject}
        return (dataclasses.replace(spec, version=local_builds.GIT + short),
                VERSIONS_DIR / "worktrees" / short, record)

    def _local_folder(self, label: str, version: str) -> str:
        """A local build's folder: IMPL@path:DIR's named by the content it is
        built from, IMPL@git:COMMIT's by its commit."""
        assert self.versions is not None
        if not self.versions.path_install:
            raise UsageError(f"{label}: {self.id} takes no local source or build (its "
                             f"[impl.versions] declares no path_install)")
        if local_builds.is_git(version):
            return version.replace(":", "-")
        root = local_builds.directory(version)
        if not root.exists():
            raise UsageError(f"{label}: {root} does not exist")
        return f"path-{local_builds.digest(root)[:16]}"

    @property
    def install(self) -> list[str]:
        """The command that builds this release or local build into its cache."""
        assert self.versions is not None
        if self.local_dir is not None:
            return self.expand(self.versions.path_install)
        return self.expand(self.versions.install)

    def env_for(self, cpus: int | None) -> dict[str, str]:
        """The program's extra environment, for a run pinned to `cpus` CPUs
        (None: not pinned)."""
        if cpus is None:
            return dict(self.env)
        return self.env | {k: v.replace("{cpus}", str(cpus)) for k, v in self.cpus_env.items()}


def _build_cores(table: dict[str, Any], where: str) -> int | None:
    """[language] build_cores: how many cores its build keeps busy (1 for
    javac or erlc); absent, every core (Cargo, go, Ninja)."""
    value = table.get("build_cores")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RegistryError(f"{where}: [language] build_cores must be a whole number of "
                            f"cores, at least 1 (got {value!r})")
    return value


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
    """A string shown in lists and reports: no control character (a newline
    breaks a table, an ESC can reset a terminal)."""
    value = table.get(key, default)
    if not isinstance(value, str):
        raise RegistryError(f"{where}: '{key}' must be a string")
    if not value.isprintable():
        raise RegistryError(f"{where}: '{key}' holds a control character: {value!r}")
    return value


def _id(value: object, what: str, where: str) -> str:
    """An implementation id or a language name: variants.ID, the one rule
    for the names --impl selects and every reader of a run accepts."""
    if not isinstance(value, str) or not ID.fullmatch(value):
        raise RegistryError(f"{where}: {what} {value!r} must be letters, digits, '.', '_' or '-', "
                            f"starting with a letter or digit")
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
        data = _read_toml(path)
        lang_table = _table(data.get("language", {}), f"{where}: [language]")
        lang = _language(lang_table, path, in_tree, languages)
        lang_cpus_env = _env(lang_table, "cpus_env", f"{where}: [language]")
        entries = data.get("impl", [])
        if not isinstance(entries, list):
            raise RegistryError(f"{where}: 'impl' must be an array of tables ([[impl]])")
        for entry in entries:
            impls.append(_impl(_table(entry, f"{where}: every [[impl]]"), lang, lang_cpus_env,
                               path, seen))
    return impls


def _read_toml(path: Path) -> dict[str, Any]:
    """An impls.toml's tables; a file that cannot be read or parsed is a
    RegistryError naming it."""
    where = str(path)
    try:
        if path.exists() and not path.is_file():  # a FIFO would block the read forever
            raise RegistryError(f"{where}: not a regular file")
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{where}: {exc}") from None
    except OSError as exc:
        raise RegistryError(f"{where}: {exc.strerror}") from None


def _language(lang_table: dict[str, Any], path: Path, in_tree: bool,
              languages: dict[str, Path]) -> Language:
    """The file's [language], checked: a folder's table names its folder, and
    no two files declare one language (languages: each name's file, added to)."""
    where = str(path)
    name = lang_table.get("name")
    if in_tree and name != path.parent.name:
        raise RegistryError(f"{where}: language.name must be {path.parent.name!r}")
    if not isinstance(name, str) or not name:
        raise RegistryError(f"{where}: [language] needs a name")
    _id(name, "language name", where)
    if name in languages:
        raise RegistryError(f"{where}: language {name!r} is already declared in "
                            f"{languages[name]}: choose another name")
    languages[name] = path
    return Language(name=name, dir=path.parent, detect=_argv(lang_table, "detect", where),
                    build=_argv(lang_table, "build", where), test=_argv(lang_table, "test", where),
                    setup=_argv(lang_table, "setup", where, required=False),
                    build_cores=_build_cores(lang_table, where))


def _impl(entry: dict[str, Any], lang: Language, lang_cpus_env: dict[str, str], path: Path,
          seen: dict[str, Path]) -> Impl:
    """One [[impl]], checked; its id unique across files (seen: each id's
    file, added to)."""
    where = str(path)
    impl_id = entry.get("id")
    if not isinstance(impl_id, str) or not impl_id:
        raise RegistryError(f"{where}: every impl needs a unique id (got {impl_id!r})")
    _id(impl_id, "impl id", where)
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
    runtime = _text(entry, "runtime", at, impl_id)
    if "<" in runtime or ">" in runtime:  # shown in every table of the report
        raise RegistryError(f"{at}: 'runtime' holds markup (< or >): {runtime!r}")
    return Impl(versions=_versions(entry, at),
                id=impl_id, language=lang, runtime_label=runtime,
                run=_argv(entry, "run", at), workloads=list(workloads),
                description=_text(entry, "description", at, ""),
                version=_argv(entry, "version", at, required=False),
                check=_argv(entry, "check", at, required=False), tasks_start=tasks_start,
                env=env, source=path, cpus_env=lang_cpus_env | _env(entry, "cpus_env", at),
                floor=floor)


def _versions(entry: dict, at: str) -> Versions | None:
    """[impl.versions], checked; None when absent."""
    if "versions" not in entry:
        return None
    table = _table(entry["versions"], f"{at}: 'versions'")
    where = f"{at}: [impl.versions]"
    source = _text(table, "source", where, "")
    listing = _argv(table, "list", where, required=False)
    path_install = _argv(table, "path_install", where, required=False)
    releases = bool(source or listing)  # without, the table is for local builds alone
    if (source and listing) or not (releases or path_install):
        raise RegistryError(f"{where}: give either 'source' ({', '.join(SOURCES)}, e.g. "
                            f"\"crates:tokio\") or a 'list' command, not both (or, for local "
                            f"builds alone, neither and a 'path_install')")
    if source and source.partition(":")[0] not in SOURCES:
        raise RegistryError(f"{where}: source {source!r} must start with one of "
                            f"{', '.join(s + ':' for s in SOURCES)}")
    workloads = table.get("workloads", [])
    if not isinstance(workloads, list) or any(w not in entry.get("workloads", []) for w in workloads):
        raise RegistryError(f"{where}: 'workloads' must list some of the implementation's workloads")
    return Versions(source=source, list=listing,
                    install=_argv(table, "install", where, required=releases),
                    path_install=path_install, path_run=_argv(table, "path_run", where, required=False),
                    tag=_text(table, "tag", where, ""),
                    run=_argv(table, "run", where), version=_argv(table, "version", where, required=False),
                    stock=_text(table, "stock", where, ""), workloads=list(workloads),
                    origin=_text(table, "origin", where, ""))


def select(impls: list[Impl], names: list[str], source: Path | None = None) -> list[Impl]:
    """Resolve --impl: a language folder name selects all its implementations
    (a name that is both a language and an id means the language); a
    variant or release of a name (IMPL[K=V], IMPL@VERSION) is that of each
    implementation it selects."""
    languages = {i.language.name for i in impls}
    chosen: list[Impl] = []
    for name in names:
        spec = parse(name)
        if spec.base in languages:
            matches = [i for i in impls if i.language.name == spec.base]
        else:
            matches = [i for i in impls if i.id == spec.base]
        if not matches:
            known = ", ".join(sorted(languages | {i.id for i in impls}))
            raise UsageError(f"unknown implementation or language {spec.base!r} (known: {known})")
        if spec.version and spec.base in languages and len(matches) > 1:
            raise UsageError(f"{name}: a release belongs to one implementation, not to the "
                             f"language {spec.base} (e.g. {matches[0].id}@{spec.version})")
        derived = [m.derive(spec, source) for m in matches]
        chosen += [d for d in derived if d.id not in {c.id for c in chosen}]
    return chosen


def resolve(names: list[str], registries: Sequence[str] = (), source: Path | None = None
            ) -> list[Impl]:
    """--impl, --registry and --source: every implementation for ["all"],
    else the named ones (select)."""
    impls = load_registry([Path(r) for r in registries])
    return impls if names == ["all"] else select(impls, names, source)


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
