"""compare: a change is named only when its whole interval says so, and the
gate fails only on what it can decide, on a lost configuration, or on
nothing to compare. Run directories are written here with chosen values
(RunDir.create_new + append_run), never timed."""

import csv
import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

from harness import cli
from harness.analyse import gate as decision  # gate(): this file's command-line gate
from harness.analyse.noise import AA
from harness.present import compare
from harness.core.metrics import COUNTERS, margins
from harness.record.rundir import RunDir
from harness.core.schema import FORMAT_VERSION, Row

from ..conftest import harness

FIXTURE = Path(__file__).parents[1] / "fixtures" / "formats" / "v2"
RUN_FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"  # mostly 3 runs a configuration
# every time and memory column of runs.csv
FIGURES = ("wall_s", "cpu_user_s", "cpu_sys_s", "peak_rss_bytes", "sampled_peak_rss_bytes",
           "first_iter_s", "warm_iter_s", "spawn_s")

MS = 1e-3
MIB = 1 << 20
CHAIN = {"impl": "fake-good", "workload": "chain", "n": 5}
BOUNDED = {"impl": "fake-good", "workload": "bounded", "n": 5, "buffer": 1}
SKYNET = {"impl": "fake-good", "workload": "skynet", "n": 5}
HTTP = {"impl": "fake-good", "workload": "http", "users": 10, "requests": 20, "delay_ms": 100,
        "style": "async"}


def spread(centre: float, width: float, k: int = 6) -> list[float]:
    """k values spread evenly over centre·(1 ± width), in a shuffled order."""
    values = [centre * (1 - width + 2 * width * i / max(k - 1, 1)) for i in range(k)]
    return values[::2] + values[1::2]


def rows(config: dict, k: int = 6, width: float = 0.005, status: str = "ok",
         **centres: float) -> list[dict]:
    """k runs of one configuration: each figure named in centres (metric
    name, or wall/cpu) spread by ±width around its centre."""
    figures = {"wall_s": 100 * MS, "cpu_user_s": 60 * MS, "cpu_sys_s": 10 * MS,
               "peak_rss_bytes": 10 * MIB, **centres}
    if config["workload"] != "http":
        figures = {"first_iter_s": 2 * MS, "warm_iter_s": 1 * MS, **figures}
    columns = {m: spread(c, width, k) for m, c in figures.items()}
    out = []
    for i in range(k):
        row = {"impl": "fake-good", "language": "fake", "runtime": "Fake", "rep": i + 1,
               **config, "status": status}
        if status == "ok":
            row.update({m: (round(v[i]) if m in ("peak_rss_bytes", *COUNTERS) else v[i])
                        for m, v in columns.items()})
        out.append(row)
    return out


def write_run(base: Path, *groups: list[dict], host: str = "bench-box") -> Path:
    run = RunDir.create_new(base, lambda run_id: {
        "format_version": FORMAT_VERSION, "run_id": run_id, "host": {"hostname": host},
        "toolchains": {"fake": "Python 3.11"}})
    for group in groups:
        for row in group:
            run.append_run(Row(**row, run_id=run.name))
    return run.path


def gate(old: Path, new: Path, capsys, *args: str) -> tuple[int, str]:
    """compare on the command line, in this process: exit status and stdout."""
    status = cli.main(["compare", str(old), str(new), *args])
    return status, capsys.readouterr().out


def change(v: decision.Verdict, config: dict, metric: str) -> decision.Change:
    found = next(c for c in v.comparisons
                 if (c.key.impl, c.key.workload, c.key.n) == (config["impl"], config["workload"],
                                                              config.get("n")))
    return found.changes[metric]


def state(v: decision.Verdict, config: dict, metric: str) -> str | None:
    """What the gate made of one figure."""
    found = next(c for c in v.comparisons
                 if (c.key.impl, c.key.workload, c.key.n) == (config["impl"], config["workload"],
                                                              config.get("n")))
    return v.gate_of(found, found.changes[metric])


def scaled_copy(source: Path, dest: Path, factor: float) -> Path:
    """A copy of a run directory with every time and memory figure times
    factor (1: the same run copied)."""
    shutil.copytree(source, dest)
    with open(source / "runs.csv", newline="") as f:
        reader = csv.DictReader(f)
        fields, table = reader.fieldnames, list(reader)
    for row in table:
        for col in FIGURES:
            if row.get(col):
                value = float(row[col]) * factor
                row[col] = str(round(value)) if col.endswith("bytes") else repr(value)
    with open(dest / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(table)
    return dest


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return tmp_path / "results"


def test_one_directory_on_both_sides_is_refused(capsys):
    """A gate comparing a run with itself would pass whatever changed."""
    status, err = cli.main(["compare", str(FIXTURE), str(FIXTURE), "--fail-above", "5%"]), \
        capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "the same run directory" in err
    with pytest.raises(Exception, match="same run directory"):
        compare.compare_dirs(FIXTURE, FIXTURE / ".", 0.05)


def test_the_committed_run_doubled_fails_at_three_runs_a_side(tmp_path, capsys):
    """Issue 64: the fixture run (3 runs a configuration, one of 2) with
    every figure doubled. Exactly, each figure alone is worse by more than
    5% at p = 1/20, and Holm over its 86 gated figures needs p <= 5%/86,
    which only 7 runs a side can give. With each figure's variance borrowed
    across the two runs' configurations (ranks.calibrate), the moderated t
    reaches it at 3 runs a side: the gate fails (exit 1), most figures
    named; the two whose own runs spread widest stay undecided."""
    doubled = scaled_copy(RUN_FIXTURE, tmp_path / "doubled", 2.0)
    v = compare.compare_dirs(RUN_FIXTURE, doubled, 0.05)
    assert v.family == 86 and not v.gated(decision.PASSES)
    assert len(v.gated(decision.FAILS)) >= 80
    assert {min(ch.runs) for _, ch in v.gated(decision.FAILS)} <= {2, 3}
    assert v.borrowed[("chain", "warm_iter_s")].configurations == 16
    status, text = gate(RUN_FIXTURE, doubled, capsys, "--fail-above", "5%")
    assert status == 1, text
    assert "FAIL (--fail-above 5%)" in text


def test_the_calibrate_suite_split_into_its_two_names_passes(tmp_path, capsys):
    """A/A: the committed calibration run (5 runtimes, each under two names,
    5 runs a side) split into X and X[BENCH_AA=1], each written as a run of
    its own under X's name, and compared as the gate's own calibration
    does, with the run's floors: no figure fails with the borrowed
    variance, and the gate passes (exit 0)."""
    source = Path(__file__).parents[3] / "docs" / "results" / "2026-11-28-intel-xeon-2c-calibration"
    table = RunDir(source).runs().rows

    def side(name: str, keep) -> Path:
        run = RunDir.create_new(tmp_path / name, lambda run_id: {
            "format_version": FORMAT_VERSION, "run_id": run_id, "host": {"hostname": "vm"}})
        for r in table:
            if keep(r.impl):
                run.append_run(dataclasses.replace(r, impl=r.impl.removesuffix(AA),
                                                   run_id=run.name))
        return run.path

    old = side("a", lambda impl: not impl.endswith(AA))
    new = side("b", lambda impl: impl.endswith(AA))
    v = compare.compare_dirs(old, new, 0.05)
    assert not v.gated(decision.FAILS) and v.borrowed
    status, text = gate(old, new, capsys, "--fail-above", "5%", "--calibration", str(source))
    assert status == 0, text


def test_a_doubling_fails_once_the_runs_can_reach_the_familys_level(base, capsys):
    """Three headline figures: Holm's first step asks p <= 5%/3, which 4 runs a
    side reach (1/70) and 3 do not (1/20)."""
    for k, status in ((3, 3), (4, 1)):
        old = write_run(base, rows(CHAIN, k=k))
        new = write_run(base, rows(CHAIN, k=k, warm_iter_s=2 * MS))
        v = compare.compare_dirs(old, new, 0.05)
        assert v.family == 3 and v.runs_to_fail == 4
        assert state(v, CHAIN, "warm_iter_s") == (decision.FAILS if k == 4 else decision.UNDECIDED)
        assert gate(old, new, capsys, "--fail-above", "5%")[0] == status


def test_a_copy_of_the_committed_run_passes(tmp_path, capsys):
    """A/A on the fixture itself: the same rows on both sides. Every figure
    holds the same values on both sides, so nothing changed and the gate
    passes (exit 0), even the figures its runs alone could not decide: go
    chain 20k cold (10 to 30 ms) and rust-tokio chain 1M (2 ok runs)."""
    copy = scaled_copy(RUN_FIXTURE, tmp_path / "copy", 1.0)
    v = compare.compare_dirs(RUN_FIXTURE, copy, 0.05)
    assert not v.gated(decision.FAILS) and not v.gated(decision.UNDECIDED)
    assert all(ch.identical for _, ch in v.gated(decision.PASSES))
    status, text = gate(RUN_FIXTURE, copy, capsys, "--fail-above", "5%")
    assert status == 0, text
    assert "PASS (--fail-above 5%)" in text and "a copy of one run compared with itself" in text


def test_a_copy_changed_by_a_hair_is_decided_where_its_runs_allow(tmp_path, capsys):
    """The same rows, every value 0.1% higher: no longer identical. A figure
    passes where its 3 runs lie within 5% of each other; one whose runs
    spread wider (go chain 20k cold: 10 to 30 ms) or that has 2 ok runs
    (rust-tokio chain 1M) cannot be shown within 5%: exit 3 unless
    --allow-undecided."""
    copy = scaled_copy(RUN_FIXTURE, tmp_path / "copy", 1.001)
    v = compare.compare_dirs(RUN_FIXTURE, copy, 0.05)
    assert not v.gated(decision.FAILS) and v.gated(decision.PASSES)
    undecided = v.gated(decision.UNDECIDED)
    assert ("rust-tokio", "chain", 1000000) in {(c.key.impl, c.key.workload, c.key.n)
                                                for c, _ in undecided}
    for _, ch in undecided:
        assert min(ch.runs) < 3 or max(ch.old_values) >= 1.04 * min(ch.old_values)
    for _, ch in v.gated(decision.PASSES):
        assert max(ch.old_values) < 1.05 * min(ch.old_values)
    status, text = gate(RUN_FIXTURE, copy, capsys, "--fail-above", "5%")
    assert status == 3, text
    assert "UNDECIDED (exit 3) (--fail-above 5%)" in text
    assert "with fewer than 3 ok runs on a side (the least: 2 old, 2 new)" in text
    status, text = gate(RUN_FIXTURE, copy, capsys, "--fail-above", "5%", "--allow-undecided")
    assert status == 0 and "PASS, with undecided figures allowed" in text


def test_an_a_a_pair_at_three_runs_a_side_passes(base, capsys):
    old = write_run(base, rows(CHAIN, k=3), rows(BOUNDED, k=3), rows(HTTP, k=3, rps=1000,
                                                                     latency_p50_s=20 * MS))
    new = write_run(base, rows(CHAIN, k=3, width=0.01), rows(BOUNDED, k=3, width=0.002),
                    rows(HTTP, k=3, width=0.01, rps=1000, latency_p50_s=20 * MS))
    v = compare.compare_dirs(old, new, 0.05)
    assert {s for _, s in v._gate} == {decision.PASSES}
    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 0 and "PASS (--fail-above 5%): every headline figure is within 5%" in text


def test_two_runs_a_side_cannot_decide(capsys, tmp_path):
    copy = scaled_copy(FIXTURE, tmp_path / "copy", 1.001)  # not a copy: the same would pass
    status, text = gate(FIXTURE, copy, capsys, "--fail-above", "5%")
    assert status == 3, text
    # two runs a side: nothing is settled, and the text says so with the confidence
    assert "not enough runs (67% confidence)" in text
    assert "undecided: 20 headline figures could not be decided against 5%" in text
    assert "the gate needs 3 a side (run with --repeat 3 or more)" in text
    assert "0 regressed, 0 improved" in text and "regressed:" not in text


def test_the_same_build_measured_twice_is_level(base, capsys):
    old = write_run(base, rows(CHAIN), rows(BOUNDED))
    new = write_run(base, rows(CHAIN, width=0.006), rows(BOUNDED, width=0.004))
    v = compare.compare_dirs(old, new, 0.05)
    assert {ch.verdict for _, ch in v.figures()} == {decision.LEVEL_WITHIN}
    # a margin narrower than the spread cannot call them level: no change detected
    narrow = compare.compare_dirs(old, new, 0.05, margins("0.1%"))
    assert {ch.verdict for _, ch in narrow.figures()} == {decision.NO_CHANGE}
    assert v.passed and not v.gated(decision.UNDECIDED)
    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 0 and "PASS" in text and "undecided" not in text


def test_tight_slowdowns_of_2x_and_1_2x_fail(base, capsys):
    old = write_run(base, rows(CHAIN), rows(BOUNDED), rows(SKYNET))
    new = write_run(base, rows(CHAIN, warm_iter_s=2 * MS), rows(BOUNDED, warm_iter_s=1.2 * MS),
                    rows(SKYNET, warm_iter_s=1.03 * MS))
    v = compare.compare_dirs(old, new, 0.05)

    doubled = change(v, CHAIN, "warm_iter_s")
    assert doubled.ratio == pytest.approx(2, rel=1e-3)
    assert doubled.settled and doubled.interval.low > 1.9 and doubled.interval.high < 2.1
    assert doubled.verdict == decision.REGRESSED
    assert state(v, CHAIN, "warm_iter_s") == decision.FAILS
    slower = change(v, BOUNDED, "warm_iter_s")
    assert slower.verdict == decision.REGRESSED and slower.interval.low > 1.05
    # 3% slower is a regression, settled, but within the gate's 5%
    little = change(v, SKYNET, "warm_iter_s")
    assert little.verdict == decision.REGRESSED
    assert state(v, SKYNET, "warm_iter_s") == decision.PASSES
    # ±0.5% around the same peak: level within peak RSS's 2%
    assert change(v, CHAIN, "peak_rss_bytes").verdict == decision.LEVEL_WITHIN

    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 1
    assert "FAIL (--fail-above 5%): 2 reasons:" in text
    assert "fake-good chain N=5 warm iter +100.0% [" in text
    assert "worse by more than 5% (by at least +9" in text
    line = next(l for l in text.splitlines() if "warm iter *" in l and "+20.0%" in l)
    assert line.rstrip().endswith("regressed") and "[+19." in line
    assert "3 regressed, 0 improved" in text
    # without the gate the same comparison is information; a wider threshold passes
    assert gate(old, new, capsys)[0] == 0
    assert gate(old, new, capsys, "--fail-above", "25%")[0] == 1  # the 2x
    assert gate(old, new, capsys, "--fail-above", "150%")[0] == 0


def test_a_noisy_slowdown_is_undecided_unless_its_whole_interval_is_beyond(base, capsys):
    old = write_run(base, rows(CHAIN, width=0.3), rows(BOUNDED, width=0.3))
    new = write_run(base, rows(CHAIN, width=0.3, warm_iter_s=1.2 * MS),
                    rows(BOUNDED, width=0.3, warm_iter_s=3 * MS))
    v = compare.compare_dirs(old, new, 0.05)
    noisy = change(v, CHAIN, "warm_iter_s")
    assert noisy.ratio == pytest.approx(1.2, rel=0.05)
    assert noisy.settled and noisy.interval.low < 1 < noisy.interval.high
    assert noisy.verdict == decision.NO_CHANGE
    assert state(v, CHAIN, "warm_iter_s") == decision.UNDECIDED
    assert noisy.runs_to_decide(0.05) > 6
    tripled = change(v, BOUNDED, "warm_iter_s")
    assert tripled.interval.low > 1.05 and state(v, BOUNDED, "warm_iter_s") == decision.FAILS

    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 1 and "FAIL (--fail-above 5%): 1 reason:" in text
    assert "fake-good bounded N=5 B=1 warm iter +200.0%" in text
    assert "undecided: " in text and "whose evidence reaches both sides of 5%" in text
    assert "fake-good chain N=5 warm iter 1 ms → 1.2 ms, +20.0% [" in text

    # the noisy 1.2x alone is undecided, exit 3: not a pass
    alone = write_run(base, rows(CHAIN, width=0.3, warm_iter_s=1.2 * MS),
                      rows(BOUNDED, width=0.3))
    status, text = gate(old, alone, capsys, "--fail-above", "5%")
    assert status == 3 and "UNDECIDED (exit 3)" in text
    assert "whose evidence reaches both sides of 5%" in text
    assert gate(old, alone, capsys, "--fail-above", "5%", "--allow-undecided")[0] == 0

    # with three runs a side the two-sided interval is at 90%; the gate still cannot decide
    few_old = write_run(base, rows(CHAIN, k=3, width=0.3))
    few_new = write_run(base, rows(CHAIN, k=3, width=0.3, warm_iter_s=1.2 * MS))
    few = change(compare.compare_dirs(few_old, few_new), CHAIN, "warm_iter_s")
    assert few.verdict == decision.NOT_ENOUGH and not few.settled
    status, text = gate(few_old, few_new, capsys, "--fail-above", "5%")
    assert status == 3 and "not enough runs (90% confidence)" in text


def test_one_ok_run_is_not_enough(base, capsys):
    old = write_run(base, rows(CHAIN))
    new = write_run(base, rows(CHAIN, k=1, warm_iter_s=2 * MS))
    ch = change(compare.compare_dirs(old, new), CHAIN, "warm_iter_s")
    assert ch.interval is None and ch.verdict == decision.NOT_ENOUGH
    assert ch.ratio == pytest.approx(2, rel=0.01)
    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 3 and "not enough runs (1 ok run new)" in text
    assert "(the least: 6 old, 1 new)" in text


def test_nothing_in_common_fails_in_one_line(base, capsys):
    old = write_run(base, rows(CHAIN))
    new = write_run(base, rows(BOUNDED))
    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 1
    line = ("compare: the two runs have no configuration in common: nothing to compare, "
            "the gate fails")
    assert text.count("no configuration in common") == 1 and line in text.splitlines()
    assert "PASS" not in text and "FAIL" not in text
    data = json.loads(gate(old, new, capsys, "--fail-above", "5%", "--format", "json")[1])
    assert data["passed"] is False and data["failures"] == [decision.NOTHING_IN_COMMON]
    # without a gate it is said, and nothing fails
    status, text = gate(old, new, capsys)
    assert status == 0 and "nothing to compare" in text and "gate" not in text


def test_a_configuration_that_lost_its_ok_runs_fails(base, capsys):
    old = write_run(base, rows(CHAIN), rows(BOUNDED), rows(SKYNET))
    new = write_run(base, rows(CHAIN), rows(BOUNDED, status="oom"))  # skynet absent
    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 1
    assert "FAIL (--fail-above 5%): 2 reasons:" in text
    assert "fake-good bounded N=5 B=1: 6 ok → 6 oom, no ok run in the new run" in text
    assert "fake-good skynet N=5: 6 ok → absent, no ok run in the new run" in text
    assert "6 ok → 6 oom (NO OK RUN NOW)" in text
    # a configuration that never worked has nothing to lose
    assert gate(write_run(base, rows(CHAIN, status="invalid")), write_run(
        base, rows(CHAIN, status="invalid")), capsys, "--fail-above", "5%")[0] == 0


def test_wall_and_cpu_are_shown_not_gated(base, capsys):
    old = write_run(base, rows(CHAIN))
    new = write_run(base, rows(CHAIN, wall_s=200 * MS, cpu_user_s=120 * MS))
    v = compare.compare_dirs(old, new, 0.05)
    assert change(v, CHAIN, "wall_s").verdict == decision.REGRESSED
    assert change(v, CHAIN, "cpu_s").verdict == decision.REGRESSED
    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 0 and "PASS" in text and "regressed: fake-good chain N=5 wall" in text


def test_the_kernels_counters_are_shown_beside_the_figures_not_gated(base, capsys):
    old = write_run(base, rows(CHAIN, ctx_switches_voluntary=1000, minor_faults=5000))
    new = write_run(base, rows(CHAIN, ctx_switches_voluntary=3100, minor_faults=5000))
    v = compare.compare_dirs(old, new, 0.05)
    switches = change(v, CHAIN, "ctx_switches_voluntary")
    assert switches.verdict == decision.REGRESSED
    assert switches.interval.low <= 3.1 <= switches.interval.high
    assert change(v, CHAIN, "minor_faults").verdict == decision.LEVEL_WITHIN
    status, text = gate(old, new, capsys, "--fail-above", "5%")
    assert status == 0 and "PASS" in text and "voluntary ctx sw" in text


def test_throughput_is_higher_is_better(base, capsys):
    old = write_run(base, rows(HTTP, rps=1000, latency_p50_s=20 * MS))
    lower = write_run(base, rows(HTTP, rps=800, latency_p50_s=20 * MS))
    higher = write_run(base, rows(HTTP, rps=1500, latency_p50_s=15 * MS))
    drop = change(compare.compare_dirs(old, lower, 0.05), HTTP, "rps")
    assert drop.change == pytest.approx(-0.2, rel=0.01)
    assert drop.verdict == decision.REGRESSED
    assert state(compare.compare_dirs(old, lower, 0.05), HTTP, "rps") == decision.FAILS
    status, text = gate(old, lower, capsys, "--fail-above", "5%")
    assert status == 1 and "fake-good http users=10 requests=20 delay_ms=100 style=async " \
                           "throughput -20.0% [" in text
    v = compare.compare_dirs(old, higher, 0.05)
    assert change(v, HTTP, "rps").verdict == decision.IMPROVED
    assert change(v, HTTP, "latency_p50_s").verdict == decision.IMPROVED
    assert gate(old, higher, capsys, "--fail-above", "5%")[0] == 0


def test_json_and_markdown_carry_the_interval(base, capsys):
    old = write_run(base, rows(CHAIN), rows(BOUNDED, k=3))
    new = write_run(base, rows(CHAIN, warm_iter_s=1.2 * MS), rows(BOUNDED, k=3))
    status, out = gate(old, new, capsys, "--fail-above", "5%", "--format", "json")
    data = json.loads(out)
    assert status == 1 and data["passed"] is False and len(data["failures"]) == 1
    chain = next(c for c in data["configurations"] if c["workload"] == "chain")
    warm = chain["changes"]["warm_iter_s"]
    assert warm["estimate"] == pytest.approx(1.2, rel=1e-3)
    assert warm["change"] == pytest.approx(0.2, rel=1e-2)
    assert 1.15 < warm["low"] < 1.2 < warm["high"] < 1.25
    assert warm["confidence"] >= 0.95 and warm["runs"] == {"old": 6, "new": 6}
    assert warm["verdict"] == "regressed" and warm["headline"] and warm["gate"] == "fails"
    assert chain["changes"]["wall_s"]["headline"] is False and chain["changes"]["wall_s"][
        "gate"] is None
    bounded = next(c for c in data["configurations"] if c["workload"] == "bounded")
    assert bounded["changes"]["warm_iter_s"]["verdict"] == "not enough runs"
    assert bounded["changes"]["warm_iter_s"]["confidence"] == pytest.approx(0.9)
    # bounded's three runs a side are the same values: within 5%, one-sided, at 95%
    assert bounded["changes"]["warm_iter_s"]["gate"] == "passes"
    assert bounded["changes"]["warm_iter_s"]["p_within"] == pytest.approx(1 / 20)
    assert data["undecided"] == 0 and data["runs_to_decide"] is None
    assert data["exit_status"] == 1
    assert data["counts"]["regressed"] == 1

    md = gate(old, new, capsys, "--fail-above", "5%", "--format", "markdown")[1]
    assert md.startswith("### Benchmark comparison: ")
    assert "| workload | configuration | impl | runs old → new | figure | old | new | change " \
           "| interval | verdict |" in md
    assert "| chain | N=5 | fake-good | 6 ok → 6 ok | cold iter * | 2 ms | 2 ms | " in md
    assert "|  |  |  |  | warm iter * | 1 ms | 1.2 ms | +20.0% | [+" in md
    assert "| regressed |" in md
    assert "not enough runs (90% confidence)" in md
    assert "- fake-good chain N=5 warm iter +20.0% \\[" in md

    # github: the summary first, the table folded, and within a size
    gh = gate(old, new, capsys, "--fail-above", "5%", "--format", "github")[1]
    assert gh.index("FAIL (--fail-above 5%)") < gh.index("<details><summary>every figure")
    assert gh.index("<details>") < gh.index("| workload |") < gh.index("</details>")
    v = compare.compare_dirs(old, new, 0.05)
    small = compare.render_markdown(v, limit=len(gh.encode()) - 300)
    assert "more rows: `compare --format markdown` has them all." in small
    assert len(small.encode()) <= len(gh.encode()) - 300


def test_different_machines_and_one_sided_rows_are_named(base, capsys):
    old = write_run(base, rows(CHAIN), rows(BOUNDED))
    other = write_run(base, rows(CHAIN), rows({**BOUNDED, "n": 6}), host="elsewhere")
    env = json.loads((other / "env.json").read_text())
    env["toolchains"]["fake"] = "Python 0.1"
    (other / "env.json").write_text(json.dumps(env))
    text = gate(old, other, capsys)[1]
    assert "note: different hosts (bench-box vs elsewhere)" in text
    assert "note: different toolchain versions: fake Python 3.11 → Python 0.1" in text
    assert "only in the old run: 1 configurations: fake-good bounded N=5 B=1" in text
    assert "only in the new run: 1 configurations: fake-good bounded N=6 B=1" in text


def test_the_command_line_gate(base):
    """The installed entry point: exit statuses as CI sees them."""
    old = write_run(base, rows(CHAIN))
    new = write_run(base, rows(CHAIN, warm_iter_s=1.2 * MS))
    proc = harness("compare", str(FIXTURE), str(FIXTURE), "--fail-above", "5%")
    assert proc.returncode == 2 and "the same run directory" in proc.stderr
    proc = harness("compare", str(old), str(new), "--fail-above", "5%")
    assert proc.returncode == 1 and "FAIL" in proc.stdout, proc.stdout + proc.stderr
    proc = harness("compare", str(old), str(new), "--fail-above", "lots")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("args", [
    ["--margin", "0"], ["--margin", "60%"], ["--margin", "nope=5%"], ["--margin", ","],
    ["--margin", "abc"], ["--margin", "inf"], ["--allow-undecided"],
])
def test_bad_margins_and_a_lone_allow_undecided_are_one_line(args: list[str], capsys,
                                                             tmp_path) -> None:
    copy = scaled_copy(FIXTURE, tmp_path / "copy", 1.0)
    status = cli.main(["compare", str(FIXTURE), str(copy), *args])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("harness: error:"), err


def test_markdown_writes_the_data_as_text(base, capsys):
    """Markup in a run's env.json (its host name, a toolchain) stays text in
    a pull request's comment."""
    old, new = write_run(base, rows(CHAIN)), write_run(base, rows(CHAIN), host="<img src=y>")
    env = json.loads((new / "env.json").read_text())
    env["toolchains"]["fake"] = "<script>x</script>"
    (new / "env.json").write_text(json.dumps(env))
    for fmt in ("markdown", "github"):
        md = gate(old, new, capsys, "--format", fmt)[1]
        assert not re.search(r"(?<!\\)<(img|script)", md), md  # every < escaped
        assert "\\<img src=y\\>" in md
