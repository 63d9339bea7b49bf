"""harness/publish/calibration.py on synthetic A/A runs with known answers: the
same values under two names are never called different and pass the gate;
noise alone is called different about as often as the level says; a
planted factor is found where the arithmetic says it must be."""

from __future__ import annotations

import numpy as np

from harness.analyse.analysis import Group, group_runs
from harness.core.schema import Row
from harness.publish import calibration

MS = 1e-3


def group(impl: str, workload: str, n: int, values: dict[str, list[float]]) -> Group:
    """The harness's group of ok runs carrying these values, run k the k-th of each."""
    count = len(next(iter(values.values())))
    rows = [Row(impl=impl, workload=workload, n=n, rep=rep + 1, status="ok",
                **{metric: vs[rep] for metric, vs in values.items()}) for rep in range(count)]
    (g,) = group_runs(rows)
    return g


def chain_pair(impl: str, n: int, old: list[float], new: list[float]) -> list[Group]:
    figures = ("first_iter_s", "warm_iter_s", "peak_rss_bytes")
    return [group(impl, "chain", n, {m: old for m in figures}),
            group(impl + calibration.AA, "chain", n, {m: new for m in figures})]


def test_identical_runs_are_never_different_and_pass_the_gate() -> None:
    values = [1.0 * MS, 1.01 * MS, 0.99 * MS, 1.005 * MS, 0.995 * MS]
    found = calibration.comparisons(chain_pair("go", 5, values, list(reversed(values))))
    assert len(found) == 3
    assert not any(c.different for c in found)
    assert {c.gate() for c in found} == {"passes"} and all(c.level for c in found)
    text = calibration.section(chain_pair("go", 5, values, values), trials=2, planted_trials=1)
    assert ("A/A comparisons called different: 0 of 3 (0.0%); goal at most 5%: too few "
            "comparisons to say (the goal is judged over at least 100)") in text


def test_a_planted_factor_is_found_where_the_arithmetic_says() -> None:
    """Runs within ±1%, 5 a side: the gate fails once every pairwise ratio
    passes 1.05, i.e. near +7% planted (1.05 · 1.01 / 0.99); not at +5%."""
    values = [1.0 * MS, 1.01 * MS, 0.99 * MS, 1.005 * MS, 0.995 * MS]
    c = calibration.comparisons(chain_pair("go", 5, values, values))[0]
    assert c.gate(1.05) != "fails"
    assert 1.05 < c.detectable() <= 1.08


def test_noise_alone_is_called_different_at_most_about_5_percent() -> None:
    """200 configurations' A/A pairs of lognormal noise (10%), 5 runs a side:
    the share called different is near the two-sided test's 5% or below
    (exact tests are conservative), and the gate's false failures rarer."""
    rng = np.random.default_rng(21)
    groups = []
    for n in range(1, 201):
        groups += chain_pair("go", n, list(rng.lognormal(0, 0.1, 5) * MS),
                             list(rng.lognormal(0, 0.1, 5) * MS))
    found = calibration.comparisons(groups)
    share = sum(c.different for c in found) / len(found)
    assert "goal at most 5%: met." in calibration.section(groups, trials=1, planted_trials=0)
    fails = sum(c.gate() == "fails" for c in found) / len(found)
    assert share < 0.08 and fails < share + 0.01


def test_the_gate_as_a_whole_on_splits_of_the_runs() -> None:
    """Three chain configurations whose runs lie within ±1% (9 headline
    figures, 5 runs a name) and one bimodal (runs of 1 or 4 ms): every
    split passes the gate, the bimodal one's figures named not gateable;
    10% planted on chain fails every trial, since 5 runs a side reach Holm's
    5%/9 (1/252) and every pairwise ratio then lies beyond 1.05."""
    rng = np.random.default_rng(3)
    groups = []
    for n in (1, 2, 3):
        groups += chain_pair("go", n, list(rng.uniform(0.99, 1.01, 5) * MS),
                             list(rng.uniform(0.99, 1.01, 5) * MS))
    groups += chain_pair("go", 4, [1 * MS, 4 * MS] * 2 + [1 * MS], [4 * MS, 1 * MS] * 2 + [4 * MS])
    t = calibration.gate_trials(groups, trials=10, planted_trials=5)
    assert t.exits == {0: 10} and t.not_gateable == 3 and t.family == 9
    assert t.runs == 5 and t.runs_to_fail == 5
    assert t.planted == {"chain": {1: 5}}
    text = calibration.section(groups, trials=10, planted_trials=5)
    assert "of 10 A/A gate trials, 0 exit 1 (a false alarm), 0 exit 3 (undecided), 10 exit 0" in text
    assert "chain: 5, 0, 0 of 5" in text


def test_the_rankings_family_on_two_names_counts_the_pairs_called_apart() -> None:
    """One build under two names, neighbours in their rankings: tight equal
    runs are level, never apart; a planted doubling of the second name is
    apart on every figure (the count a real A/A run must keep under 5%)."""
    tight = [1.0 * MS, 1.001 * MS, 0.999 * MS, 1.0005 * MS, 0.9995 * MS]
    same = calibration.section(chain_pair("go", 5, tight, list(reversed(tight))), trials=2,
                               planted_trials=1)
    assert "neighbour pairs of one build under its two names: 0 of 3 called apart" in same
    assert "Level within the figure's margin: 3;" in same
    doubled = calibration.section(chain_pair("go", 5, tight, [2 * v for v in tight]), trials=2,
                                  planted_trials=1)
    assert "under its two names: 3 of 3 called apart" in doubled
