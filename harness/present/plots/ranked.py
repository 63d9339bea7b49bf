"""Ranked charts, a row per implementation, best at the top: the figures at
one N (or one load), and summary.png, the picture to share, made of them."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from ...analyse import analysis
from ...analyse.analysis import Group
from ...core.formatting import fmt_bytes, fmt_seconds
from ...core.presentation import PRESENTATIONS, Panel
from ...core.schema import Status
from ...core.stats import Interval
from ...core.workloads import workload_rank
from .draw import (BELOW_COLOR, FAIL_COLOR, WHISKER_COLOR, Run, Whiskers, draw_whiskers, fit,
                   layout, log_ticks, partly_failed, save, scaled)
from .memory import below_resolution, mem_per_task_interval, mem_runs, resolution_text


Format = Callable[[float | None], str]


@dataclass(frozen=True)
class Bar:
    """One implementation's bar in a summary.png panel."""
    series: str
    value: float | None  # None: failed, below resolution, or no figure
    interval: Interval | None = None  # in the value's units; None: one run (or none computed)
    runs: int = 0  # ok runs behind the value
    failure: str = ""  # the status, when no run was ok
    below: tuple[int, ...] = ()  # memory per task below resolution: the N it was read over
    partial: bool = False  # some repeats failed: ringed in red


@dataclass(frozen=True)
class Section:
    """Rows of a panel under one heading: the measured ones, ranked (no
    heading), then the ones that cannot be ranked, each kind apart."""
    heading: str
    bars: tuple[Bar, ...]


def summary_sections(bars: list[Bar], higher_better: bool = False) -> list[Section]:
    """A panel's rows in reading order: measured values ranked, best
    (lowest, or highest when higher is better) first, ties by name; then
    failures; then, last, figures below the reading's resolution, which are
    not ranked among the measured ones: a slope too small to read is not a
    small slope. Pure: the tests read it."""
    sign = -1 if higher_better else 1
    measured = sorted((b for b in bars if b.value is not None),
                      key=lambda b: (sign * b.value, b.series))
    failed = sorted((b for b in bars if b.value is None and b.failure), key=lambda b: b.series)
    below = sorted((b for b in bars if b.value is None and not b.failure and b.below),
                   key=lambda b: b.series)
    other = sorted((b for b in bars if b.value is None and not b.failure and not b.below),
                   key=lambda b: b.series)
    sections = [Section("", tuple(measured))] if measured else []
    if failed:
        sections.append(Section("no ok run", tuple(failed)))
    if other:
        sections.append(Section("no figure", tuple(other)))
    if below:
        sections.append(Section(f"below resolution, not ranked:\n"
                                f"{resolution_text([b.below for b in below])}", tuple(below)))
    return sections


def _log_x_ranked(ax: Axes, lows: list[float], highs: list[float], fmt: Format) -> None:
    """The ranked chart's log x axis: from below the lowest whisker to room
    for the value labels right of the highest, ticks read with fmt."""
    if not highs:
        ax.set_xticks([])
        return
    lo, hi = min(lows), max(highs)
    ax.set_xscale("log")
    span = max(hi / lo, 1.0001)
    ax.set_xlim(lo / span ** 0.08 / 1.3, hi * span ** 0.35 * 1.6)
    left, right = ax.get_xlim()
    ticks = log_ticks(left, right, base=2 if fmt is fmt_bytes else 10)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos=None: fmt(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", labelsize=7.5)
    ax.grid(axis="x", alpha=0.3, which="major")


def ranked_sections(bars: list[Bar], higher_better: bool = False) -> list[Section]:
    """A one-N (one-load) chart's rows in reading order: the measured ranked,
    best first (lowest, or highest when higher is better), then failures,
    figures without a value, and figures below resolution (summary_sections).
    Pure: the tests read it."""
    return summary_sections(bars, higher_better)


def draw_ranked(ax: Axes, run: Run, sections: list[Section], fmt: Format, shown: Whiskers,
                title: str = "", heading_width: int = 62) -> None:
    """A ranked chart on a log x axis: a row per implementation, named on
    the left (in its colour), its point in its colour and marker with the
    interval's whisker (draw_whiskers) and its value to the right; rows that
    cannot be ranked (failed, no figure, below resolution) under headings of
    their own at the bottom. Best at the top."""
    ticks: list[tuple[int, str]] = []
    lows: list[float] = []
    highs: list[float] = []
    at_left = ax.get_yaxis_transform()  # x in axes fraction, y in data
    y = 0
    for sec in sections:
        if sec.heading:
            if y:
                ax.axhline(y - 0.5, color="#bbbbbb", linewidth=0.6)
            heading = "\n".join(textwrap.fill(line, heading_width)
                                for line in sec.heading.splitlines())
            rows = _heading_rows(sec.heading, heading_width)
            ax.text(0.005, y + (rows - 1) / 2, heading, transform=at_left, va="center", ha="left",
                    fontsize=7.5, style="italic",
                    color=BELOW_COLOR if sec.bars[0].below else "#333333")
            y += rows
        for b in sec.bars:
            ticks.append((y, b.series))
            if b.value is None or b.value <= 0:
                text, color = ((f"✕ {b.failure}", FAIL_COLOR) if b.failure else
                               ("below resolution", BELOW_COLOR) if b.below else
                               ("0 (below the recorded resolution)", BELOW_COLOR)
                               if b.value is not None else ("no figure", BELOW_COLOR))
                ax.text(0.01, y, text, transform=at_left, va="center", fontsize=8, color=color)
            else:
                color = run.color.get(b.series, WHISKER_COLOR)
                ax.plot([b.value], [y], marker=run.marker.get(b.series, "o"), color=color,
                        markersize=7, linestyle="none", zorder=4,
                        markeredgecolor=FAIL_COLOR if b.partial else color,
                        markeredgewidth=2 if b.partial else 1)
                draw_whiskers(ax, [b.value], [y], [b.interval], [b.runs], WHISKER_COLOR, shown,
                              horizontal=True)
                low = min(b.value, b.interval.low) if b.interval else b.value
                right = max(b.value, b.interval.high) if b.interval else b.value
                lows.append(low if low > 0 else b.value)
                highs.append(right)
                ax.annotate(fmt(b.value), (right, y), xytext=(5, 0), textcoords="offset points",
                            va="center", fontsize=8)
            y += 1
    ax.set_yticks([t for t, _ in ticks], [name for _, name in ticks], fontsize=8)
    ax.set_ylim(y - 0.5, -0.5)  # best at the top
    ax.grid(axis="y", alpha=0.15)
    _log_x_ranked(ax, lows, highs, fmt)
    if title:
        ax.set_title(title, fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def group_bars(groups: list[Group], value: Callable[[Group], float | None],
               interval: Callable[[Group], Interval | None]) -> list[Bar]:
    """One row per group for a ranked chart: its value (None where it failed)
    and interval, the ok runs behind them."""
    return [Bar(g.series, v, interval(g) if v is not None else None, g.ok,
                (g.failure or "") if v is None else "", partial=partly_failed(g))
            for g in groups for v in [value(g)]
            if v is not None or (g.failure and g.failure != Status.SKIPPED)]


def _heading_rows(heading: str, width: int = 62) -> int:
    """Rows a section's heading takes: two lines of it a row."""
    lines = sum(len(textwrap.wrap(line, width)) or 1 for line in heading.splitlines())
    return (lines + 1) // 2


def _ranked_height(sections: list[Section]) -> int:
    return sum(len(sec.bars) + (_heading_rows(sec.heading) if sec.heading else 0)
               for sec in sections)


Panelled = tuple[str, Callable[[Group], float | None], Callable[[Group], Interval | None]]


def ranked_figure(run: Run, groups: list[Group] | list[list[Group]], panels: list[Panelled],
                  fmt: Format, title: str, xlabel: str, path: Path, higher_better: bool = False,
                  what: str = "points: median of the ok runs", cols: int = 2) -> Path:
    """Figures at one N (or one load), a ranked chart per panel (draw_ranked):
    (panel title, value, interval) each, values in fmt's units; groups: the
    same for every panel, or a list of them per panel. Up to cols a row."""
    per_panel = groups if groups and isinstance(groups[0], list) else [groups] * len(panels)
    sections = [ranked_sections(group_bars(members, value, interval), higher_better)
                for members, (_, value, interval) in zip(per_panel, panels)]
    height = max(_ranked_height(secs) for secs in sections)
    cols = min(cols, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, grid = plt.subplots(rows, cols, figsize=(6.4 * cols + 1.2, (0.3 * height + 1.3) * rows + 1.1),
                             squeeze=False)
    for ax in list(grid.flat)[len(panels):]:
        ax.set_visible(False)
    shown = Whiskers()
    for ax, (name, _, _), secs in zip(grid.flat, panels, sections):
        draw_ranked(ax, run, secs, fmt, shown, title=name)
        ax.set_xlabel(xlabel, fontsize=9)
    fig.suptitle(f"{title}\n{fit(shown.caption(what), fig, size=11)}", fontsize=11)
    layout(fig)
    return save(fig, path, run.env)


# What a summary.png panel may show (presentation.Panel.figure): a group's
# value, its interval (same units) and how it reads.
SUMMARY_FIGURES: dict[str, tuple[Callable[[Group], float | None],
                                 Callable[[Group], Interval | None], Format]] = {
    "mem_per_task": (lambda g: g.mem_per_task_bytes, mem_per_task_interval, fmt_bytes),
    "iteration": (lambda g: g.median(analysis.iter_metric([g])),
                  lambda g: g.interval(analysis.iter_metric([g])), fmt_seconds),
}


def _panel(run: Run, workload: str, panel: Panel) -> tuple[str, list[Bar], Format] | None:
    """A workload's panel of summary.png at the run's largest N of the
    workload (and the buffer): its title, bars and format; None when the run
    has no group of it."""
    figure, interval, fmt = SUMMARY_FIGURES[panel.figure]
    buffer = None
    if panel.buffer is not None:
        buffers = [g.buffer for g in run.of(workload) if g.buffer is not None]
        buffer = panel.buffer if panel.buffer in buffers else (max(buffers) if buffers else None)
    groups = [g for g in run.of(workload) if buffer is None or g.buffer == buffer]
    if not groups:
        return None
    n = max(g.n for g in groups)
    bars = []
    for g in groups:
        if g.n != n:
            continue
        per = 1 / g.n if panel.per_n and g.n else 1.0
        v = figure(g)
        memory = panel.figure == "mem_per_task"
        bars.append(Bar(g.series, v * per if v is not None else None,
                        scaled(interval(g), per) if v is not None else None,
                        mem_runs(g) if memory else g.ok, g.failure or "",
                        below_resolution(run, g) if memory else (),
                        partial=partly_failed(g) and v is not None))
    where = f"N = {n:,}" + (f", B = {buffer}" if panel.buffer is not None else "")
    return f"{panel.what} ({where})", bars, fmt


def summary(run: Run, out: Path) -> list[Path]:
    """The picture to share: the panels the workloads' presentations declare
    (memory per sleeping task, time per chain hop, time per bounded message),
    in reading order, each at the run's largest N, best at the top, with the
    median's interval as whiskers; what cannot be ranked (failures, memory
    below resolution) in groups of its own at the bottom."""
    panels = [(title, summary_sections(bars), fmt) for workload in sorted(PRESENTATIONS, key=workload_rank)
              if (panel := PRESENTATIONS[workload].panel) is not None
              and (drawn := _panel(run, workload, panel)) is not None
              for title, bars, fmt in [drawn]]
    if not panels:
        return []
    height = max(_ranked_height(sections) for _, sections, _ in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 0.36 * height + 2.2),
                             squeeze=False)
    shown = Whiskers()
    for ax, (title, sections, fmt) in zip(axes[0], panels):
        draw_ranked(ax, run, sections, fmt, shown, title=title)
        ax.set_xlabel("log scale", fontsize=8)
    fig.suptitle("Lower is better, best at the top (log scales)\n"
                 + fit(shown.caption("points: median of the ok runs (memory: slope of the medians "
                                     "over N)"), fig),
                 fontsize=10, wrap=True)
    layout(fig, 0.03)
    return [save(fig, out / "summary.png", run.env)]
