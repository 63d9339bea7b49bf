"""What every export format shares: the interface one format implements,
and the figures an export holds, chosen once for all formats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from ...analyse.analysis import Group, Summary, headline
from ...core.metrics import METRICS, Metric


@dataclass(frozen=True)
class Figure:
    """One figure of one configuration, as an export writes it: the median
    of the configuration's ok runs, with its interval where it has one."""
    group: Group
    metric: Metric
    summary: Summary

    @property
    def measure(self) -> str:
        return measure(self.metric.name)


class Exporter(Protocol):
    """One format: the document it makes of the chosen figures."""

    @property
    def takes(self) -> str:
        """What the format takes, for the one line that says a run has none of it."""
        ...

    def document(self, figures: Sequence[Figure], partial: bool) -> Any:
        """A JSON-able document of these figures (of a run that did not
        finish where partial, which the document says); empty when the
        format takes none of them."""
        ...

    def notes(self, document: Any) -> list[str]:
        """What a consumer of this document should know first, one line each."""
        ...


def measure(metric: str) -> str:
    """A figure's stable name in an export: its runs.csv column in kebab case
    ('warm-iter-s'), a valid Bencher measure slug. The column, not the
    label: a column is part of the versioned data format, so a tool's
    history stays joined when a label is reworded."""
    return metric.replace("_", "-")


@dataclass(frozen=True)
class Chosen:
    figures: list[Figure]
    zeros: int  # figures left out: their median is 0


def choose(groups: Sequence[Group], every: bool) -> Chosen:
    """The headline figures of each group (analysis.headline: the ones the
    report's verdicts are about), or every figure its ok runs have, in
    METRICS' order. A figure whose median is 0 (a counter that counted
    nothing) is left out: the consumers divide the next value by the last,
    so a 0 raises an alarm at any threshold whatever follows."""
    figures, zeros = [], 0
    for g in groups:
        names = list(g.metrics) if every else [m for m in headline(g.workload)
                                               if m in g.metrics]
        for name in names:
            summary = g.metrics[name]
            if summary.median == 0:
                zeros += 1
                continue
            figures.append(Figure(g, METRICS[name], summary))
    return Chosen(figures, zeros)
