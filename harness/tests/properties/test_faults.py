"""Faults and misuse of a run directory (issue: nothing duplicated,
nothing unreadable): two writers, a file removed or torn under a run, the
same rows merged twice."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.schema import Row

from harness.record.rundir import RunDir, RunDirError

from ..conftest import FAKES, ROOT, harness, read_rows

RUN = ("run", "--impl", "fake-good", "--workload", "chain", "--no-report")


def test_a_second_writer_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert harness(*RUN, "--n", "5", "--repeat", "1", "--out", str(out)).returncode == 0
    # the first --resume holds the directory while its program hangs (until its
    # timeout: 15 s, time for the second to start on a loaded machine)
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES))
    first = subprocess.Popen([sys.executable, "-m", "harness", "run", "--impl", "fake-hang",
                              "--workload", "chain", "--n", "5", "--repeat", "1", "--timeout", "15",
                              "--no-report", "--out", str(out), "--resume"],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert first.stdout is not None
        for line in first.stdout:
            if line.startswith("recording to"):
                break
        second = harness(*RUN, "--n", "5", "--repeat", "2", "--out", str(out), "--resume")
        assert second.returncode == 2, second.stderr
        [line] = second.stderr.strip().splitlines()
        assert "in use by another run" in line and f"process {first.pid}" in line
    finally:
        first.communicate(timeout=120)
    assert first.returncode == 1  # its row timed out: the fake hangs
    keys = [(r["impl"], r["n"], r["rep"]) for r in read_rows(out)]
    assert len(keys) == len(set(keys))  # no row twice


def test_runs_csv_removed_during_a_run_stops_it_in_one_line(tmp_path: Path) -> None:
    run = RunDir.create_new(tmp_path)
    row = Row(impl="go", workload="chain", n=1, rep=1, status="ok")
    run.append_run(row)
    run.runs_path.unlink()
    with pytest.raises(Exception, match="removed during the run"):
        run.append_run(dataclasses.replace(row, rep=2))
    assert not run.runs_path.exists()  # never re-created without its header


def test_runs_csv_replaced_during_a_run_is_not_written_to(tmp_path: Path) -> None:
    run = RunDir.create_new(tmp_path)
    row = Row(impl="go", workload="chain", n=1, rep=1, status="ok")
    run.append_run(row)
    text = run.runs_path.read_text()
    copy = run.path / "copy.csv"
    copy.write_text(text)
    copy.replace(run.runs_path)  # a new file in its place
    with pytest.raises(Exception, match="replaced"):
        run.append_run(dataclasses.replace(row, rep=2))
    assert run.runs_path.read_text() == text


def test_a_torn_samples_line_is_repaired_by_resume(tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert harness(*RUN, "--n", "5", "--repeat", "1", "--out", str(out)).returncode == 0
    samples = out / "latest" / "samples.csv"
    data = samples.read_bytes()
    samples.write_bytes(data[:-7])  # the last sample cut short
    proc = harness(*RUN, "--n", "5,6", "--repeat", "1", "--out", str(out), "--resume")
    assert proc.returncode == 0, proc.stderr
    proc = harness("report", str(out / "latest"))
    assert proc.returncode == 0, proc.stderr


def test_merge_refuses_the_same_rows_twice(tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert harness(*RUN, "--n", "5", "--repeat", "1", "--out", str(out)).returncode == 0
    run = (out / "latest").resolve()
    (tmp_path / "link").symlink_to(run)
    merged_out = tmp_path / "merged"
    for pair in ((run, run), (run, tmp_path / "link")):
        proc = harness("merge", *map(str, pair), "--out", str(merged_out), "--no-report")
        assert proc.returncode == 2 and "same rows" in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and not merged_out.exists()
    other = tmp_path / "other"
    assert harness(*RUN, "--n", "6", "--repeat", "1", "--out", str(other)).returncode == 0
    proc = harness("merge", str(run), str(other / "latest"), "--out", str(merged_out),
                   "--no-report")
    assert proc.returncode == 0, proc.stderr
    proc = harness("merge", str(merged_out / "latest"), str(run), "--out", str(tmp_path / "m2"),
                   "--no-report")
    assert proc.returncode == 2 and "same rows" in proc.stderr


def test_lock_names_the_holder(tmp_path: Path) -> None:
    run = RunDir.create_new(tmp_path)
    run.lock()
    with pytest.raises(RunDirError, match=f"process {os.getpid()}"):
        RunDir(run.path).lock()
