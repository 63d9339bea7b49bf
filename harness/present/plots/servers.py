"""The server (http) workloads' figures: throughput and the server's peak
threads against users, a panel per implementation; response times at the
most users; and a rate ladder's p99 against the offered rate."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from matplotlib.lines import Line2D

from ...analyse.analysis import Group
from ..colors import MARKERS
from ...core.formatting import fmt_plain, fmt_sig
from ...core.metrics import KNEE, LATENCIES, METRICS, SUSTAINED, THREADS, THROUGHPUT
from ...core.presentation import Presentation
from ...core.schema import Status, StepVerdict
from ...core.workloads import (DELAY_MS, POOL_THREADS, RATE, STYLE, STYLES, USERS,
                               ladder_p99_bound_s)
from .draw import (FAIL_COLOR, WHISKER_COLOR, Run, Whiskers, draw_whiskers, fit, log_y,
                   layout, mark_failed, panel_grid, plain_log, save, scaled)
from .ranked import ranked_figure


STYLE_COLORS = dict(zip(STYLES, ("#d62728", "#ff7f0e", "#9467bd", "#1f77b4", "#2ca02c")))


def _by_impl(run: Run, workload: str, column: str) -> dict[str, list[Group]]:
    """A server workload's groups that have `column` by implementation:
    USERS, the closed-loop loads (a rate ladder's steps have none); RATE,
    the ladder's steps (an arrival rate each)."""
    out: dict[str, list[Group]] = defaultdict(list)
    for g in run.groups:
        if g.workload == workload and g.key.param(column) is not None:
            out[g.series].append(g)
    return dict(sorted(out.items()))


def _style_label(g: Group) -> str:
    """A line's name: the style, and the server's pool size when given
    (requests per user go with the load, like the users on the x axis)."""
    threads = g.key.param(POOL_THREADS.name)
    return g.key.param(STYLE.name) + (f" T={threads}" if threads is not None else "")


def _style_lines(members_of: list[Group], along: str
                 ) -> list[tuple[str, list[Group], str, str | None]]:
    """A panel's lines: (label, its groups in order of the `along` column,
    the style, its colour), in STYLES' order."""
    lines: dict[str, list[Group]] = defaultdict(list)
    for g in members_of:
        lines[_style_label(g)].append(g)
    return [(label, sorted(members, key=lambda g: g.key.param(along)), label.split()[0],
             STYLE_COLORS.get(label.split()[0]))
            for label, members in sorted(lines.items(),
                                         key=lambda kv: STYLES.index(kv[0].split()[0]))]


STYLE_MARKERS = dict(zip(STYLES, MARKERS))


def _ranked_by_style(run: Run, groups: list[Group], what: str, metric: str, ylabel: str,
                     path: Path, higher_better: bool) -> Path:
    """The one load's figure (what: the workload, figure and load): a ranked
    chart per style, the implementations named, best at the top."""
    styles: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        styles[_style_label(g)].append(g)
    order = sorted(styles, key=lambda lab: (STYLES.index(lab.split()[0])
                                            if lab.split()[0] in STYLES else 99, lab))
    median = lambda g: g.median(metric)  # noqa: E731
    best = "highest" if higher_better else "lowest"
    return ranked_figure(
        run, [styles[lab] for lab in order],
        [(f"style: {lab}", median, lambda g: g.interval(metric)) for lab in order],
        lambda v: fmt_plain(float(fmt_sig(v, 3))) if v is not None else "—",
        f"{what}, a panel per handler style; {best} at the top",
        f"{ylabel} (log scale)", path, higher_better=higher_better, cols=3)


def _style_panel(ax: Any, members_of: list[Group], metric: str, at: dict[int, int],
                 shown: Whiskers, keyed: dict[str, Line2D], failed: set[str]) -> None:
    """One implementation's panel: a line per style over the loads (at: each
    load's place), its whiskers, a mark where no run was ok; the lines
    drawn (keyed) and failures seen (failed) gathered for the figure's key."""
    for label, members, style, color in _style_lines(members_of, USERS.name):
        have = [g for g in members if metric in g.metrics]
        if have:
            xs = [at[g.key.param(USERS.name)] for g in have]
            ys = [g.median(metric) for g in have]
            line, = ax.plot(xs, ys, marker=STYLE_MARKERS.get(style, "o"), markersize=5,
                            color=color, label=label)
            keyed.setdefault(label, line)
            draw_whiskers(ax, xs, ys, [g.interval(metric) for g in have],
                          [g.ok for g in have], color or WHISKER_COLOR, shown)
        for g in members:
            if metric not in g.metrics and g.failure and g.failure != Status.SKIPPED:
                mark_failed(ax, at[g.key.param(USERS.name)], g.failure)
                failed.add(g.failure)


def _per_impl_panels(run: Run, workload: str, metric: str, ylabel: str, title: str,
                     path: Path, higher_better: bool = False) -> list[Path]:
    """The metric against users: a panel per implementation, a line per
    style, the users a category each (the loads run, evenly spaced), one
    key for the figure. When the run has one load only, a ranked chart per
    style instead (ranked_figure): the implementations named, best at the
    top."""
    by_impl = _by_impl(run, workload, USERS.name)
    if not by_impl:
        return []
    groups = [g for members in by_impl.values() for g in members]
    users = sorted({g.key.param(USERS.name) for g in groups})
    if len(users) == 1:
        return [_ranked_by_style(run, groups, f"{workload}: {title.replace(' against users', '')}"
                                 f" at {users[0]:,} users", metric, ylabel, path, higher_better)]
    fig, axes = panel_grid(len(by_impl), 4.2, 3.8)
    failed: set[str] = set()
    shown = Whiskers()
    keyed: dict[str, Line2D] = {}
    at = {u: i for i, u in enumerate(users)}  # categorical: a load is a place, not a number
    for ax, (impl, members_of) in zip(axes, by_impl.items()):
        _style_panel(ax, members_of, metric, at, shown, keyed, failed)
        ax.set_xticks(range(len(users)), [f"{u:,}" for u in users])
        ax.set_xlim(-0.5, len(users) - 0.5)
        ax.set_title(impl)
        ax.set_xlabel("users (the loads run)")
        ax.grid(alpha=0.3, which="both")
    for ax in axes:  # shared y: one log axis for all, when anything was drawn
        log_y(ax)
        plain_log(ax)
        ax.set_ylabel(ylabel + ", log scale")
    order = sorted(keyed, key=lambda lab: (STYLES.index(lab.split()[0]), lab))
    handles: list[Any] = [keyed[lab] for lab in order]
    if failed:
        handles.append(Line2D([], [], marker="X", color=FAIL_COLOR, linestyle="none",
                              markersize=8, label=f"no ok run ({', '.join(sorted(failed))})"))
    fig.suptitle(f"{workload}: {title}\n"
                 f"{fit(shown.caption('points: median of the ok runs'), fig, size=11)}",
                 fontsize=11)
    layout(fig, 0.06)
    if handles:  # one key for the figure, under the panels
        fig.legend(handles, [h.get_label() for h in handles], loc="lower center",
                   ncol=len(handles), fontsize=9, frameon=False, bbox_to_anchor=(0.5, 0.015))
    return [save(fig, path, run.env)]


def http_throughput(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Requests a second against users, a line per style, a panel per implementation."""
    return _per_impl_panels(run, workload, THROUGHPUT, METRICS[THROUGHPUT].axis_label,
                            "throughput against users", out / f"{workload}_throughput.png",
                            higher_better=True)


def http_threads(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """The server's peak thread count against users."""
    return _per_impl_panels(run, workload, THREADS, "peak threads of the server",
                            "the server's peak threads against users",
                            out / f"{workload}_threads.png")


def http_latency(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """Response-time distribution at the most users of each implementation:
    per style, a bar from the median to the slowest response, with ticks at
    p90 and p99."""
    by_impl = _by_impl(run, workload, USERS.name)
    if not by_impl:
        return []
    fig, axes = panel_grid(len(by_impl), 4.2, 4.4)
    whiskers = Whiskers()
    for ax, (impl, groups) in zip(axes, by_impl.items()):
        most = max(g.key.param(USERS.name) for g in groups)
        shown = sorted((g for g in groups if g.key.param(USERS.name) == most and g.metrics),
                       key=lambda g: (STYLES.index(g.key.param(STYLE.name)), _style_label(g)))
        for i, g in enumerate(shown):
            p50, p90, p99, top = (g.median(m) for m in LATENCIES)
            color = STYLE_COLORS.get(g.key.param(STYLE.name))
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
        log_y(ax)
        plain_log(ax)
        ax.set_ylabel("response (ms, log): ● median, — p90 and p99, bar to the slowest",
                      fontsize=8)
    fig.suptitle(f"{workload}: response times (medians over the repeats)\n"
                 f"{fit(whiskers.caption('● median of the ok runs', 'the median p50'), fig, size=11)}",
                 fontsize=11)
    layout(fig)
    return [save(fig, out / f"{workload}_latency.png", run.env)]


P99 = LATENCIES[2]


def _saturated(g: Group) -> bool:
    return any(r.status == Status.OK and r.step_verdict == StepVerdict.SATURATED for r in g.rows)


# On a panel's log axis, a rate is labelled only this far (a ratio) from the
# last one labelled: a knee's bisected steps lie within 10% of each other,
# and their labels would overlap (each step keeps its tick).
LABEL_RATIO = 1.3


def rate_labels(rates: list[int]) -> list[str]:
    """Each sorted rate's tick label: empty where it sits within LABEL_RATIO
    of the last labelled rate below it."""
    labels, last = [], None
    for rate in rates:
        shown = last is None or rate >= last * LABEL_RATIO
        labels.append(fmt_plain(rate) if shown else "")
        last = rate if shown else last
    return labels


def _ladder_panels(run: Run, workload: str) -> dict[tuple[str, int], list[Group]]:
    """A rate ladder's steps by implementation and wait (D): the ladders
    at two waits are two curves apart, never one line through both."""
    panels: dict[tuple[str, int], list[Group]] = defaultdict(list)
    for impl, members in _by_impl(run, workload, RATE.name).items():
        for g in members:
            panels[(impl, g.key.param(DELAY_MS.name))].append(g)
    return dict(sorted(panels.items()))


def http_ladder(run: Run, out: Path, workload: str, presented: Presentation) -> list[Path]:
    """The open loop's picture: each step's p99 against its offered rate,
    a panel per implementation and wait, a line per style, log-log; a
    hollow marker where the step saturated (its latencies understate), a
    red ✕ where no run of it measured the server, the p99 bound dotted, and
    each style's sustained rate (median over the repeats) in the key."""
    panels = _ladder_panels(run, workload)
    if not panels:
        return []
    ladders = {(g.series, g.key.param(DELAY_MS.name), g.key.param(STYLE.name),
                g.key.param(POOL_THREADS.name)): g
               for g in run.groups if g.workload == workload and g.median(SUSTAINED) is not None}
    fig, axes = panel_grid(len(panels), 4.6, 3.9)
    shown = Whiskers()
    failed: set[str] = set()
    for ax, ((impl, delay), members_of) in zip(axes, panels.items()):
        for label, members, style, color in _style_lines(members_of, RATE.name):
            have = [g for g in members if P99 in g.metrics]
            whole = ladders.get((impl, delay, style, members[0].key.param(POOL_THREADS.name)))
            said = (f"{label}: sustains {fmt_plain(whole.median(SUSTAINED))} req/s"
                    + (f", knee {fmt_plain(whole.median(KNEE))}" if whole.median(KNEE) else "")
                    if whole is not None else f"{label}: sustains none")
            if have:
                xs = [g.key.param(RATE.name) for g in have]
                ys = [g.median(P99) * 1e3 for g in have]
                ax.plot(xs, ys, color=color, label=said)
                for x, y, g in zip(xs, ys, have):
                    ax.plot([x], [y], marker=STYLE_MARKERS.get(style, "o"), markersize=6,
                            color=color, markerfacecolor="none" if _saturated(g) else color)
                draw_whiskers(ax, xs, ys, [scaled(g.interval(P99), 1e3) for g in have],
                              [g.ok for g in have], color or WHISKER_COLOR, shown)
            for g in members:
                if P99 not in g.metrics and g.failure and g.failure != Status.SKIPPED:
                    mark_failed(ax, g.key.param(RATE.name), g.failure)
                    failed.add(g.failure)
        ax.axhline(ladder_p99_bound_s(delay) * 1e3, color="#777777", linestyle=":",
                   linewidth=1.2)
        ax.set_xscale("log")
        rates = sorted({g.key.param(RATE.name) for g in members_of})
        ax.set_xticks(rates, rate_labels(rates), fontsize=7)
        ax.minorticks_off()
        ax.set_title(f"{impl}, D = {fmt_plain(delay)} ms")
        ax.set_xlabel("offered rate (requests/s, log)")
        ax.grid(alpha=0.3, which="both")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="best", frameon=False)
    for ax in axes:
        log_y(ax)
        plain_log(ax)
        ax.set_ylabel("p99 response (ms, log)")
    caption = shown.caption("points: median p99 of the ok runs; hollow: saturated (requests "
                            "dropped or unanswered); dotted: the p99 bound")
    if failed:
        caption += f"; ✕: no run measured the server ({', '.join(sorted(failed))})"
    fig.suptitle(f"{workload}: the rate ladder, p99 against the offered rate (open loop)\n"
                 f"{fit(caption, fig, size=11)}", fontsize=11)
    layout(fig)
    return [save(fig, out / f"{workload}_ladder.png", run.env)]
