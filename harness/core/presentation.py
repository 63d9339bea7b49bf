"""How each workload's results read, declared apart from its protocol
(workloads.py), one entry per workload keyed by its name.

A presentation says what `list` prints, the report's heading, whether
implementations are ranked by time, which figures a workload is read for
(noise warnings, compare's gate), the report's columns, the plots and their
caption, and the panel it adds to summary.png. Report, plots, analysis and
compare read these; none of them names a workload.
"""

from __future__ import annotations

from dataclasses import dataclass

# Report table columns: a metric's name (metrics.METRICS) or one of report's
# own (ratios, memory per task). x_floor: the multiple of the floor
# implementation (impls.toml `floor`), when the run has one.
TIME_COLUMNS = ("first_iter_s", "warm_iter_s", "time_ratio", "x_floor", "peak_rss_bytes",
                "rss_ratio", "mem_per_task", "wall_s", "cpu_s")
MEMORY_COLUMNS = ("peak_rss_bytes", "rss_ratio", "mem_per_task", "x_floor", "spawn_s",
                  "sleep_wait_s", "wall_s", "cpu_s")
# The figures a workload is read for: noise and outliers are reported for these.
TIME_HEADLINE = ("first_iter_s", "warm_iter_s", "peak_rss_bytes")


@dataclass(frozen=True)
class Panel:
    """A workload's bars in summary.png: one per implementation, at the run's
    largest N; lower is better."""
    what: str  # the panel's title, before "(N = ...)"
    figure: str  # an id of plots.SUMMARY_FIGURES: memory per task, or iteration time
    per_n: bool = False  # divided by N: per hop, per message
    buffer: int | None = None  # at this buffer where the run has it, else at its largest


@dataclass(frozen=True)
class Presentation:
    summary: str  # one line for `list`
    title: str  # the report's heading
    time_ratio: bool = True  # rank implementations by time (sleep's time is the sleep)
    headline: tuple[str, ...] = TIME_HEADLINE
    columns: tuple[str, ...] = TIME_COLUMNS  # ids of report.COLUMNS
    plots: tuple[str, ...] = ("time_lines", "rss_lines", "rss_over_time")  # ids of plots.PLOTS
    plot_caption: str = ""  # what the time plots show, after the workload's name
    panel: Panel | None = None  # its part of summary.png, if any


PRESENTATIONS: dict[str, Presentation] = {
    "sleep": Presentation(
        "N tasks each sleep D ms; result = tasks completed",
        "sleep: N tasks sleeping concurrently (after '1 million concurrent tasks', 2024)",
        time_ratio=False, headline=("peak_rss_bytes",), columns=MEMORY_COLUMNS,
        plot_caption="peak RSS of N concurrently sleeping tasks",
        plots=("rss_bars", "mem_per_task_bars", "rss_over_time"),
        panel=Panel("memory per sleeping task", "mem_per_task")),
    "chain": Presentation(
        "N tasks chained by N+1 channels pass x+1 along; result = N",
        "chain: N tasks linked by channels (after Yakunin 2017)",
        plot_caption="time to build and run a chain of N tasks",
        panel=Panel("time per chain hop, warm", "iteration", per_n=True)),
    "chain-await": Presentation(
        "N tasks each await the previous one and add 1; result = N",
        "chain-await: N tasks awaiting each other (after Yakunin 2017)",
        plot_caption="time to build and run a chain of N awaiting tasks"),
    "bounded": Presentation(
        "N producers send their index into one channel of capacity B; result = sum",
        "bounded: N producers, one bounded channel (after 'Go Rust Channel Benchmark')",
        plots=("buffer_grid", "rss_over_time"),
        plot_caption="N producers send once into one bounded channel",
        panel=Panel("time per message, warm", "iteration", per_n=True, buffer=100)),
    "skynet": Presentation(
        "a tree of tasks, 10 children a node, down to N leaves; leaves return their index, "
        "parents the sum; result = N(N-1)/2",
        "skynet: a tree of N leaf tasks, each node spawning 10 (after the skynet benchmark)",
        plot_caption="time to spawn and sum a tree of tasks with N leaves"),
    "http": Presentation(
        "a server answers GET /STYLE/NUM after two simulated calls; U users x R requests "
        "(closed), or a ladder of arrival rates (open), every response checked",
        "http: async vs blocking handlers under load (after Vaughan)",
        time_ratio=False, headline=("rps", "latency_p50_s", "peak_rss_bytes"),
        columns=("load_s", "rps", "latency_p50_s", "latency_p99_s", "latency_p999_s",
                 "latency_max_s", "dropped", "unanswered", "max_threads", "peak_rss_bytes",
                 "gen_cpu_s"),
        plots=("http_throughput", "http_threads", "http_latency"),
        plot_caption="throughput against users"),
}
