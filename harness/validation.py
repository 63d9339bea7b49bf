"""Check a program's output against the protocol before any number is kept."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .workloads import WORKLOADS, Request


@dataclass
class Verdict:
    ok: bool
    error: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def _int_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def validate(stdout: str, req: Request) -> Verdict:
    """The protocol's output checks common to every workload, then the
    workload's own (its declaration's `check`)."""
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

    iterations = req.iterations
    if data.get("workload") != req.workload:
        return bad(f"workload is {data.get('workload')!r}, expected {req.workload!r}")
    if data.get("n") != req.n:
        return bad(f"n is {data.get('n')!r}, expected {req.n}")
    if data.get("buffer") != req.buffer:
        return bad(f"buffer is {data.get('buffer')!r}, expected {req.buffer!r}")
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
    workload = WORKLOADS[req.workload]
    expected = workload.expected(req.n)
    for i, r in enumerate(results, 1):
        if r != expected:
            return bad(f"iteration {i} result {r} != expected {expected}")
    capacity = data.get("capacity")
    if capacity is not None and (not isinstance(capacity, int) or isinstance(capacity, bool)
                                 or capacity < 1):
        return bad("capacity must be a positive integer when present")
    if workload.check is not None and (error := workload.check(data, req)) is not None:
        return bad(error)
    return Verdict(True, "", data)
