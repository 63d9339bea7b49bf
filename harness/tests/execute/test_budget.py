"""run --until-settled with --budget, driven through the scheduler by a fake
executor with known costs and known answers (no process, no clock): the
runs stop within the budget, the extra runs go where they buy the most open
verdicts per second, and at the same cost they settle more verdicts than
a round-robin of every configuration."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterable

import numpy as np
import pytest

from harness import sequential
from harness.analyse import ranks
from harness.analyse.analysis import group_runs
from harness.analyse.questions import ask
from harness.core.claims import CLAIMS
from harness.core.registry import resolve
from harness.core.schema import ConfigKey, Row
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.execute.progress import Progress
from harness.plan.plan import Planned, configurations, plan
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.record.rundir import RunDir

from ..conftest import FAKES

IMPLS = ["fake-good", "fake-wrong", "fake-garbage", "fake-crash", "fake-hang", "fake-hog"]
# n: (each impl's true time factor, seconds a run takes). N = 5: cheap runs,
# neighbours 1.3x to 2x apart and one tie; N = 6: the same order, 40x dearer.
TRUTH = {5: ([1.0, 1.0, 1.3, 2.0, 2.6, 5.2], 0.5), 6: ([1.0, 1.3, 1.7, 1.7, 3.4, 4.4], 20.0)}
BUDGET_S = 450.0  # the minimum takes 253 s: room for 9 dear runs or 240 cheap ones


class FakeExecutor:
    def __init__(self, run_id: str, seed: int) -> None:
        self.run_id, self.rng = run_id, np.random.default_rng(seed)
        self.ran: list[Planned] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append(p)
        factors, cost = TRUTH[p.key.n]
        t = factors[IMPLS.index(p.impl.id)] * self.rng.lognormal(0, 0.04) * 1e-3
        return Executed(make_row(self.run_id, p, "ok", wall_s=cost, first_iter_s=t,
                                 warm_iter_s=t, peak_rss_bytes=(10 + IMPLS.index(p.impl.id)) << 20))


class RoundRobin:
    """The comparison: every configuration again, pass after pass, in plan
    order, while the budget lasts (the same clock and ceiling)."""

    def __init__(self, budget: sequential.Budgeted) -> None:
        self.budget = budget

    repeated = staticmethod(sequential.repeated)
    outgrown = staticmethod(sequential.outgrown)
    too_dear = staticmethod(sequential.too_dear)

    def more_runs(self, rows: Iterable[Row], runs: list[Planned]) -> list[Planned]:
        reps: dict[ConfigKey, int] = {}
        for r in rows:
            reps[ConfigKey.of(r)] = max(reps.get(ConfigKey.of(r), 0), r.rep)
        fits, left = [], self.budget.left()
        for key, last in configurations(runs).items():
            rep = reps.get(key, 0) + 1
            cost = sequential.OVERHEAD_S + TRUTH[key.n][1]
            if rep <= last.max_repeat and cost <= left:
                fits.append(dataclasses.replace(last, rep=rep))
                left -= cost
        return fits


def _session(tmp_path: Path, seed: int, round_robin: bool = False
             ) -> tuple[RunDir, FakeExecutor, sequential.Budgeted, list[Planned]]:
    s = settings_from(Options(impl=",".join(IMPLS), workload="chain",
                              n="5,6", repeat=2, until_settled=True,
                              max_repeat=10), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path / ("rr" if round_robin else "value"))
    fake = FakeExecutor(run.name, seed)
    budget = sequential.Budgeted(BUDGET_S, clock=lambda: sum(
        sequential.OVERHEAD_S + (r.wall_s or 0) for r in run.runs().rows))
    rules = RoundRobin(budget) if round_robin else budget
    scheduler.execute_until_settled(run, runs, runs, rules, lambda p: Readiness("ready"), fake,
                                    Progress(len(runs), [1.0] * len(runs)), lambda p: 1.0)
    return run, fake, budget, runs


def _settled(run: RunDir) -> int:
    return sum(s for _, s, _ in ask(group_runs(run.runs().rows)).families())


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def test_the_runs_stop_within_the_budget_and_say_what_is_open(tmp_path: Path) -> None:
    run, fake, budget, runs = _session(tmp_path, 1)
    assert budget.left() >= 0  # the minimum (24 runs, 253 s) and every pass fit
    assert len(fake.ran) > len(runs)  # it did spend the budget on more runs
    assert budget.stopped == "the budget of 7:30 ends the runs"
    said = sequential.forecast(run.runs().rows, runs)
    open_now = sum(t - s for _, s, t in ask(group_runs(run.runs().rows)).families())
    assert said.startswith(f"{open_now} verdicts still open; another 10:00 of runs would")


def test_the_extra_runs_go_where_they_buy_the_most_verdicts_per_second(tmp_path: Path) -> None:
    """The first pass past the minimum takes the cheap set's open pairs
    before any of the dear set's, round by round (every configuration's
    third run before any one's fourth), both sides of a pair alike."""
    _, fake, _, runs = _session(tmp_path, 2)
    extra = fake.ran[len(runs):]
    first_round = extra[:next((i for i, p in enumerate(extra) if p.rep > 3), len(extra))]
    ns = [p.key.n for p in first_round]
    assert ns and ns[0] == 5 and ns == sorted(ns)
    reps = [p.rep for p in extra[:next((i for i, p in enumerate(extra) if p.rep < 3 or
                                        (i and p.rep < extra[i - 1].rep)), len(extra))]]
    assert reps == sorted(reps) and max(reps) >= 5  # cheap pairs go to 5 a side in one pass


def test_at_the_same_cost_it_settles_more_than_round_robin(tmp_path: Path) -> None:
    ours, theirs = [], []
    for seed in range(6):
        run, _, budget, _ = _session(tmp_path / f"v{seed}", seed)
        rr, _, rr_budget, _ = _session(tmp_path / f"r{seed}", seed, round_robin=True)
        assert budget.left() >= 0 and rr_budget.left() >= 0
        ours.append(_settled(run))
        theirs.append(_settled(rr))
    assert sum(ours) > sum(theirs)


def test_a_verdict_that_cannot_settle_within_the_ceiling_buys_no_runs() -> None:
    """3% apart with 20% noise needs hundreds of runs a side: forecast above
    any ceiling; 2x apart with 4% noise needs the fewest."""
    noisy = (1.0, 1.2, 0.8, 1.1, 0.9)
    assert sequential.runs_to_settle(noisy, tuple(v * 1.03 for v in noisy), 1.0, 0.05) > 100
    tight = (1.0, 1.04, 0.96)
    assert sequential.runs_to_settle(tight, tuple(2 * v for v in tight), 1.0, 0.05) == \
        sequential.FEWEST


def test_an_about_equal_claim_is_forecast_from_its_nearer_bound() -> None:
    """"C# takes about Go's time" (within 1.25x): at 1.2x with 10% noise the
    interval must clear 1.25, a few percent away (dozens of runs), though
    1.2x is far from 1x; at 1.0x, both bounds are far (the fewest)."""
    claim = next(c for c in CLAIMS if c.near)
    noisy = (1.0, 1.1, 0.9, 1.05, 0.95)
    near_bound = sequential.claim_runs(claim, noisy, tuple(1.2 * v for v in noisy))
    assert near_bound > 30
    assert near_bound > sequential.runs_to_settle(noisy, tuple(1.2 * v for v in noisy), 1.0, 0.0)
    assert sequential.claim_runs(claim, noisy, noisy) == sequential.FEWEST



def test_a_resumed_run_spends_only_what_the_budget_has_left(tmp_path: Path) -> None:
    """--resume: the recorded rows' runs count against the budget (their wall
    times and each run's overhead), not the time the run lay interrupted."""
    run, _, _, runs = _session(tmp_path, 3)
    rows = run.runs().rows
    spent = sequential.spent_before(rows)
    assert spent == pytest.approx(sum(sequential.OVERHEAD_S + (r.wall_s or 0) for r in rows))
    resumed = sequential.Budgeted(BUDGET_S, clock=lambda: 0.0, spent_s=spent)
    assert resumed.left() == pytest.approx(BUDGET_S - spent)
    assert resumed.more_runs(rows, runs) == []  # the budget was spent before the interruption
    assert resumed.stopped == "the budget of 7:30 ends the runs"


def test_a_claim_forecast_a_little_past_its_ceiling_goes_before_a_pair() -> None:
    """Runs go by verdicts settled per second in expectation: a claim (one of
    12) forecast at 35 runs a side against a ceiling of 30 still settles
    there about three times in four, and goes before a cheaper neighbour
    pair (one of 460); a verdict whose estimate sits on its margin
    (forecast infinite) goes after both."""
    a, b, c, d, e, f = (ConfigKey("fake-good", "sleep", n, None) for n in range(1, 7))
    claim = sequential.Open((a, b), (5, 5), 35.0, weight=1 / 12)
    pair = sequential.Open((c, d), (1, 1), float(sequential.FEWEST), weight=1 / 460,
                           ranked=True)
    hopeless = sequential.Open((e, f), (5, 5), float("inf"), weight=1 / 12)
    ceiling = {a: 30, b: 30, c: 12, d: 12, e: 30, f: 30}
    cost = dict.fromkeys(ceiling, 1.0)
    reps = {a: 5, b: 5, c: 1, d: 1, e: 5, f: 5}
    chosen = sequential.wanting([pair, hopeless, claim], reps, ceiling, cost, budget_s=50.0)
    assert set(chosen) == {a, b} and len(chosen) == 50
    chosen = sequential.wanting([pair, hopeless, claim], reps, ceiling, cost, budget_s=58.0)  # the pair: 4 runs a side of 2, cheap (AIM)
    assert set(chosen) == {a, b, c, d}
    assert 0.7 < sequential._odds(claim, 30) < 0.8


def test_a_sleeping_run_costs_the_sleep_its_next_run_will_have() -> None:
    """The first run of --adaptive-sleep sleeps the part's whole duration;
    the next sleeps twice the start time plus a second: the next run's cost
    is the latter's, not the first run's."""
    s = settings_from(Options(impl="fake-good", workload="sleep", n="10000",
                              duration_ms=5000, adaptive_sleep=True), ram_bytes=1 << 30)
    planned = plan(resolve(s.impls), s)[0]
    first = make_row("r", planned, "ok", wall_s=5.05, spawn_s=0.03)
    assert first.duration_ms == 5000 and first.iterations == 1
    g = group_runs([first])[0]
    # awake 0.05 s, then a sleep of 2 x 0.03 + 1 s, rounded up to 1.1 s
    assert sequential.run_seconds(g, planned) == pytest.approx(sequential.OVERHEAD_S + 1.15)
    fixed = dataclasses.replace(planned, adaptive_sleep=False)
    assert sequential.run_seconds(g, fixed) == pytest.approx(sequential.OVERHEAD_S + 5.05)
    assert sequential.run_seconds(g) == pytest.approx(sequential.OVERHEAD_S + 5.05)


def test_the_headline_rankings_reach_their_runs_first(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With N = 6 as the articles' size (ranks.HEADLINE_N) and a
    minimum of one run: every configuration of its rankings gets its second
    run before any configuration at N = 5 gets one, though N = 6's runs are
    40 times dearer; before (sequential.BEFORE), the cheap set went first."""
    monkeypatch.setattr(ranks, "HEADLINE_N", {"chain": 6})
    s = settings_from(Options(impl=",".join(IMPLS), workload="chain", n="5,6", repeat=1,
                              until_settled=True, max_repeat=10), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    firsts = {}
    for name, allocation in (("now", sequential.NOW), ("before", sequential.BEFORE)):
        run = RunDir.create_new(tmp_path / name)
        fake = FakeExecutor(run.name, 4)
        budget = sequential.Budgeted(BUDGET_S, clock=lambda: sum(
            sequential.OVERHEAD_S + (r.wall_s or 0) for r in run.runs().rows),
            allocation=allocation)
        scheduler.execute_until_settled(run, runs, runs, budget, lambda p: Readiness("ready"),
                                        fake, Progress(len(runs), [1.0] * len(runs)),
                                        lambda p: 1.0)
        extra = fake.ran[len(runs):]
        firsts[name] = [p.key.n for p in extra[:len(IMPLS)]]
        if allocation is sequential.NOW:
            seconds = [p for p in extra if p.rep == 2]
            assert {p.key for p in seconds if p.key.n == 6} == {p.key for p in runs
                                                                if p.key.n == 6}
            last_six = max(i for i, p in enumerate(seconds) if p.key.n == 6)
            assert all(p.key.n == 6 for p in seconds[:last_six + 1])
    assert firsts["now"] == [6] * len(IMPLS) and 6 not in firsts["before"]



def test_a_headline_configuration_short_of_its_runs_aims_at_them() -> None:
    """A headline configuration with one run aims at 2 (a second mode can
    show), whatever its cost; a pair's aim is its forecast's."""
    a, b = (ConfigKey("fake-good", "chain", n, None) for n in (5, 6))
    ceiling, cost = {a: 12, b: 12}, {a: 20.0, b: 20.0}
    short = sequential.Open((a,), (1,), 2.0, headline=True, aim=2)
    assert sequential._aim(short, ceiling, cost) == 2
    pair = sequential.Open((a, b), (1, 1), float(sequential.FEWEST), ranked=True)
    assert sequential._aim(pair, ceiling, cost) == sequential.FEWEST
    claim = dataclasses.replace(pair, ranked=False, claim=True)
    assert sequential._aim(claim, ceiling, cost) == sequential.AIM  # the exact test's reach
    assert sequential._aim(claim, ceiling, cost, sequential.BEFORE) == sequential.FEWEST
    assert sequential._tier(short, False, sequential.NOW) < sequential._tier(
        dataclasses.replace(pair, headline=True), False, sequential.NOW) < sequential._tier(
        pair, False, sequential.NOW)


def _least_each_time(steps, planned, cost, budget_s):
    """wanting's choice as it was written before the heap: the least of all
    steps left, each time (the reference _cheapest_first must agree with)."""
    steps, planned, added, spent = list(steps), dict(planned), {}, 0.0

    def extra(aim, keys):
        return sum(max(0, aim - planned.get(k, 0)) * cost.get(k, 1.0) for k in set(keys))

    while steps:
        best = min(steps, key=lambda s: (s[0], extra(s[2], s[1].keys) / (s[1].weight * s[3]),
                                         [k.sort_key for k in s[1].keys]))
        steps.remove(best)
        _, o, aim, _ = best
        need = {k: max(0, aim - planned.get(k, 0)) for k in o.keys}
        if extra(aim, o.keys) <= 0 or (budget_s is not None
                                       and spent + extra(aim, o.keys) > budget_s):
            continue
        spent += extra(aim, o.keys)
        for k, n in need.items():
            planned[k], added[k] = planned.get(k, 0) + n, added.get(k, 0) + n
    return added


@pytest.mark.parametrize("seed", range(20))
def test_the_heap_chooses_as_the_least_of_all_each_time(seed: int) -> None:
    """_cheapest_first on random verdicts sharing configurations (ties of
    cost and tier included) plans the very runs, in the same order of
    configurations, as taking the least of all steps each time."""
    rng = np.random.default_rng(seed)
    keys = [ConfigKey(f"i{i}", "chain", 10 * (i % 3 + 1), None) for i in range(12)]
    steps = []
    for _ in range(int(rng.integers(5, 60))):
        pair = tuple(keys[j] for j in rng.choice(len(keys), size=int(rng.integers(1, 4)), replace=False))
        o = sequential.Open(pair, (1,) * len(pair), float(rng.integers(2, 9)),
                            weight=float(rng.choice([1 / 12, 1 / 160, 1 / 460])))
        steps.append((int(rng.integers(0, 4)), o, int(rng.integers(1, 8)),
                      float(rng.choice([0.5, 0.8, 0.025]))))
    planned = {k: int(rng.integers(0, 3)) for k in keys}
    cost = {k: float(rng.choice([0.1, 0.1, 2.0, 30.0])) for k in keys}
    budget = None if seed % 2 else float(rng.uniform(5, 400))
    want = _least_each_time(steps, planned, cost, budget)
    got = sequential._cheapest_first(steps, dict(planned), cost, budget)
    assert list(got.items()) == list(want.items())


def test_a_one_tier_rankings_cut_is_asked_as_a_claim_once_its_runs_are_in() -> None:
    """A ranking of four, one tier, its nearest cut waiting on b against c
    (test_ranks._fixed): the pair is a verdict of tier 1, before every
    headline pair, each side taken to 5 runs (AIM) from its 2; with a
    configuration still short of its 2 runs, or with the allocation of
    2026-12-03 (UNCUT), none is asked."""
    from ..analyse.test_ranks import _fixed

    r = _fixed([1, 2, 8, 16], [1, 1, 2, 3], [2, 3, 4, 4], {("a", "c"), ("a", "d"), ("b", "d")})
    (o,) = sequential._open_cuts([r], 2)
    b, c = (r.place_of(name).group.key for name in "bc")
    assert o.keys == (b, c) and o.cut and o.headline and o.runs == (2, 2)
    assert sequential._tier(o, long_shot=False, allocation=sequential.NOW) == 1
    added = sequential.wanting([o], {b: 2, c: 2}, {b: 12, c: 12}, {b: 9.0, c: 9.0})
    assert added.count(b) == 3 and added.count(c) == 3
    assert sequential._open_cuts([r], 3) == []  # their 2 runs are short of 3
    q = ask(group_runs([]))
    assert not any(x.cut for x in sequential._open(q, sequential.UNCUT, [r]))
    assert any(x.cut for x in sequential._open(q, sequential.NOW, [r]))
