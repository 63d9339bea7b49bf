"""`harness test`: each language's own tests (its impls.toml `test`), after
its build, and an exit status that never calls an untested run a success.

A language whose toolchain is missing is skipped with the reason. On a
developer's machine that is allowed; under CI (`CI=true`, as .ci/run sets)
it is a failure, since `make test` installs every language's toolchain
(README, "Two commands"), and a language skipped there is a feature left
untested. The harness's pytest suite applies the same rule to the tools its
tests need (harness/tests/conftest.py, `tool_missing`).

On a machine of several cores the languages go side by side as a run's
builds do (build_lanes: one set-up at a time, at most one compile or test
run a core, one that keeps every core busy never beside another such), each
language's test output shown in one block when its tests end.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..core.envinfo import usable_cores
from ..core.registry import Language
from ..processes.children import run_contained
from ..core.schema import Status
from .build_lanes import Job, Step, run_jobs
from .builder import LanguageBuild, expected_build_s, prepare
from .progress import Board
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


def _say(text: str) -> None:
    print(text, flush=True)


def _job(lang: Language, outcome: Outcome, board: Board) -> Job:
    """lang's set-up, build and tests as build_lanes steps, beside other
    languages': a set-up at a time, at most one compile (or test run) a
    core. The tests' output is shown in one block when they end."""
    build = LanguageBuild(lang, None, board.view(lang.name))

    def begin(step: Callable[[], bool]) -> Callable[[], bool]:
        def run() -> bool:
            board.tell(_say, f"{lang.name}: building ...")
            return step()
        return run

    def built(step: Callable[[], bool]) -> Callable[[], bool]:
        def run() -> bool:
            if step():
                return True
            board.tell(_say, f"{lang.name}: {Status.BUILD_FAILED.upper()}, {build.result.error}")
            outcome.failed.append(lang.name)
            return False
        return run

    def test() -> bool:
        argv = lang.expand(lang.test)
        proc = run_contained(argv, lang.dir, capture=True)
        ok = proc.returncode == 0
        block = [f"{lang.name}: $ {' '.join(argv)}", proc.stdout.rstrip("\n"),
                 proc.stderr.rstrip("\n"),
                 f"{lang.name}: {'PASSED' if ok else f'FAILED (exit {proc.returncode})'}"]
        board.tell(_say, "\n".join(part for part in block if part))
        (outcome.passed if ok else outcome.failed).append(lang.name)
        return ok

    steps = [Step("setup", begin(built(build.setup))), Step("compile", built(build.build))] \
        if lang.setup else [Step("compile", begin(built(build.build)))]
    return Job(lang.name, [*steps, Step("compile", test)], expected_build_s(lang.name)[0],
               lang.build_cores)


def run_side_by_side(langs: list[Language], outcome: Outcome) -> None:
    """The languages' tests overlapped (build_lanes), as a run's builds are."""
    board = Board(sys.stderr)
    jobs = []
    for lang in langs:
        tool = detect_toolchain(lang)
        if tool.present:
            jobs.append(_job(lang, outcome, board))
        else:
            _say(f"{lang.name}: {Status.SKIPPED.upper()}, toolchain missing: {tool.reason}")
            outcome.skipped[lang.name] = f"toolchain missing: {tool.reason}"
    run_jobs(jobs)


def run_language_tests(langs: Iterable[Language], strict: bool) -> int:
    """Every language's tests; the exit status: 1 when one failed (or, when
    strict, was skipped), 3 when none was tested, else 0. Several languages
    on several cores are tested side by side; one, or one core, as it goes."""
    outcome = Outcome()
    langs = list(langs)
    if len(langs) > 1 and usable_cores() > 1:
        run_side_by_side(langs, outcome)
    else:
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
