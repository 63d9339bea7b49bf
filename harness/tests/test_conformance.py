"""docs/protocol.md's invocation rules, checked once, by the harness, against
every implementation in the registry whose toolchain is present: one table
of bad argument lists (exit 2, exactly one line on stderr, nothing on
stdout), --help (exit 0, usage on stdout), and one good run of each workload
the implementation declares, validated by validation.py. Each language keeps
its own tests for what is particular to it."""

from __future__ import annotations

import subprocess
import pytest

from harness.builder import prepare
from harness.registry import Impl, Language, load_registry, program_env
from harness.validation import validate
from harness.workloads import WORKLOADS, Request

IMPLS = load_registry()  # the repository's own, not the fakes
TIMEOUT_S = 120


def good_args(workload: str) -> list[str]:
    """A complete, valid request for the workload, at a tiny size."""
    args = [workload, "--n", "10", "--iterations", "1"]
    if WORKLOADS[workload].uses_buffer:
        args += ["--buffer", "1"]
    if WORKLOADS[workload].uses_duration:
        args += ["--duration-ms", "10"]
    return args


def _with(args: list[str], option: str, value: str | None) -> list[str]:
    """args with option's value replaced, or the option removed (None)."""
    i = args.index(option)
    return args[:i] + args[i + 2:] if value is None else args[:i + 1] + [value] + args[i + 2:]


def bad_cases(impl: Impl) -> dict[str, list[str]]:
    """The shared table of bad input, for one implementation's workloads
    (serve's among them)."""
    cases: dict[str, list[str]] = {"no arguments": []}
    programs = [w for w in impl.workloads if WORKLOADS[w].kind == "program"]
    if programs:  # (a server-only implementation has serve's table alone)
        w = programs[0]
        base = good_args(w)
        cases.update({
            "a workload alone": [w],
            "no --iterations": _with(base, "--iterations", None),
            "no --n": _with(base, "--n", None),
            "--n 0": _with(base, "--n", "0"),
            "--n -3": _with(base, "--n", "-3"),
            "--n abc": _with(base, "--n", "abc"),
            "--n beyond 64 bits": _with(base, "--n", "99999999999999999999999"),
            "--n without its value": [w, "--n"],
            "--iterations 0": _with(base, "--iterations", "0"),
            "an unknown option": base + ["--bogus", "1"],
            "an unknown workload": ["nope"] + base[1:],
            "--warmup-ms -1": base + ["--warmup-ms", "-1"],
            "--warmup-ms x": base + ["--warmup-ms", "x"],
            "--warmup-ms without its value": base + ["--warmup-ms"],
        })
    if "bounded" in impl.workloads:
        bounded = good_args("bounded")
        cases["bounded without --buffer"] = _with(bounded, "--buffer", None)
        cases["--buffer -1"] = _with(bounded, "--buffer", "-1")
    if "sleep" in impl.workloads:
        sleep = good_args("sleep")
        cases["sleep without --duration-ms"] = _with(sleep, "--duration-ms", None)
        cases["--duration-ms 0"] = _with(sleep, "--duration-ms", "0")
    for other, declared in WORKLOADS.items():
        # a program may serve without declaring it yet: only program workloads here
        if programs and other not in impl.workloads and declared.kind == "program":
            cases[f"{other}, which this implementation does not declare"] = good_args(other)
    if "http" in impl.workloads:
        serve = ["serve", "--port", "0", "--delay-ms", "10"]
        cases.update({
            "serve alone": ["serve"],
            "serve without --delay-ms": _with(serve, "--delay-ms", None),
            "serve without --port": _with(serve, "--port", None),
            "serve --port -1": _with(serve, "--port", "-1"),
            "serve --port 70000": _with(serve, "--port", "70000"),
            "serve --port abc": _with(serve, "--port", "abc"),
            "serve --delay-ms 0": _with(serve, "--delay-ms", "0"),
            "serve --threads 0": serve + ["--threads", "0"],
            "serve with an unknown option": serve + ["--bogus", "1"],
        })
    return cases


_built: dict[str, str] = {}


def ready(lang: Language) -> None:
    """Build the language once per session (a fresh clone has no binaries)."""
    if not lang.toolchain.present:
        pytest.skip(f"{lang.name}: toolchain missing: {lang.toolchain.reason}")
    if lang.name not in _built:
        r = prepare(lang, None)
        _built[lang.name] = "" if r.ready else r.reason
    if _built[lang.name]:
        pytest.fail(f"{lang.name}: build failed: {_built[lang.name]}")


def run(impl: Impl, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*impl.argv(), *args], cwd=impl.language.dir,
                          env=program_env(impl.env), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.parametrize("impl", IMPLS, ids=[i.id for i in IMPLS])
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


@pytest.mark.parametrize("impl", IMPLS, ids=[i.id for i in IMPLS])
def test_help_is_usage_on_stdout_exit_0(impl: Impl) -> None:
    ready(impl.language)
    for flag in ("--help", "-h"):
        proc = run(impl, [flag])
        assert proc.returncode == 0, f"{impl.id} {flag}: exit {proc.returncode}: {proc.stderr}"
        assert "usage" in proc.stdout.lower() and not proc.stderr.strip(), (flag, proc)


@pytest.mark.parametrize("impl", IMPLS, ids=[i.id for i in IMPLS])
def test_every_declared_workload_answers_validly(impl: Impl) -> None:
    ready(impl.language)
    avail = impl.available()
    if not avail.present:
        pytest.skip(f"{impl.id}: not available: {avail.reason}")
    for workload in impl.workloads:
        if WORKLOADS[workload].kind != "program":
            continue  # served and loaded by test_smoke
        # With a short warm-up wherever the harness would pass one.
        warmup = 20 if WORKLOADS[workload].default_warmup_ms is not None else 0
        req = Request(workload, 10, 0 if WORKLOADS[workload].uses_buffer else None, 2, 50,
                      impl.tasks_start, warmup_ms=warmup)
        args = WORKLOADS[workload].argv(req)
        proc = run(impl, args)
        assert proc.returncode == 0, f"{impl.id} {args}: exit {proc.returncode}: {proc.stderr}"
        verdict = validate(proc.stdout, req)
        assert verdict.ok, f"{impl.id} {args}: {verdict.error}"

