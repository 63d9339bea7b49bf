"""What every export format shares: the interface one format implements,
and the figures of a configuration as the formats name them."""

from __future__ import annotations

from typing import Any, Iterator, Protocol, Sequence

from ...analyse.analysis import Group, Summary
from ...core.metrics import METRICS, Metric


class Exporter(Protocol):
    """One format: the document it makes of a run's configurations."""

    def document(self, groups: Sequence[Group]) -> Any:
        """A JSON-able document of these groups, each with at least one ok run."""
        ...


def measure(metric: str) -> str:
    """A figure's stable name in an export: its runs.csv column in kebab case
    ('warm-iter-s'), a valid Bencher measure slug. The column, not the
    label: a column is part of the versioned data format, so a tool's
    history stays joined when a label is reworded."""
    return metric.replace("_", "-")


def figures(g: Group) -> Iterator[tuple[str, Metric, Summary]]:
    """Each figure the group's ok runs have, in METRICS' order: its
    measure name, declaration and statistics."""
    for name, summary in g.metrics.items():
        yield measure(name), METRICS[name], summary
