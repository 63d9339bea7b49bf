"""Set up and build each language's programs before they are measured."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from .registry import Language

BUILD_TIMEOUT_S = 1800


@dataclass
class BuildResult:
    ok: bool
    error: str = ""


def build_language(lang: Language, log_path: Path | None) -> BuildResult:
    """Run setup then build, appending their output to log_path."""
    steps = [("setup", lang.setup), ("build", lang.build)]
    for name, argv in steps:
        if not argv:
            continue
        cmd = lang.expand(argv)
        try:
            proc = subprocess.run(cmd, cwd=lang.dir, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return BuildResult(False, f"{lang.name} {name} failed: {exc}")
        if log_path is not None:
            with log_path.open("a") as log:
                log.write(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n[exit {proc.returncode}]\n")
        if proc.returncode != 0:
            tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or [""]
            where = f"; log: {log_path}" if log_path else ""
            return BuildResult(False, f"{lang.name} {name} exited {proc.returncode}: {tail[0]}{where}")
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
