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
from ..core.claims import CLAIMS, STYLE, Claim
from ..core.schema import ConfigKey
from ..core.stats import Interval, ratio_interval
from .published import read_summary


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
