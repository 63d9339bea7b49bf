"""A plan cut into replicates, for a run spread over a cluster's nodes
(`run --on slurm`, slurm.py). Pure: starts nothing.

A replicate is one pass of the plan: every configuration once, in the
plan's interleaved order, which is what a repeat of a local run is
(plan.plan puts the repeats outermost). Replicate r is the planned runs of
repeat r, so it runs on one node as a complete block, and its rows keep
rep = r: two replicates never share a rep, whatever node ran them. A
node is never given a subset of the configurations: that would make every
comparison between two implementations one between two nodes too."""

from __future__ import annotations

import dataclasses
from typing import Collection, Iterable

from ..plan.plan import Planned
from ..core.schema import Row, RowKey, Status, row_key


def count(runs: list[Planned]) -> int:
    """How many replicates a plan holds: its highest repeat (a suite's part
    with fewer repeats is in the first ones only)."""
    return max((p.rep for p in runs), default=0)


def replicate(runs: list[Planned], r: int, languages: Collection[str] = (),
              impls: Collection[str] = ()) -> list[Planned]:
    """Replicate r of a plan, in plan order, without --until-ci's or
    --until-settled's extra passes: those choose runs from the rows of
    every node, which no node has while the others run. languages, impls:
    left out (their build failed in the cluster's build job: their rows
    are that failure, not a stale program's)."""
    return [dataclasses.replace(p, until_ci=None, until_settled=False, max_repeat=None)
            for p in runs if p.rep == r and p.impl.language.name not in languages
            and p.impl.id not in impls]


def missing(runs: list[Planned], rows: Iterable[Row]) -> list[Planned]:
    """The planned runs that no row records, whatever its status."""
    recorded = {row_key(r) for r in rows}
    return [p for p in runs if p.row_key not in recorded]


def complete(runs: list[Planned], rows: Iterable[Row]) -> bool:
    """Whether every planned run has an ok row (--resume leaves such a
    replicate alone, as it keeps a local run's ok rows)."""
    ok: set[RowKey] = {row_key(r) for r in rows if r.status == Status.OK}
    return all(p.row_key in ok for p in runs)
