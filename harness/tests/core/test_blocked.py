"""Ratios over blocks (the nodes of a cluster run) on synthetic runs with a
planted node effect: known answers, never timings."""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from harness.analyse import analysis, gate, standings, verdicts
from harness.present import compare
from harness.core.schema import Row
from harness.core.metrics import margins
from harness.core.stats import (LEVEL, _blocked_u_counts, _u_counts, blocked_ratio_bound,
                           blocked_ratio_interval, blocked_ratio_p, ratio_bound, ratio_interval,
                           ratio_p, smallest_p)

NODES = {"n1": 1.0, "n2": 1.1, "n3": 1.25}  # each node's planted slowdown
TRUE = 1.30  # new / old, the same on every node
# Unbalanced: old ran mostly on the slow node, new mostly on the fast one,
# so pooling every run with every other mixes the nodes into the ratio.
OLD_RUNS = {"n1": 2, "n2": 3, "n3": 8}
NEW_RUNS = {"n1": 8, "n2": 3, "n3": 2}
SIGMA = 0.01  # run-to-run noise: the estimate's own spread is about 0.5%


def planted(rng: np.random.Generator, ratio: float = TRUE
            ) -> list[tuple[np.ndarray, np.ndarray]]:
    """One draw: per node, (old, new) lognormal runs scaled by the node's effect."""
    return [(NODES[node] * rng.lognormal(0, SIGMA, OLD_RUNS[node]),
             NODES[node] * ratio * rng.lognormal(0, SIGMA, NEW_RUNS[node])) for node in NODES]


def pooled(blocks: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([a for a, _ in blocks]), np.concatenate([b for _, b in blocks])


# -- the exact distribution -----------------------------------------------------

@pytest.mark.parametrize("sizes", [((2, 3),), ((1, 1), (1, 1), (1, 1)), ((1, 2), (2, 3), (3, 1))])
def test_the_summed_u_is_the_enumerated_one(sizes: tuple[tuple[int, int], ...]) -> None:
    """Every way to order each block's runs, independently, counted by hand."""
    def orderings(n: int, m: int) -> list[int]:
        return [sum(p - i for i, p in enumerate(pos))
                for pos in itertools.combinations(range(n + m), n)]
    total = [sum(us) for us in itertools.product(*(orderings(n, m) for n, m in sizes))]
    counts = [total.count(u) for u in range(sum(n * m for n, m in sizes) + 1)]
    assert list(_blocked_u_counts(tuple(sorted(sizes)))) == counts


def test_one_block_is_the_pooled_ratio_exactly() -> None:
    """One node (or none) gives today's figures, to the last bit."""
    rng = np.random.default_rng(3)
    for n, m in ((2, 2), (3, 5), (4, 4), (7, 6)):
        old, new = rng.lognormal(0, 0.2, n), rng.lognormal(0.1, 0.2, m)
        assert blocked_ratio_interval([(old, new)]) == ratio_interval(old, new)
        for lower in (True, False):
            assert blocked_ratio_bound([(old, new)], lower) == ratio_bound(old, new, lower)
        for r, above in itertools.product((0.9, 1.0, 1.2), (True, False)):
            p = blocked_ratio_p([(old, new)], r, above)
            assert p == ratio_p(old, new, r, above)
            theirs = mannwhitneyu(new / r, old, alternative="greater" if above else "less",
                                  method="exact").pvalue
            assert p == pytest.approx(theirs, abs=1e-12)


def test_a_block_with_one_side_only_pairs_nothing() -> None:
    a, b = [1.0, 1.1, 0.9], [1.3, 1.4, 1.2]
    assert blocked_ratio_interval([(a, b), ([5.0, 6.0], [])]) == ratio_interval(a, b)
    assert blocked_ratio_interval([([1.0], []), ([], [2.0])]) is None
    assert blocked_ratio_p([([0.0, 1.0], [1.0])], 1.0, True) is None  # no ratio of 0


def test_one_run_a_side_on_each_of_four_nodes_is_a_sign_test() -> None:
    """Four blocks of one pair: the summed U is Bin(4, 1/2), [min, max] 87.5%."""
    iv = blocked_ratio_interval([([e], [1.2 * e * f]) for e, f in
                                 ((1.0, 1.01), (1.1, 0.99), (1.25, 1.02), (0.9, 0.98))])
    assert iv.confidence == pytest.approx(1 - 2 / 16) and iv.runs == (4, 4)
    assert iv.low == pytest.approx(1.2 * 0.98) and iv.high == pytest.approx(1.2 * 1.02)


# -- a planted node effect -------------------------------------------------------

def test_the_blocked_ratio_finds_the_planted_ratio_the_pooled_one_does_not() -> None:
    blocks = planted(np.random.default_rng(1))
    iv = blocked_ratio_interval(blocks)
    assert iv.estimate == pytest.approx(TRUE, rel=0.015) and iv.low <= TRUE <= iv.high
    assert iv.settled and iv.runs == (13, 13)
    flat = ratio_interval(*pooled(blocks))
    assert abs(flat.estimate / TRUE - 1) > 0.1 and not flat.low <= TRUE <= flat.high


def test_over_many_draws_blocked_is_unbiased_and_covers_as_it_says() -> None:
    rng = np.random.default_rng(5)
    trials = 600
    draws = [planted(rng) for _ in range(trials)]
    blocked = [blocked_ratio_interval(d) for d in draws]
    flat = [ratio_interval(*pooled(d)) for d in draws]

    def bias(ivs: list) -> float:
        return math.exp(np.mean([math.log(iv.estimate / TRUE) for iv in ivs])) - 1

    assert abs(bias(blocked)) < 0.002
    assert bias(flat) < -0.08  # old's runs sit on the slow node: new looks faster
    stated = blocked[0].confidence  # the same for every draw: it depends on the counts only
    hit = sum(iv.low <= TRUE <= iv.high for iv in blocked) / trials
    assert stated >= LEVEL and abs(hit - stated) < 3 * math.sqrt(stated * (1 - stated) / trials)
    assert sum(iv.low <= TRUE <= iv.high for iv in flat) / trials < 0.2
    # the one-sided test at the true ratio: false alarms at most 5% (within noise)
    alarms = sum(blocked_ratio_p(d, TRUE, above=True) <= 1 - LEVEL for d in draws) / trials
    assert alarms < 1 - LEVEL + 3 * math.sqrt(0.05 * 0.95 / trials)
    bounds = [blocked_ratio_bound(d, lower=True) for d in draws]
    assert sum(b.low <= TRUE for b in bounds) / trials >= bounds[0].confidence - 0.03


# -- the analysis and compare on rows that carry their node ----------------------

CHAIN = {"workload": "chain", "n": 5, "buffer": None}


def rows(impl: str, factor: float, runs: dict[str, int], rng: np.random.Generator,
         node: bool = True) -> list[Row]:
    """ok rows of chain N=5 for impl: warm iteration times factor · the
    node's effect · noise, runs[node] of them on each node (node=False:
    no node column, a run outside a cluster)."""
    out = []
    for name, count in runs.items():
        for value in factor * NODES[name] * rng.lognormal(0, SIGMA, count):
            out.append(Row(impl=impl, language="fake", runtime="Fake", **CHAIN,
                           rep=len(out) + 1, node=name if node else None, status="ok",
                           first_iter_s=2 * value, warm_iter_s=value,
                           peak_rss_bytes=10 << 20))
    return out


def group(groups: list[analysis.Group], impl: str) -> analysis.Group:
    return next(g for g in groups if g.impl == impl)


def test_ranks_and_floor_ratios_are_formed_within_nodes() -> None:
    rng = np.random.default_rng(8)
    groups = analysis.group_runs(rows("old", 1.0, OLD_RUNS, rng) + rows("new", TRUE, NEW_RUNS, rng))
    old, new = group(groups, "old"), group(groups, "new")
    ranking = analysis.rank(groups, "warm_iter_s")
    iv = ranking.intervals[new.key]
    assert ranking.best == old.key and ranking.settled
    assert iv.low <= TRUE <= iv.high and ranking.ratios[new.key] == pytest.approx(TRUE, rel=0.015)
    assert new.median("warm_iter_s") / old.median("warm_iter_s") < 1.2  # the medians mislead
    floor = analysis.ratios(groups, floor=["old"])
    assert floor[new.key]["floor"] == ranking.ratios[new.key]
    assert floor.intervals[new.key]["floor"] == iv


def test_the_best_is_found_through_the_nodes() -> None:
    """The faster implementation ran mostly on the slow node: its median is
    the higher one, its within-node ratios show it is the best."""
    rng = np.random.default_rng(9)
    groups = analysis.group_runs(rows("fast", 1.0, OLD_RUNS, rng)
                                 + rows("slow", 1.1, NEW_RUNS, rng))
    fast, slow = group(groups, "fast"), group(groups, "slow")
    assert fast.median("warm_iter_s") > slow.median("warm_iter_s")
    ranking = analysis.rank(groups, "warm_iter_s")
    assert ranking.best == fast.key and ranking.settled
    assert ranking.ratios[slow.key] == pytest.approx(1.1, rel=0.015)


def test_one_node_or_none_keeps_todays_figures() -> None:
    for runs, node in (({"n1": 6}, True), ({"n1": 3, "n2": 4}, False)):
        rng = np.random.default_rng(4)
        groups = analysis.group_runs(rows("a", 1.0, runs, rng, node)
                                     + rows("b", 1.3, runs, rng, node))
        a, b = group(groups, "a"), group(groups, "b")
        assert analysis.node_blocks(a, b, "warm_iter_s") is None
        ranking = analysis.rank(groups, "warm_iter_s")
        assert ranking.intervals[b.key] == ratio_interval(a.values("warm_iter_s"),
                                                          b.values("warm_iter_s"))
        (c,) = gate.compare_groups([a], [dataclasses.replace(b, impl="a")])
        ch = c.changes["warm_iter_s"]
        assert ch.blocks == () and not c.apart
        assert ch.interval == ratio_interval(ch.old_values, ch.new_values)
        assert ch.p_worse(0.05) == ratio_p(ch.old_values, ch.new_values, 1.05, above=True)


def test_a_slower_node_changes_no_verdict_of_the_baseline_comparison() -> None:
    """Two implementations of the same speed, the baseline's runs mostly on
    the slow node: pooled, the other would "improve" by some 12%; paired
    within nodes it is level."""
    rng = np.random.default_rng(12)
    groups = analysis.group_runs(rows("base", 1.0, OLD_RUNS, rng)
                                 + rows("other", 1.0, NEW_RUNS, rng))
    old, new = gate.against_baseline(groups, "base")
    verdict = gate.Verdict(gate.compare_groups(old, new, margins(None)), {}, {},
                           Path("run"), Path("run"), fail_above=0.05, baseline="base")
    ch = verdict.comparisons[0].changes["warm_iter_s"]
    assert len(ch.blocks) == 3 and ch.verdict == gate.LEVEL_WITHIN
    assert ch.ratio == pytest.approx(1.0, abs=0.02) and verdict.passed and not verdict.undecided
    flat = ratio_interval(ch.old_values, ch.new_values)
    assert flat.side(1.0) == "below"  # what the pooled ratio would have called an improvement
    assert "only runs of one node are paired" in compare.render(verdict)


def test_two_runs_on_different_nodes_say_so() -> None:
    rng = np.random.default_rng(13)
    old = analysis.group_runs(rows("a", 1.0, {"n1": 4}, rng))
    new = analysis.group_runs(rows("a", 1.0, {"n3": 4}, rng))
    verdict = gate.Verdict(gate.compare_groups(old, new), {}, {}, Path("old"), Path("new"))
    (c,) = verdict.comparisons
    assert c.apart and c.changes["warm_iter_s"].blocks == ()
    assert any("different nodes" in note for note in verdict.notes)


# -- the run's standings and the first screen -------------------------------------

def judge(table: list[Row]) -> tuple[list[standings.Standing], list[verdicts.Headline]]:
    groups = analysis.group_runs(table)
    found = standings.standings(groups)
    return found, verdicts.headlines(groups, found)


def without_nodes(table: list[Row]) -> list[Row]:
    """The same runs, pooled: what the standings made of them before nodes were blocks."""
    return [dataclasses.replace(r, node=None) for r in table]


def standing(found: list[standings.Standing], metric: str = "warm_iter_s") -> standings.Standing:
    (s,) = [s for s in found if s.metric == metric]
    return s


def test_the_leader_and_its_lead_are_found_within_nodes() -> None:
    """fast is 10% faster but ran mostly on the slow node: its median is the
    higher one. Within nodes it leads, slow behind by 1.1×; pooled, slow
    would lead, and the nodes' spread would hide the 10% lead."""
    rng = np.random.default_rng(9)
    table = rows("fast", 1.0, OLD_RUNS, rng) + rows("slow", 1.1, NEW_RUNS, rng)
    found, heads = judge(table)
    for metric in ("first_iter_s", "warm_iter_s"):
        s = standing(found, metric)
        assert (s.leader.impl, s.other.impl, s.verdict) == ("fast", "slow", standings.BEHIND)
        assert s.interval.low <= 1.1 <= s.interval.high and len(s.blocks) == 3
        assert s.interval.estimate == pytest.approx(1.1, rel=0.015)
    assert s.leader.median("warm_iter_s") > s.other.median("warm_iter_s")  # the medians mislead
    assert standing(found, "peak_rss_bytes").verdict == standings.LEVEL_WORD
    head = next(h for h in heads if h.metric == "warm_iter_s")
    assert (head.leader.impl, head.runner.impl, head.word) == ("fast", "slow", verdicts.LEADS)
    assert head.standing == s

    flat, flat_heads = judge(without_nodes(table))
    wrong = standing(flat)
    assert (wrong.leader.impl, wrong.other.impl, wrong.verdict) == ("slow", "fast",
                                                                   standings.NOT_SETTLED)
    assert wrong.why == standings.ACROSS_MARGIN
    assert next(h for h in flat_heads if h.metric == "warm_iter_s").leader.impl == "slow"


def test_equal_implementations_are_level_whatever_nodes_their_runs_fell_on() -> None:
    """The same speed, one side mostly on the slow node: level within ±5%
    paired within nodes; pooled, one would be 'behind' by some 12%."""
    rng = np.random.default_rng(12)
    table = rows("base", 1.0, OLD_RUNS, rng) + rows("other", 1.0, NEW_RUNS, rng)
    found, heads = judge(table)
    s = standing(found)
    assert s.verdict == standings.LEVEL_WORD and s.interval.estimate == pytest.approx(1, abs=0.02)
    assert next(h for h in heads if h.metric == "warm_iter_s").word == standings.LEVEL_WORD
    flat = standing(judge(without_nodes(table))[0])
    assert flat.verdict == standings.BEHIND and flat.interval.estimate > 1.08


def test_throughput_leads_upward_within_nodes() -> None:
    """Higher is better: a node 25% slower serves 25% fewer requests a
    second. fast serves 1.1× slow's on every node, with its runs mostly on
    the slow node."""
    rng = np.random.default_rng(21)

    def http(impl: str, rps: float, runs: dict[str, int]) -> list[Row]:
        return [Row(impl=impl, language="fake", runtime="Fake", workload="http",
                    users=10, requests=20, delay_ms=100, style="async", rep=i + 1,
                    node=node, status="ok", rps=rps / NODES[node] * noise,
                    latency_p50_s=0.02 * NODES[node] * noise, peak_rss_bytes=10 << 20)
                for i, (node, noise) in enumerate(
                    (node, noise) for node, count in runs.items()
                    for noise in rng.lognormal(0, SIGMA, count))]

    table = http("fast", 1100, OLD_RUNS) + http("slow", 1000, NEW_RUNS)
    found, heads = judge(table)
    s = standing(found, "rps")
    assert (s.leader.impl, s.other.impl, s.verdict) == ("fast", "slow", standings.BEHIND)
    assert s.interval.estimate == pytest.approx(1.1, rel=0.015)  # leader/other: > 1 is worse
    assert s.leader.median("rps") < s.other.median("rps")
    assert next(h for h in heads if h.metric == "rps").leader.impl == "fast"
    assert standing(judge(without_nodes(table))[0], "rps").leader.impl == "slow"


def test_runs_paired_within_nodes_settle_only_what_their_orderings_can(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One run a side on each of four nodes: the smallest p-value is 1/2⁴,
    two-sided 1/8, above the family's 10%: too few runs, where the same
    eight runs pooled (4 a side, 1/70) settle."""
    monkeypatch.setitem(NODES, "n4", 0.9)
    rng = np.random.default_rng(2)
    one_each = dict.fromkeys(NODES, 1)
    table = rows("a", 1.0, one_each, rng) + rows("b", 2.0, one_each, rng)
    s = standing(judge(table)[0])
    assert s.floor == 1 / 16 and s.verdict == standings.NOT_SETTLED
    assert s.why == (f"{standings.FEW_RUNS} (4 and 4, paired within 4 nodes; "
                     f"more runs on each can settle it)")
    flat = standing(judge(without_nodes(table))[0])
    assert flat.floor == 1 / 70 and flat.verdict == standings.BEHIND


def test_one_node_or_none_keeps_todays_standings() -> None:
    """Every standing, on runs of one node or of none, is the pooled test
    of the two groups' runs, as before nodes were blocks: the same
    interval, p-values, floor, verdict and first screen, to the last bit."""
    rng = np.random.default_rng(4)
    noisy = {"n1": 5}
    table = (rows("a", 1.0, noisy, rng) + rows("b", 1.02, noisy, rng)
             + rows("c", 1.5, noisy, rng) + rows("d", 1.0, {"n1": 3}, rng))
    outputs = []
    for runs in (table, without_nodes(table)):
        found, heads = judge(runs)
        for s in found:
            a, b = s.leader.values(s.metric), s.other.values(s.metric)
            up, down = ratio_p(a, b, 1.0, True), ratio_p(a, b, 1.0, False)
            assert s.blocks == () and s.interval == ratio_interval(a, b)
            assert s.p_differ == min(1.0, 2 * min(up, down))
            assert s.p_level == max(ratio_p(a, b, 1 / (1 + s.margin), True),
                                    ratio_p(a, b, 1 + s.margin, False))
            assert s.floor == smallest_p(*s.runs)
            leader = min((g for g in analysis.group_runs(runs) if g.values(s.metric)),
                         key=lambda g: (g.median(s.metric), g.impl))
            assert s.leader.key == leader.key  # the lowest median, as ever
        outputs.append(([(s.leader.impl, s.other.impl, s.metric, s.interval, s.p_differ,
                          s.p_level, s.verdict, s.why) for s in found],
                        [(h.metric, h.leader.impl, h.runner.impl, h.word) for h in heads]))
    assert outputs[0] == outputs[1]
    assert {s.verdict for s in judge(table)[0]} >= {standings.BEHIND, standings.LEVEL_WORD}
