"""What is installed here, found by running commands: each language's
toolchain (its `detect`), each implementation's runtime and version (its
`version`), and whether a built implementation can run (its `check`).

The registry's declarations start no process; these functions do, and the
wiring calls them before the first measured run (session.run_suite), so
that no detect or version command runs between measured runs. Each answer
is kept for the life of the process: a Language's toolchain here, an Impl's
runtime in its `runtime` field, which the rows read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..core.registry import Impl, Language
from ..processes.children import run_contained

DETECT_TIMEOUT_S = 60


@dataclass
class Toolchain:
    present: bool
    version: str = ""  # the version line, when present
    reason: str = ""  # why not, when missing


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


# Each Language detected in this process (kept, so that its id stays its own)
_FOUND: dict[int, tuple[Language, Toolchain]] = {}


def detect_toolchain(lang: Language) -> Toolchain:
    """The language's toolchain: its detect command, run once per process
    and Language."""
    known = _FOUND.get(id(lang))
    if known is None or known[0] is not lang:
        known = _FOUND[id(lang)] = (lang, detect(lang.expand(lang.detect), lang.dir))
    return known[1]


def detect_runtime(impl: Impl) -> str:
    """Name and version for the runtime column ("Go (go1.26.8)"): its
    version command run once, the answer kept in impl.runtime."""
    if impl.runtime:
        return impl.runtime
    tool = detect_toolchain(impl.language)
    version = tool.version if tool.present else "not available"
    if impl.release:  # never the stock toolchain's version for another release
        version = impl.release + ("; its version command failed" if impl.version else "")
    if tool.present and impl.version:
        try:
            proc = run_contained(impl.expand(impl.version), impl.language.dir,
                                 timeout_s=DETECT_TIMEOUT_S)
            if proc.returncode == 0 and proc.stdout.strip():
                version = proc.stdout.strip().splitlines()[0]
        except OSError:
            pass
    if impl.local.get("subject") is not None:  # a commit: its hash and subject
        version += f"; {impl.release} {impl.local['subject']}"
    impl.runtime = f"{impl.runtime_label} ({version})"
    return impl.runtime


def detect_runtimes(impls: Iterable[Impl]) -> dict[str, str]:
    """Each implementation's runtime found (detect_runtime), before the runs
    that record it (a skipped run's row too); returned for those whose
    toolchain is present (env.json's runtimes)."""
    found = {i.id: (detect_runtime(i), detect_toolchain(i.language).present) for i in impls}
    return {impl_id: runtime for impl_id, (runtime, present) in found.items() if present}


def available(impl: Impl) -> Toolchain:
    """After the build: can this implementation run here? (Its optional
    `check` command, e.g. a runtime binary that a package manager
    installs only on some platforms.)"""
    if not impl.check:
        return Toolchain(True)
    return detect(impl.expand(impl.check), impl.language.dir)
