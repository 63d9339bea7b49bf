"""compare: a known regression is marked, noise is not."""

import csv
import json
import shutil
from pathlib import Path

import pytest

from harness import compare

from .conftest import harness

FIXTURE = Path(__file__).parent / "fixtures" / "run"


def edit_runs(run: Path, change) -> None:
    path = run / "runs.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        change(row)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def key(row):
    return row["impl"], row["workload"], row["n"], row["buffer"]


def regress(row):
    if key(row) == ("go", "chain", "5000", ""):  # 1.5× slower warm iterations
        row["warm_iter_s"] = repr(float(row["warm_iter_s"]) * 1.5)
    if key(row) == ("rust-tokio", "bounded", "10000", "1"):  # +10% inside its 21% noise
        row["warm_iter_s"] = repr(float(row["warm_iter_s"]) * 1.1)
    if key(row) == ("go", "sleep", "10000", "") and row["rep"] == "3":  # one rep oom
        row["status"] = "oom"
    if key(row) == ("rust-tokio", "sleep", "100000", ""):  # every rep oom
        row["status"] = "oom"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("compare")
    old, new = base / "old", base / "new"
    shutil.copytree(FIXTURE, old)
    shutil.copytree(FIXTURE, new)
    edit_runs(new, regress)
    return old, new


def test_structured(runs):
    found, _, _ = compare.compare_runs(*runs)
    by = {(c.key.impl, c.key.workload, c.key.n, c.key.buffer): c for c in found}

    slow = by[("go", "chain", 5000, None)].changes["warm_iter_s"]
    assert slow.ratio == pytest.approx(1.5)
    assert slow.significant and slow.verdict == "worse"
    assert not by[("go", "chain", 5000, None)].changes["first_iter_s"].significant

    noisy = by[("rust-tokio", "bounded", 10000, 1)].changes["warm_iter_s"]
    assert noisy.ratio == pytest.approx(1.1)
    assert noisy.threshold > 0.2 and not noisy.significant

    gone = by[("rust-tokio", "sleep", 100000, None)]
    assert gone.status_change == "regressed" and gone.changes == {}
    assert by[("go", "sleep", 10000, None)].new_statuses == "2 ok, 1 oom"

    assert ("csharp", "sleep", 1, None) not in by  # never ran on either side
    marked = [(k, m) for k, c in by.items() for m, ch in c.changes.items() if ch.significant]
    assert marked == [(("go", "chain", 5000, None), "warm_iter_s")]


def test_single_repeat_is_never_judged(runs, tmp_path):
    single = tmp_path / "single"
    shutil.copytree(runs[1], single)
    edit_runs(single, lambda row: row.update(status="crashed") if row["rep"] in ("2", "3") else None)
    found, _, _ = compare.compare_runs(runs[0], single)
    slow = next(c for c in found if (c.key.impl, c.key.workload, c.key.n) == ("go", "chain", 5000))
    change = slow.changes["warm_iter_s"]
    assert change.ratio == pytest.approx(1.5)
    assert change.threshold is None and not change.significant
    assert "ratios are not judged: one of the runs has a single ok repeat" in compare.compare(
        runs[0], single)


def test_identical_runs_have_no_changes():
    found, _, _ = compare.compare_runs(FIXTURE, FIXTURE)
    assert all(ch.ratio == 1.0 and not ch.significant for c in found for ch in c.changes.values())


def test_text_table(runs):
    text = compare.compare(*runs)
    line = next(l for l in text.splitlines() if l.startswith("chain") and " go " in l
                and "5000" in l)
    assert "1.50× ▲" in line
    assert "3 ok → 3 oom (REGRESSED)" in text
    assert "1 worse, 0 better; 1 of the groups stopped producing ok runs." in text
    assert "worse: go chain N=5000 warm iter 750 µs → 1.13 ms (1.50×, beyond noise of 2%)" in text
    assert "absent" not in text and "only in the" not in text


def _fake_run(out: Path, slowdown: str = "1") -> Path:
    proc = harness("run", "--no-report", "--impl", "fake-good", "--workload", "chain,bounded",
                   "--n", "5", "--iterations", "3", "--repeat", "3", "--out", str(out),
                   extra_env={"FAKE_SLOWDOWN": slowdown})
    assert proc.returncode == 0, proc.stderr
    return (out / "latest").resolve()


@pytest.fixture(scope="module")
def gate_runs(tmp_path_factory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("gate")
    return _fake_run(base / "a"), _fake_run(base / "b"), _fake_run(base / "c", "1.5")


def test_the_gate_passes_two_runs_of_the_same_build(gate_runs):
    proc = harness("compare", str(gate_runs[0]), str(gate_runs[1]), "--fail-above", "5%")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout


def test_the_gate_fails_a_real_regression(gate_runs):
    proc = harness("compare", str(gate_runs[0]), str(gate_runs[2]), "--fail-above", "5%")
    assert proc.returncode == 1, proc.stdout
    assert "FAIL: 4 regressions above 5.0%" in proc.stdout  # cold and warm, chain and bounded
    assert "fake-good chain N=5 warm iter +50.0%" in proc.stdout
    # without the gate, the same comparison is only information
    assert harness("compare", str(gate_runs[0]), str(gate_runs[2])).returncode == 0
    # a regression smaller than the threshold passes
    assert harness("compare", str(gate_runs[0]), str(gate_runs[2]),
                   "--fail-above", "60").returncode == 0


def test_markdown_and_json(gate_runs):
    md = harness("compare", str(gate_runs[0]), str(gate_runs[2]), "--format", "markdown",
                 "--fail-above", "5%").stdout
    assert md.startswith("### Benchmark comparison: ")
    assert "| workload | configuration | impl | runs old → new |" in md
    assert "| chain | N=5 | fake-good | 3 ok → 3 ok | " in md and "1.50× ▲" in md
    data = json.loads(harness("compare", str(gate_runs[0]), str(gate_runs[2]), "--format",
                              "json", "--fail-above", "5%").stdout)
    assert data["passed"] is False and len(data["failures"]) == 4
    chain = next(c for c in data["configurations"] if c["workload"] == "chain")
    assert chain["changes"]["warm_iter_s"]["ratio"] == pytest.approx(1.5, rel=1e-3)
    assert chain["changes"]["warm_iter_s"]["verdict"] == "worse"


def test_different_machines_and_one_sided_rows_are_named(gate_runs, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(gate_runs[1], other)
    env = json.loads((other / "env.json").read_text())
    env["host"]["hostname"] = "elsewhere"
    env["toolchains"]["fake"] = "Python 0.1"
    (other / "env.json").write_text(json.dumps(env))
    edit_runs(other, lambda row: row.update(n="6") if row["workload"] == "bounded" else None)
    text = harness("compare", str(gate_runs[0]), str(other)).stdout
    assert "note: different hosts (" in text and "elsewhere)" in text
    assert "note: different toolchain versions: fake " in text and "→ Python 0.1" in text
    assert "only in the old run: 1 configurations: fake-good bounded N=5 B=1" in text
    assert "only in the new run: 1 configurations: fake-good bounded N=6 B=1" in text


def test_a_bad_threshold_is_one_line_exit_2(gate_runs):
    proc = harness("compare", str(gate_runs[0]), str(gate_runs[1]), "--fail-above", "lots")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
