"""Figures of the workloads run at N tasks (all but the servers): peak RSS and
memory per task bars, time and peak RSS lines against N or the buffer, RSS over time."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.ticker import NullFormatter

from ...analyse import analysis
from ...analyse.analysis import Group
from ...core.formatting import fmt_bytes, fmt_plain, fmt_seconds, fmt_sig, fmt_whole
from ...core.metrics import COLD, RSS, WARM
from ...core.presentation import Presentation
from ...core.schema import SampleRow, Status
from ...core.stats import Interval
from .draw import (BELOW_COLOR, FAIL_COLOR, MIB, WHISKER_COLOR, Run, Whiskers, draw_whiskers,
                   finish_figure, fit, label_ends, layout, legend, log_y, mark_failed, partly_failed,
                   plain_log, save, scaled, time_unit)
from .memory import below_resolution, mem_per_task_interval, mem_runs, resolution_text
from .ranked import draw_ranked, group_bars, ranked_figure, ranked_sections


def _grouped_bars(run: Run, groups: list[Group], value: Callable[[Group], float | None],
                  title: str, ylabel: str, path: Path, log: bool,
                  interval: Callable[[Group], Interval | None] = lambda g: None,
                  label: Callable[[float], str] = fmt_plain,
                  below: Callable[[Group], bool] = lambda g: False,
                  below_text: str = "", what: str = "bars: median of the ok runs",
                  of: str = "the median", runs: Callable[[Group], int] = lambda g: g.ok) -> Path:
    """Bars per implementation, grouped by N (the chart shape of 1M tasks
    2024), with whiskers from interval(group) (draw_whiskers). A group that
    ran but whose figure is below the reading's resolution (below) is
    marked as such, not drawn as a bar."""
    ns = sorted({g.n for g in groups})
    impls = sorted({g.series for g in groups})
    index = {(g.series, g.n): g for g in groups}
    width = 0.8 / max(len(impls), 1)
    fig, ax = plt.subplots(figsize=(max(9.5, 3.2 + len(ns) * len(impls) * 0.45), 5.5))
    failed: set[str] = set()
    labelled: set[str] = set()
    shown = Whiskers()
    highest, partial, unresolved = 0.0, False, False
    for i, impl in enumerate(impls):
        for j, n in enumerate(ns):
            g = index.get((impl, n))
            if g is None:
                continue  # not requested: nothing to show
            x = j + (i - (len(impls) - 1) / 2) * width
            v = value(g)
            if v is None:
                if g.failure:
                    mark_failed(ax, x, g.failure)
                    failed.add(g.failure)
                elif below(g):
                    _mark_below(ax, x, impl, run.color[impl])
                    unresolved = True
                continue
            iv = interval(g)
            top = max(v, iv.high) if iv is not None else v
            ax.bar(x, v, width * 0.92, color=run.color[impl],
                   label=None if impl in labelled else impl,
                   hatch=run.hatch[impl],
                   edgecolor=FAIL_COLOR if partly_failed(g) else None,
                   linewidth=2 if partly_failed(g) else 0)
            draw_whiskers(ax, [x], [v], [iv], [runs(g)], WHISKER_COLOR, shown)
            partial = partial or partly_failed(g)
            labelled.add(impl)
            ax.annotate(label(v), (x, top), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=6.5, rotation=90)
            highest = max(highest, top)
    ax.set_title(f"{title}\n{fit(shown.caption(what, of), fig, 0.6)}", fontsize=10)
    _bar_axes(ax, ns, ylabel, log, highest)
    legend(ax, failed, partial, below_text=below_text if unresolved else "")
    layout(fig)
    return save(fig, path, run.env)


def _bar_axes(ax: Axes, ns: list[int], ylabel: str, log: bool, highest: float) -> None:
    """The grouped bars' axes: an N a group, and room above the highest bar
    (its whisker's top) for the value labels."""
    ax.set_xticks(range(len(ns)), [f"N = {n:,}" for n in ns])
    ax.set_xlabel("number of tasks N")
    ax.set_ylabel(ylabel)
    if log:
        log_y(ax)
        if highest > 0:
            ax.set_ylim(top=highest * 4)  # room for the value labels above the bars
        plain_log(ax)
    elif highest > 0:
        ax.set_ylim(top=highest * 1.2)
    ax.grid(axis="y", alpha=0.3)


def _mark_below(ax: Axes, x: float, series: str, color: str) -> None:
    """A ▽ in the series' colour at the bottom of the axes, with "below
    resolution" and its name: the group ran, but its figure is too small to
    read (never a bar of height 0)."""
    trans = ax.get_xaxis_transform()
    ax.plot([x], [0.04], marker="v", markerfacecolor="none", markeredgecolor=color,
            markeredgewidth=1.5, markersize=8, transform=trans, clip_on=False, zorder=5,
            linestyle="none", gid="below")
    ax.text(x, 0.08, f"{series}: below resolution", transform=trans, rotation=90, ha="center",
            va="bottom", fontsize=7, color=BELOW_COLOR, zorder=5)


def rss_bars(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Peak RSS per implementation, bars grouped by N."""
    groups = run.of(workload)
    if not groups:
        return []

    def rss(g: Group) -> float | None:
        m = g.median(RSS)
        return m / MIB if m is not None else None

    return [_grouped_bars(
        run, groups, rss, f"{workload}: {presented.plot_caption or 'peak RSS against N'}",
        "peak RSS (MiB, log scale)", out / f"{workload}_rss.png",
        log=True, interval=lambda g: scaled(g.interval(RSS), 1 / MIB),
        label=lambda v: fmt_whole(v) if v >= 100 else fmt_sig(v, 3))]


def mem_per_task_bars(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Memory per task; it exists above the run's smallest N only, and a
    failed N stays marked, an N below the resolution too."""
    groups = run.of(workload)
    if not groups:
        return []
    smallest = min(g.n for g in groups)
    per_task = [g for g in groups if g.n > smallest]
    paths: list[Path] = []
    if per_task:
        values = [g.mem_per_task_bytes for g in per_task if g.mem_per_task_bytes is not None]
        points = sorted({n for g in per_task for n in g.mem_points})
        base_text = ", ".join(f"{n:,}" for n in points) or "?"
        unresolved = [p for g in per_task if (p := below_resolution(run, g))]
        paths.append(_grouped_bars(
            run, per_task, lambda g: g.mem_per_task_bytes,
            f"{workload}: memory per task (slope of peak RSS over N = {base_text})",
            "bytes per task" + (" (log scale)" if values and min(values) > 0 else ""),
            out / f"{workload}_mem_per_task.png", log=bool(values) and min(values) > 0,
            interval=mem_per_task_interval, label=fmt_whole,
            below=lambda g: bool(below_resolution(run, g)),
            below_text=f"below resolution ({resolution_text(unresolved)})",
            what="bars: slope of the median peak RSS over N", of="the slope", runs=mem_runs))
    return paths


def _lines(ax: Axes, run: Run, groups: list[Group], x: Callable[[Group], float],
           y: Callable[[Group], float | None], interval: Callable[[Group], Interval | None],
           failed: set[str], shown: Whiskers,
           ends: list[tuple[str, float, float, Any, Any, str]] | None = None) -> tuple[bool, bool]:
    """One line per implementation on a log x axis, in its colour, marker
    and dash, each point with its interval's whisker (draw_whiskers);
    returns whether a point stands on a partially failed group (ringed in
    red) and whether a median of 0 (below the recorded resolution) was
    marked with ▼ at the bottom. Each line's last point is added to ends,
    for label_ends once the axes are scaled."""
    partial = zero = False
    lines = run.by_impl(groups)
    single = len({x(g) for g in groups}) == 1  # one column of points stays one column
    for i, (impl, members) in enumerate(lines.items()):
        # Nudge each implementation a little sideways so equal points and
        # their whiskers stay apart (3% of a decade between neighbours).
        dodge = 1.0 if single else 10 ** (0.03 * (i - (len(lines) - 1) / 2))

        def at(g: Group) -> float:
            return x(g) * dodge

        pts = [(at(g), y(g), interval(g), g.ok) for g in members
               if y(g) is not None and y(g) > 0]
        for g in members:
            if y(g) is not None and y(g) <= 0:  # a log axis has no 0: mark it at the bottom
                ax.plot([at(g)], [0.02], marker="v", color=run.color[impl], markersize=8,
                        transform=ax.get_xaxis_transform(), clip_on=False, linestyle="none")
                zero = True
        if pts:
            xs, ys, ivs, runs = (list(c) for c in zip(*pts))
            ax.plot(xs, ys, marker=run.marker[impl], markersize=4.5, color=run.color[impl],
                    label=impl, linestyle=run.line[impl])
            draw_whiskers(ax, xs, ys, ivs, runs, run.color[impl], shown)
            if ends is not None:
                ends.append((impl, xs[-1] / dodge, ys[-1], run.color[impl], run.line[impl],
                             run.marker[impl]))
        for g in members:
            if y(g) is None and g.failure:
                mark_failed(ax, at(g), g.failure)
                failed.add(g.failure)
            elif y(g) is not None and partly_failed(g):
                ax.plot([at(g)], [y(g)], marker="o", markersize=10, markerfacecolor="none",
                        markeredgecolor=FAIL_COLOR, linestyle="none", zorder=4)
                partial = True
    return partial, zero


def _scaled(metric: str, scale: float) -> tuple[Callable[[Group], float | None],
                                                 Callable[[Group], Interval | None]]:
    """A metric's median and its interval, both times scale."""
    def y(g: Group) -> float | None:
        s = g.metrics.get(metric)
        return s.median * scale if s else None

    def interval(g: Group) -> Interval | None:
        return scaled(g.interval(metric), scale)

    return y, interval


def _x_at_data(ax: Axes, xs: list[float]) -> None:
    """Ticks at the measured N (or buffers) only, with room for the dodged
    points and at least a decade shown, so a single N does not zoom the axis
    into the dodge. Call after the scale is set."""
    ticks = sorted(set(xs))
    ax.set_xticks(ticks, [fmt_plain(t) for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    lo, hi = ticks[0], ticks[-1]
    if lo > 0:
        pad = 3.0 if hi / lo < 10 else 2.2  # room for the dodged points
        ax.set_xlim(lo / pad, hi * pad)


def _loglog(ax: Axes, xs: list[float]) -> None:
    ax.set_xscale("log")
    log_y(ax)
    _x_at_data(ax, xs)
    plain_log(ax)
    ax.grid(alpha=0.3, which="both")


# The iteration times a time plot draws, a panel each: the metric
# (metrics.METRICS) and the panel's title.
ITERATION_PANELS = ((COLD, "cold (first) iteration"), (WARM, "warm (median of later) iteration"))


def time_lines(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Cold and warm iteration time against N, a line per implementation."""
    groups = run.of(workload)
    if not groups:
        return []
    names = dict(ITERATION_PANELS)
    panels = [m for m in names if any(m in g.metrics for g in groups)]
    panels = panels or [ITERATION_PANELS[0][0]]
    caption = presented.plot_caption or "time per iteration"
    if len({g.n for g in groups}) == 1:
        return [ranked_figure(
            run, groups, [(names[m], *_scaled(m, 1.0)) for m in panels], fmt_seconds,
            f"{workload}: {caption}, N = {groups[0].n:,}; lower is better, best at the top",
            "time per iteration (log scale)", out / f"{workload}_time.png")]
    times = [s.max for g in groups for m in panels if (s := g.metrics.get(m))]
    scale, unit = time_unit(times)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels) + 3, 5.6), squeeze=False,
                             sharey=True)
    failed: set[str] = set()
    shown = Whiskers()
    partial = zero = False
    ends: list[list] = []
    for ax, metric in zip(axes[0], panels):
        y, interval = _scaled(metric, scale)
        ends.append([])
        p, z = _lines(ax, run, groups, lambda g: g.n, y, interval, failed, shown, ends[-1])
        partial, zero = partial or p, zero or z
        ax.set_title(names[metric])
        ax.set_xlabel("number of tasks N (log scale)")
    ns = [g.n for g in groups]
    for ax, at in zip(axes[0], ends):  # after every panel is drawn: the y axis is shared
        _loglog(ax, ns)
    for ax, at in zip(axes[0], ends):
        label_ends(ax, at)
    axes[0][0].set_ylabel(f"time per iteration ({unit}, log scale)")
    legend(axes[0][-1], failed, partial, zero=zero, series=False)
    return [finish_figure(fig, run, f"{workload}: {caption}", shown, out / f"{workload}_time.png")]


def rss_lines(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Peak RSS against N, a line per implementation."""
    groups = run.of(workload)
    if not groups:
        return []
    if len({g.n for g in groups}) == 1:
        return [ranked_figure(
            run, groups, [("", *_scaled(RSS, 1.0))], fmt_bytes,
            f"{workload}: peak RSS, N = {groups[0].n:,}; lower is better, best at the top",
            "peak RSS (log scale)", out / f"{workload}_rss.png")]
    fig, ax = plt.subplots(figsize=(10, 5.6))
    failed: set[str] = set()
    shown = Whiskers()
    y, interval = _scaled(RSS, 1 / MIB)
    ends: list = []
    partial, zero = _lines(ax, run, groups, lambda g: g.n, y, interval, failed, shown, ends)
    _loglog(ax, [g.n for g in groups])
    label_ends(ax, ends)
    ax.set_xlabel("number of tasks N (log scale)")
    ax.set_ylabel("peak RSS (MiB, log scale)")
    ax.set_title(f"{workload}: peak RSS against N\n"
                 f"{fit(shown.caption('points: median of the ok runs'), fig, 0.7)}", fontsize=10)
    legend(ax, failed, partial, zero=zero, series=False)
    layout(fig)
    return [save(fig, out / f"{workload}_rss.png", run.env)]


def buffer_grid(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """One panel per producer count, time against buffer (the grid of the
    Go Rust Channel Benchmark)."""
    groups = [g for g in run.of(workload) if g.buffer is not None]
    if not groups:
        return []
    ns = sorted({g.n for g in groups})
    fig, axes = plt.subplots(1, len(ns), figsize=(6.5 * len(ns) + 2, 5.6), squeeze=False)
    failed: set[str] = set()
    shown = Whiskers()
    partial = zero = False
    for ax, n in zip(axes[0], ns):
        members = [g for g in groups if g.n == n]
        metric = analysis.iter_metric(members)
        times = [s.max for g in members if (s := g.metrics.get(metric))]
        scale, unit = time_unit(times)
        y, interval = _scaled(metric, scale)
        if len({g.buffer for g in members}) == 1:  # one buffer: a ranked chart
            y, interval = _scaled(metric, 1.0)
            sections = ranked_sections(group_bars(members, y, interval))
            draw_ranked(ax, run, sections, fmt_seconds, shown)
            ax.set_title(f"N = {n:,} producers, buffer {members[0].buffer:,}")
            ax.set_xlabel(f"time per iteration, {'warm' if metric == WARM else 'cold'}"
                          " (log scale); best at the top")
            continue
        ends: list = []
        p, z = _lines(ax, run, members, lambda g: g.buffer, y, interval, failed, shown, ends)
        partial, zero = partial or p, zero or z
        ax.set_xscale("symlog", linthresh=1)  # symlog keeps a rendezvous (buffer 0) on the axis
        log_y(ax)
        _x_at_data(ax, [g.buffer for g in members])
        plain_log(ax)
        ax.grid(alpha=0.3, which="both")
        label_ends(ax, ends)
        kind = "warm" if metric == WARM else "cold"
        ax.set_title(f"N = {n:,} producers")
        ax.set_xlabel("channel buffer size (log scale)")
        ax.set_ylabel(f"time per iteration, {kind} ({unit}, log scale)")
    legend(axes[0][-1], failed, partial, zero=zero, series=False)
    return [finish_figure(fig, run, f"{workload}: {presented.plot_caption}", shown,
                          out / f"{workload}_time.png")]


def rss_over_time(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """RSS against time for the largest N of each implementation (one rep),
    each line named at its end on the right panel (every run ends at 1 there)."""
    series: dict[tuple, list[SampleRow]] = defaultdict(list)
    for s in run.samples:
        # RSS 0 is the sampler catching the process before exec or after exit,
        # not a measurement: it would plunge a log axis.
        if s.workload == workload and s.rss_bytes:
            series[(s.impl, s.n, s.buffer, s.rep)].append(s)
    if not series:
        return []
    status = {(r.impl, g.n, g.buffer, r.rep): r.status
              for g in run.groups if g.workload == workload for r in g.rows}
    chosen: dict[str, tuple] = {}
    for key in series:
        impl, n, buffer, rep = key
        # largest N (then buffer), preferring an ok rep, then the first rep
        rank = (n or 0, buffer or 0, status.get(key) == Status.OK, -(rep or 0))
        if impl not in chosen or rank > chosen[impl][0]:
            chosen[impl] = (rank, key)
    fig, (ax, norm) = plt.subplots(1, 2, figsize=(18, 5.6), sharey=True)
    failed: set[str] = set()
    ends: list[tuple[str, float, float, Any, Any, str]] = []
    top_t = max(s.t_s for rows in series.values() for s in rows)
    scale, unit = (1.0, "s") if top_t >= 1 else (1e3, "ms")
    for impl in sorted(chosen):
        key = chosen[impl][1]
        rows = sorted(series[key], key=lambda s: s.t_s)
        _, n, buffer, rep = key
        st = status.get(key, "?")
        label = f"{impl} N={n:,}" + (f" buffer={buffer}" if buffer is not None else "")
        if st != Status.OK:
            label += f" ({st})"
        ys = [s.rss_bytes / MIB for s in rows]
        end = rows[-1].t_s or 1.0
        # left: real time; right: each run's own time, so a 50 ms run is as
        # wide as a 50 s one
        for panel, xs in ((ax, [s.t_s * scale for s in rows]),
                          (norm, [s.t_s / end for s in rows])):
            panel.plot(xs, ys, color=run.color[impl], label=label, linewidth=1.4,
                       linestyle=run.line[impl])
            if st != Status.OK:  # the process ended here without a valid result
                panel.plot([xs[-1]], [ys[-1]], marker="X", color=FAIL_COLOR, markersize=9)
        if st != Status.OK:
            failed.add(st)
        # named at the line's end on the right panel, where every run ends at 1
        ends.append((label, 1.0, ys[-1], run.color[impl], run.line[impl], ""))
        log_y(panel)
        plain_log(panel)
        panel.grid(alpha=0.3, which="both")
    ax.set_xlabel(f"time since process start ({unit})")
    norm.set_xlabel("share of the run's own time (start = 0, exit = 1)")
    ax.set_ylabel("RSS (MiB, log scale)")
    fig.suptitle(f"{workload}: RSS over time, largest N of each implementation")
    legend(norm, failed, failed_text="run ended without a valid result", series=False)
    label_ends(norm, ends)
    layout(fig)
    # one small panel per implementation: readable at a lower resolution,
    # which keeps report.html, where every plot is embedded, small
    return [save(fig, out / f"rss_over_time_{workload}.png", run.env, dpi=80)]
