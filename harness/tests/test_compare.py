"""compare: a known regression is marked, noise is not."""

import csv
import shutil
from pathlib import Path

import pytest

from harness import compare

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
