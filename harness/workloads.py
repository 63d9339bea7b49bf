"""The workloads of docs/protocol.md, declared as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Workload:
    name: str
    uses_buffer: bool
    default_iterations: int
    expected: Callable[[int], int]
    summary: str


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("sleep", False, 1, lambda n: n,
                 "N tasks each sleep D ms; result = tasks completed"),
        Workload("chain", False, 2, lambda n: n,
                 "N tasks chained by N+1 channels pass x+1 along; result = N"),
        Workload("chain-await", False, 2, lambda n: n,
                 "N tasks each await the previous one and add 1; result = N"),
        Workload("bounded", True, 10, lambda n: n * (n - 1) // 2,
                 "N producers send their index into one channel of capacity B; result = sum"),
    )
}
