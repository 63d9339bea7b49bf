"""Set up and build each language's programs before they are measured, and
say which planned runs can start."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

from .. import ROOT, relative
from ..core import local_builds
from .build_lanes import Job, Step, run_jobs
from ..processes.children import run_contained
from ..core.formatting import fmt_duration, fmt_fixed
from .build_records import build_lock, record_build, recorded_builds
from .loadgen import NAME as GENERATOR, SKIP_VARIABLE, Unavailable, ensure_generator, \
    generator_installed
from .progress import Board, BoardView, BuildStatus, StatusLine, tool_progress
from ..core.registry import Impl, Language, languages
from ..core.schema import Status, parse_status
from ..releases.versions import download_size, where
from .toolchains import available, detect_runtimes, detect_toolchain

BUILD_TIMEOUT_S = 1800

# A first build's seconds (set-up, downloads and system installs included),
# measured on a 2-core Intel Xeon from a first `./run.sh --quick`'s build
# logs, the builds one after another. Overlapped (build_lanes), they take
# about as long in all: on 2 cores Cargo and go keep both busy. Used until
# this machine has built the language once (.tools/build-times.json then
# holds its last build).
FIRST_BUILD_S = {"cpp": 2, "csharp": 15, "elixir": 8, "erlang": 3, "go": 19, "java": 2,
                 "kotlin": 18, "node": 4, "python": 24, "rust": 63, GENERATOR: 45}
UNKNOWN_BUILD_S = 30  # a language not measured here (a --registry one)


@dataclass
class BuildResult:
    ok: bool
    error: str = ""


def announcement(line: str, name: str) -> bool:
    """Whether a set-up's or build's stderr line is one of its own
    announcements ("erlang: installing Debian's erlang-base ..."): it starts
    with the language's name and a colon, and is not a tool's progress line
    that happens to start the same way (Go's own "go: downloading ...")."""
    return line.startswith(f"{name}:") and tool_progress(line) is None


def _step(cmd: list[str], lang: Language, status: BuildStatus | None = None,
          line: StatusLine | BoardView | None = None) -> tuple[int, str, str]:
    """Run one set-up or build command: (exit status, stdout, stderr). An
    announcement (above) is said to the user as it comes: that is how a
    set-up says what it fetches or installs before it does
    (docs/implementations.md). The tools' own progress lines (Cargo's
    "Compiling ...", Maven's "Downloading ...", Go's "go: downloading ...")
    update one status line on a terminal; everything goes to the log. The
    command runs contained (children.run_contained): nothing it starts
    outlives it, nor the harness, however the harness ends."""
    status = status or BuildStatus(lang.name)
    line = line or StatusLine(sys.stderr)

    def say(text: str) -> None:
        if announcement(text, lang.name):
            line.say(text.rstrip())
        elif (progress := status.feed(text)) is not None:
            line.update(progress)

    try:
        done = run_contained(cmd, lang.dir, timeout_s=BUILD_TIMEOUT_S, on_stderr_line=say)
    finally:
        line.clear()
    err = done.stderr
    if done.timed_out:
        err += f"killed after {BUILD_TIMEOUT_S} s\n"
    elif done.launcher_failure:
        err += f"the launcher {done.launcher_failure}\n"
    return done.returncode, done.stdout, err


def in_tree(lang: Language) -> bool:
    """A language folder of this repository (its build times are recorded)."""
    return lang.dir.parent == ROOT


class LanguageBuild:
    """One language's set-up then build, as two steps (the set-up downloads
    and installs, the build compiles: they may run in different lanes,
    build_lanes), their output appended to log_path, each step's exit status
    and seconds last ("[exit 0 after 44.2 s]"). A successful build of a
    language folder of this repository is recorded in
    .tools/build-times.json: the next estimate, and the next status line's
    total of progress lines."""

    def __init__(self, lang: Language, log_path: Path | None,
                 line: StatusLine | BoardView | None = None) -> None:
        self.lang, self.log_path, self.line = lang, log_path, line
        last = recorded_builds().get(lang.name, {}) if in_tree(lang) else {}
        self.status = BuildStatus(lang.name, last.get("steps"))
        self.result = BuildResult(True)
        self.seconds = 0.0  # both steps' own time, not the wait between them

    def setup(self) -> bool:
        self.status.verb = "setting up"
        return self._run("setup", self.lang.setup)

    def build(self) -> bool:
        self.status.verb = "building"
        if not self._run("build", self.lang.build):
            return False
        if in_tree(self.lang):
            record_build(self.lang.name, self.seconds, self.status.steps)
        return True

    def _run(self, name: str, argv: list[str]) -> bool:
        if not argv:
            return True
        cmd = self.lang.expand(argv)
        started = time.monotonic()
        if self.line is not None:  # said at once: a quiet set-up (pip -q) shows no progress of its own
            self.line.update(f"{self.status.verb} {self.lang.name}")
        try:
            code, stdout, stderr = _step(cmd, self.lang, self.status, self.line)
        except OSError as exc:
            self.result = BuildResult(False, f"{self.lang.name} {name} failed: {exc}")
            return False
        took = time.monotonic() - started
        self.seconds += took
        if self.log_path is not None:
            with self.log_path.open("a") as log:
                log.write(f"$ {' '.join(cmd)}\n{stdout}{stderr}\n"
                          f"[exit {code} after {fmt_fixed(took, 1)} s]\n")
        if code != 0:
            tail = (stderr.strip() or stdout.strip()).splitlines()[-1:] or [""]
            where = f"; log: {self.log_path}" if self.log_path else ""
            self.result = BuildResult(False, f"{self.lang.name} {name} exited {code}: {tail[0]}{where}")
            return False
        return True


def build_language(lang: Language, log_path: Path | None) -> BuildResult:
    """Set up then build one language, one step after the other."""
    job = LanguageBuild(lang, log_path)
    if job.setup():
        job.build()
    return job.result


def expected_build_s(name: str) -> tuple[float, bool]:
    """How long building this language (or the load generator) should take: its last
    build's seconds here (True), else a first build's measured figure (False)."""
    last = recorded_builds().get(name, {}).get("seconds")
    if isinstance(last, (int, float)):
        return float(last), True
    return float(FIRST_BUILD_S.get(name, UNKNOWN_BUILD_S)), False


def build_estimate(langs: list[Language], servers: bool) -> tuple[float, str]:
    """The builds' share of an estimate, in seconds and words: each
    language's last build here, or a first build's measured figure; the load
    generator's build when a server workload is planned and it is not installed."""
    names = [lang.name for lang in langs]
    if servers and not generator_installed() and os.environ.get(SKIP_VARIABLE) != "1":
        names.append(GENERATOR)
    if not names:
        return 0.0, ""
    seen = {name: expected_build_s(name) for name in names}
    total = sum(s for s, _ in seen.values())
    first = [name for name, (_, known) in seen.items() if not known]
    if not first:
        return total, f"builds about {fmt_duration(total)}, as last time"
    return total, (f"builds about {fmt_duration(total)} (first build of {', '.join(first)}: "
                   f"measured on 2 cores; later builds take seconds)")


def install_text(source: Path | None) -> str:
    """The optional `install` of an impls.toml's [language]: how to install
    its toolchain by hand ("apt-get install erlang-base erlang-eunit")."""
    if source is None:
        return ""
    try:
        value = tomllib.loads(source.read_text()).get("language", {}).get("install", "")
    except (OSError, ValueError):
        return ""
    return value if isinstance(value, str) else ""


def setup_hint(lang: Language, source: Path | None = None) -> str:
    """What would install a missing toolchain, in one sentence."""
    where = lang.dir.name if in_tree(lang) else str(lang.dir)
    by_hand = install_text(source)
    if lang.setup:
        text = (f"`make setup` does not install it; {lang.name}'s own set-up "
                f"(`{shlex.join(lang.setup)}` in {where}/, run by `./run.sh` and `make build "
                f"LANG={lang.name}`) installs what it can once the detect passes")
    else:
        text = (f"`make setup` does not install it, nor does anything in this repository: "
                f"install it so that `{shlex.join(lang.detect)}` works in {where}/")
    return text + (f"; by hand: {by_hand}" if by_hand else "")


def first_error(text: str) -> str:
    """The line a failed build is known by: the compiler's first error
    (Cargo's "error[E0432]: ...", javac's "...: error: ..."), else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"(?:error|ERROR)\b|\[ERROR\]|.*: error:", line)]
    return (errors or lines[-1:] or [""])[0]


def install_release(impl: Impl, log_path: Path, say: Callable[[str], None]) -> Readiness:
    """Build or install another release of an implementation (IMPL@VERSION)
    into its own folder under .versions/, once: a later run reuses it. The
    download is announced first (what, from where, how big). One build of a
    release or commit at a time (build_lock): a second run naming it waits,
    then uses the first one's build."""
    assert impl.cache is not None and impl.versions is not None
    try:
        with build_lock(impl.cache, say, impl.id):
            if not local_builds.is_git(impl.release):
                return _install(impl, log_path, say)
            assert impl.local_dir is not None
            with build_lock(impl.local_dir, say, impl.release):
                return _install(impl, log_path, say)
    except OSError as exc:
        return Readiness(Status.BUILD_FAILED, f"{impl.id}: install failed: {exc.strerror or exc}")


def built(impl: Impl) -> bool:
    """Whether a release's or local build's build finished (its marker),
    and a commit's worktree with it: what --no-build may measure."""
    assert impl.cache is not None
    return (impl.cache / ".installed").is_file() and (
        not local_builds.is_git(impl.release) or impl.local_dir is not None
        and local_builds.complete(impl.local_dir, impl.local["commit"]))


def _install(impl: Impl, log_path: Path, say: Callable[[str], None]) -> Readiness:
    """install_release's work, under its locks."""
    assert impl.cache is not None
    cache, marker = impl.cache, impl.cache / ".installed"
    # The marker names the toolchain that made the build (the language's
    # detect line): a release built by another compiler, interpreter or JDK
    # than the one now installed is built again, not measured as it is. It
    # is written last: a build without it was cut short, and is redone.
    toolchain = detect_toolchain(impl.language).version
    built_with = marker.read_text().splitlines()[1:2] if marker.exists() else None
    # a commit's build is of its worktree: one not marked complete (an
    # interrupted checkout, a `make clean`) is checked out and built again
    checked_out = not local_builds.is_git(impl.release) or (
        impl.local_dir is not None and local_builds.complete(impl.local_dir, impl.local["commit"]))
    if built_with == [toolchain] and checked_out:
        say(f"{impl.id}: using the build in {relative(cache)}")
        return Readiness(READY)
    if built_with is not None and checked_out:
        made = f"by {built_with[0]}" if built_with else "by an unrecorded toolchain"
        say(f"{impl.id}: the build in {relative(cache)} was made {made}, "
            f"not {toolchain}: building it again")
    size = download_size(impl)
    big = (" (nothing to download: already on this machine)" if size == 0
           else f" ({fmt_fixed(size / 1e6, 1)} MB, and what it needs)" if size else "")
    if impl.local_dir is not None:
        say(f"{impl.id}: building {where(impl)} into {relative(cache)} ...")
    else:
        say(f"{impl.id}: installing {impl.release} of {where(impl)}{big} into {relative(cache)} ...")
    cmd = impl.install
    started = time.monotonic()
    # A full disk or a read-only tree makes the release's rows build-failed,
    # saying why; an install cut short leaves no marker, so the next run
    # starts it again from an empty folder.
    try:
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        if local_builds.is_git(impl.release):
            assert impl.local_dir is not None
            local_builds.check_out(Path(impl.local["source"]), impl.local["commit"], impl.local_dir)
        code, stdout, stderr = _step(cmd, impl.language)
        with log_path.open("a") as log:
            log.write(f"$ {shlex.join(cmd)}\n{stdout}{stderr}\n"
                      f"[exit {code} after {fmt_fixed(time.monotonic() - started, 1)} s]\n")
        if code == 0:
            tmp = marker.with_name(f".installed.{os.getpid()}")
            tmp.write_text(f"{impl.id}\n{toolchain}\n")
            tmp.replace(marker)
    except OSError as exc:
        return Readiness(Status.BUILD_FAILED, f"{impl.id}: install failed: {exc.strerror or exc}")
    except local_builds.GitError as exc:
        return Readiness(Status.BUILD_FAILED, f"{impl.id}: {exc}")
    if code != 0:
        return Readiness(Status.BUILD_FAILED, f"{impl.id}: install exited {code}: "
                                              f"{first_error(stderr or stdout)}; log: {log_path}")
    return Readiness(READY)


# An install may write this file into its release's folder: the workloads
# that release's build has, one a line (an old tokio's build without
# rust-tokio's HTTP server), then, after a "#", why.
RELEASE_WORKLOADS = ".workloads"


def release_lacks(impl: Impl, workload: str) -> str:
    """Why a built release cannot run this workload ("" when it can)."""
    if impl.cache is None or not (path := impl.cache / RELEASE_WORKLOADS).is_file():
        return ""
    text, _, why = path.read_text().partition("#")
    if workload in text.split():
        return ""
    return f"this release's build has no {workload}" + (f": {why.strip()}" if why.strip() else "")


def _announced(board: Board, say: Callable[[str], None],
               text: str) -> Callable[[Callable[[], bool]], Callable[[], bool]]:
    """A job's first step, which says first what the job is."""
    def wrap(step: Callable[[], bool]) -> Callable[[], bool]:
        def run() -> bool:
            board.tell(say, text)
            return step()
        return run
    return wrap


# A readiness, not a run's status: the programs can run.
READY = "ready"


@dataclass
class Readiness:
    """Whether a language's programs can run: READY, or the status its rows
    get (skipped, build-failed) and why."""
    status: Status | Literal["ready"]
    reason: str = ""

    @classmethod
    def of(cls, status: str, reason: str = "") -> Readiness:
        """As read from a file (slurm/build.json); an unknown status is a ValueError."""
        return cls(READY if status == READY else parse_status(status), reason)

    @property
    def ready(self) -> bool:
        return self.status == READY


def prepare(lang: Language, log_path: Path | None, build: bool = True) -> Readiness:
    """A missing toolchain skips the language; otherwise it is built (unless
    build is False: the programs as already built)."""
    tool = detect_toolchain(lang)
    if not tool.present:
        return Readiness(Status.SKIPPED, f"toolchain missing: {tool.reason}")
    if not build:
        return Readiness(READY)
    result = build_language(lang, log_path)
    return Readiness(READY) if result.ok else Readiness(Status.BUILD_FAILED, result.error)


class Preparation:
    """What a plan's runs need before they start: each language set up and
    built once (its log in the run directory), each implementation checked
    once (and its runtime's version asked), the load generator found once
    when a server workload is planned. Says, per run, whether it can start
    or the status its row gets instead.

    By default everything is ready before the first run. With overlap (a
    check suite's `overlap_builds`), the builds go on in the background and
    a run is answered as soon as its own language (and, for a server, the
    load generator) is: its runs start while other languages still compile,
    on a busy machine, which a check that ranks nothing can afford."""

    def __init__(self, impls: list[Impl], log_dir: Path, build: bool, servers: bool,
                 say: Callable[[str], None], overlap: bool = False,
                 board: Board | None = None) -> None:
        self._languages = languages(impls)
        self._impls = list({i.id: i for i in impls}.values())
        self._build, self._log_dir, self._say = build, log_dir, say
        self.languages: dict[str, Readiness] = {}
        self.sources: dict[str, Path | None] = {}
        for impl in impls:
            self.sources.setdefault(impl.language.name, impl.source)
        self.loadgen: Path | None = None
        self.generator = Readiness(READY)
        self.impls: dict[str, Readiness] = {}
        self.checked: dict[str, Readiness] = {}
        # what is settled: a language's name once its builds, installs and
        # checks are done; GENERATOR once the load generator is found
        self._settled: set[str] = set()
        self._servers = servers
        self._changed = threading.Condition()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        board = board or Board(sys.stderr)
        if overlap:
            self._thread = threading.Thread(target=self._build_in_background, args=(board,),
                                            daemon=True, name="builds")
            self._thread.start()
        else:
            self._build_all(board)

    def _build_in_background(self, board: Board) -> None:
        try:
            self._build_all(board)
        except BaseException as exc:  # raised in the runs' thread (wait, finish)
            with self._changed:
                self._error = exc
                self._changed.notify_all()

    def _build_all(self, board: Board) -> None:
        """Every language's set-up and build, and the load generator when a server workload
        is planned, overlapped (build_lanes): a set-up downloads while
        others compile, at most one compile per core. Each language is
        settled as its build ends."""
        jobs: list[Job] = []
        builds: dict[str, LanguageBuild] = {}
        for lang in self._languages:
            tool = detect_toolchain(lang)
            if not tool.present:
                self._settle(lang.name,
                             Readiness(Status.SKIPPED, f"toolchain missing: {tool.reason}"))
                continue
            if not self._build:
                self._settle(lang.name, Readiness(READY))
                continue
            job = builds[lang.name] = LanguageBuild(lang, self._log_dir / f"build-{lang.name}.log",
                                                    board.view(lang.name))
            seconds, known = expected_build_s(lang.name) if in_tree(lang) else (0.0, False)
            expect = (f"; last build {fmt_duration(seconds)}" if known else
                      f"; first build: about {fmt_duration(seconds)}" if in_tree(lang) else "")
            begin = _announced(board, self._say, f"building {lang.name} ({tool.version}{expect}) ...")
            steps = [Step("setup", begin(job.setup)), Step("compile", job.build)] if lang.setup \
                else [Step("compile", begin(job.build))]
            jobs.append(Job(lang.name, steps, seconds, lang.build_cores))
        if self._servers:
            def loadgen() -> bool:
                try:
                    self.loadgen = ensure_generator(board.view(GENERATOR))
                except Unavailable as exc:
                    self.generator = Readiness(Status.SKIPPED, f"no load generator: {exc}")
                return True
            board.tell(self._say, "checking the load generator ...")
            jobs.append(Job(GENERATOR, [Step("compile", loadgen)],
                            expected_build_s(GENERATOR)[0]))

        def done(name: str, ok: bool) -> None:
            if name == GENERATOR:
                self._settle(name, self.generator)
            else:
                self._settle(name, Readiness(READY) if ok else
                             Readiness(Status.BUILD_FAILED, builds[name].result.error))

        run_jobs(jobs, on_done=done)

    def _settle(self, name: str, ready: Readiness) -> None:
        """One language's (or the load generator's) preparation ends: its releases installed
        and each of its implementations checked, once built, and each one's
        runtime asked for its version; then its runs may be answered."""
        if name != GENERATOR:
            self.languages[name] = ready
            mine = [i for i in self._impls if i.language.name == name]
            for impl in mine:
                if impl.cache is None or not ready.ready:
                    continue
                if self._build:
                    log = self._log_dir / f"build-{re.sub(r'[^A-Za-z0-9._-]', '_', impl.id)}.log"
                    self.impls[impl.id] = install_release(impl, log, self._say)
                elif not built(impl):
                    self.impls[impl.id] = Readiness(
                        Status.SKIPPED, "this release is not built yet (a run without --no-build "
                                        "builds it)")
            # Each built implementation's own check (toolchains.available), here
            # and not at its first run: no command runs between measured runs.
            for impl in mine:
                if impl.id not in self.impls and ready.ready:
                    avail = available(impl)
                    self.checked[impl.id] = Readiness(READY) if avail.present else Readiness(
                        Status.SKIPPED, f"not available: {avail.reason}")
            detect_runtimes(mine)
        with self._changed:
            self._settled.add(name)
            self._changed.notify_all()

    def settled(self, impl: Impl, server: bool) -> bool:
        """Whether this implementation's runs can be answered yet."""
        if self._error is not None:
            raise self._error
        return impl.language.name in self._settled and (
            not server or not self._servers or GENERATOR in self._settled)

    def wait(self, timeout_s: float = 0.5) -> None:
        """Until another language is settled, or timeout_s (short, so that a
        signal's handler runs at once in the thread that waits)."""
        with self._changed:
            if self._error is None:
                self._changed.wait(timeout_s)
        if self._error is not None:
            raise self._error

    def finish(self) -> None:
        """Wait for every build (an overlapped one may still run when the
        last run it was needed for has been recorded)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(0.5)
        if self._error is not None:
            raise self._error

    def hints(self) -> list[str]:
        """Why nothing could run, one line per cause, with what would set
        it up: each language skipped for its toolchain, each
        implementation's failed check, the load generator."""
        lines = []
        by_name = {lang.name: lang for lang in self._languages}
        for name, ready in self.languages.items():
            if ready.status == Status.SKIPPED:
                lines.append(f"{name}: {ready.reason}; {setup_hint(by_name[name], self.sources.get(name))}")
        for impl_id, ready in (self.impls | self.checked).items():
            if ready.status == Status.SKIPPED:
                lines.append(f"{impl_id}: {ready.reason}")
        if self.generator.status == Status.SKIPPED:
            lines.append(f"http: {self.generator.reason} (`run` builds the load generator with go "
                         f"when a run "
                         f"includes http, unless {SKIP_VARIABLE}=1)")
        return lines

    def readiness(self, impl: Impl, workload: str, server: bool) -> Readiness | None:
        """Whether a run can start: ready, or the status its row gets; None
        while its language (or the load generator) is still being built."""
        if not self.settled(impl, server):
            return None
        ready = self.languages[impl.language.name]
        if ready.ready:
            ready = self.impls.get(impl.id) or self.checked[impl.id]
        if ready.ready and (left_out := release_lacks(impl, workload)):
            return Readiness(Status.SKIPPED, left_out)
        return self.generator if ready.ready and server else ready
