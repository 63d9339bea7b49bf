"""A run's timeout from what its configuration is expected to cost on this
machine, so that no runtime loses its place in a ranking to a limit of
ours (docs/statistics.md, "Sequential runs"): python-asyncio's chain at 1M
took 53-88 s a run on the 2-core machines and was killed at the part's
90 s once; java-platform's chain at 20k took 19-24 s on the EPYC and was
killed at 30 s on slower days. Pure: reads rows, writes nothing.

The expected cost is the longest wall time of the configuration's own ok
runs (this run's and OUT's earlier ones); for a first run, its family's
largest smaller size's (ConfigKey.family), grown in proportion to the size
(chain at 20k to 1M: 50 times). The timeout is FACTOR times that, never
below the part's (or --timeout's) own, nor above CEILING_S. A run with
nothing known keeps the part's. Under --until-settled only (the default
suite's runs); a plain run keeps the --timeout it was given.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from ..core.schema import ConfigKey, Row, Status
from ..core.workloads import WORKLOADS
from .plan import Planned

# Wide: a run's wall time varies 10-40% between processes here, and a
# machine's state 40-70% between days (docs/studies/allocation.md).
FACTOR = 4.0
# The most a run may take, whatever it is expected to cost: a plain run's
# default --timeout, a ninth of the default suite's 45 minutes. Below it:
# python-asyncio's chain at 1M (at most 88 s a run measured, 3.4 times
# that); java-platform's chain-await at 1M, a million threads one after
# another, expected at 150-300 s from its 3-6 s at 20k, never measured here
# (it was killed at 90 s in every default run).
CEILING_S = 300.0
# The most a smaller size's time above start-up is grown by for least_expected_s:
# chain's 20k to 1M is 50 times, sleep's 100k to 1M 10; from N=1 to 10k, a
# millisecond of noise would grow to ten seconds.
GROWTH = 100


def walls(rows: Iterable[Row]) -> dict[ConfigKey, float]:
    """The longest wall time of each configuration's ok rows, a sleeping
    run's without its sleep (its next run's is its own: timed)."""
    out: dict[ConfigKey, float] = {}
    for r in rows:
        if r.status == Status.OK and r.wall_s is not None:
            key = ConfigKey.of(r)
            slept = (r.iterations or 1) * r.duration_ms / 1000 if _sleeps(r.workload) \
                and r.duration_ms is not None else 0.0
            out[key] = max(out.get(key, 0.0), r.wall_s - slept)
    return out


def _sleeps(workload: str) -> bool:
    declared = WORKLOADS.get(workload)
    return declared is not None and declared.uses_duration


def expected_s(key: ConfigKey, known: dict[ConfigKey, float]) -> float | None:
    """What a run of key is expected to take: its own longest ok run, else
    its family's largest smaller size's grown with the size; None: nothing
    known."""
    if key in known:
        return known[key]
    if (found := _below(key, known)) is None:
        return None
    below, wall = found
    return wall * key.size / below


def _below(key: ConfigKey, known: dict[ConfigKey, float]) -> tuple[int, float] | None:
    """The largest smaller size of key's family that is known, and its wall."""
    size = key.size
    smaller = [(k.size, wall) for k, wall in known.items()
               if size and k.family == key.family and k.size and k.size < size]
    return max(smaller) if smaller else None


def least_expected_s(p: Planned, known: dict[ConfigKey, float]) -> float | None:
    """What the planned run will take at least, for the budget's rule
    (sequential.Budgeted.too_dear): as expected_run_s, but only the part of
    its smaller size's time above the least any run of its implementation
    took (its start-up: sleep at N=1 awake, or that smaller size itself) is
    grown with the size. expected_s grows the start-up too, which is safe for
    a timeout and not for refusing a run: bounded at 10 producers, nearly all
    start-up, grown 1,000 times to 10k would refuse a run of two seconds.
    None past GROWTH: nothing known, or too far below to say."""
    if p.key in known:
        return expected_run_s(p, known)
    size = p.key.size
    if (found := _below(p.key, known)) is None:
        return None
    below, wall = found
    if size > GROWTH * below:
        return None
    start = min(w for k, w in known.items() if k.impl == p.key.impl)
    expected = start + (wall - start) * size / below
    if _sleeps(p.key.workload):
        expected += p.iterations * p.duration_ms / 1000
    return expected


def expected_run_s(p: Planned, known: dict[ConfigKey, float]) -> float | None:
    """What the planned run is expected to take (expected_s), its sleep
    included; None: nothing known."""
    expected = expected_s(p.key, known)
    if expected is not None and _sleeps(p.key.workload):
        expected += p.iterations * p.duration_ms / 1000
    return expected


def timed(p: Planned, known: dict[ConfigKey, float]) -> Planned:
    """p with its timeout from its expected cost (FACTOR, CEILING_S), under
    --until-settled (the suites' runs: a plain run keeps the --timeout it
    was given); a run with no limit, or nothing known, as it is."""
    expected = expected_run_s(p, known)
    if not p.until_settled or expected is None or p.timeout_s == float("inf"):
        return p
    limit = max(p.timeout_s, min(CEILING_S, FACTOR * expected))
    return dataclasses.replace(p, timeout_s=limit) if limit != p.timeout_s else p
