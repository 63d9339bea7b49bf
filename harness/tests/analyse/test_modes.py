"""analyse/modes.py on synthetic samples: planted second modes are found
with their shares and figures, one lognormal mode is seldom flagged, and
too few runs never are."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analyse.analysis import group_runs
from harness.analyse.modes import bimodal, bimodal_groups

from .test_standings import MS, rows


def test_the_issues_examples_are_two_modes_with_their_shares() -> None:
    """csharp-async chain 1M RSS: 10 runs at 1.00x, 2 at 1.95x."""
    found = bimodal([100.0 * (1 + 0.002 * i) for i in range(10)] + [195.0, 196.0])
    assert found is not None
    assert (found.lower.runs, found.upper.runs) == (10, 2)
    assert found.lower.share == pytest.approx(10 / 12) and found.upper.share == pytest.approx(2 / 12)
    assert found.lower.figure == pytest.approx(100.9) and found.upper.figure == pytest.approx(195.5)
    assert found.text(lambda v: f"{v:.0f}") == "two modes: 10 runs at 101 (83%), 2 at 196 (17%)"
    assert bimodal([0.9, 0.92, 0.91, 2.8, 2.7, 0.9]) is not None  # rust-smol: 0.9x or 2.8x


def test_too_few_runs_a_lone_outlier_or_a_small_gap_are_not_two_modes() -> None:
    assert bimodal([1.0]) is None and bimodal([1.0, 2.0, 2.0]) is None
    assert bimodal([1.0] * 9 + [3.0]) is None  # one run is an outlier, not a mode
    assert bimodal([1.0, 1.01, 1.3, 1.31]) is None  # 1.3x apart: under GAP


@pytest.mark.parametrize("n", [4, 6, 12])
def test_one_lognormal_mode_is_seldom_flagged(n: int) -> None:
    rng = np.random.default_rng(n)
    flagged = sum(bimodal(list(np.exp(rng.normal(0, 0.25, n)))) is not None for _ in range(1000))
    assert flagged <= 70


def test_two_tight_modes_are_found_at_every_share() -> None:
    rng = np.random.default_rng(2)
    for n, k in ((4, 2), (6, 2), (12, 2), (10, 3), (8, 4)):
        hits = sum(bimodal(list(np.exp(np.r_[rng.normal(0, 0.05, n - k),
                                              rng.normal(np.log(1.95), 0.05, k)]))) is not None
                   for _ in range(200))
        assert hits >= 190, (n, k, hits)


def test_a_groups_bimodal_figure_is_named() -> None:
    times = [MS] * 6 + [2.5 * MS] * 2
    found = bimodal_groups(group_runs(rows("a", times) + rows("b", [MS] * 8)))
    assert {(b.group.impl, b.metric) for b in found} == {("a", "first_iter_s"), ("a", "warm_iter_s")}


def test_verdicts_and_places_say_they_rest_on_a_bimodal_side() -> None:
    from harness.analyse.questions import ask
    from harness.analyse.ranks import all_rank_intervals
    groups = group_runs(rows("a", [MS] * 6 + [2.5 * MS] * 2) + rows("b", [4 * MS] * 8))
    pair = next(r for r in ask(groups).rankings if r.metric == "warm_iter_s").pairs[0]
    assert [g.impl for g in pair.bimodal] == ["a"]
    ranking = next(r for r in all_rank_intervals(groups) if r.metric == "warm_iter_s")
    assert ranking.place_of("a").modes.upper.runs == 2 and ranking.place_of("b").modes is None
