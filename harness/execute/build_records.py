"""The builds' record on this machine: .tools/build-times.json holds each
last successful build's seconds and count of progress lines, a language
folder's (builder) and k6's (loadgen). The next run's estimate and status
line read them."""

from __future__ import annotations

import json
import os
from typing import Any

from .. import ROOT

TOOLS = ROOT / ".tools"
BUILD_TIMES = TOOLS / "build-times.json"


def recorded_builds() -> dict[str, dict[str, Any]]:
    """.tools/build-times.json: {name: {"seconds": s, "steps": n}} of each
    last successful build on this machine ({} when none, or unreadable)."""
    try:
        data = json.loads(BUILD_TIMES.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def record_build(name: str, seconds: float, steps: int) -> None:
    """Record a successful build (atomically: other runs may read it). The
    count of progress lines kept is the largest seen, a full build's: a
    build with nothing to do has almost none."""
    data = recorded_builds()
    before = data.get(name, {}).get("steps")
    data[name] = {"seconds": round(seconds, 1),
                  "steps": max(steps, before) if isinstance(before, int) else steps}
    try:
        BUILD_TIMES.parent.mkdir(exist_ok=True)
        tmp = BUILD_TIMES.with_name(f".{BUILD_TIMES.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        tmp.replace(BUILD_TIMES)
    except OSError:
        pass  # an estimate's convenience, never a reason to fail a build
