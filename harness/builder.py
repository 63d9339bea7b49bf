"""Set up and build each language's programs before they are measured, and
say which planned runs can start."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .children import run_contained
from .loadgen import Unavailable, ensure_k6
from .registry import Impl, Language, languages

BUILD_TIMEOUT_S = 1800


@dataclass
class BuildResult:
    ok: bool
    error: str = ""


def _step(cmd: list[str], lang: Language) -> tuple[int, str, str]:
    """Run one set-up or build command: (exit status, stdout, stderr). A
    stderr line that starts with the language's name and a colon is said to
    the user as it comes ("erlang: installing Debian's erlang-base ..."):
    that is how a set-up announces what it fetches or installs before it does
    (docs/implementations.md); everything else goes to the log only. The
    command runs contained (children.run_contained): nothing it starts
    outlives it, nor the harness, however the harness ends."""
    announce = f"{lang.name}:"

    def say(line: str) -> None:
        if line.startswith(announce):
            print(line.rstrip(), file=sys.stderr, flush=True)

    done = run_contained(cmd, lang.dir, timeout_s=BUILD_TIMEOUT_S, on_stderr_line=say)
    err = done.stderr
    if done.timed_out:
        err += f"killed after {BUILD_TIMEOUT_S} s\n"
    elif done.launcher_failure:
        err += f"the launcher {done.launcher_failure}\n"
    return done.returncode, done.stdout, err


def build_language(lang: Language, log_path: Path | None) -> BuildResult:
    """Run setup then build, appending their output to log_path."""
    steps = [("setup", lang.setup), ("build", lang.build)]
    for name, argv in steps:
        if not argv:
            continue
        cmd = lang.expand(argv)
        try:
            code, stdout, stderr = _step(cmd, lang)
        except OSError as exc:
            return BuildResult(False, f"{lang.name} {name} failed: {exc}")
        if log_path is not None:
            with log_path.open("a") as log:
                log.write(f"$ {' '.join(cmd)}\n{stdout}{stderr}\n[exit {code}]\n")
        if code != 0:
            tail = (stderr.strip() or stdout.strip()).splitlines()[-1:] or [""]
            where = f"; log: {log_path}" if log_path else ""
            return BuildResult(False, f"{lang.name} {name} exited {code}: {tail[0]}{where}")
    return BuildResult(True)


@dataclass
class Readiness:
    """Whether a language's programs can run: status "ready", or the status
    its rows get ("skipped", "build-failed") and why."""
    status: str
    reason: str = ""

    @property
    def ready(self) -> bool:
        return self.status == "ready"


def prepare(lang: Language, log_path: Path | None, build: bool = True) -> Readiness:
    """A missing toolchain skips the language; otherwise it is built (unless
    build is False: the programs as already built)."""
    tool = lang.toolchain
    if not tool.present:
        return Readiness("skipped", f"toolchain missing: {tool.reason}")
    if not build:
        return Readiness("ready")
    result = build_language(lang, log_path)
    return Readiness("ready") if result.ok else Readiness("build-failed", result.error)


class Preparation:
    """What a plan's runs need before the first one starts: each language
    set up and built once (its log in the run directory), each
    implementation checked once, the load generator found once when a
    server workload is planned. Says, per run, whether it can start or the
    status its row gets instead."""

    def __init__(self, impls: list[Impl], log_dir: Path, build: bool, servers: bool,
                 say: Callable[[str], None]) -> None:
        self.languages: dict[str, Readiness] = {}
        for lang in languages(impls):
            if lang.toolchain.present and build:
                say(f"building {lang.name} ({lang.toolchain.version}) ...")
            self.languages[lang.name] = prepare(lang, log_dir / f"build-{lang.name}.log", build)
        self.impls: dict[str, Readiness] = {}
        self.k6: Path | None = None
        self.generator = Readiness("ready")
        if servers:
            say("checking the load generator (k6) ...")
            try:
                self.k6 = ensure_k6()
            except Unavailable as exc:
                self.generator = Readiness("skipped", f"no load generator: {exc}")

    def readiness(self, impl: Impl, server: bool) -> Readiness:
        ready = self.languages[impl.language.name]
        if ready.ready:
            if impl.id not in self.impls:
                avail = impl.available()
                self.impls[impl.id] = Readiness("ready") if avail.present else Readiness(
                    "skipped", f"not available: {avail.reason}")
            ready = self.impls[impl.id]
        return self.generator if ready.ready and server else ready
