"""Check a program's output against the protocol before any number is kept."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from ..core.formatting import fmt_fixed
from ..core.workloads import WORKLOADS, Request

# docs/protocol.md, --warmup-ms: the warm-up stops after this many runs even
# if W ms have not passed.
WARMUP_RUNS_MAX = 10_000


@dataclass
class Answer:
    """The program's JSON line (docs/protocol.md), its keys the protocol
    declares as fields: None where absent, as the program wrote them
    otherwise (validate checks their types). Its `result` and `capacity`
    are recorded in runs.csv's columns of the same names."""
    workload: Any = None
    n: Any = None
    buffer: Any = None
    iter_ns: Any = None
    results: Any = None
    result: Any = None
    capacity: Any = None
    warmup_ns: Any = None
    warmup_results: Any = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Answer:
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})


@dataclass
class Verdict:
    ok: bool
    error: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def answer(self) -> Answer:
        return Answer.of(self.data)


def _int_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _warmup_error(data: dict[str, Any], warmup_ms: int, expected: int) -> str | None:
    """The untimed runs before the iterations: every answer right, and run
    until their times add up to W ms (or the run cap), not one run more (a
    key absent is an empty list, a null is not)."""
    times, answers = data.get("warmup_ns", []), data.get("warmup_results", [])
    if not _int_list(times) or not _int_list(answers) or len(times) != len(answers):
        return "warmup_ns and warmup_results must be integer lists of the same length"
    if warmup_ms == 0:
        return "warm-up runs reported, but none was asked for" if times else None
    if not times or len(times) > WARMUP_RUNS_MAX or any(t <= 0 for t in times):
        return f"--warmup-ms {warmup_ms} needs 1 to {WARMUP_RUNS_MAX} warm-up runs of positive time"
    for i, r in enumerate(answers, 1):
        if r != expected:
            return f"warm-up run {i} result {r} != expected {expected}"
    w, total = warmup_ms * 1_000_000, sum(times)
    if total < w and len(times) < WARMUP_RUNS_MAX:
        return (f"the warm-up stopped after {fmt_fixed(total / 1e6, 1)} ms, before --warmup-ms "
                f"{warmup_ms}")
    if total - times[-1] >= w:
        return f"the warm-up ran on after --warmup-ms {warmup_ms} had passed"
    return None


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
    answer = Answer.of(data)
    if answer.workload != req.workload:
        return bad(f"workload is {answer.workload!r}, expected {req.workload!r}")
    if answer.n != req.n:
        return bad(f"n is {answer.n!r}, expected {req.n}")
    if answer.buffer != req.buffer:
        return bad(f"buffer is {answer.buffer!r}, expected {req.buffer!r}")
    iter_ns, results = answer.iter_ns, answer.results
    if not _int_list(iter_ns) or len(iter_ns) != iterations:
        return bad(f"iter_ns must be a list of {iterations} integers")
    if any(t <= 0 for t in iter_ns):
        return bad("iter_ns has a non-positive timing")
    if not _int_list(results) or len(results) != iterations:
        return bad(f"results must be a list of {iterations} integers")
    result = answer.result
    if not isinstance(result, int) or isinstance(result, bool) or result != results[-1]:
        return bad("result must be an integer equal to the last entry of results")
    workload = WORKLOADS[req.workload]
    expected = workload.expected(req.n)
    for i, r in enumerate(results, 1):
        if r != expected:
            return bad(f"iteration {i} result {r} != expected {expected}")
    if (error := _warmup_error(data, req.warmup_ms, expected)) is not None:
        return bad(error)
    capacity = answer.capacity
    if capacity is not None and (not isinstance(capacity, int) or isinstance(capacity, bool)
                                 or capacity < 1):
        return bad("capacity must be a positive integer when present")
    if workload.check is not None and (error := workload.check(data, req)) is not None:
        return bad(error)
    return Verdict(True, "", data)
