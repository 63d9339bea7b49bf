"""The workloads of docs/protocol.md, declared as data.

Everything the harness knows about a workload lives in its declaration here:
what the program is asked (extra arguments), the answer it must give and any
extra check, the row columns it fills, how long a run should take, and how
the results read (title, headline figures, table columns, plots). Every other
module iterates over WORKLOADS; adding a workload means adding a declaration,
the programs and their tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

NS = 1_000_000_000
START_S = 0.3  # process start and runtime set-up, when nothing better is known

# Report table columns (report.py renders each id).
TIME_COLUMNS = ("cold", "warm", "time_ratio", "peak_rss", "rss_ratio", "mem_per_task", "wall",
                "cpu")
MEMORY_COLUMNS = ("peak_rss", "rss_ratio", "mem_per_task", "spawn", "sleep_wait", "wall", "cpu")
# The figures a workload is read for: noise and outliers are reported for these.
TIME_HEADLINE = ("first_iter_s", "warm_iter_s", "peak_rss_bytes")


@dataclass(frozen=True)
class Request:
    """What the harness asks one program run to do."""
    workload: str
    n: int
    buffer: int | None
    iterations: int
    duration_ms: int
    tasks_start: str = "when-spawned"  # the implementation's, see registry.TASKS_START


@dataclass(frozen=True)
class Workload:
    name: str
    summary: str  # one line for `list`
    title: str  # the report's heading
    default_iterations: int
    expected: Callable[[int], int]
    uses_buffer: bool = False  # a dimension of the configuration, passed as --buffer
    uses_duration: bool = False  # passed as --duration-ms
    # Extra validation of the program's JSON: an error, or None when it holds.
    check: Callable[[dict[str, Any], Request], str | None] | None = None
    # Extra runs.csv columns from a valid JSON line.
    fields: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # Seconds one run should take, given the median of `history_column` over
    # this machine's earlier runs of the same configuration (None: none).
    estimate: Callable[[Request, float | None], float] | None = None
    history_column: str = "wall_s"
    time_ratio: bool = True  # rank implementations by time (sleep's time is the sleep)
    headline: tuple[str, ...] = TIME_HEADLINE
    columns: tuple[str, ...] = TIME_COLUMNS
    plots: tuple[str, ...] = ("time_lines", "rss_lines", "rss_over_time")
    plot_caption: str = ""  # what the time plots show, after the workload's name

    def argv(self, req: Request) -> list[str]:
        """The program's arguments after its run argv (docs/protocol.md)."""
        argv = [self.name, "--n", str(req.n)]
        if self.uses_buffer:
            argv += ["--buffer", str(req.buffer)]
        if self.uses_duration:
            argv += ["--duration-ms", str(req.duration_ms)]
        return argv + ["--iterations", str(req.iterations)]

    def estimate_s(self, req: Request, past: float | None) -> float:
        if self.estimate is not None:
            return self.estimate(req, past)
        return past if past is not None else START_S + req.iterations * req.n * 2e-6


# ---------------------------------------------------------------- sleep

def sleep_window_ns(duration_ms: int, spawn_ns: int, n: int) -> tuple[int, int]:
    """An iteration takes at least one sleep. At most: the start loop plus
    min(N, 10) sleeps, and never less than one sleep plus max(2 s, D/2). The
    upper bound catches tasks that ran in sequence (N sleeps one after
    another, e.g. awaiting coroutines one by one), which the start-time check
    cannot see in an event loop; it is wide so that waking and joining a
    million tasks on a busy machine, slow as it may be, is not called a
    failure: that time is recorded (sleep_wait_s) instead."""
    d = duration_ms * 1_000_000
    return d, spawn_ns + max(min(n, 10) * d, d + max(2 * NS, d // 2))


def _sleep_check(data: dict[str, Any], req: Request) -> str | None:
    """tasks_start says when an implementation's sleeping tasks start their
    clocks: "when-spawned" (threads, goroutines, tasks on a thread pool: a
    task can finish while later ones are still being started, so the start
    loop must take less than one sleep for all N to be alive at once) or
    "after-spawning" (an event loop: no timer can fire before the spawning
    code yields, so the tasks overlap whatever the start time)."""
    spawn = data.get("spawn_ns")
    if not isinstance(spawn, int) or isinstance(spawn, bool) or spawn < 0:
        return "sleep output needs a non-negative integer spawn_ns"
    if req.tasks_start == "when-spawned" and spawn >= req.duration_ms * 1_000_000:
        return (f"the tasks did not all overlap: starting them took {spawn / NS:.3f} s, "
                f"longer than the {req.duration_ms / 1000:g} s sleep (use a longer --duration-ms)")
    low, high = sleep_window_ns(req.duration_ms, spawn, req.n)
    for t in data["iter_ns"]:
        if not low <= t <= high:
            return (f"sleep took {t / NS:.3f} s, outside [{low / NS:.3f}, {high / NS:.3f}] s: "
                    f"shorter than one sleep, or as long as sleeps run one after another")
    return None


def _sleep_estimate(req: Request, past_spawn_s: float | None) -> float:
    spawn = past_spawn_s if past_spawn_s is not None else req.n * 5e-6
    return START_S + req.iterations * (req.duration_ms / 1000 + spawn)


def _bounded_estimate(req: Request, past: float | None) -> float:
    return past if past is not None else START_S + req.iterations * req.n * 1e-6


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (  # in reading order: the order of the articles
        Workload(
            "sleep", "N tasks each sleep D ms; result = tasks completed",
            "sleep: N tasks sleeping concurrently (after '1 million concurrent tasks', 2024)",
            default_iterations=1, expected=lambda n: n, uses_duration=True,
            check=_sleep_check, fields=lambda data: {
                "spawn_s": data["spawn_ns"] / NS,
                # from the last task started to all joined: the sleep, then waking and joining
                "sleep_wait_s": (data["iter_ns"][0] - data["spawn_ns"]) / NS},
            estimate=_sleep_estimate, history_column="spawn_s", time_ratio=False,
            headline=("peak_rss_bytes",), columns=MEMORY_COLUMNS,
            plot_caption="peak RSS of N concurrently sleeping tasks",
            plots=("rss_bars", "mem_per_task_bars", "rss_over_time")),
        Workload(
            "chain", "N tasks chained by N+1 channels pass x+1 along; result = N",
            "chain: N tasks linked by channels (after Yakunin 2017)",
            default_iterations=2, expected=lambda n: n,
            plot_caption="time to build and run a chain of N tasks"),
        Workload(
            "chain-await", "N tasks each await the previous one and add 1; result = N",
            "chain-await: N tasks awaiting each other (after Yakunin 2017)",
            default_iterations=2, expected=lambda n: n,
            plot_caption="time to build and run a chain of N awaiting tasks"),
        Workload(
            "bounded", "N producers send their index into one channel of capacity B; result = sum",
            "bounded: N producers, one bounded channel (after 'Go Rust Channel Benchmark')",
            default_iterations=10, expected=lambda n: n * (n - 1) // 2, uses_buffer=True,
            estimate=_bounded_estimate, plots=("buffer_grid", "rss_over_time"),
            plot_caption="N producers send once into one bounded channel"),
    )
}


def workload_rank(name: str) -> tuple[int, str]:
    """Reading order: declaration order, unknown workloads (from an older
    run directory) after them."""
    names = list(WORKLOADS)
    return (names.index(name) if name in names else len(names), name)
