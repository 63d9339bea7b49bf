"""Bencher Metric Format (BMF) JSON, which `bencher run --adapter json`
reads: {benchmark: {measure: {"value", "lower_value", "upper_value"}}}, the
bounds optional. Format and JSON schema:
https://bencher.dev/docs/reference/bencher-metric-format/"""

from __future__ import annotations

from typing import Sequence

from ...analyse.analysis import Group, Summary
from .base import figures


class Bencher:
    """A benchmark per configuration (its label), a measure per figure:
    the median of the ok runs, bounded by its interval where it has one."""

    def document(self, groups: Sequence[Group]) -> dict[str, dict[str, dict[str, float]]]:
        return {g.label: {slug: _metric(s) for slug, _, s in figures(g)}
                for g in groups if g.metrics}


def _metric(s: Summary) -> dict[str, float]:
    if s.interval is None:  # one ok run: a value without bounds, as BMF allows
        return {"value": s.median}
    return {"value": s.median, "lower_value": s.interval.low, "upper_value": s.interval.high}
