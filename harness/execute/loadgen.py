"""The http workload's load generator, k6: where it lives, how it is
installed, and the environment it runs in.

k6 is built from the Go module proxy (one of the registries this project
may use) with the Go toolchain the go implementation needs anyway, pinned
to K6_VERSION, into .tools/bin/ of the repository. The install says what it
fetches before it starts, and shows go's progress as one status line on a
terminal (the whole output is kept in .tools/k6-build.log); BENCH_SKIP_K6=1
skips it (http rows are then `skipped` with that reason). It is built only
when a run includes the http workload (builder.Preparation).

Its build's seconds and count of progress lines are recorded with the
languages' (build_records): the next run's estimate and status line read them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .. import ROOT
from .build_records import TOOLS, record_build, recorded_builds
from .progress import BoardView, BuildStatus, StatusLine

K6_MODULE = "go.k6.io/k6"
K6_VERSION = "v1.8.1"
K6 = TOOLS / "bin" / "k6"
SCRIPT = Path(__file__).resolve().parent / "k6" / "load.js"
SKIP_VARIABLE = "BENCH_SKIP_K6"
BUILD_LOG = TOOLS / "k6-build.log"


class Unavailable(Exception):
    """k6 is not there and cannot be installed: the reason, in one line."""


def _installed_version() -> str | None:
    if not K6.exists():
        return None
    try:
        out = subprocess.run([str(K6), "version"], capture_output=True, text=True, timeout=30,
                             env=k6_env(str(TOOLS))).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.split()[1] if out.startswith("k6 ") and len(out.split()) > 1 else None


def k6_installed() -> bool:
    return _installed_version() == K6_VERSION


def ensure_k6(line: StatusLine | BoardView | None = None) -> Path:
    """The k6 binary, installed first when missing or not K6_VERSION. Its
    announcement and go's progress go to line (the terminal's own by default)."""
    from ..processes.children import run_contained
    if k6_installed():
        return K6
    if os.environ.get(SKIP_VARIABLE) == "1":
        raise Unavailable(f"k6 is not installed and {SKIP_VARIABLE}=1 skips its install")
    go = shutil.which("go")
    if go is None:
        raise Unavailable("k6 is built with Go, and there is no go on PATH")
    line = line or StatusLine(sys.stderr)
    line.say(f"installing k6 {K6_VERSION}, the http workload's load generator, into "
             f"{TOOLS.relative_to(ROOT)}/bin: go install {K6_MODULE}@{K6_VERSION} from the Go "
             f"module proxy (about 370 MB of module downloads into Go's cache, a 70 MB binary, "
             f"2-3 minutes on 2 cores; {SKIP_VARIABLE}=1 skips it; its output goes to "
             f"{BUILD_LOG.relative_to(ROOT)})")
    # go's "go: downloading ..." lines and, with -v, each package as it is
    # compiled: one status line on a terminal, all of it in the log.
    # GOGC=400: the compiler's own collector runs a quarter as often, which
    # takes a sixth of k6's compile away (measured on 2 cores: 150 s of
    # user CPU to 120, 90 s to 75 wall) for 1.3 GB of memory at most
    # instead of 0.85; the binary is the same, byte for byte.
    env = dict(os.environ, GOBIN=str(K6.parent), CGO_ENABLED="0",
               GOGC=os.environ.get("GOGC", "400"))
    argv = [go, "install", "-v", "-trimpath", f"{K6_MODULE}@{K6_VERSION}"]
    status = BuildStatus("k6", recorded_builds().get("k6", {}).get("steps"))

    def show(text: str) -> None:
        if (progress := status.feed(text)) is not None:
            line.update(progress)

    started = time.monotonic()
    line.update("building k6")
    TOOLS.mkdir(exist_ok=True)
    try:
        done = run_contained(argv, ROOT, env=env, on_stderr_line=show, timeout_s=3600)
    except OSError as exc:
        raise Unavailable(f"installing k6 failed: {exc}") from None
    finally:
        line.clear()
    try:
        BUILD_LOG.write_text(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}\n"
                             f"[exit {done.returncode} after {time.monotonic() - started:.1f} s]\n")
    except OSError:
        pass
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.strip().splitlines() if not ln.startswith("go: downloading")]
        raise Unavailable(f"installing k6 failed (go install exited {done.returncode}: "
                          f"{tail[-1] if tail else 'no message'}; log: {BUILD_LOG.relative_to(ROOT)})")
    record_build("k6", time.monotonic() - started, status.steps)
    return K6


def k6_env(home: str) -> dict[str, str]:
    """What k6 sees: a path, a throw-away home, and no usage report (it
    would call out to Grafana's servers). Nothing else of the harness's
    environment reaches it."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
            "K6_NO_USAGE_REPORT": "true", "K6_NO_COLOR": "true"}
