"""The claims a page and `python -m harness claims` print are the
run's questions' (analyse/questions.py): each claim's direction (holds,
does not hold, level, or not settled with a reason) and, where the article
gave one, its size, as the claims table's verdict cell says them.
Synthetic runs with known answers."""

from __future__ import annotations

import pytest

from harness.analyse import questions
from harness.analyse.analysis import group_runs
from harness.core.claims import CLAIMS, Claim
from harness.core.schema import Row
from harness.present.report import claim_rows

MS = 1e-3
GO_COLD = CLAIMS[0]  # Go's second chain pass much faster than its first: 4.3×


def judged(claim: Claim, num: list[float], den: list[float]) -> str:
    """The verdict cell of the claims table for one claim on these runs."""
    rows = [Row(impl=side.impl, workload=side.workload, n=side.n, buffer=side.buffer, rep=rep,
                status="ok", **dict(side.params), **{side.metric: value})
            for side, values in ((claim.num, num), (claim.den, den))
            for rep, value in enumerate(values, 1)]
    if claim.num.key() == claim.den.key():  # one configuration, two figures: one row a run
        rows = [Row(impl=claim.num.impl, workload=claim.num.workload, n=claim.num.n,
                    buffer=claim.num.buffer, rep=rep, status="ok", **dict(claim.num.params),
                    **{claim.num.metric: a, claim.den.metric: b})
                for rep, (a, b) in enumerate(zip(num, den), 1)]
    found = questions.ask(group_runs(rows))
    (row,) = claim_rows(questions.Questions([], [c for c in found.claims if c.claim == claim]))
    return row[-1]


def spread(centre: float, k: int = 6, width: float = 0.02) -> list[float]:
    return [centre * (1 - width + 2 * width * i / (k - 1)) for i in range(k)]


def test_direction_and_size_both_hold() -> None:
    assert judged(GO_COLD, spread(4.3 * MS), spread(1 * MS)) == (
        "holds; its size holds (the article's 4.3× lies inside the interval)")


def test_the_direction_holds_and_the_size_does_not() -> None:
    assert judged(GO_COLD, spread(2.5 * MS), spread(1 * MS)) == (
        "holds; its size does not (the article's 4.3× lies outside the interval)")


def test_a_claimed_lead_that_is_level_does_not_hold() -> None:
    assert judged(GO_COLD, spread(1 * MS, width=0.01), spread(1 * MS, width=0.01)).startswith(
        "does not hold: level (within ±5%)")


def test_too_few_runs_say_so() -> None:
    assert judged(GO_COLD, spread(4 * MS, k=2), spread(1 * MS, k=2)).startswith(
        "not settled: too few runs (2 and 2)")


def test_at_least_sizes() -> None:
    go_mem = next(c for c in CLAIMS if c.size == 13 and c.at_least)
    assert judged(go_mem, spread(2600e6), spread(213e6)).endswith(
        "its size does not (the interval is below 13×)")
    assert judged(go_mem, spread(2600e6), spread(150e6)).endswith(
        "its size holds (all of the interval is above 13×)")


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.text[:40])
def test_every_claim_gets_a_verdict_with_a_reason(claim: Claim) -> None:
    """Whatever the figures, a verdict is one of the words, and "not settled"
    always says why."""
    for num, den in ((spread(2.0), spread(1.0)), (spread(1.0), spread(1.0)),
                     (spread(1.0, width=0.5), spread(1.1, width=0.5))):
        verdict = judged(claim, num, den)
        assert verdict.split(";")[0].split(":")[0] in ("holds", "does not hold", "not settled")
        if verdict.startswith("not settled"):
            assert ": " in verdict
