"""A bisect's result in words: the release (or commit) where the figure
changed, what the kernel counted beside it, and each measured step's
median, from analyse/bisection.py's Found."""

from __future__ import annotations

import statistics
from typing import Callable

from ..analyse.bisection import Found
from ..core import local_builds
from ..core.formatting import fmt_change_interval, fmt_metric
from ..core.metrics import COUNTERS, METRICS
from ..core.stats import ratio_interval


def report_lines(found: Found, label: Callable[[str], str],
                 values: Callable[[str, str], tuple[float, ...]]) -> list[str]:
    """The result in words, then each measured release's median; label(release)
    is the configuration's name on that release, values(release, metric) its
    ok runs' values."""
    name = METRICS[found.figure].heading
    good, bad = found.releases[0], found.releases[-1]
    lines = []
    if found.first_bad:
        kind = "commit" if local_builds.is_git(found.first_bad) else "release"
        lines.append(f"first {kind} where {name} changed: {label(found.first_bad)} "
                     f"({found.last_good} → {found.first_bad}: {fmt_change_interval(found.change)}; "
                     f"{good} → {bad}: {fmt_change_interval(found.overall)})")
        before, after = found.last_good or good, found.first_bad
        beside = counter_changes(lambda m: values(before, m), lambda m: values(after, m))
        if beside:
            lines.append(f"  beside it ({found.last_good} → {found.first_bad}): {beside}")
        if found.unsettled:
            lines.append(f"not settled: {', '.join(found.unsettled)}: each held the midpoint of "
                         f"{good} and {bad} after every run it got and was placed by its "
                         f"estimate; the change may be spread over several releases")
    else:
        lines.append(f"not found: {found.why}")
    if found.skipped:
        lines.append(f"skipped (no ok run: see their rows): "
                     f"{', '.join(label(r) for r in found.skipped)}")
        if found.first_bad and found.last_good:
            lo, hi = found.releases.index(found.last_good), found.releases.index(found.first_bad)
            between = [r for r in found.releases[lo + 1:hi] if r in found.skipped]
            if between:
                lines.append(f"  the first change may also be at one of the skipped between "
                             f"them: {', '.join(label(r) for r in between)}")
    for release in sorted(found.measured, key=found.releases.index):
        vals = values(release, found.figure)
        median = fmt_metric(found.figure, statistics.median(vals)) if vals else "no ok run"
        lines.append(f"  {label(release)}: {name} {median} ({len(vals)} ok runs)")
    return lines


def counter_changes(old: Callable[[str], tuple[float, ...]],
                    new: Callable[[str], tuple[float, ...]]) -> str:
    """What the kernel counted, new against old: each counter's change with
    its interval ("voluntary context switches +210% [+180%, +240%] (95%)"),
    "; "-separated; "" when no counter has two positive values a side."""
    parts = []
    for m in COUNTERS:
        a, b = old(m), new(m)
        if a and b and min(a + b) > 0:
            parts.append(f"{METRICS[m].label} {fmt_change_interval(ratio_interval(a, b))}")
    return "; ".join(parts)
