"""PNG plots of one run directory (matplotlib, Agg backend).

Only this module imports matplotlib, and only `report`/`plot` reach it: the
measuring process never pays for it. Failed groups (no ok repeat: oom,
timeout, crashed, invalid, build-failed) are drawn as a red ✕ with the status
at the place the value would be, so a failure is never mistaken for a
missing bar. Implementations whose toolchain is absent (skipped) are left out.

How runtimes are told apart: a figure at one N (one load) is a ranked chart,
an implementation a row, named, best at the top (ranked_sections); figures
at several N are lines on log axes, each named at its end (label_ends,
nudged apart: nudge). Every implementation has its colour (a hue per
language) and, within its language, a marker and a dash style of its own
(colors.py), so a language's variants read apart without colour.
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
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: E402

from . import analysis  # noqa: E402
from .analysis import Group  # noqa: E402
from .colors import MARKERS, Palette  # noqa: E402
from .formatting import fmt_bytes, fmt_plain, fmt_seconds  # noqa: E402
from .metrics import LATENCIES, METRICS, THROUGHPUT  # noqa: E402
from .presentation import PRESENTATIONS, Panel, Presentation  # noqa: E402
from .registry import RegistryError, load_registry  # noqa: E402
from .rundir import ConfigKey, Outputs, RunDir, RunDirError  # noqa: E402
from .stats import LEVEL, Interval  # noqa: E402
from .variants import parse, release_key  # noqa: E402
from .workloads import STYLES, workload_rank  # noqa: E402

MIB = 1 << 20
FAIL_COLOR = "#d62728"
BELOW_COLOR = "#555555"  # memory per task below the reading's resolution: shown, never ranked
WHISKER_COLOR = "#222222"  # whiskers on bars (a line's whiskers take its colour)
DPI = 120
LABEL_SIZE = 7.5  # direct labels at line ends (points)
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
        # margin (a bar chart's would start at 0.01 MiB), to a little above
        # the largest (a limit kept from the linear scale could cut it off)
        ax.set_ylim(bottom=10 ** math.floor(math.log10(min(positive))),
                    top=max(max(positive) * 1.3, ax.get_ylim()[1]))
    else:
        ax.set_yticks([])


def _partial(g: Group) -> bool:
    """Some repeats ok, some failed: the median stands on fewer runs."""
    return bool(g.ok) and g.ok < len(g.rows)


def _legend(ax: Axes, failed: set[str], partial: bool = False, failed_text: str = "no ok run",
            zero: bool = False, below_text: str = "", series: bool = True) -> None:
    """The key, outside the axes on the right; series=False: the marks
    only (failed, partial, zero, below resolution), under the axes, where
    the lines are named at their ends (label_ends)."""
    handles, labels = ax.get_legend_handles_labels() if series else ([], [])
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
    if handles and series:  # outside the axes, right: it never hides data
        ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1),
                  borderaxespad=0)
    elif handles:  # under the axes: the right is the lines' names
        ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.13),
                  borderaxespad=0, ncol=min(len(handles), 3), frameon=False)


def _save(fig: Figure, path: Path, env: dict[str, Any]) -> Path:
    _footer(fig, env)
    for ax in fig.axes:  # the layout is final: nudge the line-end labels for it
        _place_labels(ax)
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
        palette = self.palette = Palette(registry)
        impls = {g.impl for g in self.groups} | {s["impl"] for s in self.samples}
        self.color = {impl: palette.color(impl) for impl in impls}
        self.line = {impl: palette.line_style(impl) for impl in impls}
        self.hatch = {impl: palette.hatch(impl) for impl in impls}
        self.marker = {impl: palette.marker(impl) for impl in impls}
        # A series is an impl, or one of its CPU counts or machines (Group.series):
        # the impl's colour, and a line style of its own among its variants.
        variants: dict[str, set[str]] = defaultdict(set)
        for g in self.groups:
            if g.series != g.impl:
                variants[g.impl].add(g.series)
        for impl, names in variants.items():
            for i, name in enumerate(sorted(names)):
                self.color[name], self.hatch[name] = self.color[impl], self.hatch[impl]
                self.marker[name] = self.marker[impl]
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


# ---------------------------------------------------------------- telling runtimes apart

def nudge(positions: list[float], gap: float) -> list[float]:
    """Label positions (one axis, any unit) moved apart so that neighbours
    are at least gap apart, each as little as it can (a run of labels that
    would overlap is spread evenly around where its labels want to be),
    their order kept. Returned in the order given. Pure: the tests read it."""
    order = sorted(range(len(positions)), key=lambda i: (positions[i], i))
    clusters: list[tuple[list[int], float]] = []  # (members bottom up, the lowest one's position)
    for i in order:
        clusters.append(([i], positions[i]))
        while len(clusters) > 1:
            (low, start), (high, begin) = clusters[-2], clusters[-1]
            if start + len(low) * gap <= begin + 1e-9:
                break
            members = low + high
            # the lowest position that keeps the run centred on its wishes
            start = sum(positions[j] - k * gap for k, j in enumerate(members)) / len(members)
            clusters[-2:] = [(members, start)]
    out = [0.0] * len(positions)
    for members, start in clusters:
        for k, j in enumerate(members):
            out[j] = start + k * gap
    return out


def _ink(color: Any) -> Any:
    """A colour a little darker, for text: a pale shade stays legible."""
    try:
        r, g, b = matplotlib.colors.to_rgb(color)
    except ValueError:
        return color
    return (r * 0.8, g * 0.8, b * 0.8)


@dataclass
class _EndLabel:
    """A line's name at its end: text (and a sample of its marker and dash,
    outside the axes) at y (data), nudged apart from its neighbours."""
    text: Any
    y: float
    sample: Any = None


def label_ends(ax: Axes, ends: list[tuple[str, float, float, Any, Any, str]]) -> None:
    """Each line's name at its last point: (name, x, y, colour, dash,
    marker). Lines that reach the axis' last x are named in a column
    outside the axes' right edge, each with a sample of its dash and
    marker (a legend that sits where the lines end); lines that stop
    earlier (a crash, a timeout) are named next to their last point. Each
    column is nudged apart (nudge) so no two names overlap."""
    if not ends:
        return
    last = max(x for _, x, *_ in ends)
    ends = [(name, x, y, _ink(color), dash, marker) for name, x, y, color, dash, marker in ends]
    labels: list[_EndLabel] = getattr(ax, "_end_labels", [])
    for name, x, y, color, dash, marker in ends:
        if x >= last * (1 - 1e-9):
            text = ax.annotate(name, (1.0, 0.5), xycoords="axes fraction", xytext=(30, 0),
                               textcoords="offset points", va="center", ha="left",
                               fontsize=LABEL_SIZE, color=color, annotation_clip=False)
            sample = Line2D([0, 0], [0, 0], color=color, linestyle=dash, marker=marker,
                            markevery=[1], markersize=4, linewidth=1.2, clip_on=False)
            ax.add_artist(sample)
            labels.append(_EndLabel(text, y, sample))
        else:
            text = ax.annotate(name, (x, y), xycoords="data", xytext=(6, 0),
                               textcoords="offset points", va="center", ha="left",
                               fontsize=LABEL_SIZE - 0.5, color=color, annotation_clip=False)
            labels.append(_EndLabel(text, y))
    ax._end_labels = labels  # type: ignore[attr-defined]
    _place_labels(ax)


def _place_labels(ax: Axes) -> None:
    """Put label_ends' names where the axes now are (after the layout):
    each column at its lines' heights, nudged at least a font height apart."""
    labels: list[_EndLabel] = getattr(ax, "_end_labels", [])
    if not labels:
        return
    fig = ax.figure
    box = ax.get_window_extent()
    gap = LABEL_SIZE * 1.15 * fig.dpi / 72  # a line of text, in pixels
    columns: dict[Any, list[_EndLabel]] = defaultdict(list)
    for label in labels:
        columns[label.sample is None and label.text.xy[0]].append(label)
    for column in columns.values():
        wanted = [ax.transData.transform((1.0, lab.y))[1] for lab in column]
        for lab, at in zip(column, nudge(wanted, gap)):
            frac = (at - box.y0) / box.height if box.height else 0.5
            if lab.sample is not None:
                lab.text.xy = (1.0, frac)
                # the sample: from 4 to 26 points right of the axes, in axes fraction
                per_point = fig.dpi / 72 / box.width if box.width else 0.0
                lab.sample.set_transform(ax.transAxes)
                lab.sample.set_data([1 + 4 * per_point, 1 + 15 * per_point,
                                     1 + 26 * per_point], [frac] * 3)
                lab.sample.set_markevery([1])
            else:
                lab.text.xyann = (6, (at - ax.transData.transform((1.0, lab.y))[1])
                                  * 72 / fig.dpi)


def log_ticks(lo: float, hi: float, base: int = 10, most: int = 8) -> list[float]:
    """Tick values for a log axis from lo to hi: the powers of base in
    between, thinned to at most `most`; with 1, 2 and 5 (base 10) when
    fewer than two powers fall inside. Pure."""
    if lo <= 0 or hi <= lo:
        return []
    first, last = math.floor(math.log(lo, base)), math.ceil(math.log(hi, base))
    powers = [float(base) ** k for k in range(first, last + 1) if lo <= base ** k <= hi]
    for subs in ((1, 2, 5), (1, 2, 3, 5), tuple(range(1, 10))):
        if len(powers) >= 3 or base != 10:
            break
        powers = [m * 10.0 ** k for k in range(first - 1, last + 1) for m in subs
                  if lo <= m * 10.0 ** k <= hi]
    step = max(1, math.ceil(len(powers) / most))
    return powers[::step]


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


def draw_ranked(ax: Axes, run: _Run, sections: list[Section], fmt: Format, shown: Whiskers,
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


def _group_bars(groups: list[Group], value: Callable[[Group], float | None],
                interval: Callable[[Group], Interval | None]) -> list[Bar]:
    """One row per group for a ranked chart: its value (None where it failed)
    and interval, the ok runs behind them."""
    return [Bar(g.series, v, interval(g) if v is not None else None, g.ok,
                (g.failure or "") if v is None else "", partial=_partial(g))
            for g in groups for v in [value(g)]
            if v is not None or (g.failure and g.failure != "skipped")]


def _heading_rows(heading: str, width: int = 62) -> int:
    """Rows a section's heading takes: two lines of it a row."""
    lines = sum(len(textwrap.wrap(line, width)) or 1 for line in heading.splitlines())
    return (lines + 1) // 2


def _ranked_height(sections: list[Section]) -> int:
    return sum(len(sec.bars) + (_heading_rows(sec.heading) if sec.heading else 0)
               for sec in sections)


Panelled = tuple[str, Callable[[Group], float | None], Callable[[Group], Interval | None]]


def _ranked_figure(run: _Run, groups: list[Group] | list[list[Group]], panels: list[Panelled],
                   fmt: Format, title: str, xlabel: str, path: Path, higher_better: bool = False,
                   what: str = "points: median of the ok runs", cols: int = 2) -> Path:
    """Figures at one N (or one load), a ranked chart per panel (draw_ranked):
    (panel title, value, interval) each, values in fmt's units; groups: the
    same for every panel, or a list of them per panel. Up to cols a row."""
    per_panel = groups if groups and isinstance(groups[0], list) else [groups] * len(panels)
    sections = [ranked_sections(_group_bars(members, value, interval), higher_better)
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
    fig.suptitle(f"{title}\n{_fit(shown.caption(what), fig, size=11)}", fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return _save(fig, path, run.env)


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
        pad = 3.0 if hi / lo < 10 else 2.2  # room for the dodged points
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
    names = {"first_iter_s": "cold (first) iteration", "warm_iter_s": "warm (median of later) iteration"}
    caption = presented.plot_caption or "time per iteration"
    if len({g.n for g in groups}) == 1:
        return [_ranked_figure(
            run, groups, [(names[m], *_scaled(m, 1.0)) for m in panels], fmt_seconds,
            f"{workload}: {caption}, N = {groups[0].n:,}; lower is better, best at the top",
            "time per iteration (log scale)", out / f"{workload}_time.png")]
    times = [s.max for g in groups for m in panels if (s := g.metrics.get(m))]
    scale, unit = _time_unit(times)
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
    _legend(axes[0][-1], failed, partial, zero=zero, series=False)
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
    if len({g.n for g in groups}) == 1:
        return [_ranked_figure(
            run, groups, [("", *_scaled("peak_rss_bytes", 1.0))], fmt_bytes,
            f"{workload}: peak RSS, N = {groups[0].n:,}; lower is better, best at the top",
            "peak RSS (log scale)", out / f"{workload}_rss.png")]
    fig, ax = plt.subplots(figsize=(10, 5.6))
    failed: set[str] = set()
    shown = Whiskers()
    y, interval = _scaled("peak_rss_bytes", 1 / MIB)
    ends: list = []
    partial, zero = _lines(ax, run, groups, lambda g: g.n, y, interval, failed, shown, ends)
    _loglog(ax, [g.n for g in groups])
    label_ends(ax, ends)
    ax.set_xlabel("number of tasks N (log scale)")
    ax.set_ylabel("peak RSS (MiB, log scale)")
    ax.set_title(f"{workload}: peak RSS against N\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, 0.7)}", fontsize=10)
    _legend(ax, failed, partial, zero=zero, series=False)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"{workload}_rss.png", run.env)]


def buffer_grid(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
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
        scale, unit = _time_unit(times)
        y, interval = _scaled(metric, scale)
        if len({g.buffer for g in members}) == 1:  # one buffer: a ranked chart
            y, interval = _scaled(metric, 1.0)
            sections = ranked_sections(_group_bars(members, y, interval))
            draw_ranked(ax, run, sections, fmt_seconds, shown)
            ax.set_title(f"N = {n:,} producers, buffer {members[0].buffer:,}")
            ax.set_xlabel(f"time per iteration, {'warm' if metric == 'warm_iter_s' else 'cold'}"
                          " (log scale); best at the top")
            continue
        ends: list = []
        p, z = _lines(ax, run, members, lambda g: g.buffer, y, interval, failed, shown, ends)
        partial, zero = partial or p, zero or z
        ax.set_xscale("symlog", linthresh=1)  # symlog keeps a rendezvous (buffer 0) on the axis
        _log_y(ax)
        _x_at_data(ax, [g.buffer for g in members])
        _plain_log(ax)
        ax.grid(alpha=0.3, which="both")
        label_ends(ax, ends)
        kind = "warm" if metric == "warm_iter_s" else "cold"
        ax.set_title(f"N = {n:,} producers")
        ax.set_xlabel("channel buffer size (log scale)")
        ax.set_ylabel(f"time per iteration, {kind} ({unit}, log scale)")
    _legend(axes[0][-1], failed, partial, zero=zero, series=False)
    fig.suptitle(f"{workload}: {presented.plot_caption}\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, size=11)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return [_save(fig, out / f"{workload}_time.png", run.env)]


def rss_over_time(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """RSS against time for the largest N of each implementation (one rep),
    each line named at its end on the right panel (every run ends at 1 there)."""
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
    fig, (ax, norm) = plt.subplots(1, 2, figsize=(18, 5.6), sharey=True)
    failed: set[str] = set()
    ends: list[tuple[str, float, float, Any, Any, str]] = []
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
        # named at the line's end on the right panel, where every run ends at 1
        ends.append((label, 1.0, ys[-1], run.color[impl], run.line[impl], ""))
        _log_y(panel)
        _plain_log(panel)
        panel.grid(alpha=0.3, which="both")
    ax.set_xlabel(f"time since process start ({unit})")
    norm.set_xlabel("share of the run's own time (start = 0, exit = 1)")
    ax.set_ylabel("RSS (MiB, log scale)")
    fig.suptitle(f"{workload}: RSS over time, largest N of each implementation")
    _legend(norm, failed, failed_text="run ended without a valid result", series=False)
    label_ends(norm, ends)
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


STYLE_MARKERS = dict(zip(STYLES, MARKERS))


def _per_impl_panels(run: _Run, workload: str, metric: str, ylabel: str, title: str,
                     path: Path, higher_better: bool = False) -> list[Path]:
    """The metric against users: a panel per implementation, a line per
    style, the users a category each (the loads run, evenly spaced), one
    key for the figure. When the run has one load only, a ranked chart per
    style instead (_ranked_figure): the implementations named, best at the
    top."""
    by_impl = _served(run, workload)
    if not by_impl:
        return []
    groups = [g for members in by_impl.values() for g in members]
    users = sorted({g.key.param("users") for g in groups})
    if len(users) == 1:
        styles: dict[str, list[Group]] = defaultdict(list)
        for g in groups:
            styles[_style_label(g)].append(g)
        order = sorted(styles, key=lambda lab: (STYLES.index(lab.split()[0])
                                                if lab.split()[0] in STYLES else 99, lab))
        median = lambda g: g.median(metric)  # noqa: E731
        best = "highest" if higher_better else "lowest"
        return [_ranked_figure(
            run, [styles[lab] for lab in order],
            [(f"style: {lab}", median, lambda g: g.interval(metric)) for lab in order],
            lambda v: fmt_plain(float(f"{v:.3g}")) if v is not None else "—",
            f"{workload}: {title.replace(' against users', '')} at {users[0]:,} users, "
            f"a panel per handler style; {best} at the top",
            f"{ylabel} (log scale)", path, higher_better=higher_better, cols=3)]
    fig, axes = _panels(len(by_impl), 4.2, 3.8)
    failed: set[str] = set()
    shown = Whiskers()
    keyed: dict[str, Line2D] = {}
    at = {u: i for i, u in enumerate(users)}  # categorical: a load is a place, not a number
    for ax, (impl, members_of) in zip(axes, by_impl.items()):
        lines: dict[str, list[Group]] = defaultdict(list)
        for g in members_of:
            lines[_style_label(g)].append(g)
        for label, members in sorted(lines.items(), key=lambda kv: STYLES.index(kv[0].split()[0])):
            members.sort(key=lambda g: g.key.param("users"))
            style = label.split()[0]
            color = STYLE_COLORS.get(style)
            have = [g for g in members if metric in g.metrics]
            if have:
                xs = [at[g.key.param("users")] for g in have]
                ys = [g.median(metric) for g in have]
                line, = ax.plot(xs, ys, marker=STYLE_MARKERS.get(style, "o"), markersize=5,
                                color=color, label=label)
                keyed.setdefault(label, line)
                draw_whiskers(ax, xs, ys, [g.interval(metric) for g in have],
                              [g.ok for g in have], color or WHISKER_COLOR, shown)
            for g in members:
                if metric not in g.metrics and g.failure and g.failure != "skipped":
                    _mark_failed(ax, at[g.key.param("users")], g.failure)
                    failed.add(g.failure)
        ax.set_xticks(range(len(users)), [f"{u:,}" for u in users])
        ax.set_xlim(-0.5, len(users) - 0.5)
        ax.set_title(impl)
        ax.set_xlabel("users (the loads run)")
        ax.grid(alpha=0.3, which="both")
    for ax in axes:  # shared y: one log axis for all, when anything was drawn
        _log_y(ax)
        _plain_log(ax)
        ax.set_ylabel(ylabel + ", log scale")
    order = sorted(keyed, key=lambda lab: (STYLES.index(lab.split()[0]), lab))
    handles: list[Any] = [keyed[lab] for lab in order]
    if failed:
        handles.append(Line2D([], [], marker="X", color=FAIL_COLOR, linestyle="none",
                              markersize=8, label=f"no ok run ({', '.join(sorted(failed))})"))
    fig.suptitle(f"{workload}: {title}\n"
                 f"{_fit(shown.caption('points: median of the ok runs'), fig, size=11)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    if handles:  # one key for the figure, under the panels
        fig.legend(handles, [h.get_label() for h in handles], loc="lower center",
                   ncol=len(handles), fontsize=9, frameon=False, bbox_to_anchor=(0.5, 0.015))
    return [_save(fig, path, run.env)]


def http_throughput(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Requests a second against users, a line per style, a panel per implementation."""
    return _per_impl_panels(run, workload, THROUGHPUT, METRICS[THROUGHPUT].axis_label,
                            "throughput against users", out / f"{workload}_throughput.png",
                            higher_better=True)


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


def _scaling_axis(presented: Presentation, groups: list[Group]) -> tuple[str, str, float]:
    """A scaling or sweep plot's figure, its y label and the factor that
    puts its values in the label's unit (MiB, or the time unit that fits)."""
    metric, ylabel = _scaling_metric(presented, groups)
    if metric == "peak_rss_bytes":
        return metric, "peak RSS (MiB)", 1 / MIB
    if METRICS[metric].unit == "s":
        scale, unit = _time_unit([s.max for g in groups if (s := g.metrics.get(metric))] or [1.0])
        return metric, ylabel.replace("(s)", f"({unit})"), scale
    return metric, ylabel, 1.0


def _finish_panels(fig: Figure, axes: list[Axes], run: _Run, ylabel: str, title: str,
                   shown: Whiskers, path: Path) -> Path:
    """A panelled figure's y label, title (its {} the figure's name) with the
    whiskers' caption, layout and file."""
    axes[0].set_ylabel(ylabel)
    fig.suptitle(title.format(ylabel.split(" (")[0]) + "\n"
                 + _fit(shown.caption("points: median of the ok runs"), fig, size=11), fontsize=11)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return _save(fig, path, run.env)


def cpu_scaling(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """The workload's figure against the CPU count (--cpus), a line per
    implementation, a panel per configuration; drawn when the run has two
    or more CPU counts."""
    groups = [g for g in run.groups if g.workload == workload and g.param("cpus") is not None]
    if len({g.param("cpus") for g in groups}) < 2:
        return []
    metric, ylabel, scale = _scaling_axis(presented, groups)
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
    _legend(axes[-1], failed)
    return [_finish_panels(fig, axes, run, ylabel, f"{workload}: {{}} against the CPUs it may use",
                           shown, out / f"{workload}_scaling.png")]


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


def version_sweep(run: _Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
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
    metric, ylabel, scale = _scaling_axis(presented, groups)
    fig, axes = _panels(len(swept), 5.0, 3.8)
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
                if metric not in g.metrics and g.failure and g.failure != "skipped":
                    _mark_failed(ax, at[v], g.failure)
                    failed.add(g.failure)
        ax.set_xticks(range(len(releases)), releases, rotation=45 if len(releases) > 4 else 0,
                      ha="right" if len(releases) > 4 else "center", fontsize=8)
        ax.set_xlabel("release")
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    if failed:
        _legend(axes[-1], failed)
    return [_finish_panels(fig, axes, run, ylabel, f"{workload}: {{}} against the release",
                           shown, out / f"{workload}_versions.png")]


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
                        below_resolution(run, g) if memory else (),
                        partial=_partial(g) and v is not None))
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
    height = max(_ranked_height(sections) for _, sections, _ in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 0.36 * height + 2.2),
                             squeeze=False)
    shown = Whiskers()
    for ax, (title, sections, fmt) in zip(axes[0], panels):
        draw_ranked(ax, run, sections, fmt, shown, title=title)
        ax.set_xlabel("log scale", fontsize=8)
    fig.suptitle("Lower is better, best at the top (log scales)\n"
                 + _fit(shown.caption("points: median of the ok runs (memory: slope of the medians "
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


def read(run: RunDir) -> _Run:
    """What the plots draw, read and checked: nothing is written before."""
    data = _Run(run)
    plots = run.path / "plots"
    if (plots.exists() or plots.is_symlink()) and not plots.is_dir():
        raise RunDirError(f"{plots} exists and is not a folder: move it away")
    return data


def draw_all(run: RunDir, into: Path | None = None, data: _Run | None = None) -> list[Path]:
    """Draw every plot the run's data allows into its plots/ folder; return
    the paths. RSS over time comes last, for every workload. The run is
    read (data: read(run), if already) before anything is written; the
    plots are drawn aside and moved into plots/ at the end (rundir.Outputs),
    or into `into` (a staging folder's plots/, for the report)."""
    data = data if data is not None else read(run)
    if into is None:
        with Outputs(run.path) as staged:
            drawn = _draw(data, staged.dir / "plots")
        return [run.path / "plots" / p.name for p in drawn]
    return _draw(data, into)


def _draw(data: _Run, out: Path) -> list[Path]:
    out.mkdir(exist_ok=True)
    workloads = [w for w in sorted({g.workload for g in data.groups}
                                   | {s["workload"] for s in data.samples},
                                   key=workload_rank) if w in PRESENTATIONS]
    paths: list[Path] = []
    for w in workloads:
        shown = PRESENTATIONS[w]
        paths += [p for kind in shown.plots if kind != "rss_over_time"
                  for p in PLOTS[kind](data, out, w, shown)]
        paths += cpu_scaling(data, out, w, shown)  # every workload, when the run set --cpus
        paths += version_sweep(data, out, w, shown)  # when the run holds releases (IMPL@VERSION)
    for w in workloads:
        if "rss_over_time" in PRESENTATIONS[w].plots:
            paths += rss_over_time(data, out, w, PRESENTATIONS[w])
    return paths + summary(data, out)
