"""run --until-ci PCT [--max-repeat M]: after the --repeat minimum, more
passes of only the configurations whose headline interval is unsettled or
wider than ±PCT, up to M runs each. The decision (plan.more_runs) is a pure
function of the recorded rows; the session only wires it. No timing
assertion: the fakes' figures are made up, or checked only within bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import sequential
from harness.execute import scheduler
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.plan.plan import Planned, configurations, plan
from harness.sequential import more_runs
from harness.plan.runplan import most_runs
from harness.execute.progress import Progress
from harness.core.registry import resolve
from harness.core.schema import Row
from harness.record.rundir import RunDir
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.core.stats import runs_needed

from ..conftest import FAKES, harness, harness_main, read_rows

MIN_SETTLED = runs_needed()[0]  # 6: the fewest runs whose median interval reaches 95%


@pytest.fixture(autouse=True)
def fakes(monkeypatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def _plan(until_ci: str | None = "5%", max_repeat: int | None = 7, repeat: int = 3,
          ns: str = "3,4,5") -> list[Planned]:
    s = settings_from(Options(impl="fake-good", workload="chain", n=ns, repeat=repeat,
                              until_ci=until_ci, max_repeat=max_repeat), ram_bytes=1 << 30)
    return plan(resolve(s.impls), s)


def _rows(p: Planned, reps: range, time_s=lambda rep: 1.0, status: str = "ok",
          rss: int = 100 << 20) -> list[Row]:
    """Recorded rows of one configuration (as the session reads them back):
    its headline figures per rep."""
    ok = status == "ok"
    return [Row(run_id="r", impl=p.impl.id, language=p.impl.language.name,
                runtime=p.impl.runtime, workload=p.key.workload, n=p.key.n,
                buffer=p.key.buffer, **dict(p.key.params), rep=rep, status=status,
                first_iter_s=time_s(rep) if ok else None,
                warm_iter_s=time_s(rep) if ok else None,
                peak_rss_bytes=rss if ok else None) for rep in reps]


def _noisy(rep: int) -> float:
    return 1.0 + 0.2 * (rep % 2)  # 1.0, 1.2, 1.0, ...: ±10% around the median


def test_tight_rows_need_no_more_runs() -> None:
    runs = _plan()
    rows = [r for p in configurations(runs).values() for r in _rows(p, range(1, MIN_SETTLED + 1))]
    assert more_runs(rows, runs) == []


def test_below_six_runs_nothing_is_settled_so_every_configuration_runs_again() -> None:
    runs = _plan()
    rows = [r for p in configurations(runs).values() for r in _rows(p, range(1, 4))]
    extra = more_runs(rows, runs)
    assert [(p.key.n, p.rep) for p in extra] == [(3, 4), (4, 4), (5, 4)]  # plan order


def test_only_the_noisy_configuration_is_planned_again() -> None:
    runs = _plan()
    configs = list(configurations(runs).values())
    rows = [r for p in configs for r in _rows(p, range(1, MIN_SETTLED + 1),
                                               _noisy if p.key.n == 4 else lambda rep: 1.0)]
    extra = more_runs(rows, runs)
    assert [(p.key.n, p.rep) for p in extra] == [(4, MIN_SETTLED + 1)]
    # the next run keeps the configuration's plan: same program, same settings
    template = configurations(runs)[extra[0].key]
    assert (extra[0].argv(), extra[0].timeout_s) == (template.argv(), template.timeout_s)
    # a width above PCT: the same rows at a looser target need nothing more
    loose = _plan(until_ci="25%")
    assert more_runs(rows, loose) == []


def test_a_noisy_memory_figure_counts_too() -> None:
    runs = _plan(ns="3")
    p = runs[0]
    rows = [r for rep in range(1, 7) for r in _rows(p, range(rep, rep + 1),
                                                    rss=(100 + 20 * (rep % 2)) << 20)]
    assert [q.rep for q in more_runs(rows, runs)] == [7]


def test_it_stops_at_max_repeat() -> None:
    runs = _plan(max_repeat=7)
    p = runs[0]
    assert [q.rep for q in more_runs(_rows(p, range(1, 7), _noisy), runs)] == [7]
    assert more_runs(_rows(p, range(1, 8), _noisy), runs) == []
    # failed reps count toward M: they were runs
    rows = _rows(p, range(1, 5), _noisy) + _rows(p, range(5, 8), status="crashed")
    assert more_runs(rows, runs) == []


def test_a_failed_configuration_is_not_planned_again() -> None:
    runs = _plan(ns="3,4")
    failed, good = configurations(runs).values()
    rows = _rows(failed, range(1, 4), status="crashed") + _rows(good, range(1, 4))
    assert [(p.key.n, p.rep) for p in more_runs(rows, runs)] == [(4, 4)]
    # one ok run among failures is a figure to narrow
    rows = _rows(failed, range(1, 3), status="crashed") + _rows(failed, range(3, 4))
    assert [(p.key.n, p.rep) for p in more_runs(rows, runs)] == [(3, 4)]


def test_without_until_ci_there_are_no_more_runs() -> None:
    runs = _plan(until_ci=None, max_repeat=None)
    rows = [r for p in configurations(runs).values() for r in _rows(p, range(1, 4), _noisy)]
    assert more_runs(rows, runs) == [] and most_runs(runs) == runs


def test_most_runs_is_every_configuration_at_its_ceiling() -> None:
    runs = _plan(ns="3,4", max_repeat=7)
    assert len(runs) == 6 and len(most_runs(runs)) == 14
    # without --max-repeat: 10, or --repeat when higher
    assert {p.max_repeat for p in _plan(max_repeat=None)} == {10}
    assert {p.max_repeat for p in _plan(max_repeat=None, repeat=12)} == {12}


class ScriptedExecutor:
    """Figures by configuration: N=3 cannot settle within 1% (±10%), N=4 is
    tight (identical runs)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.ran: list[tuple[int, int]] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append((p.key.n, p.rep))
        t = _noisy(p.rep) if p.key.n == 3 else 1.0
        return Executed(make_row(self.run_id, p, "ok", wall_s=t, first_iter_s=t, warm_iter_s=t,
                                 peak_rss_bytes=100 << 20))


def test_the_session_runs_passes_until_settled_or_at_max_repeat(tmp_path: Path) -> None:
    runs = _plan(until_ci="1%", max_repeat=7, ns="3,4")
    run = RunDir.create_new(tmp_path)
    fake = ScriptedExecutor(run.name)
    progress = Progress(len(runs), [0.0] * len(runs))
    counts = scheduler.execute_until_settled(
        run, runs, runs, sequential, lambda p: Readiness("ready"), fake, progress, lambda p: 0.0)
    # repeats stay the outer loop: each pass one more rep of each unsettled configuration
    assert fake.ran == [(n, rep) for rep in range(1, 7) for n in (3, 4)] + [(3, 7)]
    assert counts == {"ok": 13}
    assert progress.total == 13 and progress.index == 13  # the counts kept up with the passes
    reps = [(r.n, r.rep) for r in run.runs().rows]
    assert sorted(reps) == sorted(fake.ran)


def test_resumed_rows_count_toward_the_runs(tmp_path: Path) -> None:
    runs = _plan(until_ci="1%", max_repeat=7, ns="3,4")
    run = RunDir.create_new(tmp_path)
    first = ScriptedExecutor(run.name)
    # an earlier invocation got as far as rep 5
    done = [Planned(p.impl, p.key, rep, p.duration_ms, p.iterations, until_ci=p.until_ci,
                    max_repeat=p.max_repeat)
            for rep in range(1, 6) for p in configurations(runs).values()]
    for p in done:
        run.append_run(first.run(p).row)
    fake = ScriptedExecutor(run.name)
    scheduler.execute_until_settled(
        run, [], runs, sequential, lambda p: Readiness("ready"), fake, Progress(0, []), lambda p: 0.0)
    assert fake.ran == [(3, 6), (4, 6), (3, 7)]


def _count(out: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in read_rows(out):
        assert r["status"] == "ok", r
        counts[r["n"]] = counts.get(r["n"], 0) + 1
    return counts


def test_end_to_end_with_the_fake_program(out: Path) -> None:
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "3,4",
                   "--repeat", "3", "--until-ci", "1%", "--max-repeat", "7", "--out", str(out),
                   "--no-report")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the fake's times are constant, its peak RSS the real one: nothing
    # settles below 6 runs, and whether RSS stays within 1% decides 6 or 7
    counts = _count(out)
    assert set(counts) == {"3", "4"} and all(6 <= c <= 7 for c in counts.values()), counts
    assert "until-ci: pass 4: 2 configurations still wider than ±1% or unsettled" in proc.stdout
    assert "pass 8" not in proc.stdout
    settings = json.loads((out / "latest" / "env.json").read_text())["settings"]
    assert settings["until_ci"] == 0.01 and settings["max_repeat"] == 7
    # the progress line's total grows with each pass: its last count is the row count
    last = [line for line in proc.stdout.splitlines() if line.startswith("[")][-1]
    assert last.startswith(f"[{sum(counts.values())}/{sum(counts.values())}]"), last


def test_resume_counts_the_rows_already_ok(out: Path) -> None:
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "3", "--repeat", "2",
                   "--out", str(out), "--no-report")
    assert proc.returncode == 0 and _count(out) == {"3": 2}, proc.stderr
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "3", "--repeat", "2",
                   "--until-ci", "1%", "--max-repeat", "7", "--resume", "--out", str(out),
                   "--no-report")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "resuming" in proc.stdout and "until-ci: pass 3: 1 configuration " in proc.stdout
    reps = sorted(int(r["rep"]) for r in read_rows(out))
    assert reps == list(range(1, len(reps) + 1)) and 6 <= len(reps) <= 7, reps


def test_dry_run_says_the_plan_is_a_minimum(out: Path) -> None:
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "3,4",
                   "--repeat", "3", "--until-ci", "5", "--max-repeat", "8", "--dry-run",
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("6 runs, estimated ")
    assert ("the plan is a minimum: --until-ci 5% may add passes, up to 8 runs each "
            "(at most 16 runs in all, ") in proc.stdout


@pytest.mark.parametrize("args", [
    ["--until-ci", "-1"], ["--until-ci", "abc"], ["--until-ci", "0"], ["--until-ci", "0%"],
    ["--until-ci", "inf"], ["--until-ci", "5%", "--max-repeat", "2"],
    ["--until-ci", "5%", "--repeat", "4", "--max-repeat", "3"],
    ["--until-ci", "5%", "--max-repeat", "0"], ["--until-ci", "5%", "--max-repeat", "x"],
    # issue 32: --max-repeat alone was ignored; 0.05 read as 0.05% where 5% was meant
    ["--max-repeat", "8"], ["--until-ci", "0.05"],
    ["--until-settled", "--repeat", "4", "--max-repeat", "3"],
])
def test_bad_values_are_one_line_exit_2(args: list[str], out: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    command = ["run", "--impl", "fake-good", "--workload", "chain", *args, "--dry-run",
               "--out", str(out)]
    if args == ["--until-ci", "-1"]:  # one in a real process; the others in this one
        proc = harness(*command)
    else:
        monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
        proc = harness_main(capsys, *command)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("harness: error:")
    assert not out.exists()


def test_a_suite_part_sets_its_own_and_the_command_line_overrides(tmp_path: Path,
                                                                   monkeypatch) -> None:
    from harness.plan import suites as suites_module
    suites = tmp_path / "suites.toml"
    suites.write_text("""[s]
repeat = 3
[[s.part]]
workloads = ["chain"]
n = [3]
until_ci = "5%"
max_repeat = 8
[[s.part]]
workloads = ["chain"]
n = [4]
[[s.part]]
workloads = ["chain"]
n = [5]
until_ci = 2
""")
    monkeypatch.setattr(suites_module, "SUITES_PATH", suites)
    s = settings_from(Options(impl="fake-good", suite="s"), ram_bytes=1 << 30)
    by_n = {p.key.n: (p.until_ci, p.max_repeat) for p in plan(resolve(s.impls), s)}
    assert by_n == {3: (0.05, 8), 4: (None, None), 5: (0.02, 10)}
    s = settings_from(Options(impl="fake-good", suite="s", until_ci="1%", max_repeat=6),
                      ram_bytes=1 << 30)
    assert {(p.until_ci, p.max_repeat) for p in plan(resolve(s.impls), s)} == {(0.01, 6)}
    assert s.record().until_ci == 0.01 and s.record().max_repeat == 6
    suites.write_text(suites.read_text().replace("max_repeat = 8", "max_repeat = 2"))
    with pytest.raises(Exception, match="suites.toml: s: max_repeat 2 is below the minimum of 3"):
        settings_from(Options(impl="fake-good", suite="s"), ram_bytes=1 << 30)
