"""run --gate: an A/B run that decides, driven through the scheduler by a
fake executor with known answers and known costs (no process; the clock is
the seconds of the runs made so far). The baseline and the candidate are
one fake under two names; the candidate is either the same (A/A) or worse
by a known factor on every headline figure of one workload. Issue 51's bar:
10% worse exits 1 in at least 18 of 20 trials, and A/A is undecided (exit
3) in at most 2 of 20, within the gate's default budget."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Iterable

import numpy as np
import pytest

from harness import ab_gate, sequential, session
from harness.analyse.analysis import group_runs
from harness.core.registry import resolve
from harness.core.schema import Row
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.execute.progress import Progress
from harness.plan.plan import Planned, plan
from harness.plan.options import Options
from harness.plan.settings import GATE_BUDGET_S, GATE_MAX_REPEAT, Settings, settings_from
from harness.record.rundir import read_runs

from ..conftest import FAKES

BASE, HEAD = "fake-good", "fake-good[FAKE_AB=1]"
# Each workload's seconds a run, and its figures' spread (the sd of their
# logs) as on the quieter runtimes of the Intel calibration run: cold
# iteration 4%, warm 3%, peak RSS 1% (sleep's 0.5%).
COST_S = {"sleep": 4.0, "chain": 2.0, "chain-await": 1.5, "bounded": 0.8, "skynet": 1.2}
SPREAD = {"first_iter_s": 0.04, "warm_iter_s": 0.03, "peak_rss_bytes": 0.01}
SLEEP_SPREAD = 0.005
SLOWER = "chain"  # the workload the candidate makes worse
TRIALS = 20


class FakeExecutor:
    """Known answers: each figure a fixed value times lognormal noise, times
    `factor` on the candidate's runs of SLOWER; the candidate's runs in
    `crashes` (workload, rep) crash. Known costs: COST_S, summed in
    `seconds`, the trial's clock."""

    def __init__(self, seed: int, factor: float,
                 crashes: frozenset[tuple[str, int]] = frozenset()) -> None:
        self.factor, self.rng, self.crashes = factor, np.random.default_rng(seed), crashes
        self.seconds = 0.0
        self.ran: list[Planned] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append(p)
        self.seconds += sequential.OVERHEAD_S + COST_S[p.key.workload]
        if p.impl.id == HEAD and (p.key.workload, p.rep) in self.crashes:
            return Executed(make_row("ab", p, "crashed", wall_s=COST_S[p.key.workload]))
        worse = self.factor if p.impl.id == HEAD and p.key.workload == SLOWER else 1.0
        size = 1 + (p.key.n or 1) / 10

        def figure(metric: str, value: float) -> float:
            spread = SLEEP_SPREAD if p.key.workload == "sleep" else SPREAD[metric]
            return value * worse * float(self.rng.lognormal(0.0, spread))

        figures: dict[str, float] = {"peak_rss_bytes": round(figure("peak_rss_bytes",
                                                                    size * (20 << 20)))}
        if p.key.workload != "sleep":
            figures |= {"first_iter_s": figure("first_iter_s", size * 2e-3),
                        "warm_iter_s": figure("warm_iter_s", size * 1e-3)}
        return Executed(make_row("ab", p, "ok", wall_s=COST_S[p.key.workload], **figures))


class Memory:
    """The record, kept in memory: the trials read their rows back after
    every pass, and a file's fsync per row would be most of their time."""
    name = "ab"

    def __init__(self) -> None:
        self.table: list[Row] = []

    def rows(self) -> list[Row]:
        return list(self.table)

    def append_run(self, row: Row) -> None:
        self.table.append(row)

    def append_samples(self, row: Row, samples: Iterable[object]) -> None:
        pass


def _settings(**more: object) -> Settings:
    """Seven workloads' configurations at two sizes (bounded at two buffers
    too): 14 configurations a side, 27 headline figures."""
    return settings_from(Options.from_record({
        "impl": f"{BASE},{HEAD}", "workload": "sleep,chain,chain-await,bounded,skynet",
        "n": "10,100", "buffer": "1,100", "repeat": 3, "gate": "5%", **more}), ram_bytes=1 << 30)


@dataclasses.dataclass
class Trial:
    status: int  # the gate's exit status at the end: 0 pass, 1 fail, 3 undecided
    seconds: float  # the runs' time, the minimum included
    ran: list[Planned]
    gate: ab_gate.Gate


def _trial(seed: int, factor: float, s: Settings,
           crashes: frozenset[tuple[str, int]] = frozenset()) -> Trial:
    runs = plan(resolve(s.impls), s)
    record, fake = Memory(), FakeExecutor(seed, factor, crashes)
    gate = ab_gate.Gate(BASE, s.gate or 0, s.max_repeat or 0, s.budget_s or 0,
                        clock=lambda: fake.seconds)
    scheduler.execute_until_settled(record, runs, runs, gate, lambda p: Readiness("ready"), fake,
                                    Progress(len(runs), [1.0] * len(runs), io.StringIO()),
                                    lambda p: 1.0)
    return Trial(gate.verdict(group_runs(record.rows())).exit_status, fake.seconds, fake.ran,
                 gate)


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def test_a_planted_slowdown_fails_and_no_change_passes_within_the_default_budget() -> None:
    """20 trials each: the candidate 10% worse on chain's six headline
    figures (of 27 gated), and the candidate unchanged. Measured: exit 1
    in 20 of 20 (at 8 runs a side: Holm at 5%/30 a look, over the figures
    still running), and A/A exit 0 in 20 of 20, none undecided and none
    failed, in at most 5 min 48 s of runs a trial."""
    s = _settings()
    assert (s.budget_s, s.max_repeat) == (GATE_BUDGET_S, GATE_MAX_REPEAT)  # the defaults
    slower = [_trial(seed, 1.10, s) for seed in range(TRIALS)]
    same = [_trial(100 + seed, 1.0, s) for seed in range(TRIALS)]
    assert all(t.seconds <= GATE_BUDGET_S for t in slower + same)
    assert sum(t.status == 1 for t in slower) >= 18
    assert sum(t.status == 3 for t in same) <= 2
    assert sum(t.status == 1 for t in same) <= 1  # a false alarm


def test_a_change_of_exactly_the_threshold_fails_at_most_5_percent_over_every_look() -> None:
    """The worst case of "not worse by more than 5%": chain's six figures
    exactly 5% worse. Each pass is another look at runs that went on
    because nothing was decided; with Holm at 5% on every look the gate
    failed 8 of 80 trials over seeds 200-239 and 1000-1039 (10%). Holm at
    5%/30 a look (gate_looks: at most one look at each of a figure's run
    counts, up to --max-repeat 30) fails 1 of those 80, none of these 20;
    the others end undecided at the ceiling: more runs cannot place a
    change on the threshold."""
    s = _settings()
    trials = [_trial(200 + seed, 1.05, s) for seed in range(TRIALS)]
    assert sum(t.status == 1 for t in trials) <= 1
    assert all(t.status in (1, 3) for t in trials)


def test_a_candidate_that_crashed_once_fails_the_gate() -> None:
    """The candidate the same as the baseline, but one of its runs of
    skynet crashed (rep 2 of 3): its ok runs would pass, and the gate
    fails at the minimum, where it first sees the crash."""
    s = _settings()
    t = _trial(5, 1.0, s, frozenset({("skynet", 2)}))
    assert t.status == 1 and len(t.ran) == len(plan(resolve(s.impls), s))


def test_only_the_undecided_configurations_run_again_on_both_sides() -> None:
    """After the minimum every extra run is of a configuration with an
    undecided figure, both sides, the side that runs first alternating
    pass by pass; once a figure fails the runs stop."""
    s = _settings()
    minimum = len(plan(resolve(s.impls), s))
    t = _trial(7, 1.10, s)
    extra = t.ran[minimum:]
    assert extra and t.status == 1
    pairs = [extra[i:i + 2] for i in range(0, len(extra), 2)]
    assert all({p.impl.id for p in pair} == {BASE, HEAD} and pair[0].key.workload ==
               pair[1].key.workload and pair[0].rep == pair[1].rep for pair in pairs)
    assert {pair[0].impl.id for pair in pairs if pair[0].rep % 2} == {BASE}
    assert {pair[0].impl.id for pair in pairs if not pair[0].rep % 2} == {HEAD}
    # sleep's peak RSS (0.5% spread) passes at the minimum: it never runs again
    assert not any(p.key.workload == "sleep" for p in extra)


def test_the_budget_ends_an_undecided_gate_and_says_so() -> None:
    """A budget the minimum nearly fills (84 runs, 149 s): what is left
    buys a few pairs, then the gate stays undecided and says why."""
    s = _settings(budget="3m")
    minimum = len(plan(resolve(s.impls), s))
    t = _trial(3, 1.0, s)
    assert t.status == 3 and len(t.ran) > minimum and t.seconds <= 180
    assert t.gate.stopped == "the gate stays undecided: the budget of 3:00 ends the runs"


def test_the_ceiling_ends_an_undecided_gate_and_says_so() -> None:
    """Exactly 5% worse (the gate's own threshold): more runs cannot decide
    it, and at --max-repeat the gate stays undecided."""
    s = _settings(max_repeat=5)
    t = _trial(4, 1.05, s)
    assert t.status == 3
    assert t.gate.stopped.startswith("the gate stays undecided: ")
    assert t.gate.stopped.endswith("at --max-repeat (5 runs a side)")
    assert max(p.rep for p in t.ran) == 5


def test_the_run_exits_with_the_gate_and_prints_its_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """run --gate through the session, its executor the fake: exit 1 with
    the compare table and the failing figures printed, every row
    recorded."""
    fake = FakeExecutor(11, 1.10)
    monkeypatch.setattr(session, "ProcessExecutor", lambda *args: fake)
    s = _settings(workload="chain,bounded", n="10", buffer="1", no_build=True)
    assert session.run_suite(s, tmp_path, report=False) == 1
    out = capsys.readouterr().out
    assert "FAIL (--fail-above 5%)" in out and f"{HEAD}  " in out
    run_dir = (tmp_path / "latest").resolve()
    assert f"the gate, as compare {run_dir} --baseline {BASE} --fail-above 5% prints it:" in out
    # compare reads the run's own gate from its env.json: the 5% spent over its looks
    assert "Holm over the 6 gated figures at 5%/30 a look" in out
    rows = read_runs((tmp_path / "latest" / "runs.csv")).rows
    assert len(rows) == len(fake.ran) > 12  # more than the minimum of 3 runs a side


def test_the_most_runs_and_time_a_gate_may_take(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """chain and bounded at one size: 2 configurations a side, 12 runs of
    2 s at the minimum. Up to 30 runs a side, 120 runs in all, 240 s; a
    100 s budget leaves 76 s past the minimum, 38 runs more; a budget the
    minimum fills, none (the minimum runs whole). run --dry-run says it,
    and writes nothing."""
    s = _settings(workload="chain,bounded", n="10", buffer="1")
    runs = plan(resolve(s.impls), s)
    assert len(runs) == 12
    assert ab_gate.most_runs(runs, lambda p: 2.0, 30, 3600.0) == (120, 240.0)
    assert ab_gate.most_runs(runs, lambda p: 2.0, 30, 100.0) == (50, 100.0)
    assert ab_gate.most_runs(runs, lambda p: 2.0, 30, 10.0) == (12, 24.0)
    out = tmp_path / "results"
    assert session.run_suite(s, out, dry_run=True, report=False) == 0
    assert ("up to 30 runs a side, within a budget of 30:00 for all the runs: at most 120 runs "
            "(12 of the minimum, then up to 108 more), about ") in capsys.readouterr().out
    assert not out.exists()


@pytest.mark.parametrize("options, message", [
    ({"impl": BASE}, "--gate compares two implementations, the baseline first"),
    ({"impl": f"{BASE},{HEAD},fake-wrong"}, "--impl names 3"),
    ({"until_settled": True}, "--gate decides which runs come after the minimum"),
    ({"calibration": "nowhere"}, "nowhere: not a run directory"),
])
def test_bad_gate_input_is_one_line_and_writes_nothing(
        tmp_path: Path, options: dict[str, object], message: str) -> None:
    from harness import UsageError
    from harness.record.rundir import RunDirError
    out = tmp_path / "results"
    with pytest.raises((UsageError, RunDirError), match=message):
        session.run_suite(_settings(**options), out, report=False)
    assert not out.exists()


def test_calibration_without_a_gate_is_refused() -> None:
    from harness import UsageError
    with pytest.raises(UsageError, match="--calibration names the figures a gate cannot decide"):
        settings_from(Options(impl=BASE, calibration="x"), ram_bytes=1 << 30)
