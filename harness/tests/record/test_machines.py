"""Core scaling (--cpus) and results from many machines (harness merge)."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

from harness.analyse.analysis import analyse
from harness.record.rundir import RunDir

from ..conftest import fake_registry, harness, read_rows

FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"
USABLE = len(os.sched_getaffinity(0))


def test_cpus_pins_each_run_and_sets_the_runtimes_knob(out: Path) -> None:
    counts = sorted({1, USABLE})
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "10",
                   "--repeat", "1", "--cpus", ",".join(map(str, counts)), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = read_rows(out)
    assert sorted(int(r["cpus"]) for r in rows) == counts
    for r in rows:
        seen = json.loads(r["output"])
        # the program itself ran on exactly K CPUs, and its knob said K
        assert seen["cpus_seen"] == int(r["cpus"]) and seen["cpus_knob"] == r["cpus"], r
    if len(counts) > 1:
        assert (out / "latest" / "plots" / "chain_scaling.png").is_file()
        assert "chain_scaling.png" in (out / "latest" / "report.md").read_text()


def test_without_cpus_nothing_is_pinned_or_set(out: Path) -> None:
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "10",
                   "--repeat", "1", "--no-report", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    row, = read_rows(out)
    seen = json.loads(row["output"])
    assert row["cpus"] == "" and seen["cpus_knob"] is None and seen["cpus_seen"] == USABLE


def test_more_cpus_than_the_machine_has_is_exit_2(out: Path) -> None:
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "10",
                   "--cpus", str(USABLE + 1), "--out", str(out))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"--cpus {USABLE + 1}" in proc.stderr and not out.exists()


def _machine(tmp: Path, name: str, host: dict, slower: float) -> Path:
    """The fixture run as if made on another machine: its host, and times
    `slower` times the fixture's."""
    run = tmp / name
    shutil.copytree(FIXTURE, run)
    env = json.loads((run / "env.json").read_text())
    env["host"] = host
    (run / "env.json").write_text(json.dumps(env))
    with (run / "runs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for col in ("first_iter_s", "warm_iter_s"):
            if r[col]:
                r[col] = str(float(r[col]) * slower)
    with (run / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return run


def test_merge_keys_every_row_by_its_machine(tmp_path: Path, out: Path) -> None:
    x86 = _machine(tmp_path, "x86", {"hostname": "alice-laptop", "cpu_model": "AMD EPYC 7B13",
                                     "cores": 2, "os": "Debian GNU/Linux 12 (bookworm)"}, 1.0)
    arm = _machine(tmp_path, "arm", {"hostname": "runner-7", "cpu_model": "Neoverse-N1",
                                     "cores": 64, "os": "Ubuntu 24.04"}, 2.0)
    proc = harness("merge", str(x86), str(arm), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    merged = RunDir((out / "latest").resolve())
    rows = merged.runs().rows
    fixture_rows = RunDir(FIXTURE).runs().rows
    assert len(rows) == 2 * len(fixture_rows)
    assert {r.machine for r in rows} == {"AMD EPYC 7B13 x2", "Neoverse-N1 x64"}
    assert len(merged.samples()) == 2 * len(RunDir(FIXTURE).samples())
    # each machine is its own group, with its own figures
    groups = [g for g in analyse(merged).groups if g.impl == "go" and g.workload == "chain"]
    by_machine = {g.param("machine"): g for g in groups if g.n == groups[0].n}
    x, a = by_machine["AMD EPYC 7B13 x2"], by_machine["Neoverse-N1 x64"]
    assert a.median("warm_iter_s") == 2.0 * x.median("warm_iter_s")
    report = (merged.path / "report.md").read_text()
    assert "Neoverse-N1, 64 cores" in report and "| machine |" in report
    assert "alice-laptop" not in report  # labels and tables never name a host
    env = merged.env()
    assert set(env.machines) == {"AMD EPYC 7B13 x2", "Neoverse-N1 x64"}
    # a merge of a merge keeps the machines; labels may be given
    riscv = _machine(tmp_path, "riscv", {"hostname": "board-1", "cpu_model": "SiFive U74",
                                         "cores": 4}, 3.0)
    again = harness("merge", str(merged.path), str(riscv), "--labels", "both,riscv",
                    "--out", str(tmp_path / "again"), "--no-report")
    assert again.returncode == 0, again.stderr
    rerows = RunDir((tmp_path / "again" / "latest").resolve()).runs().rows
    assert {r.machine for r in rerows} == {"AMD EPYC 7B13 x2", "Neoverse-N1 x64", "riscv"}
    # ... but a machine already in it is not counted twice
    twice = harness("merge", str(merged.path), str(x86), "--out", str(tmp_path / "twice"))
    assert twice.returncode == 2 and "same rows" in twice.stderr


def test_merge_refuses_bad_input_in_one_line(tmp_path: Path, out: Path) -> None:
    for args in ([str(FIXTURE)], [str(FIXTURE), str(tmp_path)],
                 [str(FIXTURE), str(FIXTURE), "--labels", "only-one"]):
        proc = harness("merge", *args, "--out", str(out))
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (args, proc)


def test_a_floor_implementation_is_recorded_and_read_against(tmp_path: Path, out: Path) -> None:
    # the floor twice as slow as fake-good: ×floor is shown where the floor is not the best
    registry = fake_registry(tmp_path, "floorlang", "fake-floor",
                             impl_extra='floor = true\nenv = { FAKE_SLOWDOWN = "2" }')
    proc = harness("run", "--impl", "fake-good,fake-floor", "--workload", "chain", "--n", "10",
                   "--repeat", "1", "--registry", str(registry), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    env = json.loads((out / "latest" / "env.json").read_text())
    assert env["floor_impls"] == ["fake-floor"]
    assert "| ×floor |" in (out / "latest" / "report.md").read_text()
