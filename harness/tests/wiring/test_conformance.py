"""docs/protocol.md's invocation rules, checked once, by the harness, against
every implementation in the registry whose toolchain is present: one table
of bad argument lists (exit 2, exactly one line on stderr, nothing on
stdout), read from docs/protocol-bad-input.json, --help (exit 0, usage on
stdout), and one good run of each workload the implementation declares,
validated by validation.py. Each language keeps its own tests for what is
particular to it."""

from __future__ import annotations

import json
import subprocess

import pytest

from harness import ROOT
from harness.execute.builder import prepare
from harness.execute.toolchains import available, detect_toolchain
from harness.core.registry import Impl, Language, load_registry, program_env
from harness.execute.validation import validate
from harness.core.workloads import WORKLOADS, Request

from ..conftest import builds, tool_missing

IMPLS = load_registry()  # the repository's own, not the fakes
# each built in its language's folder: one worker per language (conftest.builds)
EACH_IMPL = [pytest.param(i, id=i.id, marks=builds(i.language.name)) for i in IMPLS]
TIMEOUT_S = 120


# The one table of bad input, which the languages' own tests read too.
BAD_INPUT = json.loads((ROOT / "docs" / "protocol-bad-input.json").read_text())


def expand(args: list[str], workload: str) -> list[str]:
    """A case's args for one workload: "{w}" its name, "{required}" its
    other required options (spliced)."""
    out: list[str] = []
    for arg in args:
        if arg == "{required}":
            out += BAD_INPUT["required"][workload]
        else:
            out.append(workload if arg == "{w}" else arg)
    return out


def bad_cases(impl: Impl) -> dict[str, list[str]]:
    """The shared table of bad input, for one implementation's workloads
    (serve's among them)."""
    programs = [w for w in impl.workloads if WORKLOADS[w].kind == "program"]
    undeclared = [w for w, d in WORKLOADS.items() if d.kind == "program" and w not in impl.workloads]
    cases: dict[str, list[str]] = {}
    for case in BAD_INPUT["cases"]:
        when = case.get("when")
        if when is None:
            cases[case["name"]] = case["args"]
        elif when == "declared":
            if programs:  # (a server-only implementation has serve's table alone)
                cases[case["name"]] = expand(case["args"], programs[0])
        elif when == "undeclared":
            # a program may serve without declaring it yet: only program workloads here
            for w in undeclared if programs else []:
                cases[f"{case['name']}: {w}"] = expand(case["args"], w)
        elif when in impl.workloads:
            cases[case["name"]] = case["args"]
    return cases


def test_bad_input_table_covers_every_workload() -> None:
    """Every program workload has its required options in the table, and
    every server workload has cases of its own."""
    programs = {w for w, d in WORKLOADS.items() if d.kind == "program"}
    assert set(BAD_INPUT["required"]) == programs
    for w in programs:
        required = BAD_INPUT["required"][w]
        assert ("--buffer" in required) == WORKLOADS[w].uses_buffer, w
        assert ("--duration-ms" in required) == WORKLOADS[w].uses_duration, w
    whens = {case.get("when") for case in BAD_INPUT["cases"]}
    assert {w for w, d in WORKLOADS.items() if d.kind != "program"} <= whens
    assert whens - {None, "declared", "undeclared"} <= set(WORKLOADS)
    assert all(expand(c["args"], w) for c in BAD_INPUT["cases"] if c.get("when") == "declared"
               for w in programs)


_built: dict[str, str] = {}


def ready(lang: Language) -> None:
    """Build the language once per session (a fresh clone has no binaries)."""
    tool = detect_toolchain(lang)
    if not tool.present:
        tool_missing(f"{lang.name}'s toolchain", tool.reason)
    if lang.name not in _built:
        r = prepare(lang, None)
        _built[lang.name] = "" if r.ready else r.reason
    if _built[lang.name]:
        pytest.fail(f"{lang.name}: build failed: {_built[lang.name]}")


def run(impl: Impl, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*impl.argv(), *args], cwd=impl.language.dir,
                          env=program_env(impl.env), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.parametrize("impl", EACH_IMPL)
def test_bad_input_is_exit_2_with_one_line(impl: Impl) -> None:
    ready(impl.language)
    wrong = []
    for name, args in bad_cases(impl).items():
        proc = run(impl, args)
        lines = proc.stderr.strip().splitlines()
        if proc.returncode != 2 or len(lines) != 1 or proc.stdout.strip():
            wrong.append(f"{name} {args}: exit {proc.returncode}, {len(lines)} stderr lines "
                         f"{lines[:3]}, stdout {proc.stdout.strip()[:80]!r}")
    assert not wrong, f"{impl.id}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("impl", EACH_IMPL)
def test_help_is_usage_on_stdout_exit_0(impl: Impl) -> None:
    ready(impl.language)
    for flag in ("--help", "-h"):
        proc = run(impl, [flag])
        assert proc.returncode == 0, f"{impl.id} {flag}: exit {proc.returncode}: {proc.stderr}"
        assert "usage" in proc.stdout.lower() and not proc.stderr.strip(), (flag, proc)


@pytest.mark.parametrize("impl", EACH_IMPL)
def test_every_declared_workload_answers_validly(impl: Impl) -> None:
    ready(impl.language)
    avail = available(impl)
    if not avail.present:
        tool_missing(f"{impl.id}'s runtime", avail.reason)
    for workload in impl.workloads:
        if WORKLOADS[workload].kind != "program":
            continue  # served and loaded by test_smoke
        # With a short warm-up wherever the harness would pass one. Sleeps of
        # 500 ms: ten threads can take over 50 ms to start on a busy machine.
        warmup = 20 if WORKLOADS[workload].default_warmup_ms is not None else 0
        req = Request(workload, 10, 0 if WORKLOADS[workload].uses_buffer else None, 2, 500,
                      impl.tasks_start, warmup_ms=warmup)
        args = WORKLOADS[workload].argv(req)
        proc = run(impl, args)
        assert proc.returncode == 0, f"{impl.id} {args}: exit {proc.returncode}: {proc.stderr}"
        verdict = validate(proc.stdout, req)
        assert verdict.ok, f"{impl.id} {args}: {verdict.error}"

