"""harness/publish/claims.py judges each of the articles' claims both ways: its
direction (holds, does not hold, level, or not settled with a reason) and,
where the article gave one, its size. Synthetic figures with known
answers, no run."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from harness.publish import claims

MS = 1e-3


@dataclass
class Summary:
    values: tuple[float, ...]

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return sorted(self.values)[len(self.values) // 2]


@dataclass
class Group:
    metrics: dict[str, Summary] = field(default_factory=dict)
    ok: int = 1


GO_COLD = claims.CLAIMS[0]  # Go's second chain pass much faster than its first: 4.3×


def judged(claim: claims.Claim, num: list[float], den: list[float]) -> str:
    groups: dict[tuple, Group] = {}
    for side, values in ((claim.num, num), (claim.den, den)):  # one group may hold both
        groups.setdefault(side.key(), Group()).metrics[side.metric] = Summary(tuple(values))
    return claims.judge(claim, groups)[1]


def spread(centre: float, k: int = 5, width: float = 0.02) -> list[float]:
    return [centre * (1 - width + 2 * width * i / (k - 1)) for i in range(k)]


def test_direction_and_size_both_hold() -> None:
    assert judged(GO_COLD, spread(4.3 * MS), spread(1 * MS)) == (
        "holds; its size holds (the article's 4.3× lies inside the interval)")


def test_the_direction_holds_and_the_size_does_not() -> None:
    verdict = judged(GO_COLD, spread(2.5 * MS), spread(1 * MS))
    assert verdict == "holds; its size does not (the article's 4.3× lies outside the interval)"


def test_a_claimed_lead_that_is_level_does_not_hold() -> None:
    verdict = judged(GO_COLD, spread(1 * MS, width=0.01), spread(1 * MS, width=0.01))
    assert verdict.startswith("does not hold: level (within ±5%)")


def test_an_interval_across_the_margin_is_not_settled_and_says_why() -> None:
    verdict = judged(GO_COLD, spread(1.02 * MS, width=0.3), spread(1 * MS, width=0.3))
    assert verdict.startswith("not settled: the interval holds 1× and reaches past ±5%")


def test_at_least_sizes() -> None:
    go_mem = next(c for c in claims.CLAIMS if c.size == 13 and c.at_least)
    assert judged(go_mem, spread(2600e6), spread(213e6)).endswith(
        "its size does not (the article's > 13×: the interval is below it)")
    assert judged(go_mem, spread(2600e6), spread(150e6)).endswith(
        "its size holds (all of the interval is above 13×)")


def test_too_few_runs_say_so() -> None:
    assert judged(GO_COLD, spread(4 * MS, k=3), spread(1 * MS, k=3)).startswith(
        "not settled: too few runs for 95%")


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.text[:40])
def test_every_claim_gets_a_verdict_with_a_reason(claim: claims.Claim) -> None:
    """Whatever the figures, a verdict is one of the words, and "not settled"
    always says why."""
    for num, den in ((spread(2.0), spread(1.0)), (spread(1.0), spread(1.0)),
                     (spread(1.0, width=0.5), spread(1.1, width=0.5))):
        verdict = judged(claim, num, den)
        assert verdict.split(";")[0].split(":")[0] in ("holds", "does not hold", "not settled")
        if verdict.startswith("not settled"):
            assert ": " in verdict
