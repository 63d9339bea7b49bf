"""The JSON that benchmark-action/github-action-benchmark reads with tool
customSmallerIsBetter or customBiggerIsBetter: a list of {"name", "unit",
"value", "range"?, "extra"?}, value a number and the rest text (its
BenchmarkResult, src/extract.ts; README, "Examples" of custom benchmarks:
https://github.com/benchmark-action/github-action-benchmark#examples).
A file has one direction, so one export holds the figures of one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...analyse.analysis import Group, Summary
from ...core.formatting import fmt_bounds, fmt_value
from ...core.metrics import AXIS_UNITS, Metric
from .base import figures


@dataclass(frozen=True)
class GithubActionBenchmark:
    bigger: bool  # True: higher-is-better figures (customBiggerIsBetter); else the rest

    def document(self, groups: Sequence[Group]) -> list[dict[str, Any]]:
        return [_entry(g, slug, m, s) for g in groups for slug, m, s in figures(g)
                if m.higher_is_better == self.bigger]


def unit(m: Metric) -> str:
    """As a plot's axis says it ("s", "requests/s"), else the unit kind
    ("bytes"): seconds as "s", one of the time units the action converts
    between when a series changes unit (src/normalizeValueByUnit.ts)."""
    return AXIS_UNITS.get(m.unit, m.unit)


def _entry(g: Group, slug: str, m: Metric, s: Summary) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": f"{g.label} {slug}", "unit": unit(m),
                             "value": s.median}
    iv = s.interval
    if iv is not None:
        # The action reads a range as "± X" (src/extractRangeInfo.ts): the
        # interval's larger half, so the symmetric range holds the whole of
        # it; to 10 digits (no float noise), as a float's repr, since the
        # action's pattern wants two characters or more ("5.0", not "5").
        half = max(iv.high - s.median, s.median - iv.low)
        entry["range"] = f"± {float(f'{half:.10g}')!r}"
        # the tooltip: the interval's own bounds and confidence, as the report writes them
        entry["extra"] = (f"median of {s.count} ok runs, {iv.confidence * 100:.3g}% interval "
                          + fmt_bounds(iv, lambda v: fmt_value(m.unit, v)))
    else:
        entry["extra"] = "1 ok run, no interval"
    return entry
