"""The JSON that benchmark-action/github-action-benchmark reads with tool
customSmallerIsBetter or customBiggerIsBetter: a list of {"name", "unit",
"value", "range"?, "extra"?}, value a number and the rest text (its
BenchmarkResult, src/extract.ts; README, "Examples" of custom benchmarks:
https://github.com/benchmark-action/github-action-benchmark#examples).
A file has one direction, so one export holds the figures of one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...core.formatting import fmt_bounds, fmt_sig, fmt_value
from ...core.metrics import AXIS_UNITS, METRICS, Metric
from .base import Figure, measure


@dataclass(frozen=True)
class GithubActionBenchmark:
    bigger: bool  # True: higher-is-better figures (customBiggerIsBetter); else the rest

    @property
    def takes(self) -> str:
        if self.bigger:  # the action fails a step given an empty list ("No benchmark result")
            which = [measure(m.name) for m in METRICS.values() if m.higher_is_better]
            return (f"--direction bigger: no configuration with an ok run has a figure where "
                    f"bigger is better ({', '.join(which)}: the http workload's)")
        return ("--direction smaller: no configuration with an ok run has a figure where "
                "smaller is better")

    def document(self, figures: Sequence[Figure], partial: bool) -> list[dict[str, Any]]:
        return [_entry(f, partial) for f in figures if f.metric.higher_is_better == self.bigger]

    def notes(self, document: list[dict[str, Any]]) -> list[str]:
        return []


def unit(m: Metric) -> str:
    """As a plot's axis says it ("s", "requests/s"), else the unit kind
    ("bytes"): seconds as "s", one of the time units the action converts
    between when a series changes unit (src/normalizeValueByUnit.ts)."""
    return AXIS_UNITS.get(m.unit, m.unit)


def _entry(f: Figure, partial: bool) -> dict[str, Any]:
    m, s = f.metric, f.summary
    entry: dict[str, Any] = {"name": f"{f.group.label} {f.measure}", "unit": unit(m),
                             "value": s.median}
    iv = s.interval
    if iv is not None:
        # The interval with its confidence, as the report writes it, in the
        # tooltip alone: no "range" ("± X"), which would say an asymmetric
        # interval as a symmetric one, and which the action writes twice in
        # every row of its comment, pushing a default run's past GitHub's
        # 65,536 characters (harness/tests/present/test_export_consumers.py).
        entry["extra"] = (f"median of {s.count} ok runs, "
                          f"{fmt_sig(iv.confidence * 100, 3)}% interval "
                          + fmt_bounds(iv, lambda v: fmt_value(m.unit, v)))
    else:
        entry["extra"] = "1 ok run, no interval"
    if partial:  # export --partial: the tooltip says the run did not finish
        entry["extra"] = "partial run, not finished: " + entry["extra"]
    return entry
