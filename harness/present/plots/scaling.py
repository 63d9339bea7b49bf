"""A workload's figure against the CPU count the run gave it (--cpus): a line
per implementation, a panel per configuration."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ...analyse import analysis
from ...analyse.analysis import Group
from ...core.metrics import METRICS, RSS
from ...core.presentation import Presentation
from ...core.schema import ConfigKey, Status
from ...core.workloads import COMMON_DIMENSIONS, CPUS, MACHINE
from .draw import (MIB, Run, Whiskers, draw_whiskers, finish_panels, legend, mark_failed,
                   panel_grid, scaled, time_unit)


# The harness's own dimensions (--cpus, merge's machine): a panel's
# configuration is the rest.
HARNESS_DIMENSIONS = tuple(d.name for d in COMMON_DIMENSIONS)


def _scaling_metric(presented: Presentation, groups: list[Group]) -> tuple[str, str]:
    """What a scaling panel plots: the iteration time where the workload is
    ranked by time, else its first headline figure (a server's throughput)."""
    metric = analysis.iter_metric(groups) if presented.time_ratio else presented.headline[0]
    return metric, METRICS[metric].axis_label


def scaling_axis(presented: Presentation, groups: list[Group]) -> tuple[str, str, float]:
    """A scaling or sweep plot's figure, its y label and the factor that
    puts its values in the label's unit (MiB, or the time unit that fits)."""
    metric, ylabel = _scaling_metric(presented, groups)
    if metric == RSS:
        return metric, "peak RSS (MiB)", 1 / MIB
    if METRICS[metric].unit == "s":
        scale, unit = time_unit([s.max for g in groups if (s := g.metrics.get(metric))] or [1.0])
        return metric, ylabel.replace("(s)", f"({unit})"), scale
    return metric, ylabel, 1.0


def cpu_scaling(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """The workload's figure against the CPU count (--cpus), a line per
    implementation, a panel per configuration; drawn when the run has two
    or more CPU counts."""
    groups = [g for g in run.groups if g.workload == workload and g.param(CPUS.name) is not None]
    if len({g.param(CPUS.name) for g in groups}) < 2:
        return []
    metric, ylabel, scale = scaling_axis(presented, groups)
    configs: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        rest = ConfigKey("", workload, g.n, g.buffer,
                         tuple(p for p in g.params if p[0] not in HARNESS_DIMENSIONS))
        configs[rest.settings or workload].append(g)
    fig, axes = panel_grid(len(configs), 4.2, 3.8)
    failed: set[str] = set()
    shown = Whiskers()
    for ax, (title, members) in zip(axes, sorted(configs.items())):
        lines: dict[str, list[Group]] = defaultdict(list)
        for g in members:
            machine = g.param(MACHINE.name)
            lines[g.impl + (f" @{machine}" if machine else "")].append(g)
        for name, points in sorted(lines.items()):
            points.sort(key=lambda g: g.param(CPUS.name))
            have = [g for g in points if metric in g.metrics]
            if have:
                color = run.color[points[0].impl]
                xs = [g.param(CPUS.name) for g in have]
                ys = [g.median(metric) * scale for g in have]
                ax.plot(xs, ys, marker="o", markersize=4, label=name, color=color,
                        linestyle=run.line[points[0].impl])
                draw_whiskers(ax, xs, ys, [scaled(g.interval(metric), scale) for g in have],
                              [g.ok for g in have], color, shown)
            for g in points:
                if metric not in g.metrics and g.failure and g.failure != Status.SKIPPED:
                    mark_failed(ax, g.param(CPUS.name), g.failure)
                    failed.add(g.failure)
        cpus = sorted({g.param(CPUS.name) for g in members})
        ax.set_xticks(cpus, [str(c) for c in cpus])
        ax.set_xlabel("CPUs")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    legend(axes[-1], failed)
    return [finish_panels(fig, axes, run, ylabel, f"{workload}: {{}} against the CPUs it may use",
                          shown, out / f"{workload}_scaling.png")]
