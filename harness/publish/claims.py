"""The articles' headline claims (docs/articles.md) beside what a run
directory measured: one markdown table, printed on stdout, from the run's
summary.csv (`python -m harness report RUN_DIR` writes it). The pages of
docs/results carry the same table (readme_tables.py).

    .venv/bin/python -m harness.publish.claims results/latest

Each claim is a ratio of two configurations' figures: the Hodges–Lehmann
estimate with its exact confidence interval from both sides' ok runs
(harness/core/stats.py, docs/statistics.md). A claim "holds" when its 95% interval
lies wholly on the claimed side, "does not hold" when wholly on the other
or when the two are level (the interval wholly within the figure's margin,
harness/core/metrics.py: a claimed lead that is no lead), and is "not settled"
otherwise, always with its reason: an interval holding the threshold but
reaching past the margin, fewer runs than 95% needs (4 a side), or one run,
which has no interval. Where the article gave a size ("4.3×", "> 13×"), it
is judged too: the article's figure inside the interval (or, for "> X",
the interval wholly above X) holds; outside does not.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from typing import Any

from ..core.metrics import METRICS
from ..core.schema import ConfigKey, Row
from ..core.stats import Interval, ratio_interval
from .published import (COLD, DELAY_MS, POOL_THREADS, REQUESTS, RPS, RSS, STYLE, THREADS, USERS,
                        WARM, read_summary)


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

# Vaughan's claims, per server, at the seed004 suite's loads (D = 100 ms).
SERVERS = ["csharp-async", "go", "java-platform", "java-virtual", "rust-tokio", "nodejs", "bun",
           "deno", "python-asyncio", "python-uvloop"]
REQUESTS_PER_USER = {50: 20, 150: 10, 2000: 5}  # as harness/plan/suites.toml's seed004


def _http(impl: str, style: str, users: int, metric: str) -> Side:
    return Side(impl, "http", None, metric, None,  # type: ignore[arg-type]
                ((USERS, users), (REQUESTS, REQUESTS_PER_USER[users]), (DELAY_MS, 100),
                 (POOL_THREADS, None), (STYLE, style)))


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
          "37× for 40× the users", _http(impl, "when-all", 2000, RPS),
          _http(impl, "when-all", 50, RPS), 10.0, size=37),
)]


def judge(claim: Claim, groups: dict[ConfigKey, Any]) -> list[str]:
    """[ratio with its interval and runs, verdict]; groups are the harness's
    (analysis.Group, as published.read_summary gives them) by their key:
    metrics with median, count and the ok values."""
    a, b = groups.get(claim.num.key()), groups.get(claim.den.key())
    sa = a.metrics.get(claim.num.metric) if a else None
    sb = b.metrics.get(claim.den.metric) if b else None
    if sa is None or sb is None or sb.median <= 0:
        failed = [(side, g) for side, g in ((claim.num, a), (claim.den, b))
                  if g is not None and not g.ok]
        if failed:  # measured, but no run of one side was ok: say which and why
            return ["—", "no ok run of " + ", ".join(
                f"{side.impl} {dict(side.params).get(STYLE, side.workload)}: {g.failure}"
                for side, g in failed)]
        return ["—", "not measured in this run"]
    runs = (f"{sa.count} and {sb.count} runs" if sa.count != sb.count
            else f"{sa.count} run{'s' if sa.count != 1 else ''} a side")
    # ratio_interval(old, new) is new / old: here numerator / denominator
    iv = ratio_interval(sb.values, sa.values)
    if iv is None:  # one run on a side: the ratio of the figures, and no verdict
        return [f"{sa.median / sb.median:.2f}× ({runs}, no interval)",
                "not settled: one run has no interval"]
    text = f"{iv.estimate:.2f}× [{iv.low:.2f}–{iv.high:.2f}] ({runs}" + (
        f", {iv.confidence:.0%})" if not iv.settled else ")")
    if not iv.settled:
        return [text, f"not settled: too few runs for 95% (the interval is {iv.confidence:.0%})"]
    return [text, direction(claim, iv) + size(claim, iv)]


def direction(claim: Claim, iv: Interval) -> str:
    """holds / does not hold / not settled (with its reason), for a settled interval."""
    if claim.near:
        low, high = claim.above / claim.near, claim.above * claim.near
        if low <= iv.low and iv.high <= high:
            return "holds"
        if iv.high < low or iv.low > high:
            return "does not hold"
        return "not settled: the interval reaches outside the claimed band"
    side = iv.side(claim.above)
    if side != "within":
        return "holds" if (side == "below") == claim.less else "does not hold"
    margin = METRICS[claim.num.metric].margin
    if claim.above == 1.0 and 1 / (1 + margin) <= iv.low and iv.high <= 1 + margin:
        return f"does not hold: level (within ±{margin * 100:g}%)"
    return (f"not settled: the interval holds {claim.above:g}× and reaches past "
            f"±{margin * 100:g}%" if claim.above == 1.0 else
            f"not settled: the interval holds {claim.above:g}×")


def size(claim: Claim, iv: Interval) -> str:
    """The article's own figure against the interval: "" when it gave none."""
    if claim.size is None:
        return ""
    said = f"{'> ' if claim.at_least else ''}{claim.size:.3g}×"
    if claim.at_least:
        if iv.low > claim.size:
            return f"; its size holds (all of the interval is above {said[2:]})"
        if iv.high < claim.size:
            return f"; its size does not (the article's {said}: the interval is below it)"
        return f"; its size is not settled (the interval holds {said[2:]})"
    if iv.low <= claim.size <= iv.high:
        return f"; its size holds (the article's {said} lies inside the interval)"
    return f"; its size does not (the article's {said} lies outside the interval)"


def main(run_dir: str) -> int:
    run = Path(run_dir)
    if not (run / "summary.csv").is_file():
        sys.exit(f"{run / 'summary.csv'} is missing: run `python -m harness report {run}` first")
    groups = {g.key: g for g in read_summary(run / "summary.csv")}
    print("| article | claim | article's figure | ours: numerator / denominator | verdict |")
    print("| --- | --- | --- | --- | --- |")
    for c in CLAIMS:
        print(f"| {c.article} | {c.text} | {c.published} | " + " | ".join(judge(c, groups)) + " |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m harness.publish.claims RUN_DIR")
    sys.exit(main(sys.argv[1]))
