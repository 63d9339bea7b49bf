"""Bencher Metric Format (BMF) JSON, which `bencher run --adapter json`
reads: {benchmark: {measure: {"value", "lower_value", "upper_value"}}}, the
bounds optional. Format and JSON schema:
https://bencher.dev/docs/reference/bencher-metric-format/"""

from __future__ import annotations

from typing import Sequence

from ...analyse.analysis import Group
from ...core.formatting import fmt_sig
from ...core.metrics import LATENCIES, THROUGHPUT, WARM
from .base import Figure, measure

# Bencher's own measures, which every project has with its units: `latency`
# in nanoseconds, `throughput` in operations a second. A configuration's
# first figure of each list is written there (a warm iteration, else a
# server's median response; a server's requests a second); every other
# figure is a measure named by its runs.csv column, whose last word is its
# unit (`first-iter-s`, `peak-rss-bytes`), since Bencher gives a measure it
# does not know the units "Measure (units)". docs/usage.md has the table.
BUILT_IN = {"latency": ((WARM, LATENCIES[0]), 1e9),
            "throughput": ((THROUGHPUT,), 1.0)}
# A benchmark name ending so is stored under the name without it, and raises
# no alert (Bencher's "-bencher-ignore" suffix): how a partial run is marked.
IGNORE = "-bencher-ignore"
# An unclaimed Bencher project creates at most this many benchmarks a day
# (u8::MAX, Bencher's rate limit); a claimed one 65,535.
UNCLAIMED_DAILY = 255


def measures(g: Group) -> dict[str, tuple[str, float]]:
    """Each figure of the group as (its Bencher measure, the factor to its units)."""
    out = {name: (measure(name), 1.0) for name in g.metrics}
    for built_in, (candidates, scale) in BUILT_IN.items():
        if first := next((m for m in candidates if m in g.metrics), None):
            out[first] = (built_in, scale)
    return out


class Bencher:
    """A benchmark per configuration (its label), a measure per figure:
    the median of the ok runs, bounded by its interval where it has one.
    The interval's confidence has no place in BMF."""

    takes = "no configuration with an ok run has a figure to export"

    def document(self, figures: Sequence[Figure],
                 partial: bool) -> dict[str, dict[str, dict[str, float]]]:
        doc: dict[str, dict[str, dict[str, float]]] = {}
        names: dict[str, dict[str, tuple[str, float]]] = {}
        for f in figures:
            label = f.group.label
            named = names.setdefault(label, measures(f.group))
            slug, scale = named[f.metric.name]
            doc.setdefault(label + (IGNORE if partial else ""), {})[slug] = _metric(f, scale)
        return doc

    def notes(self, document: dict[str, dict[str, dict[str, float]]]) -> list[str]:
        if len(document) <= UNCLAIMED_DAILY:
            return []
        return [f"{len(document)} benchmarks: an unclaimed Bencher project creates at most "
                f"{UNCLAIMED_DAILY} a day, so claim it before the first upload "
                f"(https://bencher.dev/docs/how-to/claim/)"]


def _metric(f: Figure, scale: float) -> dict[str, float]:
    s = f.summary

    def scaled(v: float) -> float:  # to 15 digits: no float noise of the scaling (3e-3 s = 3e6 ns)
        return v if scale == 1 else float(fmt_sig(v * scale, 15))
    if s.interval is None:  # one ok run: a value without bounds, as BMF allows
        return {"value": scaled(s.median)}
    return {"value": scaled(s.median), "lower_value": scaled(s.interval.low),
            "upper_value": scaled(s.interval.high)}
