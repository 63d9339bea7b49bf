"""`harness test`: each language's own tests (its impls.toml `test`), after
its build, and an exit status that never calls an untested run a success.

A language whose toolchain is missing is skipped with the reason. On a
developer's machine that is allowed; under CI (`CI=true`, as .ci/run sets)
it is a failure, since `make test` installs every language's toolchain
(README, "Two commands"), and a language skipped there is a feature left
untested. The harness's pytest suite applies the same rule to the tools its
tests need (harness/tests/conftest.py, `tool_missing`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Iterable

from ..core.registry import Language
from ..processes.children import run_contained
from ..core.schema import Status
from .builder import prepare
from .toolchains import detect_toolchain

# The exit status when no language was tested (each was skipped): as `run`'s
# when nothing was measured, never a success for a script.
NOTHING_TESTED = 3


def ci() -> bool:
    """Whether this is CI, where a tool `make test` installs must be there."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


@dataclass
class Outcome:
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # language: why

    def exit_status(self, strict: bool) -> int:
        if self.failed or (strict and self.skipped):
            return 1
        return 0 if self.passed else NOTHING_TESTED


def run_tests_of(lang: Language, outcome: Outcome) -> None:
    """Build lang, then run its tests, their output the terminal's."""
    if detect_toolchain(lang).present:
        print(f"{lang.name}: building ...", flush=True)
    ready = prepare(lang, None)
    if not ready.ready:
        print(f"{lang.name}: {ready.status.upper()}, {ready.reason}", flush=True)
        if ready.status == Status.SKIPPED:
            outcome.skipped[lang.name] = ready.reason
        else:
            outcome.failed.append(lang.name)
        return
    print(f"{lang.name}: $ {' '.join(lang.expand(lang.test))}", flush=True)
    proc = run_contained(lang.expand(lang.test), lang.dir, capture=False)
    ok = proc.returncode == 0
    print(f"{lang.name}: {'PASSED' if ok else f'FAILED (exit {proc.returncode})'}", flush=True)
    (outcome.passed if ok else outcome.failed).append(lang.name)


def run_language_tests(langs: Iterable[Language], strict: bool) -> int:
    """Every language's tests; the exit status: 1 when one failed (or, when
    strict, was skipped), 3 when none was tested, else 0."""
    outcome = Outcome()
    for lang in langs:
        run_tests_of(lang, outcome)
    print(f"languages: {len(outcome.passed)} passed, {len(outcome.failed)} failed, "
          f"{len(outcome.skipped)} skipped")
    status = outcome.exit_status(strict)
    if strict and outcome.skipped:
        n = len(outcome.skipped)
        print(f"harness: CI: {n} language{'s' if n != 1 else ''} untested, a failure here: "
              f"make test installs every language's toolchain", file=sys.stderr)
    elif status == NOTHING_TESTED:
        print(f"harness: nothing was tested: every language was skipped (exit status "
              f"{NOTHING_TESTED})", file=sys.stderr)
    if status == NOTHING_TESTED or strict:
        for name, why in outcome.skipped.items():
            print(f"  {name}: {why}", file=sys.stderr)
    return status
