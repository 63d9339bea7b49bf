"""How each workload's results read, declared apart from its protocol
(workloads.py), one entry per workload keyed by its name.

A presentation says what `list` prints, the report's heading, whether
implementations are ranked by time, which figures a workload is read for
(noise warnings, compare's gate), the report's columns, the plots and their
caption, and the panel it adds to summary.png. Report, plots, analysis and
compare read these; none of them names a workload. Beside them, the
project's performance goals (GOALS), each on the configuration it names,
which the published pages judge (publish/goals.py).
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
    # The plots a published page shows (files of the run's plots/, copied
    # beside the page when there): a report has them all.
    page_plots: tuple[str, ...] = ()


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
        # a ladder's figures are its own group's (core/ladder.py), a step's
        # or a closed loop's the others
        time_ratio=False, headline=("rps", "latency_p50_s", "peak_rss_bytes", "sustained_rps",
                                    "knee_rps"),
        columns=("load_s", "rps", "latency_p50_s", "latency_p99_s", "latency_p999_s",
                 "latency_max_s", "dropped", "unanswered", "max_threads", "peak_rss_bytes",
                 "gen_cpu_s", "sustained_rps", "knee_rps"),
        plots=("http_throughput", "http_threads", "http_latency", "http_ladder"),
        plot_caption="throughput against users", page_plots=("http_ladder.png",)),
}


# --- the project's performance goals (issue 13) --------------------------
# Judged on each published page (publish/goals.py), never timed tests. Each
# names the configuration it is about; a page leaves out a goal whose
# configuration its run did not measure.

@dataclass(frozen=True)
class FigureWithin:
    """One configuration's figure: its settled interval within [low, high]."""
    text: str
    impl: str
    workload: str
    n: int
    metric: str
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class AllRunsOk:
    """Every run of one configuration ok."""
    text: str
    impl: str
    workload: str
    n: int


@dataclass(frozen=True)
class WithinOf:
    """impl's figure over the baseline's, at each buffer: its settled ratio
    interval at most `limit`."""
    text: str
    impl: str
    baseline: str
    workload: str
    n: int
    buffers: tuple[int, ...]
    metric: str
    limit: float


@dataclass(frozen=True)
class SuiteMinutes:
    """The suite's run, start to finish, within `minutes`."""
    text: str
    suite: str
    minutes: float


@dataclass(frozen=True)
class SettledShare:
    """The suite's run settles at least `share` of each family of its
    verdicts (analyse/questions.py: the rankings, the claims), each on its own."""
    text: str
    suite: str
    share: float


Goal = FigureWithin | AllRunsOk | WithinOf | SuiteMinutes | SettledShare

_M = 1_000_000
_MIB = 1 << 20


def _rss_at_most(impl: str, mib: float, text: str) -> FigureWithin:
    return FigureWithin(text, impl, "sleep", _M, "peak_rss_bytes", high=mib * _MIB)


GOALS: tuple[Goal, ...] = (
    FigureWithin("go sleep 1M: ok, wall 10–20 s", "go", "sleep", _M, "wall_s", 10, 20),
    _rss_at_most("rust-tokio", 450, "rust-tokio sleep 1M ≤ 450 MiB"),
    _rss_at_most("rust-futures", 215, "rust-futures sleep 1M ≤ 215 MiB"),
    FigureWithin("rust-tokio chain 1M warm < 1 s", "rust-tokio", "chain", _M, "warm_iter_s",
                 high=1.0),
    _rss_at_most("csharp-async", 250, "csharp-async sleep 1M < 250 MiB"),
    AllRunsOk("csharp-async chain 1M ok", "csharp-async", "chain", _M),
    AllRunsOk("csharp-async chain-await 1M ok", "csharp-async", "chain-await", _M),
    _rss_at_most("java-virtual", 1060, "java-virtual sleep 1M ≤ 1,060 MiB"),
    AllRunsOk("java-virtual chain 1M ok", "java-virtual", "chain", _M),
    _rss_at_most("nodejs", 620, "nodejs sleep 1M < 620 MiB"),
    *(AllRunsOk(f"{impl} chain 1M ok", impl, "chain", _M) for impl in ("nodejs", "bun", "deno")),
    _rss_at_most("python-asyncio", 1280, "python-asyncio sleep 1M ≤ 1,280 MiB"),
    AllRunsOk("python-asyncio chain 1M ok", "python-asyncio", "chain", _M),
    WithinOf("rust-tokio bounded, 10k producers, within 1.5× of Go at B = 1, 100, 1000",
             "rust-tokio", "go", "bounded", 10_000, (1, 100, 1000), "warm_iter_s", 1.5),
    WithinOf("java-virtual bounded, 10k producers, B = 1, within 5× of Go",
             "java-virtual", "go", "bounded", 10_000, (1,), "warm_iter_s", 5.0),
    SuiteMinutes("the default suite in 45 minutes on 2 cores", "default", 45),
    SettledShare("the default suite settles at least 90% of its verdicts, each family "
                 "(rankings, claims) on its own", "default", 0.9),
)
