"""Drawing primitives every figure shares: the run's groups indexed for
plotting (Run), whiskers, line-end labels, log axes, the key, the footer, the file."""

from __future__ import annotations

import io

import math
import textwrap
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties, findfont, get_font
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FuncFormatter, NullFormatter
from PIL import Image

from ...analyse import analysis
from ...analyse.analysis import Group
from ..colors import Palette
from ...core.formatting import fmt_bytes, fmt_plain, fmt_share
from ...core.registry import RegistryError, load_registry
from ...record.rundir import RunDir
from ...core.schema import Env, Status
from ...core.stats import LEVEL, Interval

MIB = 1 << 20
# A failed group (no ok repeat: oom, timeout, crashed, invalid, build-failed)
# is drawn as a red ✕ with its status where its value would be (mark_failed),
# so a failure is never mistaken for a missing bar; implementations whose
# toolchain is absent (skipped) are left out (Run).
FAIL_COLOR = "#d62728"
BELOW_COLOR = "#555555"  # memory per task below the reading's resolution: shown, never ranked
WHISKER_COLOR = "#222222"  # whiskers on bars (a line's whiskers take its colour)
DPI = 120
LABEL_SIZE = 7.5  # direct labels at line ends (points)
# Line styles that tell an implementation's CPU counts or machines apart.
VARIANT_LINES = ("-", "--", ":", "-.")


def time_unit(values: list[float]) -> tuple[float, str]:
    """A scale and unit that keep the largest value between 1 and 1000."""
    top = max(values, default=1.0)
    for limit, scale, unit in ((1.0, 1.0, "s"), (1e-3, 1e3, "ms"), (1e-6, 1e6, "µs")):
        if top >= limit:
            return scale, unit
    return 1e9, "ns"


def plain_log(ax: Axes) -> None:
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


def _footer(fig: Figure, env: Env) -> None:
    host = env.host
    parts = [host.get("hostname"), host.get("cpu_model"),
             f"{host['cores']} cores" if host.get("cores") else None,
             f"{fmt_bytes(host['ram_bytes'])} RAM" if host.get("ram_bytes") else None,
             host.get("os"),
             f"run {env.run_id}" if env.run_id else None,
             (env.started_at or "")[:10] or None]
    text = " · ".join(p for p in parts if p) or "machine and date unknown (no env.json)"
    fig.text(0.995, 0.005, text, ha="right", va="bottom", fontsize=6.5, color="#555555")


def mark_failed(ax: Axes, x: float, status: str) -> None:
    """A red ✕ at the bottom of the axes at data position x, with the status."""
    trans = ax.get_xaxis_transform()  # x in data units, y in axes fraction
    ax.plot([x], [0.04], marker="X", color=FAIL_COLOR, markersize=9, transform=trans,
            clip_on=False, zorder=5, linestyle="none", gid="failed")
    ax.text(x, 0.08, status, transform=trans, rotation=90, ha="center", va="bottom",
            fontsize=7, color=FAIL_COLOR, zorder=5)


def log_y(ax: Axes) -> None:
    """A log y axis, unless nothing positive was drawn (every run failed):
    matplotlib cannot draw a log axis of nothing, and the ✕ marks say it all.
    Panels that share their y axis (panel_grid) are scaled by every panel's
    values: the last panel's alone would cut off another's lower points."""
    panels = ax.get_shared_y_axes().get_siblings(ax)
    ys = [float(y) for panel in panels for line in panel.get_lines()
          if line.get_gid() not in ("failed", "below")
          for y in line.get_ydata() if math.isfinite(float(y))]
    ys += [p.get_height() for panel in panels for p in panel.patches]
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


def partly_failed(g: Group) -> bool:
    """Some repeats ok, some failed: the median stands on fewer runs."""
    return bool(g.ok) and g.ok < len(g.rows)


def legend(ax: Axes, failed: set[str], partial: bool = False, failed_text: str = "no ok run",
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


@cache
def _glyphs(font_file: str) -> frozenset[int]:
    return frozenset(get_font(font_file).get_charmap())


def drawable(text: str, font: FontProperties) -> str:
    """text in characters font has: a control character (an ESC in a host
    name) or a script it lacks becomes U+FFFD, where matplotlib would warn
    on the terminal and draw an empty box. A newline stays: it breaks lines."""
    have = _glyphs(findfont(font))
    return "".join(c if c == "\n" or ord(c) in have else "\ufffd" for c in text)


def _make_drawable(fig: Figure) -> None:
    """Every text of fig drawable, tick labels given as strings included."""
    for text in fig.findobj(Text):
        text.set_text(drawable(text.get_text(), text.get_fontproperties()))
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for formatter in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if isinstance(formatter, FixedFormatter):
                    formatter.seq = [drawable(str(s), FontProperties()) for s in formatter.seq]


def layout(fig: Figure, bottom: float = 0.02) -> None:
    """The figure's tight layout above `bottom` (the footer's room), its
    texts made drawable first: the layout measures them."""
    _make_drawable(fig)
    fig.tight_layout(rect=(0, bottom, 1, 1))


def save(fig: Figure, path: Path, env: Env, dpi: int = DPI) -> Path:
    _footer(fig, env)
    _make_drawable(fig)  # the footer, and a key added after the layout
    for ax in fig.axes:  # the layout is final: nudge the line-end labels for it
        _place_labels(ax)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=dpi, format="png")
    plt.close(fig)
    # A plot draws a few lines and their anti-aliased edges: a palette of 64
    # colours holds them (23 implementations' colours and their edges; 256
    # looked the same and took a fifth more bytes), at about a quarter of
    # the bytes of full colour (report.html embeds every plot). Pillow comes
    # with matplotlib.
    image = Image.open(buffer).convert("RGB").quantize(colors=64,
                                                       method=Image.Quantize.MEDIANCUT)
    image.save(path, format="PNG", optimize=True)
    return path


class Run:
    """The groups of one run, indexed for plotting."""

    def __init__(self, run: RunDir) -> None:
        # Languages that never ran are not results; every other failure is drawn.
        results = analysis.analyse(run, leave_out=(Status.SKIPPED,))
        self.groups = results.groups
        self.env: Env = results.env
        self.samples = run.samples()
        # Colours from the registry, never from this run's subset (colors.py).
        try:
            registry = load_registry()
        except RegistryError:  # a broken impls.toml costs colours, not the plots
            registry = []
        palette = self.palette = Palette(registry)
        impls = {g.impl for g in self.groups} | {s.impl for s in self.samples}
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
        parts = [what, f"whiskers: {fmt_share(LEVEL)} interval of {of}"]
        if self.unsettled:
            lo, hi = min(self.unsettled), max(self.unsettled)
            only = fmt_share(lo) if lo == hi else f"{fmt_share(lo)}–{fmt_share(hi)}"
            parts.append(f"dashed: too few runs for {fmt_share(LEVEL)}, only {only}")
        if self.single:
            parts.append("one run: no interval")
        return "; ".join(parts)


def fit(text: str, fig: Figure, share: float = 1.0, size: float = 10) -> str:
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
#
# A figure at one N (one load) is a ranked chart, an implementation a row,
# named, best at the top (ranked.ranked_sections); figures at several N are
# lines on log axes, each named at its end (label_ends, nudged apart: nudge).
# Every implementation has its colour (a hue per language) and, within its
# language, a marker and a dash style of its own (colors.py), so a
# language's variants read apart without colour.


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


def panel_grid(count: int, width: float, height: float) -> tuple[Figure, list[Axes]]:
    """Up to four panels a row."""
    cols = min(count, 4)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols + 2.5, height * rows),
                             squeeze=False, sharey=True)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def finish_panels(fig: Figure, axes: list[Axes], run: Run, ylabel: str, title: str,
                  shown: Whiskers, path: Path) -> Path:
    """A panelled figure's y label, title (its {} the figure's name) with the
    whiskers' caption, layout and file."""
    axes[0].set_ylabel(ylabel)
    return finish_figure(fig, run, title.format(ylabel.split(" (")[0]), shown, path)


def finish_figure(fig: Figure, run: Run, title: str, shown: Whiskers, path: Path) -> Path:
    """A figure of panels: its title over the whiskers' caption, layout and file."""
    fig.suptitle(title + "\n" + fit(shown.caption("points: median of the ok runs"), fig, size=11),
                 fontsize=11)
    layout(fig)
    return save(fig, path, run.env)
