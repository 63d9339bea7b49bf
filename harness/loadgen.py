"""The http workload's load generator, k6: where it lives, how it is
installed, and the environment it runs in.

k6 is built from the Go module proxy (one of the registries this project
may use) with the Go toolchain the go implementation needs anyway, pinned
to K6_VERSION, into .tools/bin/ of the repository. The install says what it
fetches before it starts; BENCH_SKIP_K6=1 skips it (http rows are then
`skipped` with that reason).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import ROOT

K6_MODULE = "go.k6.io/k6"
K6_VERSION = "v1.8.1"
TOOLS = ROOT / ".tools"
K6 = TOOLS / "bin" / "k6"
SCRIPT = Path(__file__).resolve().parent / "k6" / "load.js"
SKIP_VARIABLE = "BENCH_SKIP_K6"


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


def ensure_k6() -> Path:
    """The k6 binary, installed first when missing or not K6_VERSION."""
    if _installed_version() == K6_VERSION:
        return K6
    if os.environ.get(SKIP_VARIABLE) == "1":
        raise Unavailable(f"k6 is not installed and {SKIP_VARIABLE}=1 skips its install")
    go = shutil.which("go")
    if go is None:
        raise Unavailable("k6 is built with Go, and there is no go on PATH")
    print(f"installing k6 {K6_VERSION}, the http workload's load generator, into "
          f"{TOOLS.relative_to(ROOT)}/bin: go install {K6_MODULE}@{K6_VERSION} from the Go module "
          f"proxy (about 370 MB of module downloads into Go's cache, a 70 MB binary, 2-3 "
          f"minutes on 2 cores; {SKIP_VARIABLE}=1 skips it)", file=sys.stderr, flush=True)
    # -x would be too much; go's own "go: downloading ..." lines on stderr
    # are the progress, shown as they come.
    env = dict(os.environ, GOBIN=str(K6.parent), CGO_ENABLED="0")
    proc = subprocess.run([go, "install", "-trimpath", f"{K6_MODULE}@{K6_VERSION}"], env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise Unavailable(f"installing k6 failed (go install exited {proc.returncode}; its "
                          "messages are above)")
    return K6


def k6_env(home: str) -> dict[str, str]:
    """What k6 sees: a path, a throw-away home, and no usage report (it
    would call out to Grafana's servers). Nothing else of the harness's
    environment reaches it."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
            "K6_NO_USAGE_REPORT": "true", "K6_NO_COLOR": "true"}
