"""The workloads of docs/protocol.md, declared as data: their protocol.

What the harness needs to run a workload lives in its declaration here:
what the program is asked (extra arguments), the answer it must give and any
extra check, the row columns it fills, its dimensions, how long a run should
take. How its results read (title, headline figures, table columns, plots)
is its presentation (presentation.py), and its figures are declared in
metrics.py. Every other module iterates over WORKLOADS; adding a workload
means adding a declaration and a presentation, the programs and their tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from .formatting import fmt_fixed, fmt_number

NS = 1_000_000_000
START_S = 0.3  # process start and runtime set-up, when nothing better is known

Param = tuple[str, Any]  # (dimension name, value)


@dataclass(frozen=True)
class Dimension:
    """A dimension of a workload's configuration beyond N and the buffer: a
    runs.csv column, part of the configuration's key, and a `run` option
    taking a comma-separated list."""
    name: str
    option: str  # e.g. "--users"
    kind: type  # int or str
    default: tuple[Any, ...]  # the values run when the option is absent; () = None (not passed)
    help: str
    choices: tuple[str, ...] = ()  # for str dimensions: the values allowed


# The harness's own dimensions, shared by every workload: a column and a part
# of the key only where a run set them (report.py shows them only then).
CPUS = Dimension("cpus", "--cpus", int, (),
                 "comma-separated CPU counts: each run pinned to the first K CPUs the harness "
                 "may use, with the runtime's own knob set to K (impls.toml cpus_env); default: "
                 "not pinned")
# Set by `harness merge` (env.json's host), never by a run: no option.
MACHINE = Dimension("machine", "", str, (), "the machine a merged row ran on")
COMMON_DIMENSIONS = (CPUS, MACHINE)
# The switch every collected runtime's program reads (docs/protocol.md,
# "Collection between passes"): no collection between passes.
NO_COLLECTION = ("BENCH_COLLECT", "0")


@dataclass(frozen=True)
class Request:
    """What the harness asks one program run to do."""
    workload: str
    n: int | None
    buffer: int | None
    iterations: int
    duration_ms: int
    tasks_start: str = "when-spawned"  # the implementation's, see registry.TASKS_START
    params: tuple[Param, ...] = ()  # the workload's dimensions
    warmup_ms: int = 0  # untimed runs before the iterations (docs/protocol.md, --warmup-ms)

    def param(self, name: str) -> Any:
        return dict(self.params).get(name)


@dataclass(frozen=True)
class Workload:
    name: str
    default_iterations: int
    # The untimed warm-up before the iterations, in ms (docs/protocol.md,
    # --warmup-ms); None: the workload takes none (a sleep is not compiled
    # faster by sleeping first; a server is loaded once).
    default_warmup_ms: int | None
    expected: Callable[[int], int] | None  # None: no single answer (http checks every response)
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
    # run --adaptive-sleep: the column (the tasks' start time) a run's sleep
    # is chosen from (adaptive_sleep_ms); None: the workload has no sleep
    adaptive_column: str | None = None
    # "program": runs to the end and prints its answer; "server": serves
    # HTTP while a load generator drives it (loadtest.py).
    kind: str = "program"
    uses_n: bool = True  # N is a dimension (passed as --n)
    dimensions: tuple[Dimension, ...] = ()
    # runs.csv columns this workload's rows fill besides the common ones:
    # (name, type) with type int, float or str.
    row_columns: tuple[tuple[str, type], ...] = ()
    # Why this workload cannot run at N, or None when it can.
    n_rule: Callable[[int], str | None] | None = None
    # Its dimensions as a configuration's key holds them (schema.ConfigKey),
    # where a mode leaves some unused or fills a default: what the run was.
    key_rule: Callable[[tuple[Param, ...]], tuple[Param, ...]] | None = None
    # What a run's time and footprint grow with: its size is the product of
    # these ("n", or a dimension's name), None where one is unset (a rate
    # ladder's step, which core/ladder.py ends instead). Under
    # --until-settled, a configuration whose smaller size failed by a limit
    # that grows with it is not run (sequential.outgrown).
    grows_with: tuple[str, ...] = ("n",)
    # The collection between passes (docs/protocol.md, "Collection between
    # passes") from this N on; below it the run sets BENCH_COLLECT=0 (env):
    # a pass there leaves too little garbage to matter, and a full
    # collection before each made the next pass slower than the garbage
    # would have. None: at every N.
    collect_from_n: int | None = None
    # The articles' size (bounded: producers, every buffer) and the figures
    # ranked there: the headline rankings (analyse/ranks.py), which a run
    # answers first (sequential.py). None: no headline ranking.
    headline_n: int | None = None
    headline_figures: tuple[str, ...] = ("warm_iter_s", "peak_rss_bytes")

    def __post_init__(self) -> None:
        # Every workload also varies by the harness's own dimensions.
        object.__setattr__(self, "dimensions", self.dimensions + COMMON_DIMENSIONS)

    def n_refused(self, n: int | None) -> str | None:
        return self.n_rule(n) if self.n_rule is not None and n is not None else None

    def env(self, req: Request) -> dict[str, str]:
        """What this request sets in the program's environment."""
        if self.collect_from_n is not None and req.n is not None and req.n < self.collect_from_n:
            return dict([NO_COLLECTION])
        return {}

    def argv(self, req: Request) -> list[str]:
        """The program's arguments after its run argv (docs/protocol.md)."""
        if self.kind == "server":
            argv = ["serve", "--port", "0", "--delay-ms", str(req.param("delay_ms"))]
            threads = req.param("pool_threads")
            return argv + (["--threads", str(threads)] if threads is not None else [])
        argv = [self.name, "--n", str(req.n)]
        if self.uses_buffer:
            argv += ["--buffer", str(req.buffer)]
        if self.uses_duration:
            argv += ["--duration-ms", str(req.duration_ms)]
        argv += ["--iterations", str(req.iterations)]
        return argv + (["--warmup-ms", str(req.warmup_ms)] if req.warmup_ms else [])

    def estimate_s(self, req: Request, past: float | None) -> float:
        if self.estimate is not None:
            return self.estimate(req, past)
        return past if past is not None else (START_S + req.warmup_ms / 1000
                                              + req.iterations * (req.n or 1) * 2e-6)


# Timers may end this early (.NET's Task.Delay counts in 4 ms ticks and can
# end a tick early; libuv's timers, Node.js's and uvloop's, start from the
# loop's cached millisecond clock and can end up to 1 ms early; docs/protocol.md).
TIMER_SLACK_MS = 5


# ---------------------------------------------------------------- sleep

def sleep_window_ns(duration_ms: int, spawn_ns: int, n: int) -> tuple[int, int]:
    """An iteration takes at least one sleep (less a timer's slack). At most: the start loop plus
    min(N, 10) sleeps, and never less than one sleep plus max(2 s, D/2). The
    upper bound catches tasks that ran in sequence (N sleeps one after
    another, e.g. awaiting coroutines one by one), which the start-time check
    cannot see in an event loop; it is wide so that waking and joining a
    million tasks on a busy machine, slow as it may be, is not called a
    failure: that time is recorded (sleep_wait_s) instead."""
    d = duration_ms * 1_000_000
    return d - TIMER_SLACK_MS * 1_000_000, spawn_ns + max(min(n, 10) * d, d + max(2 * NS, d // 2))


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
        return (f"the tasks did not all overlap: starting them took {fmt_fixed(spawn / NS, 3)} "
                f"s, longer than the {fmt_number(req.duration_ms / 1000)} s sleep (use a longer "
                "--duration-ms)")
    low, high = sleep_window_ns(req.duration_ms, spawn, req.n)
    for t in data["iter_ns"]:
        if not low <= t <= high:
            return (f"sleep took {fmt_fixed(t / NS, 3)} s, outside [{fmt_fixed(low / NS, 3)}, "
                    f"{fmt_fixed(high / NS, 3)}] s: "
                    f"shorter than one sleep, or as long as sleeps run one after another")
    return None


# run --adaptive-sleep: a sleep that lasts twice the longest time its tasks
# took to start in earlier runs plus one second (the longest, so that one
# slow start does not leave the next run too short), instead of the full
# --duration-ms (its ceiling): every task is alive at once for at least the
# start time plus a second, and the peak RSS does not depend on how much
# longer they sleep. docs/studies/sleep-duration.md compares the peak RSS
# with the full duration's on every runtime.
ADAPTIVE_FLOOR_MS = 1000


# run --adaptive-sleep, a configuration's first run: its start time is
# guessed from its smaller size's, grown with the tasks and by half again
# (start times grow a little faster than the tasks: docs/usage.md gives
# the most measured, figure start-growth), so that twice the guess plus a
# second stays ahead of the start.
FIRST_START_GROWTH = 1.5


def adaptive_sleep_ms(ceiling_ms: int, spawn_s: float | None) -> int:
    """The sleep of a run of --adaptive-sleep, from the longest start time of
    its configuration's earlier runs (None: none yet, the full ceiling)."""
    if spawn_s is None:
        return ceiling_ms
    held = math.ceil((2 * spawn_s + 1) * 10) * 100  # whole tenths of a second
    return min(ceiling_ms, max(ADAPTIVE_FLOOR_MS, held))


def _sleep_estimate(req: Request, past_spawn_s: float | None) -> float:
    spawn = past_spawn_s if past_spawn_s is not None else req.n * 5e-6
    return START_S + req.iterations * (req.duration_ms / 1000 + spawn)


def _bounded_estimate(req: Request, past: float | None) -> float:
    return past if past is not None else (START_S + req.warmup_ms / 1000
                                          + req.iterations * req.n * 1e-6)


# ---------------------------------------------------------------- chain

# Before its first timed pass a chain program runs one untimed chain of
# min(N, PRIME_LINKS) links (docs/protocol.md, "Priming"): a JIT that compiled
# the relay before any relay resumed deoptimizes a million times otherwise.
PRIME_LINKS = 1000


def _primed(data: dict[str, Any], req: Request) -> str | None:
    want = min(req.n, PRIME_LINKS)
    got = data.get("primed")
    if got != want or isinstance(got, bool):
        return (f"primed is {got!r}, expected {want}: the program must run an untimed chain of "
                f"min(N, {PRIME_LINKS}) links before its first timed pass (docs/protocol.md, "
                "Priming)")
    return None


# ---------------------------------------------------------------- skynet

def _power_of_ten(n: int) -> str | None:
    while n % 10 == 0:
        n //= 10
    return None if n == 1 else "skynet needs N a power of ten (1, 10, 100, ...): 10 children a node"


# ---------------------------------------------------------------- http

# The five handler styles of docs/protocol.md (after Vaughan), in his order.
STYLES = ("sync", "sync-over-async", "parallel", "async", "when-all")
# The least time a response can take: the calls waited one after the other.
STYLE_DELAYS = {"sync": 3, "sync-over-async": 3, "async": 3, "parallel": 2, "when-all": 2}


def style_floor_ms(style: str, delay_ms: int) -> float:
    """The median response time below which a handler did not wait."""
    waits = 2 if STYLE_DELAYS[style] == 3 else 1
    return STYLE_DELAYS[style] * delay_ms - waits * TIMER_SLACK_MS


def _http_estimate(req: Request, past: float | None) -> float:
    """Every user's R requests one after the other at the style's floor (a
    ladder step: its length), plus starting the server and the generator; a
    blocking style on a small pool takes longer, which the history then knows."""
    if past is not None:
        return past
    if req.param(RATE.name) is not None:
        return 2 * START_S + 1.0 + LADDER_WARMUP_S + req.param(STEP_S.name)
    floor_s = STYLE_DELAYS[req.param(STYLE.name)] * req.param(DELAY_MS.name) / 1000
    return 2 * START_S + 1.0 + req.param(REQUESTS.name) * floor_s


# The open loop, a rate ladder (docs/protocol.md, "The rate ladder"): each
# step a configuration of its own, RATE requests a second for STEP_S seconds.
LADDER_STEP_S = 10  # a step's length where --step-s is not given
# After a step, the load generator waits this long for the answers still due; a request
# unanswered by then is counted (unanswered) and the step saturated.
LADDER_GRACE_S = 5
# Before a step, the generator loads the server this long at the step's rate on
# the same connections, waits for those answers and counts none of them: every
# step is a fresh server process, and a JIT's first second (the JVM compiling
# its handler) would otherwise be the step's tail. Measured on the 2-core Xeon,
# java-virtual when-all at D = 10 ms and 1,600 a second: p99 193 ms cold, 25 ms
# after 1 s (docs/studies/ladder-warmup/).
LADDER_WARMUP_S = 1
# The generator is the bottleneck, and the step no measurement of the
# server, when the generator used more than this share of its cores' time, or ran 1%
# of its probe (a timer every 10 ms, no request) later than
# this after its schedule.
GEN_BUSY_LIMIT = 0.8
GEN_LAG_LIMIT_S = 0.010
# Every reason loadtest gives a step it found invalid because the generator could not
# keep its schedule (busy, late or behind it) starts so, and no other
# reason does: ladder.generator_limited reads the recorded reason rather
# than judge the row's figures again by today's limits (a row of an older
# run was judged by its own: one unsent request was "behind" before
# unsent_allowed).
GENERATOR_FAULT = "the load generator"


def unsent_allowed(rate: int) -> int:
    """The requests due in a step's last GEN_LAG_LIMIT_S: a generator late within
    its limit may reach the step's end before sending them (neither sent nor
    dropped), and has not fallen behind for that."""
    return math.ceil(rate * GEN_LAG_LIMIT_S)


def ladder_p99_bound_s(delay_ms: int) -> float:
    """A step is sustained only with its p99 within this: twice the slowest
    style's unloaded answer (3·D), one bound for every style."""
    return 2 * 3 * delay_ms / 1000


def ladder_vus(rate: int, delay_ms: int) -> int:
    """The generator's workers for a step (the most requests in flight):
    enough for every request of a second (or of twice the p99 bound, if
    longer) to be in flight at once, so that
    below saturation, and through a stall of a second, none is dropped."""
    return max(10, math.ceil(rate * max(1.0, 2 * ladder_p99_bound_s(delay_ms))))


USERS = Dimension("users", "--users", int, (50,),
                  "comma-separated concurrent users for http, each sending --requests "
                  "requests back to back (default 50)")
REQUESTS = Dimension("requests", "--requests", int, (20,),
                     "requests per user for http (default 20)")
DELAY_MS = Dimension("delay_ms", "--delay-ms", int, (100,),
                     "http: the simulated calls take 2*D and D ms (default 100; Vaughan's was "
                     "1000)")
POOL_THREADS = Dimension("pool_threads", "--threads", int, (),
                         "http: the size of the server's handler pool where it has one (default: "
                         "the runtime's own); recorded where it has none")
STYLE = Dimension("style", "--style", str, STYLES,
                  "comma-separated handler styles for http (default: all five)", choices=STYLES)
HTTP_DIMENSIONS = (USERS, REQUESTS, DELAY_MS, POOL_THREADS, STYLE)
# After the style, so that a plan runs one style's steps in a row, rising.
RATE = Dimension("rate", "--rate", int, (),
                 "http: an open loop instead of --users: comma-separated arrival rates "
                 "(requests a second), each a step of a ladder lasting --step-s (default: the "
                 "closed loop)")
STEP_S = Dimension("step_s", "--step-s", int, (),
                   f"http --rate: the seconds each step lasts (default {LADDER_STEP_S})")
LADDER_DIMENSIONS = (RATE, STEP_S)


def _http_key(params: tuple[Param, ...]) -> tuple[Param, ...]:
    """A closed loop has no step; an open loop has no users nor requests
    per user, and its step's length is recorded even where defaulted. A
    whole ladder (core/ladder.py) is an open loop without its rate."""
    values = dict(params)
    if values.get(RATE.name) is None and values.get(USERS.name) is not None:
        values[STEP_S.name] = None
    else:
        values[USERS.name] = values[REQUESTS.name] = None
        values[STEP_S.name] = values.get(STEP_S.name) or LADDER_STEP_S
    return tuple((name, values[name]) for name, _ in params)


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (  # in reading order: the order of the articles
        Workload(
            "sleep", default_iterations=1, default_warmup_ms=None, expected=lambda n: n,
            uses_duration=True,
            check=_sleep_check, fields=lambda data: {
                "spawn_s": data["spawn_ns"] / NS,
                # from the last task started to all joined: the sleep, then waking and joining
                "sleep_wait_s": (data["iter_ns"][0] - data["spawn_ns"]) / NS},
            estimate=_sleep_estimate, history_column="spawn_s",
            adaptive_column="spawn_s",
            # the 1M-tasks article's question is the memory a task costs
            headline_n=1_000_000, headline_figures=("peak_rss_bytes",)),
        Workload(
            "chain",
            # Yakunin compares the first pass with the second: no warm-up,
            # but an untimed chain of PRIME_LINKS first (docs/protocol.md, Priming).
            default_iterations=2, default_warmup_ms=0, expected=lambda n: n,
            check=_primed, headline_n=1_000_000),
        Workload(
            "chain-await", default_iterations=2, default_warmup_ms=0, expected=lambda n: n,
            check=_primed, headline_n=1_000_000),
        Workload(
            "bounded",
            # A JIT needs about a second of runs at N = 10000 before its
            # times settle (docs/protocol.md, --warmup-ms).
            default_iterations=10, default_warmup_ms=1000, expected=lambda n: n * (n - 1) // 2,
            uses_buffer=True, estimate=_bounded_estimate,
            # Below 10,000 producers a pass takes microseconds to a
            # millisecond: collected before each, it ran up to tens of times
            # slower than without (V8 most; docs/protocol.md, "Not at the
            # smallest passes", has the figures)
            collect_from_n=10_000, headline_n=10_000),
        Workload(
            "skynet", default_iterations=2, default_warmup_ms=0,
            expected=lambda n: n * (n - 1) // 2, n_rule=_power_of_ten, headline_n=1_000_000),
        Workload(
            "http", default_iterations=1, default_warmup_ms=None, expected=None, kind="server",
            uses_n=False, dimensions=HTTP_DIMENSIONS + LADDER_DIMENSIONS,
            estimate=_http_estimate, key_rule=_http_key,
            # a closed loop's load: its users' requests, each at least D
            grows_with=(USERS.name, REQUESTS.name),
            row_columns=(("requests_done", int), ("http_errors", int), ("rps", float),
                         ("latency_p50_s", float), ("latency_p90_s", float),
                         ("latency_p99_s", float), ("latency_max_s", float),
                         ("gen_cpu_s", float), ("load_s", float), ("latency_p999_s", float),
                         ("offered", int), ("dropped", int), ("unanswered", int),
                         ("gen_cpus", int), ("gen_busy", float), ("gen_lag_p99_s", float),
                         ("step_verdict", str))),
    )
}


def workload_rank(name: str) -> tuple[int, str]:
    """Reading order: declaration order, unknown workloads (from an older
    run directory) after them."""
    names = list(WORKLOADS)
    return (names.index(name) if name in names else len(names), name)
