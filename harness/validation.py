"""Check a program's output against the protocol before any number is kept."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .workloads import WORKLOADS

NS = 1_000_000_000


@dataclass
class Verdict:
    ok: bool
    error: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def _int_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def sleep_window_ns(duration_ms: int, spawn_ns: int) -> tuple[int, int]:
    """The tasks overlapped if the whole run took at least one sleep and at
    most one sleep plus the start loop plus max(2 s, D/2) of slack."""
    d = duration_ms * 1_000_000
    return d, d + spawn_ns + max(2 * NS, d // 2)


def validate(stdout: str, workload: str, n: int, buffer: int | None,
             iterations: int, duration_ms: int, tasks_start: str = "when-spawned") -> Verdict:
    """tasks_start says when an implementation's sleeping tasks start their
    clocks: "when-spawned" (threads, goroutines, tasks on a thread pool: a
    task can finish while later ones are still being started, so the start
    loop must take less than one sleep for all N to be alive at once) or
    "after-spawning" (an event loop: no timer can fire before the spawning
    code yields, so the tasks overlap whatever the start time)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if len(lines) != 1:
        return Verdict(False, f"expected exactly one JSON line on stdout, got {len(lines)}")
    try:
        data = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        return Verdict(False, f"stdout is not JSON: {exc.msg}")
    if not isinstance(data, dict):
        return Verdict(False, "stdout JSON is not an object")

    def bad(msg: str) -> Verdict:
        return Verdict(False, msg, data)

    if data.get("workload") != workload:
        return bad(f"workload is {data.get('workload')!r}, expected {workload!r}")
    if data.get("n") != n:
        return bad(f"n is {data.get('n')!r}, expected {n}")
    if data.get("buffer") != buffer:
        return bad(f"buffer is {data.get('buffer')!r}, expected {buffer!r}")
    iter_ns, results = data.get("iter_ns"), data.get("results")
    if not _int_list(iter_ns) or len(iter_ns) != iterations:
        return bad(f"iter_ns must be a list of {iterations} integers")
    if any(t <= 0 for t in iter_ns):
        return bad("iter_ns has a non-positive timing")
    if not _int_list(results) or len(results) != iterations:
        return bad(f"results must be a list of {iterations} integers")
    result = data.get("result")
    if not isinstance(result, int) or isinstance(result, bool) or result != results[-1]:
        return bad("result must be an integer equal to the last entry of results")
    expected = WORKLOADS[workload].expected(n)
    for i, r in enumerate(results, 1):
        if r != expected:
            return bad(f"iteration {i} result {r} != expected {expected}")
    if workload == "sleep":
        spawn = data.get("spawn_ns")
        if not isinstance(spawn, int) or spawn < 0:
            return bad("sleep output needs a non-negative integer spawn_ns")
        if tasks_start == "when-spawned" and spawn >= duration_ms * 1_000_000:
            return bad(f"the tasks did not all overlap: starting them took {spawn / NS:.3f} s, "
                       f"longer than the {duration_ms / 1000:g} s sleep (use a longer --duration-ms)")
        low, high = sleep_window_ns(duration_ms, spawn)
        for t in iter_ns:
            if not low <= t <= high:
                return bad(f"sleep took {t / NS:.3f} s, outside the overlap window "
                           f"[{low / NS:.3f}, {high / NS:.3f}] s")
    return Verdict(True, "", data)
