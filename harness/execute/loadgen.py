"""The http workload's load generator: vegeta (github.com/tsenart/vegeta/v12,
MIT), driven by our own small Go program (harness/execute/vegeta/main.go,
the module pinned in its go.mod and go.sum): where it lives, how it is
installed, and the environment it runs in. The rest of the harness speaks
of "the load generator"; only this module and the user docs name the tool.

It is built from the Go module proxy (one of the registries this project
may use) with the Go toolchain the go implementation needs anyway, into
.tools/bin/loadgen of the repository. The install says what it fetches
before it starts, and shows go's progress as one status line on a terminal
(the whole output is kept in .tools/loadgen-build.log); BENCH_SKIP_LOADGEN=1
skips it (http rows are then `skipped` with that reason). It is built only
when a run includes the http workload (builder.Preparation), and again
whenever its source changes (a stamp of the source beside the binary).

Its build's seconds and count of progress lines are recorded with the
languages' (build_records): the next run's estimate and status line read them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

from .. import relative
from ..core.formatting import arg_number, fmt_fixed
from .build_records import TOOLS, build_lock, record_build, recorded_builds
from .progress import BoardView, BuildStatus, StatusLine

NAME = "loadgen"  # its build record's and its preparation job's name
MODULE = "github.com/tsenart/vegeta/v12"
VERSION = "v12.13.0"  # go.mod's, checked by a test
SOURCE = Path(__file__).resolve().parent / "vegeta"
BINARY = TOOLS / "bin" / "loadgen"
STAMP = TOOLS / "loadgen.stamp"
SKIP_VARIABLE = "BENCH_SKIP_LOADGEN"
# The switch's name when k6 was the generator: refused, naming the new one.
RETIRED_SKIP_VARIABLE = "BENCH_SKIP_K6"
BUILD_LOG = TOOLS / "loadgen-build.log"


class Unavailable(Exception):
    """The generator is not there and cannot be installed: the reason, in one line."""


def retired_switch() -> str | None:
    """The one line refusing the generator's old skip switch, when it is set."""
    if RETIRED_SKIP_VARIABLE in os.environ:
        return (f"{RETIRED_SKIP_VARIABLE} is no longer read (the load generator is now vegeta): "
                f"use {SKIP_VARIABLE}=1")
    return None


def _source_stamp() -> str:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update(name.encode() + b"\0" + (SOURCE / name).read_bytes())
    return digest.hexdigest()


def generator_installed() -> bool:
    try:
        return BINARY.exists() and STAMP.read_text().strip() == _source_stamp()
    except OSError:
        return False


def ensure_generator(line: StatusLine | BoardView | None = None) -> Path:
    """The generator's binary, built first when missing or its source changed
    (one build at a time: another run building it is waited for).
    Its announcement and go's progress go to line (the terminal's own by default)."""
    if generator_installed():
        return BINARY
    shown = line or StatusLine(sys.stderr)
    with build_lock(BINARY, shown.say, "the load generator"):
        if generator_installed():  # built by the run waited for
            return BINARY
        return _build(shown)


def _build(line: StatusLine | BoardView) -> Path:
    from ..processes.children import run_contained
    if os.environ.get(SKIP_VARIABLE) == "1":
        raise Unavailable(f"the load generator is not installed and {SKIP_VARIABLE}=1 skips "
                          f"its install")
    go = shutil.which("go")
    if go is None:
        raise Unavailable("the load generator (vegeta) is built with Go, and there is no go "
                          "on PATH")
    line.say(f"installing the http workload's load generator into {relative(TOOLS)}/bin: "
             f"vegeta {VERSION} ({MODULE}, MIT) and our driver "
             f"{relative(SOURCE)}, go build from the Go module proxy (12 MB of module "
             f"downloads, 63 MB in Go's module cache, a 9 MB binary, 45 s of CPU; "
             f"{SKIP_VARIABLE}=1 skips it; its output goes to {relative(BUILD_LOG)})")
    # -mod=readonly: the modules go.sum pins, or the build fails; -v names
    # each package as it is compiled: one status line on a terminal.
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=readonly -buildvcs=false")
    argv = [go, "build", "-v", "-trimpath", "-o", str(BINARY), "."]
    status = BuildStatus(NAME, recorded_builds().get(NAME, {}).get("steps"))

    def show(text: str) -> None:
        if (progress := status.feed(text)) is not None:
            line.update(progress)

    started = time.monotonic()
    line.update("building the load generator")
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = run_contained(argv, SOURCE, env=env, on_stderr_line=show, timeout_s=3600)
    except OSError as exc:
        raise Unavailable(f"installing the load generator failed: {exc}") from None
    finally:
        line.clear()
    try:
        took = time.monotonic() - started
        BUILD_LOG.write_text(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}\n"
                             f"[exit {done.returncode} after {fmt_fixed(took, 1)} s]\n")
    except OSError:
        pass
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.strip().splitlines()
                if not ln.startswith("go: downloading")]
        raise Unavailable(f"installing the load generator failed (go build exited "
                          f"{done.returncode}: {tail[-1] if tail else 'no message'}; log: "
                          f"{relative(BUILD_LOG)})")
    STAMP.write_text(_source_stamp() + "\n")
    record_build(NAME, time.monotonic() - started, status.steps)
    return BINARY


def generator_env(home: str) -> dict[str, str]:
    """What the generator sees: a path and a throw-away home. Nothing else of
    the harness's environment reaches it."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}


def generator_argv(binary: Path, base_url: str, summary: Path, rate: int | None,
                   step_s: int | None, grace_s: int, workers: int, requests: int,
                   max_s: float, warmup_s: int = 0) -> list[str]:
    """One run of the generator: the open loop's step when rate is given
    (at most `workers` requests in flight), after warmup_s uncounted seconds
    at its rate, else the closed loop's `workers` users sending `requests`
    in all within max_s."""
    load = (["-rate", str(rate), "-step-s", str(step_s), "-grace-s", str(grace_s),
             "-warmup-s", str(warmup_s)]
            if rate is not None else ["-requests", str(requests), "-max-s", arg_number(max_s)])
    return [str(binary), "-base", base_url, "-workers", str(workers), *load, "-out", str(summary)]
