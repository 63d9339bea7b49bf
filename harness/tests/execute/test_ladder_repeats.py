"""run --until-settled, --until-ci and --budget on rate ladders, driven
through the scheduler by a fake executor with known answers (no process,
no clock): a verdict on a ladder's figure (a neighbour pair of the
sustained rate, a Vaughan capacity claim) or on one of its steps asks for
whole repeats of its ladders, every step at once, and a settled one for
none; the budget counts a ladder's repeat as the sum of its steps' runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness import sequential
from harness.analyse.analysis import group_runs
from harness.analyse.questions import ask
from harness.core.claims import SEED004_STEP_S
from harness.core.metrics import SUSTAINED
from harness.core.registry import resolve
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.execute.progress import Progress
from harness.plan.options import Options
from harness.plan.plan import Planned, plan
from harness.plan.settings import settings_from
from harness.record.rundir import RunDir

from ..conftest import FAKES

RATES = (25, 50, 100, 200, 400)
STEP_WALL_S = 12.0  # a 10 s step, the generator's start and the wait for late answers
# The highest rate each server and style sustains; above it, a saturated step.
CAPACITY = {("fake-serve", "async"): 400, ("fake-serve-fast", "async"): 50,
            ("csharp-async", "when-all"): 400, ("csharp-async", "sync"): 50,
            ("go", "async"): 400, ("go", "parallel"): 400}
THREADS = {"async": 2, "parallel": 40, "when-all": 2, "sync": 50}
# A repeat of each ladder: fake-serve's runs its 5 steps, fake-serve-fast's
# 3 (its 100 saturates; 200 and 400 are recorded, not run).
LADDER_S = {"fake-serve": 5 * (STEP_WALL_S + sequential.OVERHEAD_S),
            "fake-serve-fast": 3 * (STEP_WALL_S + sequential.OVERHEAD_S)}
# A later repeat of fake-serve's ladder, seeded by its earlier ones (they
# sustained 400: ladder.seeded_start): 100, 200 and 400. fake-serve-fast's
# sustained 50, with no step a quarter below: every step again.
SEEDED = (100, 200, 400)


class LadderExecutor:
    """Made-up ladder steps: sustained up to the server's capacity, saturated
    above it; no step's own headline figure, so that the only rankings are
    the ladders' (and the threads a style holds, for the step claims)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.ran: list[Planned] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append(p)
        rate, style = p.key.param("rate"), p.key.param("style")
        held = rate <= CAPACITY[(p.impl.id, style)]
        return Executed(make_row(
            self.run_id, p, "ok", wall_s=STEP_WALL_S,
            step_verdict="sustained" if held else "saturated", dropped=0 if held else 9,
            unanswered=0, latency_p99_s=0.32 if held else 1.5,
            max_threads=THREADS[style] + p.rep % 2))


def _plan(impl: str, styles: str, repeat: int, name: str | None = None) -> list[Planned]:
    """A ladder per style at D = 100 ms, seed004's steps, the server on one core
    (seed004's), --until-settled up to 8 repeats; name: the implementation
    renamed (the fakes play a server the claims name)."""
    s = settings_from(Options.from_record({
        "impl": impl, "workload": "http", "style": styles, "delay_ms": "100",
        "rate": ",".join(map(str, RATES)), "step_s": str(SEED004_STEP_S), "cpus": "1",
        "repeat": repeat,
        "until_settled": True, "max_repeat": 8}), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    if name is None:
        return runs
    return [dataclasses.replace(p, impl=dataclasses.replace(p.impl, id=name),
                                key=dataclasses.replace(p.key, impl=name)) for p in runs]


def _run(tmp_path: Path, runs: list[Planned]) -> RunDir:
    """The minimum through the scheduler: the steps past a ladder's end are
    recorded skipped, not run."""
    run = RunDir.create_new(tmp_path)
    scheduler.execute(run, runs, sequential, lambda p: Readiness("ready"), LadderExecutor(run.name),
                      Progress(len(runs), [0.0] * len(runs)))
    return run


def _repeats(extra: list[Planned]) -> list[tuple[str, str, int, tuple[int, ...]]]:
    """A pass as (impl, style, rep, its rates in order), one entry a ladder's repeat."""
    out: dict[tuple[str, str, int], list[int]] = {}
    for p in extra:
        out.setdefault((p.impl.id, p.key.param("style"), p.rep), []).append(p.key.param("rate"))
    return [(*k, tuple(v)) for k, v in out.items()]


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def test_an_open_sustained_rate_pair_asks_for_whole_repeats_of_both_ladders(
        tmp_path: Path) -> None:
    """Two repeats a side cannot settle a pair; the pass takes both ladders
    to 4 repeats (the fewest that can), each repeat every step, round by
    round; without --until-settled no step would run again."""
    runs = _plan("fake-serve,fake-serve-fast", "async", repeat=2)
    rows = _run(tmp_path, runs).runs().rows
    [pair] = [p for r in ask(group_runs(rows)).rankings if r.metric == SUSTAINED for p in r.pairs]
    assert not pair.settled and pair.runs == (2, 2)
    extra = sequential.more_runs(rows, runs)
    assert _repeats(extra) == [(impl, "async", rep, SEEDED if impl == "fake-serve" else RATES)
                               for rep in (3, 4) for impl in ("fake-serve", "fake-serve-fast")]


def test_a_settled_ladder_verdict_asks_for_nothing(tmp_path: Path) -> None:
    runs = _plan("fake-serve,fake-serve-fast", "async", repeat=6)
    rows = _run(tmp_path, runs).runs().rows
    [pair] = [p for r in ask(group_runs(rows)).rankings if r.metric == SUSTAINED for p in r.pairs]
    assert pair.settled
    assert sequential.more_runs(rows, runs) == []
    assert sequential.forecast(rows, runs) == "every verdict the run asks is settled"


def test_an_open_capacity_claim_asks_for_whole_repeats_of_its_ladders(tmp_path: Path) -> None:
    """Vaughan's "when-all sustains a higher arrival rate than sync" (core/
    claims.py) on csharp-async's D = 100 ms ladders: open at 2 repeats a side; a claim aims at 5
    a side (sequential.py), though these fakes settle it at 4."""
    text = "csharp-async: when-all sustains a higher arrival rate than sync"
    two = _plan("fake-serve", "when-all,sync", repeat=2, name="csharp-async")
    rows = _run(tmp_path / "two", two).runs().rows
    [claim] = [c for c in ask(group_runs(rows)).claims if c.claim.text == text]
    assert not claim.settled
    assert _repeats(sequential.more_runs(rows, two)) == [
        ("csharp-async", style, rep, SEEDED if style == "when-all" else RATES) for rep in (3, 4, 5)
        for style in ("when-all", "sync")]
    four = _plan("fake-serve", "when-all,sync", repeat=4, name="csharp-async")
    rows = _run(tmp_path / "four", four).runs().rows
    [claim] = [c for c in ask(group_runs(rows)).claims if c.claim.text == text]
    assert claim.settled and sequential.more_runs(rows, four) == []


def test_an_open_verdict_on_a_step_repeats_its_ladders_whole(tmp_path: Path) -> None:
    """"async holds fewer threads than parallel (200 requests a second)" is
    read from one step of each ladder; run alone, that step would be a
    ladder of one step in its repeat: both ladders repeat whole instead."""
    runs = _plan("fake-serve", "async,parallel", repeat=2, name="go")
    rows = _run(tmp_path, runs).runs().rows
    [claim] = [c for c in ask(group_runs(rows)).claims if c.claim.text.startswith(
        "go: async holds fewer threads than parallel")]
    assert not claim.settled
    assert _repeats(sequential.more_runs(rows, runs)) == [
        ("go", style, rep, SEEDED) for rep in (3, 4, 5) for style in ("async", "parallel")]


def test_until_ci_repeats_a_ladder_whole(tmp_path: Path) -> None:
    """--until-ci: two repeats give the sustained rate no interval, so each
    ladder runs a third repeat, seeded where it can be."""
    s = settings_from(Options.from_record({
        "impl": "fake-serve,fake-serve-fast", "workload": "http", "style": "async",
        "delay_ms": "100", "rate": ",".join(map(str, RATES)), "repeat": 2, "until_ci": "5%",
        "max_repeat": 6}), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    rows = _run(tmp_path, runs).runs().rows
    assert _repeats(sequential.more_runs(rows, runs)) == [
        (impl, "async", 3, SEEDED if impl == "fake-serve" else RATES)
        for impl in ("fake-serve", "fake-serve-fast")]


def test_the_budget_counts_a_ladders_repeat_as_all_its_steps_runs(tmp_path: Path) -> None:
    """The pair's next pass, 2 more repeats of each ladder, costs the runs of
    their steps that run: a cent less and it does not fit, nor does any part."""
    runs = _plan("fake-serve,fake-serve-fast", "async", repeat=2)
    rows = _run(tmp_path, runs).runs().rows
    seeded = LADDER_S["fake-serve"] * len(SEEDED) / len(RATES)  # its steps from 100 up
    whole = 2 * (seeded + LADDER_S["fake-serve-fast"])
    assert sequential.more_runs(rows, runs, whole - 0.01) == []
    assert len(sequential.more_runs(rows, runs, whole + 0.01)) == 2 * (len(SEEDED) + len(RATES))
    assert sequential.forecast(rows, runs, whole - 0.01).endswith("settle about 0 of them")
    assert sequential.forecast(rows, runs, whole + 0.01).endswith("settle about 1 of them")


# fake-serve-fast's knee, bisected between 50 (sustained) and 100 in each repeat
REFINED = (55, 60, 71)


@pytest.mark.parametrize("budget_s,repeats", [(560.0, 4), (300.0, 2)])
def test_under_a_budget_every_ladder_repeat_is_whole(tmp_path: Path, budget_s: float,
                                                     repeats: int) -> None:
    """Through the scheduler, on a fake clock (the runs' walls): 560 s has
    room for the pair's 2 more repeats of both ladders (271 s after the
    minimum's 271 s, fake-serve-fast's knee bisected in each), and it
    settles; 300 s has not, and no step of a third repeat runs. Every
    repeat recorded holds every step, run or past the end."""
    runs = _plan("fake-serve,fake-serve-fast", "async", repeat=2)
    run = RunDir.create_new(tmp_path)
    budget = sequential.Budgeted(budget_s, clock=lambda: sum(
        sequential.OVERHEAD_S + (r.wall_s or 0) for r in run.runs().rows))
    scheduler.execute_until_settled(run, runs, runs, budget, lambda p: Readiness("ready"),
                                    LadderExecutor(run.name),
                                    Progress(len(runs), [1.0] * len(runs)), lambda p: 1.0)
    rows = run.runs().rows
    assert budget.left() >= 0
    ladders: dict[tuple[str, int], list[int]] = {}
    for r in rows:
        ladders.setdefault((r.impl, r.rep), []).append(r.rate)
    assert {k: sorted(v) for k, v in ladders.items()} == {
        (impl, rep): sorted(RATES + REFINED if impl == "fake-serve-fast" else
                            RATES if rep <= 2 else SEEDED)
        for impl in ("fake-serve", "fake-serve-fast") for rep in range(1, repeats + 1)}
    [pair] = [p for r in ask(group_runs(rows)).rankings if r.metric == SUSTAINED for p in r.pairs]
    assert pair.settled == (repeats == 4)
    assert budget.stopped == ("" if repeats == 4 else "the budget of 5:00 ends the runs")


def test_a_seeded_repeat_still_runs_the_steps_a_claim_reads(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """go's async and parallel sustain 3,200: a later repeat starts at 800,
    a quarter of it, but runs 200 too, where "async holds fewer threads
    than parallel (200 requests a second)" reads both ladders."""
    monkeypatch.setitem(CAPACITY, ("go", "async"), 3200)
    monkeypatch.setitem(CAPACITY, ("go", "parallel"), 3200)
    rates = (25, 50, 100, 200, 400, 800, 1600, 3200)
    s = settings_from(Options.from_record({
        "impl": "fake-serve", "workload": "http", "style": "async,parallel", "delay_ms": "100",
        "rate": ",".join(map(str, rates)), "step_s": str(SEED004_STEP_S), "cpus": "1",
        "repeat": 2, "until_settled": True, "max_repeat": 8}), ram_bytes=1 << 30)
    runs = [dataclasses.replace(p, impl=dataclasses.replace(p.impl, id="go"),
                                key=dataclasses.replace(p.key, impl="go"))
            for p in plan(resolve(s.impls), s)]
    rows = _run(tmp_path, runs).runs().rows
    again = {rates for _, _, _, rates in _repeats(sequential.more_runs(rows, runs))}
    assert again == {(200, 800, 1600, 3200)}


def test_a_servers_two_best_styles_get_a_second_repeat_and_no_more(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which style sustains the most (analyse/styles.py) asks for two
    repeats of a server's best two styles' ladders, for a spread and an
    interval across repeats; at two it asks for nothing more."""
    monkeypatch.setitem(CAPACITY, ("fake-serve", "sync"), 50)
    one = _plan("fake-serve", "async,sync", repeat=1)
    rows = _run(tmp_path / "one", one).runs().rows
    assert _repeats(sequential.more_runs(rows, one)) == [
        ("fake-serve", "async", 2, SEEDED), ("fake-serve", "sync", 2, RATES)]
    two = _plan("fake-serve", "async,sync", repeat=2)
    rows = _run(tmp_path / "two", two).runs().rows
    assert sequential.more_runs(rows, two) == []
