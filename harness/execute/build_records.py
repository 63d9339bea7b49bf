"""The builds' record on this machine: .tools/build-times.json holds each
last successful build's seconds and count of progress lines, a language
folder's (builder) and the load generator's (loadgen). The next run's estimate and status
line read them. And the lock that makes one build at a time of a release
or a commit: two runs naming it build it once, the second using the first's
build."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import ROOT, UsageError

TOOLS = ROOT / ".tools"
BUILD_TIMES = TOOLS / "build-times.json"


def recorded_builds() -> dict[str, dict[str, Any]]:
    """.tools/build-times.json: {name: {"seconds": s, "steps": n}} of each
    last successful build on this machine ({} when none, or unreadable)."""
    try:
        data = json.loads(BUILD_TIMES.read_text())
    except (OSError, ValueError):
        return {}
    if not (isinstance(data, dict) and all(
            isinstance(v, dict) and type(v.get("seconds")) in (int, float)
            and type(v.get("steps", 0)) is int for v in data.values())):
        raise UsageError(f"{BUILD_TIMES}: not a record of build times ({{NAME: {{\"seconds\": S, "
                         f"\"steps\": N}}}}): remove it, and the next builds record it again")
    return data


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


@contextlib.contextmanager
def build_lock(folder: Path, say: Callable[[str], None], what: str) -> Iterator[None]:
    """Hold the lock of a build folder (.NAME.lock beside it) for the block:
    another run building the same release or commit waits, saying so, and
    then finds the build done. The kernel releases it when the process
    ends, however it ends: a killed run never leaves it held."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / f".{folder.name}.lock").open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"{what}: another run is building it; waiting for that build ...")
            fcntl.flock(f, fcntl.LOCK_EX)
        yield
