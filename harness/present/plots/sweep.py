"""A workload's figure against the release (IMPL@VERSION): a line per
implementation, a panel per configuration."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from ...analyse.analysis import Group
from ...core.presentation import Presentation
from ...core.schema import ConfigKey, Status
from ...core.variants import parse, release_key
from .draw import (Run, Whiskers, draw_whiskers, finish_panels, legend, mark_failed, panel_grid,
                   scaled)
from .scaling import scaling_axis


STOCK = "stock"  # the stock build's place on a sweep's axis: after every named release


def sweep_points(groups: list[Group]) -> dict[str, list[tuple[str, Group]]]:
    """A version sweep's lines: for each implementation (with a variant's
    settings) run at two or more releases, its (release, group) points,
    oldest first, the stock build last. Pure: the tests read it."""
    lines: dict[str, list[tuple[str, Group]]] = defaultdict(list)
    for g in groups:
        spec = parse(g.impl)
        name = replace(spec, version="").label
        lines[name].append((spec.version or STOCK, g))
    return {name: sorted(points, key=lambda p: (p[0] == STOCK, release_key(p[0])))
            for name, points in sorted(lines.items())
            if len({v for v, _ in points}) >= 2 and any(v != STOCK for v, _ in points)}


def version_sweep(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """The workload's figure against the release, a line per implementation,
    a panel per configuration; drawn when the run holds two or more releases
    of an implementation (IMPL@VERSION, the stock build counting as one)."""
    groups = [g for g in run.groups if g.workload == workload]
    configs: dict[ConfigKey, list[Group]] = defaultdict(list)
    for g in groups:
        configs[ConfigKey("", workload, g.n, g.buffer, g.params)].append(g)
    swept = {key.settings or workload: lines
             for key, members in sorted(configs.items(), key=lambda kv: kv[0].sort_key)
             if (lines := sweep_points(members))}
    if not swept:
        return []
    metric, ylabel, scale = scaling_axis(presented, groups)
    fig, axes = panel_grid(len(swept), 5.0, 3.8)
    failed: set[str] = set()
    shown = Whiskers()
    for ax, (title, lines) in zip(axes, swept.items()):
        releases = sorted({v for points in lines.values() for v, _ in points},
                          key=lambda v: (v == STOCK, release_key(v)))
        at = {v: i for i, v in enumerate(releases)}
        for name, points in lines.items():
            have = [(v, g) for v, g in points if metric in g.metrics]
            # the implementation's own colour, marker and dash, whatever the release
            color, dash, marker = (run.palette.color(name), run.palette.line_style(name),
                                   run.palette.marker(name))
            if have:
                xs = [at[v] for v, _ in have]
                ys = [g.median(metric) * scale for _, g in have]
                ax.plot(xs, ys, marker=marker, markersize=5, label=name, color=color, linestyle=dash)
                draw_whiskers(ax, xs, ys, [scaled(g.interval(metric), scale) for _, g in have],
                              [g.ok for _, g in have], color, shown)
            for v, g in points:
                if metric not in g.metrics and g.failure and g.failure != Status.SKIPPED:
                    mark_failed(ax, at[v], g.failure)
                    failed.add(g.failure)
        ax.set_xticks(range(len(releases)), releases, rotation=45 if len(releases) > 4 else 0,
                      ha="right" if len(releases) > 4 else "center", fontsize=8)
        ax.set_xlabel("release")
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # none when every release failed
            ax.legend(fontsize=7, loc="best")
    if failed:
        legend(axes[-1], failed)
    return [finish_panels(fig, axes, run, ylabel, f"{workload}: {{}} against the release",
                          shown, out / f"{workload}_versions.png")]
