"""A run's timeout follows its configuration's expected cost on this
machine (harness/plan/timeouts.py): from its own earlier runs, else its
smaller size's grown with the size, times a wide factor, never below the
part's nor above the ceiling; driven through the scheduler by a fake
executor that records the timeout each run was given (no process, no clock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import sequential
from harness.core.registry import resolve
from harness.core.schema import ConfigKey
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.execute.progress import Progress
from harness.plan import timeouts
from harness.plan.options import Options
from harness.plan.plan import Planned, plan
from harness.plan.settings import settings_from
from harness.record.rundir import RunDir

from ..conftest import FAKES

# seconds a run takes, by N: chain at 20k about a second, at 1M about 60 s
# (python-asyncio's on the 2-core EPYC: 53-88 s), past a fixed 90 s once.
WALL = {20_000: 1.2, 1_000_000: 70.0}


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


class Recording:
    def __init__(self, run_id: str) -> None:
        self.run_id, self.given = run_id, []

    def run(self, p: Planned) -> Executed:
        self.given.append((p.key.n, p.rep, p.timeout_s))
        status = "ok" if WALL[p.key.n] <= p.timeout_s else "timeout"
        return Executed(make_row(self.run_id, p, status, wall_s=min(WALL[p.key.n], p.timeout_s),
                                 first_iter_s=1e-3, warm_iter_s=1e-3, peak_rss_bytes=1 << 20))


def _run(tmp_path: Path, until_settled: bool, timeout: float = 90.0) -> Recording:
    s = settings_from(Options(impl="fake-good", workload="chain", n="20000,1000000", repeat=2,
                              until_settled=until_settled, timeout=timeout), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path / str(until_settled))
    fake = Recording(run.name)
    scheduler.execute(run, runs, sequential, lambda p: Readiness("ready"), fake,
                      Progress(len(runs), [1.0] * len(runs)))
    return fake


def test_a_first_run_is_timed_from_its_smaller_size_and_a_next_from_its_own(
        tmp_path: Path) -> None:
    given = _run(tmp_path, until_settled=True, timeout=30.0).given
    assert given[0] == (20_000, 1, 30.0)  # nothing known: the part's own
    # 1M's first run: 20k's 1.2 s grown 50 times, 60 s, times 4
    assert given[1] == (1_000_000, 1, pytest.approx(timeouts.FACTOR * 60.0))
    assert given[2] == (20_000, 2, 30.0)  # 4 x 1.2 s is below the part's
    assert given[3] == (1_000_000, 2, pytest.approx(timeouts.FACTOR * 70.0))


def test_a_plain_run_keeps_the_timeout_it_was_given(tmp_path: Path) -> None:
    given = _run(tmp_path, until_settled=False).given
    assert {t for _, _, t in given} == {90.0}


def test_the_timeout_stays_within_its_floor_and_ceiling() -> None:
    small, large = (ConfigKey("fake-good", "chain", n, None) for n in (20_000, 1_000_000))
    s = settings_from(Options(impl="fake-good", workload="chain", n="1000000", repeat=1,
                              until_settled=True, timeout=90.0), ram_bytes=1 << 30)
    p = plan(resolve(s.impls), s)[0]
    assert timeouts.timed(p, {}).timeout_s == 90.0
    assert timeouts.timed(p, {small: 0.1}).timeout_s == 90.0  # 4 x 5 s: the part's floor
    assert timeouts.timed(p, {small: 100.0}).timeout_s == timeouts.CEILING_S
    assert timeouts.expected_s(large, {small: 2.0, large: 33.0}) == 33.0


# The budget's rule (sequential.Budgeted.too_dear): a first run expected to
# take more than its share of the budget is recorded, not run.
DEAR_WALL = {1: 0.2, 20_000: 1.2, 1_000_000: 70.0, 50_000_000: 4000.0}


class Walls(Recording):
    """Each N's run takes DEAR_WALL, or is stopped at its timeout."""

    def run(self, p: Planned) -> Executed:
        self.given.append((p.key.n, p.rep, p.timeout_s))
        if DEAR_WALL[p.key.n] > p.timeout_s:
            return Executed(make_row(self.run_id, p, "timeout", wall_s=p.timeout_s))
        return Executed(make_row(self.run_id, p, "ok", wall_s=DEAR_WALL[p.key.n],
                                 first_iter_s=1e-3, warm_iter_s=1e-3, peak_rss_bytes=1 << 20))


class RefusesLarge(Walls):
    """A program that refuses N = 1M at start, as java-platform its million
    threads against kernel.pid_max."""

    def run(self, p: Planned) -> Executed:
        if p.key.n != 1_000_000:
            return super().run(p)
        self.given.append((p.key.n, p.rep, p.timeout_s))
        return Executed(make_row(self.run_id, p, "crashed", wall_s=0.1,
                                 error="1000000 platform threads cannot be alive at once"))


def _budgeted(tmp_path: Path, budget_s: float, rules: object = None,
              executor: type[Walls] = Walls) -> tuple[Walls, RunDir]:
    s = settings_from(Options(impl="fake-good", workload="chain", n="1,20000,1000000,50000000",
                              repeat=1, until_settled=True), ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path / str(budget_s))
    fake = executor(run.name)
    scheduler.execute(run, runs, rules or sequential.Budgeted(budget_s),
                      lambda p: Readiness("ready"), fake, Progress(len(runs), [1.0] * len(runs)))
    return fake, run


def test_only_what_grows_above_start_up_is_grown() -> None:
    one, small, large = (ConfigKey("fake-good", "chain", n, None) for n in (1, 20_000, 1_000_000))
    s = settings_from(Options(impl="fake-good", workload="chain", n="1000000", repeat=1,
                              until_settled=True), ram_bytes=1 << 30)
    p = plan(resolve(s.impls), s)[0]
    # 1.2 s at 20k, 0.2 s of it start-up: 0.2 + 1.0 x 50
    assert timeouts.least_expected_s(p, {one: 0.2, small: 1.2}) == pytest.approx(50.2)
    assert timeouts.least_expected_s(p, {small: 1.2}) == pytest.approx(1.2)  # nothing above
    assert timeouts.least_expected_s(p, {one: 0.2}) is None  # a million times: too far
    assert timeouts.least_expected_s(p, {large: 70.0}) == 70.0  # its own


def test_a_run_too_dear_for_the_budget_is_started_for_seconds_then_recorded_not_run(
        tmp_path: Path) -> None:
    # 1M at least 50.2 s, past a twentieth of 600 s; 50M grows from that
    fake, run = _budgeted(tmp_path, 600.0)
    assert [n for n, _, _ in fake.given] == [1, 20_000, 1_000_000, 50_000_000]
    assert [t for n, _, t in fake.given if n >= 1_000_000] == [scheduler.PROBE_S] * 2
    rows = {r.n: r for r in run.runs().rows}
    for n in (1_000_000, 50_000_000):
        assert rows[n].status == "skipped" and rows[n].expected_s > 600.0 / 20
        assert "its share of the budget" in rows[n].error
        assert rows[n].error.endswith("still running at 10 s and was stopped")
    assert rows[1_000_000].expected_s == pytest.approx(50.2)


def test_a_run_too_dear_that_fails_at_start_shows_its_failure_not_a_forecast(
        tmp_path: Path) -> None:
    """The budget's rule does not hide a program that refuses its size."""
    fake, run = _budgeted(tmp_path, 600.0, executor=RefusesLarge)
    rows = {r.n: r for r in run.runs().rows}
    assert rows[1_000_000].status == "crashed" and rows[1_000_000].expected_s is None
    assert "cannot be alive at once" in rows[1_000_000].error


def test_a_run_within_its_share_or_without_a_budget_runs(tmp_path: Path) -> None:
    fake, _ = _budgeted(tmp_path, 1200.0)  # 1M's 50.2 s within 60 s; 50M's 3,500 s not
    (big, _, timeout), (dear, _, probe) = fake.given[2:]
    assert (big, dear, probe) == (1_000_000, 50_000_000, scheduler.PROBE_S)
    assert timeout > scheduler.PROBE_S
    fake, _ = _budgeted(tmp_path, 0.0, rules=sequential)  # no budget: every run
    assert [n for n, _, _ in fake.given] == [1, 20_000, 1_000_000, 50_000_000]


def test_a_run_too_dear_is_a_note_not_a_failure() -> None:
    """The format-11 fixture (a real run under --budget 1m): its 10M chains
    were too dear; the notes name them, the failures do not."""
    from harness.analyse.analysis import design_notes, group_runs
    from harness.analyse.verdicts import failures
    from harness.record.rundir import read_runs

    from ..conftest import ROOT

    rows = read_runs(ROOT / "harness" / "tests" / "fixtures" / "formats" / "v11" / "runs.csv").rows
    groups = group_runs(rows)
    dear = [r for r in rows if r.expected_s is not None]
    assert {r.n for r in dear} == {10_000_000} and all(r.status == "skipped" for r in dear)
    notes = [n for n in design_notes(groups) if "not run: expected to take at least" in n]
    assert len(notes) == 2 and all("N=10000000" in n for n in notes), notes
    assert not any("did not run" in line for line in failures(groups))
