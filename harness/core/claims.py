"""The articles' headline claims (docs/articles.md), declared once: each a
ratio of two configurations' figures with the side the article put it on
and, where it gave one, its size. The analysis judges them
(analyse/questions.py, a family of verdicts like the rankings); the
published pages print them (publish/claims.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .metrics import COLD, P99, RPS, RSS, SUSTAINED, THREADS, WARM
from .schema import ConfigKey, Row
from .workloads import CPUS, HTTP_DIMENSIONS, LADDER_DIMENSIONS

USERS, REQUESTS, DELAY_MS, POOL_THREADS, STYLE = (d.name for d in HTTP_DIMENSIONS)
RATE, STEP_S = (d.name for d in LADDER_DIMENSIONS)


@dataclass(frozen=True)
class Side:
    impl: str
    workload: str
    n: int | None
    metric: str
    buffer: int | None = None
    params: tuple = ()  # the workload's own dimensions (http)

    def key(self) -> ConfigKey:
        """The configuration as the harness keys a run of it (ConfigKey.of)."""
        return ConfigKey.of(Row(impl=self.impl, workload=self.workload, n=self.n,
                                buffer=self.buffer, **dict(self.params)))


@dataclass(frozen=True)
class Claim:
    article: str
    text: str
    published: str  # the article's figure, as it says it
    num: Side
    den: Side
    above: float  # the claim holds when num/den is above this (below, when `less`)
    less: bool = False
    # For "about equal" claims: holds when num/den is within this factor of
    # `above` either way (0: a one-sided claim).
    near: float = 0.0
    # The article's own figure of num/den, where it gave one, judged beside the
    # direction; at_least: the article said "more than" (> 13×).
    size: float | None = None
    at_least: bool = False


def _chain(impl: str, n: int, metric: str, workload: str = "chain") -> Side:
    return Side(impl, workload, n, metric)


CLAIMS = [
    Claim("Yakunin 2017", "Go's second chain pass is much faster than its first (N = 1M)", "4.3×",
          _chain("go", 1000000, COLD), _chain("go", 1000000, WARM), 1.0, size=4.3),
    Claim("Yakunin 2017", "first pass: C# channels take about Go's time (N = 1M)", "≈ 1×",
          _chain("csharp-async", 1000000, COLD), _chain("go", 1000000, COLD), 1.0, near=1.25),
    Claim("Yakunin 2017", "C# await chain beats C# channel chain (N = 1M)", "2.05×",
          _chain("csharp-async", 1000000, WARM), _chain("csharp-async", 1000000, WARM, "chain-await"),
          1.0, size=2.05),
    Claim("Yakunin 2017", "C# channels slower than Go's second pass (N = 20k)", "2.7×",
          _chain("csharp-async", 20000, WARM), _chain("go", 20000, WARM), 1.0, size=2.7),
    Claim("Yakunin 2017", "C# await chain slower than Go's second pass (N = 20k)", "1.5×",
          _chain("csharp-async", 20000, WARM, "chain-await"), _chain("go", 20000, WARM), 1.0,
          size=1.5),
    Claim("Yakunin 2017", "C# await chain faster than Go's second pass (N = 5k)", "< 1×",
          _chain("csharp-async", 5000, WARM, "chain-await"), _chain("go", 5000, WARM), 1.0,
          less=True),
    Claim("1M tasks 2024", "Go needs far more memory than C# for 1M sleeping tasks", "> 13×",
          Side("go", "sleep", 1000000, RSS), Side("csharp-async", "sleep", 1000000, RSS), 1.0,
          size=13, at_least=True),
    Claim("1M tasks 2024", "Go needs more memory than Java virtual threads (1M)", "> 2×",
          Side("go", "sleep", 1000000, RSS), Side("java-virtual", "sleep", 1000000, RSS), 1.0,
          size=2, at_least=True),
    Claim("1M tasks 2024", "Rust (tokio) close behind C# (1M)", "close",
          Side("rust-tokio", "sleep", 1000000, RSS), Side("csharp-async", "sleep", 1000000, RSS),
          1.0),
    # The article's tokio ran on Rust's default allocator (docs/protocol.md, Allocators).
    Claim("1M tasks 2024", "Rust (tokio) close behind C# (1M), on glibc malloc as the article",
          "close", Side("rust-tokio-glibc", "sleep", 1000000, RSS),
          Side("csharp-async", "sleep", 1000000, RSS), 1.0),
] + [
    Claim("Go/Rust channels", f"tokio {'faster' if b in (100, 1000) else 'slower'} than Go "
          f"(10k producers, B = {b})", "faster" if b in (100, 1000) else "slower",
          Side("rust-tokio", "bounded", 10000, WARM, b), Side("go", "bounded", 10000, WARM, b), 1.0,
          less=b in (100, 1000))
    for b in (1, 10, 100, 1000, 10000)
] + [
    # Allocator for allocator: async-std, like the article's tokio, on glibc malloc.
    Claim("Go/Rust channels", f"async-std slower than tokio, both on glibc malloc (10k producers, "
          f"B = {b})", "slower", Side("rust-async-std", "bounded", 10000, WARM, b),
          Side("rust-tokio-glibc", "bounded", 10000, WARM, b), 1.0)
    for b in (1, 100, 1000)
]

# Vaughan's claims, per server, at the seed004 suite's loads.
SERVERS = ["csharp-async", "go", "java-platform", "java-virtual", "rust-tokio", "nodejs", "bun",
           "deno", "python-asyncio", "python-uvloop"]
# seed004's closed loops (harness/plan/suites.toml): (users, D in ms) -> requests
# a user. At D = 100 ms, his 50 and 150 users; at his own D = 1000 ms, the
# growth from 50 to 2000 users, whose 1,000 requests a second the load generator can send
# beside the server (at D = 100 they would ask 10,000, and the fast servers
# read the old generator's ceiling: docs/protocol.md, "The HTTP server").
REQUESTS_PER_USER = {(50, 100): 20, (150, 100): 10, (50, 1000): 5, (2000, 1000): 5}
SEED004_STEP_S = 5  # the seconds of a step of seed004's ladder (suites.toml)


def _http(impl: str, style: str, users: int, metric: str, delay_ms: int = 100) -> Side:
    return Side(impl, "http", None, metric, None,  # type: ignore[arg-type]
                ((USERS, users), (REQUESTS, REQUESTS_PER_USER[users, delay_ms]),
                 (DELAY_MS, delay_ms),
                 (POOL_THREADS, None), (STYLE, style)))


def _step(impl: str, style: str, rate: int, metric: str) -> Side:
    """A step of seed004's rate ladder: the server on one core."""
    return Side(impl, "http", None, metric, None,  # type: ignore[arg-type]
                ((DELAY_MS, 100), (POOL_THREADS, None), (STYLE, style), (RATE, rate),
                 (STEP_S, SEED004_STEP_S), (CPUS.name, 1)))


# The servers whose blocking styles seed004 also ladders at D = 10 ms, on
# threads they can grow (suites.toml). Their capacity claims read that
# ladder: warmed, their styles sustained the generator's ceiling at D = 100 ms
# (go's and java-virtual's, 2026-12-03), bounds no run orders; at D = 10 ms
# the knees lie under it. The other servers' blocking styles answer one
# request at a time and are laddered at D = 100 ms alone.
CAPACITY_AT_10_MS = ("go", "java-platform", "java-virtual", "rust-tokio")


def _ladder(impl: str, style: str, metric: str) -> Side:
    """seed004's whole rate ladder (core/ladder.py): its figures, a value a repeat."""
    delay_ms = 10 if impl in CAPACITY_AT_10_MS else 100
    return Side(impl, "http", None, metric, None,  # type: ignore[arg-type]
                ((DELAY_MS, delay_ms), (POOL_THREADS, None), (STYLE, style),
                 (STEP_S, SEED004_STEP_S), (CPUS.name, 1)))


CLAIMS += [c for impl in SERVERS for c in (
    Claim("Vaughan", f"{impl}: when-all serves more than sync (50 users)", "1.68×",
          _http(impl, "when-all", 50, RPS), _http(impl, "sync", 50, RPS), 1.0, size=1.68),
    Claim("Vaughan", f"{impl}: async holds fewer threads than sync (50 users)", "0.04× (2 vs 53)",
          _http(impl, "async", 50, THREADS), _http(impl, "sync", 50, THREADS), 1.0, less=True,
          size=2 / 53),
    Claim("Vaughan", f"{impl}: parallel holds more threads than sync (50 users)", "2.04× (108 vs 53)",
          _http(impl, "parallel", 50, THREADS), _http(impl, "sync", 50, THREADS), 1.0,
          size=108 / 53),
    Claim("Vaughan", f"{impl}: parallel's throughput grows far less than its users, 50 → 150",
          "1.15× for 3× the users", _http(impl, "parallel", 150, RPS),
          _http(impl, "parallel", 50, RPS), 2.0, less=True, size=1.15),
    Claim("Vaughan", f"{impl}: when-all's throughput grows with its users, 50 → 2000",
          "37× for 40× the users", _http(impl, "when-all", 2000, RPS, 1000),
          _http(impl, "when-all", 50, RPS, 1000), 10.0, size=37),
    # The same, where the load is not the users' design: at a common
    # arrival rate of the ladder (docs/protocol.md, "The rate ladder").
    Claim("Vaughan", f"{impl}: async holds fewer threads than parallel (200 requests a second)",
          "2 vs 108 threads (50 users)", _step(impl, "async", 200, THREADS),
          _step(impl, "parallel", 200, THREADS), 1.0, less=True),
    Claim("Vaughan", f"{impl}: async answers sooner than parallel under load (p99, 800 requests "
          "a second)", "ahead at 150 users", _step(impl, "async", 800, P99),
          _step(impl, "parallel", 800, P99), 1.0, less=True),
    # Capacity: the ladder's sustained rate (p99 within its bound, nothing dropped).
    Claim("Vaughan", f"{impl}: when-all sustains a higher arrival rate than sync",
          "the most requests a second", _ladder(impl, "when-all", SUSTAINED),
          _ladder(impl, "sync", SUSTAINED), 1.0),
    Claim("Vaughan", f"{impl}: sync-over-async sustains a lower arrival rate than async",
          "the worst", _ladder(impl, "sync-over-async", SUSTAINED),
          _ladder(impl, "async", SUSTAINED), 1.0, less=True),
)]
