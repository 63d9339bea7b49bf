"""The run's verdicts (standings.py) on synthetic samples with known
answers: a planted lead is found, equal figures are called level, too few
runs or an interval across the margin are "not settled" with that reason,
and across a family of many verdicts the share of wrong settled ones stays
under 5%. A part declared not judged has no verdicts and no more runs
(test_sequential.py tests the rule of more runs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.analyse.analysis import group_runs
from harness.sequential import more_runs
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.plan.plan import plan
from harness.core.registry import resolve
from harness.core.schema import RecordedSettings, Row
from harness.analyse.standings import (ACROSS_MARGIN, BEHIND, FEW_RUNS, LEVEL_WORD, NOT_SETTLED,
                               judged, settled_share, standings, unjudged_note)

from ..conftest import FAKES

MS = 1e-3
MIB = 1 << 20


def rows(impl: str, times: list[float], rss: list[float] | None = None, n: int = 5,
         workload: str = "chain", first_rep: int = 1) -> list[Row]:
    """One configuration's ok rows: warm and cold iteration times as given,
    peak RSS as given (else a constant 10 MiB)."""
    rss = rss or [10 * MIB] * len(times)
    return [Row(impl=impl, language="fake", runtime="Fake", workload=workload, n=n,
                buffer=None, rep=i + first_rep, status="ok", first_iter_s=t, warm_iter_s=t,
                peak_rss_bytes=m) for i, (t, m) in enumerate(zip(times, rss))]


def verdict(found, impl: str, metric: str = "warm_iter_s"):
    return next(s for s in found if s.other.impl == impl and s.metric == metric)


def test_a_planted_doubling_is_behind_and_equal_memory_is_level() -> None:
    found = standings(group_runs(rows("a", [1 * MS, 1.01 * MS, 0.99 * MS, 1.005 * MS])
                                 + rows("b", [2 * MS, 2.02 * MS, 1.98 * MS, 2.01 * MS])))
    warm = verdict(found, "b")
    assert warm.leader.impl == "a" and warm.verdict == BEHIND
    assert 1.9 < warm.interval.low < 2 < warm.interval.high < 2.1
    assert verdict(found, "b", "peak_rss_bytes").verdict == LEVEL_WORD
    assert settled_share(found) == (len(found), len(found))


def test_three_runs_a_side_cannot_settle_and_say_so() -> None:
    found = standings(group_runs(rows("a", [1 * MS] * 3) + rows("b", [2 * MS] * 3)))
    warm = verdict(found, "b")
    assert warm.verdict == NOT_SETTLED and warm.why.startswith(FEW_RUNS)
    assert "3 and 3; 4 a side" in warm.why


def test_an_interval_across_the_margin_is_not_settled() -> None:
    """±20% noise, 3% apart: neither different nor within ±5%."""
    a = [1.0, 1.2, 0.8, 1.1, 0.9, 1.05]
    found = standings(group_runs(rows("a", [v * MS for v in a])
                                 + rows("b", [v * 1.03 * MS for v in reversed(a)])))
    s = next(s for s in found if s.metric == "warm_iter_s")
    assert s.verdict == NOT_SETTLED and s.why == ACROSS_MARGIN
    # a wider margin makes the same figures level
    wide = standings(group_runs(rows("a", [v * MS for v in a[:4]] * 3)
                                + rows("b", [v * MS for v in a[:4]] * 3)), {"warm_iter_s": 0.5})
    assert next(s for s in wide if s.metric == "warm_iter_s").verdict == LEVEL_WORD


def test_throughput_leads_upward() -> None:
    http = [Row(impl=impl, language="fake", runtime="Fake", workload="http",
                users=10, requests=20, delay_ms=100, style="async", rep=i + 1,
                status="ok", rps=rps * (1 + 0.001 * i), latency_p50_s=20 * MS,
                peak_rss_bytes=10 * MIB) for impl, rps in (("slow", 500), ("fast", 1000))
            for i in range(5)]
    found = standings(group_runs(http))
    s = next(s for s in found if s.metric == "rps")
    assert s.leader.impl == "fast" and s.other.impl == "slow" and s.verdict == BEHIND
    assert s.interval.estimate == pytest.approx(2, rel=0.01)


def _family(rng: np.random.Generator, factors: list[float], runs: int, sigma: float):
    """One set per factor: a leader and a rival `factor` times slower."""
    table = []
    for i, f in enumerate(factors):
        table += rows(f"lead{i}", list(rng.lognormal(0, sigma, runs) * MS), n=i + 1)
        table += rows(f"other{i}", list(f * rng.lognormal(0, sigma, runs) * MS), n=i + 1)
    return [s for s in standings(group_runs(table)) if s.metric == "warm_iter_s"]


def test_the_share_of_wrong_settled_verdicts_stays_under_5_percent() -> None:
    """60 sets with no difference and 20 with a doubling, 5 runs a side,
    lognormal noise of 20% (margin 5%: the equal pairs cannot be shown level
    with so much noise): over 30 runs of such a report, "behind" said of an
    equal pair is under 5% of the settled verdicts, and most doublings are
    found."""
    rng = np.random.default_rng(11)
    wrong, found = [], []
    for _ in range(30):
        factors = [1.0] * 60 + [2.0] * 20
        family = _family(rng, factors, 5, 0.2)
        # the leader is whichever was faster: a rival slower by design is behind when found
        settled = [s for s in family if s.settled]
        false = [s for s in settled if s.verdict == BEHIND
                 and factors[s.leader.n - 1] == 1.0]
        wrong.append(len(false) / max(len(settled), 1))
        found.append(sum(1 for s in settled if factors[s.leader.n - 1] == 2.0) / 20)
    assert np.mean(wrong) < 0.05 and np.mean(found) > 0.7


def test_under_the_null_almost_nothing_is_called_different() -> None:
    """All pairs equal, tight (1% noise), 6 runs a side: most are level, and
    "behind" is said of under 5% of them over many reports."""
    rng = np.random.default_rng(12)
    behind, level = 0, 0
    total = 0
    for _ in range(20):
        family = _family(rng, [1.0] * 30, 6, 0.01)
        behind += sum(s.verdict == BEHIND for s in family)
        level += sum(s.verdict == LEVEL_WORD for s in family)
        total += len(family)
    assert behind / total < 0.05 and level / total > 0.9


# -- run --until-settled --------------------------------------------------------

@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def _planned(repeat: int = 4, max_repeat: int | None = 8):
    s = settings_from(Options(impl="fake-good,fake-wrong", workload="chain", n="5,6",
                              repeat=repeat, until_settled=True, max_repeat=max_repeat),
                      ram_bytes=1 << 30)
    return plan(resolve(s.impls), s)


def test_the_first_screen_follows_the_standings() -> None:
    """verdicts.headlines says what standings decided: a level pair is
    level, a settled lead leads."""
    from harness.analyse.verdicts import headlines
    same = [1 * MS, 1.002 * MS, 0.998 * MS, 1.001 * MS, 0.999 * MS, 1.0 * MS]
    groups = group_runs(rows("a", same) + rows("b", list(reversed(same))))
    level = {h.metric: h for h in headlines(groups, standings(groups))}
    assert level["warm_iter_s"].word == "level" and level["warm_iter_s"].leader.impl == "a"
    groups = group_runs(rows("a", same) + rows("b", [2 * v for v in same]))
    apart = {h.metric: h for h in headlines(groups, standings(groups))}
    assert apart["warm_iter_s"].word == "leads" and apart["peak_rss_bytes"].word == "level"


def test_a_part_declared_not_judged_has_no_verdicts_and_no_more_runs(fakes: None) -> None:
    """suites.toml `judged = false` (the default suite's http, run once as a
    check): its groups are out of the standings, and --until-settled does
    not run it again however unsettled it is."""
    settings = RecordedSettings.of({"parts": [{"workloads": ["chain"], "ns": [6], "judged": False},
                                              {"workloads": ["chain"], "ns": [5], "judged": True}]})
    table = (rows("fake-good", [1 * MS] * 3, n=5) + rows("fake-wrong", [2 * MS] * 3, n=5)
             + rows("fake-good", [1 * MS] * 3, n=6) + rows("fake-wrong", [2 * MS] * 3, n=6))
    groups = group_runs(table)
    assert {g.n for g in judged(groups, settings)} == {5}
    assert "Not judged: chain, a check" in unjudged_note(settings)
    assert unjudged_note(RecordedSettings.of({"parts": [{"workloads": ["chain"], "ns": [5]}]})) == ""
    runs = [dataclasses.replace(p, judged=p.key.n != 6) for p in _planned(repeat=3)]
    # N = 5's pair is open at 3 runs a side: both sides run again, N = 6 not at all
    assert {(p.key.impl, p.key.n) for p in more_runs(table, runs)} == {
        ("fake-good", 5), ("fake-wrong", 5)}


def test_a_check_and_a_judged_load_of_one_workload_are_told_apart() -> None:
    """The default suite's http: a check at 10 users on every server, not
    judged, and C#'s styles at 50 users, judged: a part is matched by its
    dimensions' values and its own implementations, not by workload alone
    (the default run of 2026-11-28 night left Vaughan's claims out so)."""
    settings = RecordedSettings.of({"parts": [
        {"workloads": ["http"], "ns": [1000], "judged": False,
         "params": {"users": [10], "requests": [3], "delay_ms": [50], "style": ["async"]}},
        {"workloads": ["http"], "ns": [1000], "judged": True, "impls": ["csharp-async"],
         "params": {"users": [50], "requests": [20], "delay_ms": [100],
                    "style": ["async", "sync"]}}]})

    def http(impl: str, users: int, style: str) -> list[Row]:
        return [Row(impl=impl, language="fake", runtime="Fake", workload="http", rep=1,
                    status="ok", users=users, requests=3 if users == 10 else 20,
                    delay_ms=50 if users == 10 else 100, style=style, rps=100.0)]

    groups = group_runs(http("go", 10, "async") + http("csharp-async", 10, "async")
                        + http("csharp-async", 50, "async") + http("csharp-async", 50, "sync")
                        + http("csharp-async[X=1]", 50, "sync"))
    assert sorted((g.impl, g.key.param("users"), g.key.param("style"))
                  for g in judged(groups, settings)) == [
        ("csharp-async", 50, "async"), ("csharp-async", 50, "sync"),
        ("csharp-async[X=1]", 50, "sync")]
    assert unjudged_note(settings).startswith(
        "Not judged: http users=10 requests=3 delay_ms=50 style=async, a check")
