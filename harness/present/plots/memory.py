"""Memory per task as the figures show it: its interval, the runs behind its
whisker, and when it is below the reading's resolution."""

from __future__ import annotations

from ...analyse import analysis
from ...analyse.analysis import Group
from ...core.formatting import fmt_bytes
from ...core.metrics import RSS
from ...core.stats import Interval
from .draw import Run


def below_resolution(run: Run, g: Group) -> tuple[int, ...]:
    """The N over which g's memory per task was read and found below the
    resolution (analysis: Group.mem_below_resolution): every N of its series
    up to g's; () when g has a figure, failed, or has no smaller N."""
    if not g.mem_below_resolution or g.n is None:
        return ()
    return tuple(sorted(h.n for h in run.groups
                        if (h.impl, h.workload, h.buffer, h.params)
                        == (g.impl, g.workload, g.buffer, g.params)
                        and h.n is not None and h.n <= g.n
                        and h.median(RSS) is not None))


def resolution_text(points: list[tuple[int, ...]]) -> str:
    """What "below resolution" means for these groups (analysis,
    _memory_per_task): peak RSS grew less than MEM_RESOLUTION_BYTES over the
    N measured (less than that much a task, when they share their N), or
    the slope's interval reaches 0."""
    floor = fmt_bytes(analysis.MEM_RESOLUTION_BYTES)
    spans = {(p[0], p[-1]) for p in points if len(p) > 1}
    if len(spans) != 1:
        return f"< {floor} growth over the N measured, or an interval reaching 0"
    lo, hi = spans.pop()
    return (f"< {floor} growth from N = {lo:,} to {hi:,} "
            f"(< {fmt_bytes(analysis.MEM_RESOLUTION_BYTES / (hi - lo))} a task), "
            "or an interval reaching 0")


def mem_per_task_interval(g: Group) -> Interval | None:
    """Memory per task's interval (analysis.slope_interval); None where an N
    it rests on had one run."""
    return g.mem_interval


def mem_runs(g: Group) -> int:
    """The runs memory per task's whisker is noted with: 1 when it has no
    interval (an N it rests on had one run), else the group's."""
    return g.ok if mem_per_task_interval(g) is not None else 1
