"""The figures a run's rows carry, each declared once.

A metric is a runs.csv column (cpu_s is the one derived: rundir's reader
adds cpu_user_s + cpu_sys_s). Its declaration says how the figure reads and
who fills it; the statistics (analysis), the report's metric cells,
summary.csv, compare's table and gate, and the progress line all iterate
over METRICS, so none of them names a workload's own figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import UsageError

# A unit kind on a plot's axis, where it is said (seconds are rescaled there).
AXIS_UNITS = {"s": "s", "rps": "requests/s"}


@dataclass(frozen=True)
class Metric:
    name: str  # its runs.csv column
    label: str  # in sentences and on axes: warnings, plots
    heading: str  # a table column: the report's and compare's
    unit: str  # formatting.fmt_value's kind: "s", "bytes", "count" or "rps"
    higher_is_better: bool = False
    workloads: tuple[str, ...] | None = None  # the workloads that fill it; None: every one
    compared: bool = False  # a column of compare's table (its gate: where a headline names it)
    live: str = ""  # how the progress line shows the formatted value; "": not shown
    # Two figures are "level" when their ratio's whole interval lies within
    # ±margin (an equivalence test, as in TOST): what a reader would call the
    # same. Times 5%, run-to-run spread on a quiet machine being a few %;
    # memory 2%, peak RSS repeating within about 1%.
    margin: float = 0.05
    # A count's runs move by whole units: level is also within this many
    # units of the smaller median, where that is wider than margin.
    margin_units: float = 0.0
    # "Level" between neighbours of a headline ranking (analyse/ranks.py):
    # wider than `margin`, since one process's figure spreads 15-25% (warm
    # pass) or about 1% (peak RSS) from the next (docs/statistics.md, "Level
    # in a ranking"); None: `margin`.
    rank_margin: float | None = None
    # Its variance is borrowed from its size's configurations first
    # (analyse/ranks.priors), not only its workload's: False where a new
    # configuration's spread is its own more than its size's (a cold pass,
    # mostly start-up: borrowed by size, one run a side was called ahead in
    # 5.9% of A/A splits on the 90-minute study run; docs/statistics.md).
    by_size: bool = True

    def level_margin(self, *medians: float) -> float:
        """The level margin of two figures with these medians: margin, or
        margin_units of the smaller median where that is wider."""
        smaller = min(medians, default=0.0)
        return max(self.margin, self.margin_units / smaller if smaller > 0 else 0.0)

    @property
    def common(self) -> bool:
        return self.workloads is None

    @property
    def axis_label(self) -> str:
        """e.g. 'throughput (requests/s)'."""
        unit = AXIS_UNITS.get(self.unit)
        return f"{self.label} ({unit})" if unit else self.label


def _metrics(*declared: Metric) -> dict[str, Metric]:
    return {m.name: m for m in declared}


# In the order of summary.csv's columns and results.json's figures.
METRICS: dict[str, Metric] = _metrics(
    Metric("wall_s", "wall time", "wall", "s", compared=True),
    Metric("cpu_s", "CPU time", "CPU", "s", compared=True),
    # A server's rows leave the iteration times empty: it runs no iterations.
    Metric("first_iter_s", "cold iteration", "cold iter", "s", compared=True, rank_margin=0.10,
           by_size=False),
    Metric("warm_iter_s", "warm iteration", "warm iter", "s", compared=True, rank_margin=0.10),
    Metric("spawn_s", "spawn time", "spawn", "s", workloads=("sleep",)),
    Metric("sleep_wait_s", "sleep and join after the start loop", "sleep+join", "s",
           workloads=("sleep",)),
    Metric("peak_rss_bytes", "peak RSS", "peak RSS", "bytes", compared=True, margin=0.02,
           rank_margin=0.05),
    # Threads: a runtime's helper threads (collector, compiler, timers) start
    # when they do, so one configuration's runs spread over two or three
    # threads (seed004 on the EPYC: Go 7-9 at 150 users, java-virtual
    # 25-27): level within 10% or two threads. The articles' question is 2
    # against 108.
    Metric("max_threads", "peak threads", "peak threads", "count", live="{} threads",
           margin=0.1, margin_units=2),
    # The kernel's counters of the process tree (wait4's rusage): not a
    # verdict's figure, but compare and bisect show them beside one, since
    # they say what changed in the program's behaviour.
    Metric("ctx_switches_voluntary", "voluntary context switches", "voluntary ctx sw", "count",
           compared=True),
    Metric("ctx_switches_involuntary", "involuntary context switches", "involuntary ctx sw",
           "count", compared=True),
    Metric("minor_faults", "minor page faults", "minor faults", "count", compared=True),
    Metric("major_faults", "major page faults", "major faults", "count", compared=True),
    # perf stat's (run --counters), where they add to wait4's: moves between
    # CPUs, and the CPU's own counts where the machine exposes them.
    Metric("perf_cpu_migrations", "CPU migrations", "migrations", "count", compared=True),
    Metric("perf_cycles", "CPU cycles", "cycles", "count", compared=True),
    Metric("perf_instructions", "instructions", "instructions", "count", compared=True),
    Metric("rps", "throughput", "throughput", "rps", higher_is_better=True, workloads=("http",),
           compared=True, live="{}"),
    Metric("latency_p50_s", "median response", "median response", "s", workloads=("http",),
           compared=True, live="median {}"),
    Metric("latency_p90_s", "p90 response", "p90 response", "s", workloads=("http",)),
    Metric("latency_p99_s", "p99 response", "p99 response", "s", workloads=("http",)),
    Metric("latency_max_s", "slowest response", "slowest", "s", workloads=("http",)),
    Metric("gen_cpu_s", "load generator CPU", "generator CPU", "s", workloads=("http",)),
    Metric("load_s", "time under load", "total time", "s", workloads=("http",)),
    # A rate ladder's step (the open loop): the tail beyond p99, the requests
    # it could not send or had no answer to, and how late the generator sent them.
    Metric("latency_p999_s", "p99.9 response", "p99.9 response", "s", workloads=("http",)),
    Metric("dropped", "requests not sent (no free virtual user)", "dropped", "count",
           workloads=("http",)),
    Metric("unanswered", "requests unanswered at the step's end", "unanswered", "count",
           workloads=("http",)),
    Metric("gen_lag_p99_s", "load generator's lateness, p99", "generator late p99", "s",
           workloads=("http",)),
    # A whole ladder's, one value per repeat (core/ladder.py): the highest
    # rate sustained (MLPerf's server scenario) and where the p99 bends.
    # Each is one of the ladder's rates: level means the same step (10%,
    # well below any ladder's spacing).
    Metric("sustained_rps", "sustained rate", "sustained", "rps", higher_is_better=True,
           workloads=("http",), compared=True, margin=0.1),
    Metric("knee_rps", "knee (p99 past twice the unloaded)", "knee", "rps",
           higher_is_better=True, workloads=("http",), compared=True, margin=0.1),
)

# The kernel's counters, shown beside a change (compare's rows, bisect's verdict).
COUNTERS = ("ctx_switches_voluntary", "ctx_switches_involuntary", "minor_faults", "major_faults",
            "perf_cpu_migrations", "perf_cycles", "perf_instructions")

# The figures the claims and the pages name, declared once.
WALL, COLD, WARM, SPAWN, RSS, THREADS, P99 = (
    "wall_s", "first_iter_s", "warm_iter_s", "spawn_s", "peak_rss_bytes", "max_threads",
    "latency_p99_s")
# What the server plots draw (plots/servers.py): requests a second, and the
# response-time distribution from the median to the slowest.
THROUGHPUT = "rps"
LATENCIES = ("latency_p50_s", "latency_p90_s", P99, "latency_max_s")
RPS = THROUGHPUT
SUSTAINED, KNEE = "sustained_rps", "knee_rps"


def margins(text: str | None, option: str = "--margin") -> dict[str, float]:
    """Each metric's level margin as a fraction: its declaration's, or
    --margin's: one percentage for every metric ("3%"), or METRIC=PCT pairs
    ("peak_rss_bytes=1%,warm_iter_s=3%")."""
    out = {name: m.margin for name, m in METRICS.items()}
    if text is None:
        return out
    parts = [p.strip() for p in text.split(",")]
    if not all(parts):
        raise UsageError(f"{option} {text!r}: an empty item")
    for part in parts:
        name, _, value = part.rpartition("=")
        if name and name not in METRICS:
            raise UsageError(f"{option}: no metric {name!r} (one of {', '.join(METRICS)})")
        pct = _percent(value, option)
        for target in ([name] if name else METRICS):
            out[target] = pct
    return out


def _percent(text: str, option: str) -> float:
    """'5%' or '5' as 0.05; a margin of 0 to 50% (beyond, "level" means nothing)."""
    raw = text.strip().removesuffix("%")
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{option} {text!r}: not a percentage (e.g. 5%)") from None
    if not 0 < value <= 50:
        raise UsageError(f"{option} {text!r}: a margin is above 0% and at most 50%")
    return value / 100

