"""PNG plots of one run directory (matplotlib, Agg backend).

Only this module imports matplotlib, and only `report`/`plot` reach it: the
measuring process never pays for it. Failed groups (no ok repeat: oom,
timeout, crashed, invalid, build-failed) are drawn as a red ✕ with the status
at the place the value would be, so a failure is never mistaken for a
missing bar. Implementations whose toolchain is absent (skipped) are left out.
"""

from __future__ import annotations

import math
import textwrap
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from . import analysis  # noqa: E402
from .analysis import Group  # noqa: E402
from .colors import Palette  # noqa: E402
from .formatting import fmt_bytes, fmt_plain, fmt_seconds  # noqa: E402
from .metrics import LATENCIES, METRICS, THROUGHPUT  # noqa: E402
from .presentation import PRESENTATIONS, Panel, Presentation  # noqa: E402
from .registry import RegistryError, load_registry  # noqa: E402
from .rundir import ConfigKey, RunDir  # noqa: E402
from .stats import LEVEL, Interval  # noqa: E402
from .workloads import STYLES, workload_rank  # noqa: E402

MIB = 1 << 20
FAIL_COLOR = "#d62728"
BELOW_COLOR = "#555555"  # memory per task below the reading's resolution: shown, never ranked
WHISKER_COLOR = "#222222"  # whiskers on bars (a line's whiskers take its colour)
DPI = 120
# Line styles that tell an implementation's CPU counts or machines apart.
VARIANT_LINES = ("-", "--", ":", "-.")


# ---------------------------------------------------------------- helpers

def _time_unit(values: list[float]) -> tuple[float, str]:
    """A scale and unit that keep the largest value between 1 and 1000."""
    top = max(values, default=1.0)
    for limit, scale, unit in ((1.0, 1.0, "s"), (1e-3, 1e3, "ms"), (1e-6, 1e6, "µs")):
        if top >= limit:
            return scale, unit
    return 1e9, "ns"


def _plain_log(ax: Axes) -> None:
    """Plain numbers on a log y axis. When fewer than two powers of ten are in
    view, minor ticks are labelled too (only 2 and 5 unless the span is tiny),
    so the axis always carries a readable scale."""
    lo, hi = ax.get_ylim()
    ax.yaxis.set_major_formatter(FuncFormatter(fmt_plain))
    if lo <= 0:
        return
    decades = math.floor(math.log10(hi)) - math.ceil(math.log10(lo)) + 1
    if decades >= 2:
        ax.yaxis.set_minor_formatter(NullFormatter())
        return
    every = hi / lo < 4

    def minor(value: float, _pos: Any = None) -> str:
        lead = round(value / 10 ** math.floor(math.log10(value) + 1e-9))
        return fmt_plain(value) if every or lead in (2, 5) else ""

    ax.yaxis.set_minor_formatter(FuncFormatter(minor))


def _footer(fig: Figure, env: dict[str, Any]) -> None:
    host = env.get("host") or {}
    parts = [host.get("hostname"), host.get("cpu_model"),
             f"{host['cores']} cores" if host.get("cores") else None,
             f"{fmt_bytes(host['ram_bytes'])} RAM" if host.get("ram_bytes") else None,
             host.get("os"),
             f"run {env['run_id']}" if env.get("run_id") else None,
             (env.get("started_at") or "")[:10] or None]
    text = " · ".join(p for p in parts if p) or "machine and date unknown (no env.json)"
    fig.text(0.995, 0.005, text, ha="right", va="bottom", fontsize=6.5, color="#555555")


def _mark_failed(ax: Axes, x: float, status: str) -> None:
    """A red ✕ at the bottom of the axes at data position x, with the status."""
    trans = ax.get_xaxis_transform()  # x in data units, y in axes fraction
    ax.plot([x], [0.04], marker="X", color=FAIL_COLOR, markersize=9, transform=trans,
            clip_on=False, zorder=5, linestyle="none", gid="failed")
    ax.text(x, 0.08, status, transform=trans, rotation=90, ha="center", va="bottom",
            fontsize=7, color=FAIL_COLOR, zorder=5)


def _log_y(ax: Axes) -> None:
    """A log y axis, unless nothing positive was drawn (every run failed):
    matplotlib cannot draw a log axis of nothing, and the ✕ marks say it all."""
    ys = [float(y) for line in ax.get_lines() if line.get_gid() not in ("failed", "below")
          for y in line.get_ydata() if math.isfinite(float(y))]
    ys += [p.get_height() for p in ax.patches]
    positive = [y for y in ys if y > 0]
    if positive:
        ax.set_yscale("log")
        # from the decade below the smallest value, not from matplotlib's
        # margin (a bar chart's would start at 0.01 MiB)
        ax.set_ylim(bottom=10 ** math.floor(math.log10(min(positive))))
    else:
        ax.set_yticks([])


def _partial(g: Group) -> bool:
    """Some repeats ok, some failed: the median stands on fewer runs."""
    return bool(g.ok) and g.ok < len(g.rows)


def _legend(ax: Axes, failed: set[str], partial: bool = False, failed_text: str = "no ok run",
            zero: bool = False, below_text: str = "") -> None:
    handles, labels = ax.get_legend_handles_labels()
    extra = []
    if failed:
        extra.append(Line2D([], [], marker="X", color=FAIL_COLOR, linestyle="none", markersize=8,
                            label=f"{failed_text} ({', '.join(sorted(failed))})"))
    if partial:
        extra.append(Line2D([], [], marker="o", markerfacecolor="none", markeredgecolor=FAIL_COLOR,
                            linestyle="none", markersize=10, label="some repeats failed"))
    if zero:
        extra.append(Line2D([], [], marker="v", color="#555555", linestyle="none", markersize=8,
                            label="median 0 (below the recorded resolution)"))
    if below_text:
        extra.append(Line2D([], [], marker="v", markerfacecolor="none", markeredgecolor=BELOW_COLOR,
                            linestyle="none", markersize=8, label=textwrap.fill(below_text, 44)))
    handles += extra
    labels += [h.get_label() for h in extra]
    if handles:  # outside the axes, right: it never hides data
        ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1),
                  borderaxespad=0)


def _save(fig: Figure, path: Path, env: dict[str, Any]) -> Path:
    _footer(fig, env)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


class _Run:
    """The groups of one run, indexed for plotting."""

    def __init__(self, run: RunDir) -> None:
        # Languages that never ran are not results; every other failure is drawn.
        results = analysis.analyse(run, leave_out=("skipped",))
        self.groups = results.groups
        self.env: dict[str, Any] = results.env
        self.samples = run.samples()
        # Colours from the registry, never from this run's subset (colors.py).
        try:
            registry = load_registry()
        except RegistryError:  # a broken impls.toml costs colours, not the plots
            registry = []
        palette = Palette(registry)
        impls = {g.impl for g in self.groups} | {s["impl"] for s in self.samples}
        self.color = {impl: palette.color(impl) for impl in impls}
        self.line = {impl: palette.line_style(impl) for impl in impls}
        self.hatch = {impl: palette.hatch(impl) for impl in impls}
        # A series is an impl, or one of its CPU counts or machines (Group.series):
        # the impl's colour, and a line style of its own among its variants.
        variants: dict[str, set[str]] = defaultdict(set)
        for g in self.groups:
            if g.series != g.impl:
                variants[g.impl].add(g.series)
        for impl, names in variants.items():
            for i, name in enumerate(sorted(names)):
                self.color[name], self.hatch[name] = self.color[impl], self.hatch[impl]
                self.line[name] = VARIANT_LINES[i % len(VARIANT_LINES)]

    def of(self, workload: str) -> list[Group]:
        return [g for g in self.groups if g.workload == workload and g.n is not None]

    def by_impl(self, groups: list[Group]) -> dict[str, list[Group]]:
        out: dict[str, list[Group]] = defaultdict(list)
        for g in sorted(groups, key=lambda g: (g.n, g.buffer or 0)):
            out[g.series].append(g)
        return dict(sorted(out.items()))


# ---------------------------------------------------------------- intervals
#
# Every figure drawn carries the confidence interval of its median
# (Group.interval, stats.median_interval) as whiskers: solid where the
# interval reaches LEVEL (95%), dashed and lighter where too few runs give
# only a lower confidence, none where one run gives no interval. Each
# plot's caption says which of the three it shows (Whiskers.caption).


def scaled(iv: Interval | None, scale: float) -> Interval | None:
    """An interval in the plot's units (MiB, ms, per hop)."""
    if iv is None:
        return None
    return replace(iv, estimate=iv.estimate * scale, low=iv.low * scale, high=iv.high * scale)


def whisker_extent(value: float, iv: Interval | None) -> tuple[float, float] | None:
    """How far a whisker reaches below and above the drawn value (both >= 0),
    or None: no whisker (one run, no interval)."""
    if iv is None:
        return None
    return max(value - iv.low, 0.0), max(iv.high - value, 0.0)


class Whiskers:
    """What a plot's whiskers showed, for its caption: settled intervals,
    intervals below LEVEL (few runs) and their confidence, figures of one
    run (no interval)."""

    def __init__(self) -> None:
        self.settled = False
        self.unsettled: set[float] = set()  # the confidence of each interval below LEVEL
        self.single = False

    def note(self, runs: int, iv: Interval | None) -> None:
        if iv is None:
            self.single = self.single or runs == 1
        elif iv.settled:
            self.settled = True
        else:
            self.unsettled.add(round(iv.confidence, 2))

    def caption(self, what: str = "median of the ok runs", of: str = "the median") -> str:
        """e.g. "median of the ok runs; whiskers: 95% interval of the median;
        dashed: too few runs for 95%, only 75%; one run: no interval"."""
        parts = [what, f"whiskers: {LEVEL:.0%} interval of {of}"]
        if self.unsettled:
            lo, hi = min(self.unsettled), max(self.unsettled)
            only = f"{lo:.0%}" if lo == hi else f"{lo:.0%}–{hi:.0%}"
            parts.append(f"dashed: too few runs for {LEVEL:.0%}, only {only}")
        if self.single:
            parts.append("one run: no interval")
        return "; ".join(parts)


def _fit(text: str, fig: Figure, share: float = 1.0, size: float = 10) -> str:
    """A caption broken into lines that fit share of the figure's width."""
    per_inch = 72 / (0.55 * size)  # characters an inch, roughly
    return textwrap.fill(text, max(40, int(fig.get_figwidth() * share * per_inch)),
                         break_on_hyphens=False)


def draw_whiskers(ax: Axes, xs: list[float], ys: list[float], intervals: list[Interval | None],
                  runs: list[int], color: str, shown: Whiskers,
                  horizontal: bool = False) -> list[ErrorbarContainer]:
    """Whiskers at (x, y) from each point's interval: solid at LEVEL, dashed
    and lighter below it, none without an interval (one run). Horizontal
    bars (summary.png) take them along x. Returns what was drawn (at most a
    solid and a dashed set), each container's lines tagged with its gid."""
    drawn: list[ErrorbarContainer] = []
    for settled in (True, False):
        at = [(x, y, ext) for x, y, iv, n in zip(xs, ys, intervals, runs)
              if iv is not None and iv.settled == settled
              and (ext := whisker_extent(y if not horizontal else x, iv)) is not None]
        if not at:
            continue
        px, py, ext = zip(*at)
        err = [[e[0] for e in ext], [e[1] for e in ext]]
        c = ax.errorbar(px, py, **{"xerr" if horizontal else "yerr": err}, fmt="none",
                        ecolor=color, capsize=2, elinewidth=1.1, zorder=3)
        gid = "interval" if settled else "interval-unsettled"
        for artist in (*c.lines[1], *c.lines[2]):
            artist.set_gid(gid)
            if not settled:
                artist.set_alpha(0.6)
        if not settled:
            for coll in c.lines[2]:
                coll.set_linestyle((0, (2.5, 1.5)))
        drawn.append(c)
    for iv, n in zip(intervals, runs):
        shown.note(n, iv)
    return drawn


# ---------------------------------------------------------------- plots

def _grouped_bars(run: _Run, groups: list[Group], value: Callable[[Group], float | None],
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
                    _mark_failed(ax, x, g.failure)
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
                   edgecolor=FAIL_COLOR if _partial(g) else None, linewidth=2 if _partial(g) else 0)
            draw_whiskers(ax, [x], [v], [iv], [runs(g)], WHISKER_COLOR, shown)
            partial = partial or _partial(g)
            labelled.add(impl)
            ax.annotate(label(v), (x, top), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=6.5, rotation=90)
            highest = max(highest, top)
    ax.set_xticks(range(len(ns)), [f"N = {n:,}" for n in ns])
    ax.set_xlabel("number of tasks N")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title}\n{_fit(shown.caption(what, of), fig, 0.6)}", fontsize=10)
    if log:
        _log_y(ax)
        if highest > 0:
            ax.set_ylim(top=highest * 4)  # room for the value labels above the bars
        _plain_log(ax)
    elif highest > 0:
        ax.set_ylim(top=highest * 1.2)
    ax.grid(axis="y", alpha=0.3)
    _legend(ax, failed, partial, below_text=below_text if unresolved else "")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return _save(fig, path, run.env)


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


def rss_bars(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Peak RSS per implementation, bars grouped by N."""
    groups = run.of(workload)
    if not groups:
        return []

    def rss(g: Group) -> float | None:
        m = g.median("peak_rss_bytes")
        return m / MIB if m is not None else None

    return [_grouped_bars(
        run, groups, rss, f"{workload}: {presented.plot_caption or 'peak RSS against N'}",
        "peak RSS (MiB, log scale)", out / f"{workload}_rss.png",
        log=True, interval=lambda g: scaled(g.interval("peak_rss_bytes"), 1 / MIB),
        label=lambda v: f"{v:,.0f}" if v >= 100 else f"{v:.3g}")]


def below_resolution(run: _Run, g: Group) -> tuple[int, ...]:
    """The N over which g's memory per task was read and found below the
    resolution (analysis: Group.mem_below_resolution): every N of its series
    up to g's; () when g has a figure, failed, or has no smaller N."""
    # getattr: until analysis's mem_below_resolution is committed, "ran, no
    # figure" is what below resolution meant
    below = getattr(g, "mem_below_resolution",
                    g.mem_per_task_bytes is None and g.median("peak_rss_bytes") is not None)
    if not below or g.n is None:
        return ()
    return tuple(sorted(h.n for h in run.groups
                        if (h.impl, h.workload, h.buffer, h.params)
                        == (g.impl, g.workload, g.buffer, g.params)
                        and h.n is not None and h.n <= g.n
                        and h.median("peak_rss_bytes") is not None))


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
    it rests on had one run (or analysis gives none yet)."""
    return getattr(g, "mem_interval", None)


def _mem_runs(g: Group) -> int:
    """The runs memory per task's whisker is noted with: 1 when it has no
    interval (an N it rests on had one run), else the group's."""
    return g.ok if mem_per_task_interval(g) is not None else 1


def mem_per_task_bars(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
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
            interval=mem_per_task_interval, label=lambda v: f"{v:,.0f}",
            below=lambda g: bool(below_resolution(run, g)),
            below_text=f"below resolution ({resolution_text(unresolved)})",
            what="bars: slope of the median peak RSS over N", of="the slope", runs=_mem_runs))
    return paths


def _lines(ax: Axes, run: _Run, groups: list[Group], x: Callable[[Group], float],
           y: Callable[[Group], float | None], interval: Callable[[Group], Interval | None],
           failed: set[str], shown: Whiskers) -> tuple[bool, bool]:
    """One line per implementation on a log x axis, each point with its
    interval's whisker (draw_whiskers); returns whether a point stands on a
    partially failed group (ringed in red) and whether a median of 0 (below
    the recorded resolution) was marked with ▼ at the bottom."""
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
            ax.plot(xs, ys, marker="o", markersize=4, color=run.color[impl], label=impl,
                    linestyle=run.line[impl])
            draw_whiskers(ax, xs, ys, ivs, runs, run.color[impl], shown)
        for g in members:
            if y(g) is None and g.failure:
                _mark_failed(ax, at(g), g.failure)
                failed.add(g.failure)
            elif y(g) is not None and _partial(g):
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
        pad = 3.0 if hi / lo < 10 else 1.5
        ax.set_xlim(lo / pad, hi * pad)


def _loglog(ax: Axes, xs: list[float]) -> None:
    ax.set_xscale("log")
    _log_y(ax)
    _x_at_data(ax, xs)
    _plain_log(ax)
    ax.grid(alpha=0.3, which="both")


def time_lines(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Cold and warm iteration time against N, a line per implementation."""
    groups = run.of(workload)
    if not groups:
        return []
    panels = [m for m in ("first_iter_s", "warm_iter_s") if any(m in g.metrics for g in groups)]
    panels = panels or ["first_iter_s"]
    times = [s.max for g in groups for m in panels if (s := g.metrics.get(m))]
    scale, unit = _time_unit(times)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels) + 2, 5.2), squeeze=False,
                             sharey=True)
    failed: set[str] = set()
    shown = Whiskers()
    partial = zero = False
    for ax, metric in zip(axes[0], panels):
        y, interval = _scaled(metric, scale)
        p, z = _lines(ax, run, groups, lambda g: g.n, y, interval, failed, shown)
        partial, zero = partial or p, zero or z
        ax.set_title(f"{'cold (first)' if metric == 'first_iter_s' else 'warm (median of later)'} "
                     "iteration")
        ax.set_xlabel("number of tasks N (log scale)")
    ns = [g.n for g in groups]
    for ax in axes[0]:  # after every panel is drawn: the y axis is shared
        _loglog(ax, ns)
    axes[0][0].set_ylabel(f"time per iteration ({unit}, log scale)")
    _legend(axes[0][-1], failed, partial, zero=zero)
    caption = presented.plot_caption or "time per iteration"
    fig.suptitle(f"{workload}: {caption}\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, size=11)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"{workload}_time.png", run.env)]


def rss_lines(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Peak RSS against N, a line per implementation."""
    groups = run.of(workload)
    if not groups:
        return []
    fig, ax = plt.subplots(figsize=(10, 5.2))
    failed: set[str] = set()
    shown = Whiskers()
    y, interval = _scaled("peak_rss_bytes", 1 / MIB)
    partial, zero = _lines(ax, run, groups, lambda g: g.n, y, interval, failed, shown)
    _loglog(ax, [g.n for g in groups])
    ax.set_xlabel("number of tasks N (log scale)")
    ax.set_ylabel("peak RSS (MiB, log scale)")
    ax.set_title(f"{workload}: peak RSS against N\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, 0.7)}", fontsize=10)
    _legend(ax, failed, partial, zero=zero)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"{workload}_rss.png", run.env)]


def buffer_grid(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """One panel per producer count, time against buffer (the grid of the
    Go Rust Channel Benchmark)."""
    groups = [g for g in run.of(workload) if g.buffer is not None]
    if not groups:
        return []
    ns = sorted({g.n for g in groups})
    fig, axes = plt.subplots(1, len(ns), figsize=(5.5 * len(ns) + 3.5, 5.2), squeeze=False)
    failed: set[str] = set()
    shown = Whiskers()
    partial = zero = False
    for ax, n in zip(axes[0], ns):
        members = [g for g in groups if g.n == n]
        metric = analysis.iter_metric(members)
        times = [s.max for g in members if (s := g.metrics.get(metric))]
        scale, unit = _time_unit(times)
        y, interval = _scaled(metric, scale)
        p, z = _lines(ax, run, members, lambda g: g.buffer, y, interval, failed, shown)
        partial, zero = partial or p, zero or z
        ax.set_xscale("symlog", linthresh=1)  # symlog keeps a rendezvous (buffer 0) on the axis
        _log_y(ax)
        _x_at_data(ax, [g.buffer for g in members])
        _plain_log(ax)
        ax.grid(alpha=0.3, which="both")
        kind = "warm" if metric == "warm_iter_s" else "cold"
        ax.set_title(f"N = {n:,} producers")
        ax.set_xlabel("channel buffer size (log scale)")
        ax.set_ylabel(f"time per iteration, {kind} ({unit}, log scale)")
    _legend(axes[0][-1], failed, partial, zero=zero)
    fig.suptitle(f"{workload}: {presented.plot_caption}\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, size=11)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"{workload}_time.png", run.env)]


def rss_over_time(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """RSS against time for the largest N of each implementation (one rep)."""
    series: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for s in run.samples:
        # RSS 0 is the sampler catching the process before exec or after exit,
        # not a measurement: it would plunge a log axis.
        if s["workload"] == workload and s["rss_bytes"]:
            series[(s["impl"], s["n"], s["buffer"], s["rep"])].append(s)
    if not series:
        return []
    status = {(r["impl"], g.n, g.buffer, r["rep"]): r["status"]
              for g in run.groups if g.workload == workload for r in g.rows}
    chosen: dict[str, tuple] = {}
    for key in series:
        impl, n, buffer, rep = key
        # largest N (then buffer), preferring an ok rep, then the first rep
        rank = (n or 0, buffer or 0, status.get(key) == "ok", -(rep or 0))
        if impl not in chosen or rank > chosen[impl][0]:
            chosen[impl] = (rank, key)
    fig, (ax, norm) = plt.subplots(1, 2, figsize=(16, 5.2), sharey=True)
    failed: set[str] = set()
    top_t = max(s["t_s"] for rows in series.values() for s in rows)
    scale, unit = (1.0, "s") if top_t >= 1 else (1e3, "ms")
    for impl in sorted(chosen):
        key = chosen[impl][1]
        rows = sorted(series[key], key=lambda s: s["t_s"])
        _, n, buffer, rep = key
        st = status.get(key, "?")
        label = f"{impl} N={n:,}" + (f" buffer={buffer}" if buffer is not None else "")
        if st != "ok":
            label += f" ({st})"
        ys = [s["rss_bytes"] / MIB for s in rows]
        end = rows[-1]["t_s"] or 1.0
        # left: real time; right: each run's own time, so a 50 ms run is as
        # wide as a 50 s one
        for panel, xs in ((ax, [s["t_s"] * scale for s in rows]),
                          (norm, [s["t_s"] / end for s in rows])):
            panel.plot(xs, ys, color=run.color[impl], label=label, linewidth=1.4,
                       linestyle=run.line[impl])
            if st != "ok":  # the process ended here without a valid result
                panel.plot([xs[-1]], [ys[-1]], marker="X", color=FAIL_COLOR, markersize=9)
        if st != "ok":
            failed.add(st)
    for panel in (ax, norm):
        _log_y(panel)
        _plain_log(panel)
        panel.grid(alpha=0.3, which="both")
    ax.set_xlabel(f"time since process start ({unit})")
    norm.set_xlabel("share of the run's own time (start = 0, exit = 1)")
    ax.set_ylabel("RSS (MiB, log scale)")
    fig.suptitle(f"{workload}: RSS over time, largest N of each implementation")
    _legend(norm, failed, failed_text="run ended without a valid result")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"rss_over_time_{workload}.png", run.env)]


# ---------------------------------------------------------------- http

STYLE_COLORS = dict(zip(STYLES, ("#d62728", "#ff7f0e", "#9467bd", "#1f77b4", "#2ca02c")))


def _served(run: _Run, workload: str) -> dict[str, list[Group]]:
    """A server workload's groups by implementation."""
    out: dict[str, list[Group]] = defaultdict(list)
    for g in run.groups:
        if g.workload == workload:
            out[g.series].append(g)
    return dict(sorted(out.items()))


def _style_label(g: Group) -> str:
    """A line's name: the style, and the server's pool size when given
    (requests per user go with the load, like the users on the x axis)."""
    threads = g.key.param("pool_threads")
    return g.key.param("style") + (f" T={threads}" if threads is not None else "")


def _panels(count: int, width: float, height: float) -> tuple[Figure, list[Axes]]:
    """Up to four panels a row."""
    cols = min(count, 4)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols + 2.5, height * rows),
                             squeeze=False, sharey=True)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def _per_impl_panels(run: _Run, workload: str, metric: str, ylabel: str, title: str,
                     path: Path) -> list[Path]:
    """A panel per implementation, the metric against users, a line per style."""
    by_impl = _served(run, workload)
    if not by_impl:
        return []
    fig, axes = _panels(len(by_impl), 4.2, 3.8)
    failed: set[str] = set()
    shown = Whiskers()
    for ax, (impl, groups) in zip(axes, by_impl.items()):
        lines: dict[str, list[Group]] = defaultdict(list)
        for g in groups:
            lines[_style_label(g)].append(g)
        for label, members in sorted(lines.items(), key=lambda kv: STYLES.index(kv[0].split()[0])):
            members.sort(key=lambda g: g.key.param("users"))
            color = STYLE_COLORS.get(label.split()[0])
            have = [g for g in members if metric in g.metrics]
            if have:
                xs = [g.key.param("users") for g in have]
                ys = [g.median(metric) for g in have]
                ax.plot(xs, ys, marker="o", markersize=4, color=color, label=label)
                draw_whiskers(ax, xs, ys, [g.interval(metric) for g in have],
                              [g.ok for g in have], color or WHISKER_COLOR, shown)
            for g in members:
                if metric not in g.metrics and g.failure and g.failure != "skipped":
                    _mark_failed(ax, g.key.param("users"), g.failure)
                    failed.add(g.failure)
        users = sorted({g.key.param("users") for g in groups})
        if len(users) > 1:
            ax.set_xscale("log")
            _x_at_data(ax, users)
        ax.set_title(impl)
        ax.set_xlabel("users (log scale)" if len(users) > 1 else "users")
        ax.grid(alpha=0.3, which="both")
    for ax in axes:  # shared y: one log axis for all, when anything was drawn
        _log_y(ax)
        _plain_log(ax)
        ax.set_ylabel(ylabel + ", log scale")
    _legend(axes[min(3, len(axes) - 1)], failed)
    fig.suptitle(f"{workload}: {title}\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, size=11)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, path, run.env)]


def http_throughput(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Requests a second against users, a line per style, a panel per implementation."""
    return _per_impl_panels(run, workload, THROUGHPUT, METRICS[THROUGHPUT].axis_label,
                            "throughput against users", out / f"{workload}_throughput.png")


def http_threads(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """The server's peak thread count against users."""
    return _per_impl_panels(run, workload, "max_threads", "peak threads of the server",
                            "the server's peak threads against users",
                            out / f"{workload}_threads.png")


def http_latency(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Response-time distribution at the most users of each implementation:
    per style, a bar from the median to the slowest response, with ticks at
    p90 and p99."""
    by_impl = _served(run, workload)
    if not by_impl:
        return []
    fig, axes = _panels(len(by_impl), 4.2, 4.4)
    whiskers = Whiskers()
    for ax, (impl, groups) in zip(axes, by_impl.items()):
        most = max(g.key.param("users") for g in groups)
        shown = sorted((g for g in groups if g.key.param("users") == most and g.metrics),
                       key=lambda g: (STYLES.index(g.key.param("style")), _style_label(g)))
        for i, g in enumerate(shown):
            p50, p90, p99, top = (g.median(m) for m in LATENCIES)
            color = STYLE_COLORS.get(g.key.param("style"))
            if p50 is None:
                continue
            ax.plot([i, i], [p50 * 1e3, top * 1e3], color=color, linewidth=6, alpha=0.35)
            ax.plot([i], [p50 * 1e3], marker="o", color=color)
            draw_whiskers(ax, [i], [p50 * 1e3], [scaled(g.interval(LATENCIES[0]), 1e3)], [g.ok],
                          WHISKER_COLOR, whiskers)
            for v in (p90, p99):
                ax.plot([i - 0.2, i + 0.2], [v * 1e3] * 2, color=color, linewidth=1.5)
        ax.set_xticks(range(len(shown)), [_style_label(g) for g in shown], rotation=30,
                      ha="right", fontsize=8)
        ax.set_title(f"{impl}, {most} users")
        ax.grid(alpha=0.3, axis="y")
    for ax in axes:
        _log_y(ax)
        _plain_log(ax)
        ax.set_ylabel("response (ms, log): ● median, — p90 and p99, bar to the slowest",
                      fontsize=8)
    fig.suptitle(f"{workload}: response times (medians over the repeats)\n"
                 f"{_fit(whiskers.caption('● median of the ok runs', 'the median p50'), fig, size=11)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"{workload}_latency.png", run.env)]


# ---------------------------------------------------------------- core scaling

def _scaling_metric(presented: Presentation, groups: list[Group]) -> tuple[str, str]:
    """What a scaling panel plots: the iteration time where the workload is
    ranked by time, else its first headline figure (a server's throughput)."""
    metric = analysis.iter_metric(groups) if presented.time_ratio else presented.headline[0]
    return metric, METRICS[metric].axis_label


def cpu_scaling(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """The workload's figure against the CPU count (--cpus), a line per
    implementation, a panel per configuration; drawn when the run has two
    or more CPU counts."""
    groups = [g for g in run.groups if g.workload == workload and g.param("cpus") is not None]
    if len({g.param("cpus") for g in groups}) < 2:
        return []
    metric, ylabel = _scaling_metric(presented, groups)
    scale = 1.0
    if metric == "peak_rss_bytes":
        scale, ylabel = 1 / MIB, "peak RSS (MiB)"
    elif METRICS[metric].unit == "s":
        scale, unit = _time_unit([s.max for g in groups if (s := g.metrics.get(metric))] or [1.0])
        ylabel = ylabel.replace("(s)", f"({unit})")
    configs: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        rest = ConfigKey("", workload, g.n, g.buffer,
                         tuple(p for p in g.params if p[0] not in ("cpus", "machine")))
        configs[rest.settings or workload].append(g)
    fig, axes = _panels(len(configs), 4.2, 3.8)
    failed: set[str] = set()
    shown = Whiskers()
    for ax, (title, members) in zip(axes, sorted(configs.items())):
        lines: dict[str, list[Group]] = defaultdict(list)
        for g in members:
            machine = g.param("machine")
            lines[g.impl + (f" @{machine}" if machine else "")].append(g)
        for name, points in sorted(lines.items()):
            points.sort(key=lambda g: g.param("cpus"))
            have = [g for g in points if metric in g.metrics]
            if have:
                color = run.color[points[0].impl]
                xs = [g.param("cpus") for g in have]
                ys = [g.median(metric) * scale for g in have]
                ax.plot(xs, ys, marker="o", markersize=4, label=name, color=color,
                        linestyle=run.line[points[0].impl])
                draw_whiskers(ax, xs, ys, [scaled(g.interval(metric), scale) for g in have],
                              [g.ok for g in have], color, shown)
            for g in points:
                if metric not in g.metrics and g.failure and g.failure != "skipped":
                    _mark_failed(ax, g.param("cpus"), g.failure)
                    failed.add(g.failure)
        cpus = sorted({g.param("cpus") for g in members})
        ax.set_xticks(cpus, [str(c) for c in cpus])
        ax.set_xlabel("CPUs")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(ylabel)
    _legend(axes[-1], failed)
    fig.suptitle(f"{workload}: {ylabel.split(' (')[0]} against the CPUs it may use\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, size=11)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"{workload}_scaling.png", run.env)]


# ---------------------------------------------------------------- summary

@dataclass(frozen=True)
class Bar:
    """One implementation's bar in a summary.png panel."""
    series: str
    value: float | None  # None: failed, below resolution, or no figure
    interval: Interval | None = None  # in the value's units; None: one run (or none computed)
    runs: int = 0  # ok runs behind the value
    failure: str = ""  # the status, when no run was ok
    below: tuple[int, ...] = ()  # memory per task below resolution: the N it was read over


@dataclass(frozen=True)
class Section:
    """Rows of a panel under one heading: the measured ones, ranked (no
    heading), then the ones that cannot be ranked, each kind apart."""
    heading: str
    bars: tuple[Bar, ...]


def summary_sections(bars: list[Bar]) -> list[Section]:
    """A panel's rows in reading order: measured values ranked, best
    (lowest) first; then failures; then, last, figures below the reading's
    resolution, which are not ranked among the measured ones: a slope too
    small to read is not a small slope. Pure: the tests read it."""
    measured = sorted((b for b in bars if b.value is not None), key=lambda b: (b.value, b.series))
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


Format = Callable[[float | None], str]
# What a summary.png panel may show (presentation.Panel.figure): a group's
# value, its interval (same units) and how it reads.
SUMMARY_FIGURES: dict[str, tuple[Callable[[Group], float | None],
                                 Callable[[Group], Interval | None], Format]] = {
    "mem_per_task": (lambda g: g.mem_per_task_bytes, mem_per_task_interval, fmt_bytes),
    "iteration": (lambda g: g.median(analysis.iter_metric([g])),
                  lambda g: g.interval(analysis.iter_metric([g])), fmt_seconds),
}


def _panel(run: _Run, workload: str, panel: Panel) -> tuple[str, list[Bar], Format] | None:
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
                        _mem_runs(g) if memory else g.ok, g.failure or "",
                        below_resolution(run, g) if memory else ()))
    where = f"N = {n:,}" + (f", B = {buffer}" if panel.buffer is not None else "")
    return f"{panel.what} ({where})", bars, fmt


def summary(run: _Run, out: Path) -> list[Path]:
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
    height = max(sum(len(sec.bars) + bool(sec.heading) for sec in sections)
                 for _, sections, _ in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 0.42 * height + 2.0),
                             squeeze=False)
    shown = Whiskers()
    for ax, (title, sections, fmt) in zip(axes[0], panels):
        measured = [b for sec in sections for b in sec.bars if b.value is not None]
        top = max((max(b.value, b.interval.high if b.interval else 0) for b in measured),
                  default=1.0) or 1.0
        ticks: list[tuple[int, str]] = []
        y = 0
        for sec in sections:
            if sec.heading:
                if y:
                    ax.axhline(y - 0.5, color="#bbbbbb", linewidth=0.6)
                heading = "\n".join(textwrap.fill(line, 62) for line in sec.heading.splitlines())
                ax.text(0, y, heading, va="center", ha="left", fontsize=7.5, style="italic",
                        color=BELOW_COLOR if sec.bars[0].below else "#333333")
                y += 1
            for b in sec.bars:
                ticks.append((y, b.series))
                if b.value is None:
                    text, color = ((f"  ✕ {b.failure}", FAIL_COLOR) if b.failure else
                                   ("  below resolution", BELOW_COLOR) if b.below else
                                   ("  no figure", BELOW_COLOR))
                    ax.text(0, y, text, va="center", fontsize=8, color=color)
                else:
                    ax.barh(y, b.value, color=run.color[b.series], hatch=run.hatch[b.series],
                            edgecolor="white")
                    draw_whiskers(ax, [b.value], [y], [b.interval], [b.runs], WHISKER_COLOR,
                                  shown, horizontal=True)
                    right = max(b.value, b.interval.high) if b.interval else b.value
                    ax.text(right + top * 0.01, y, fmt(b.value), va="center", fontsize=8)
                y += 1
        ax.set_yticks([t for t, _ in ticks], [name for _, name in ticks], fontsize=8)
        ax.set_ylim(y - 0.5, -0.5)  # best at the top
        ax.set_xlim(0, top * 1.3)
        ax.set_xticks([])
        ax.set_title(title, fontsize=10)
        for side in ("top", "right", "bottom"):
            ax.spines[side].set_visible(False)
    fig.suptitle("Lower is better, best at the top\n"
                 + _fit(shown.caption("bars: median of the ok runs (memory: slope of the medians "
                                      "over N)"), fig),
                 fontsize=10, wrap=True)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return [_save(fig, out / "summary.png", run.env)]


# Every plot a workload's presentation may name (presentation.Presentation.plots).
PLOTS: dict[str, Callable[[_Run, Path, str, Presentation], list[Path]]] = {
    "rss_bars": rss_bars, "mem_per_task_bars": mem_per_task_bars, "time_lines": time_lines,
    "rss_lines": rss_lines, "buffer_grid": buffer_grid, "rss_over_time": rss_over_time,
    "http_throughput": http_throughput, "http_threads": http_threads, "http_latency": http_latency,
}


def draw_all(run: RunDir) -> list[Path]:
    """Draw every plot the run's data allows into its plots/ folder; return
    the paths. RSS over time comes last, for every workload."""
    out = run.path / "plots"
    out.mkdir(exist_ok=True)
    data = _Run(run)
    workloads = [w for w in sorted({g.workload for g in data.groups}
                                   | {s["workload"] for s in data.samples},
                                   key=workload_rank) if w in PRESENTATIONS]
    paths: list[Path] = []
    for w in workloads:
        shown = PRESENTATIONS[w]
        paths += [p for kind in shown.plots if kind != "rss_over_time"
                  for p in PLOTS[kind](data, out, w, shown)]
        paths += cpu_scaling(data, out, w, shown)  # every workload, when the run set --cpus
    for w in workloads:
        if "rss_over_time" in PRESENTATIONS[w].plots:
            paths += rss_over_time(data, out, w, PRESENTATIONS[w])
    return paths + summary(data, out)
