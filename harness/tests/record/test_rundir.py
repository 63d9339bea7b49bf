"""The run directory under faults: torn and foreign files, a full disk, a
narrower --resume, two runs in the same second; and the proof that a new
workload is one declaration."""

from __future__ import annotations

import csv
import dataclasses
import errno
import json
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

from harness.core import schema
from harness.record import rundir
from harness import session
from harness.processes.launcher import Sample
from harness.core.presentation import PRESENTATIONS, Presentation
from harness.record.rundir import RunDir, RunDirError, read_runs
from harness.core.schema import RUN_NAMES, Row
from harness.plan.options import Options
from harness.plan.settings import settings_from
from harness.core.workloads import WORKLOADS, Workload

from ..conftest import FAKES, harness, harness_main, read_rows

RUN = ["run", "--no-report", "--repeat", "1"]


def good_run(out: Path, *extra: str) -> Path:
    proc = harness(*RUN, "--impl", "fake-good", "--workload", "chain", "--n", "5", "--out",
                   str(out), *extra)
    assert proc.returncode == 0, proc.stderr
    return (out / "latest").resolve()


def test_typed_rows_with_empty_fields_and_cpu(tmp_path: Path) -> None:
    run = RunDir.create_new(tmp_path)
    run.append_run(Row(impl="a", workload="chain", n=10, buffer=None, rep=1, status="ok",
                       cpu_user_s=0.5, cpu_sys_s=0.25, wall_s=None, peak_rss_bytes=1024))
    [row] = run.runs().rows
    assert row.n == 10 and row.buffer is None and row.wall_s is None
    assert row.cpu_s == 0.75 and row.peak_rss_bytes == 1024 and row.capacity is None


def test_a_torn_last_row_is_reported_and_ignored(out: Path) -> None:
    run = good_run(out, "--repeat", "2")
    data = (run / "runs.csv").read_bytes()
    (run / "runs.csv").write_bytes(data[:-40])  # a power cut in the middle of the last row
    table = read_runs(run / "runs.csv")
    assert len(table.rows) == 1 and "cut short" in table.torn
    proc = harness("report", str(run))
    assert proc.returncode == 0, proc.stderr
    assert "cut short" in (run / "report.md").read_text()
    # --resume drops the torn row and runs it again
    proc = harness(*RUN, "--impl", "fake-good", "--workload", "chain", "--n", "5", "--repeat",
                   "2", "--out", str(out), "--resume")
    assert proc.returncode == 0 and "cut short" in proc.stdout, proc.stdout + proc.stderr
    assert sorted((r["rep"], r["status"]) for r in read_rows(out)) == [("1", "ok"), ("2", "ok")]


def _read_by(command: str, good: Path, run: Path, out: Path, ns: str,
             capsys: pytest.CaptureFixture[str] | None = None):
    """The command that reads a (broken) run directory: compare against a good
    copy (compare refuses a run with itself), --resume in OUT, or report/plot.
    With capsys, report, plot and compare run in the test's process
    (conftest.harness_main: they start no program); --resume, a run, always
    in a process of its own."""
    if command == "resume":
        return harness(*RUN, "--impl", "fake-good", "--workload", "chain", "--n", ns,
                       "--out", str(out), "--resume")
    args = ["compare", str(good), str(run)] if command == "compare" else [command, str(run)]
    return harness(*args) if capsys is None else harness_main(capsys, *args)


@pytest.mark.parametrize("content", [
    "garbage\x00\x01 not csv at all\n",
    "name,age\nbob,3\n",  # a foreign header
    ",".join(RUN_NAMES) + "\nonly,three,fields\nand,one,more\n",
    "",
])
@pytest.mark.parametrize("command", ["report", "plot", "compare", "resume"])
def test_a_malformed_runs_csv_is_one_line_exit_2(content: str, command: str, out: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = good_run(out)
    good = shutil.copytree(run, out.parent / "good")  # compare refuses a run with itself
    (run / "runs.csv").write_text(content)
    # the empty file in a real process, each command; the others in this one
    proc = _read_by(command, good, run, out, "5", None if content == "" else capsys)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "runs.csv" in proc.stderr


def test_an_unknown_status_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("impl,workload,n,buffer,rep,status\na,chain,1,,1,fine\n")
    with pytest.raises(RunDirError, match="line 2: unknown status 'fine'"):
        read_runs(path)


def test_resume_with_a_narrower_selection_hides_no_row(out: Path) -> None:
    args = [*RUN, "--impl", "fake-good,fake-crash", "--workload", "chain", "--n", "5",
            "--out", str(out)]
    assert harness(*args).returncode == 1
    proc = harness(*RUN, "--impl", "fake-good", "--workload", "chain", "--n", "5,6",
                   "--out", str(out), "--resume")
    assert proc.returncode == 0, proc.stderr
    rows = read_rows(out)
    assert sorted((r["impl"], r["n"], r["status"]) for r in rows) == [
        ("fake-crash", "5", "crashed"), ("fake-good", "5", "ok"), ("fake-good", "6", "ok")]
    assert not (out / "latest" / "retried.csv").exists()
    env = json.loads((out / "latest" / "env.json").read_text())
    assert [i["resumed"] for i in env["invocations"]] == [False, True]
    assert [i["settings"]["n"] for i in env["invocations"]] == [[5], [5, 6]]
    assert all(i["finished_at"] for i in env["invocations"])


def test_two_runs_in_the_same_second_never_share_a_directory(tmp_path: Path) -> None:
    made: list[Path] = []
    threads = [threading.Thread(target=lambda: made.append(RunDir.create_new(tmp_path).path))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(made)) == 8


def test_latest_that_is_a_directory_is_refused_before_anything_is_written(out: Path) -> None:
    (out / "latest").mkdir(parents=True)
    proc = harness(*RUN, "--impl", "fake-good", "--workload", "chain", "--n", "5", "--out", str(out))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "latest" in proc.stderr and sorted(p.name for p in out.iterdir()) == ["latest"]


def test_a_full_disk_stops_the_suite_and_loses_no_written_row(
        out: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """ENOSPC injected when the second row is written: the first row stays,
    the suite stops with one line naming the file and the row, and the lost
    row's figures are printed."""
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    calls = {"n": 0}
    real_writer = rundir.csv.writer

    class FullDisk:
        def __init__(self, f: object) -> None:
            self.inner = real_writer(f)

        def writerow(self, cells: list[str]) -> object:
            calls["n"] += 1
            if calls["n"] == 4:  # the two headers, row 1, then row 2
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self.inner.writerow(cells)

        def writerows(self, rows: object) -> object:
            return self.inner.writerows(rows)

    monkeypatch.setattr(rundir.csv, "writer", FullDisk)
    s = settings_from(Options(impl="fake-good", workload="chain", n="5,6,7", repeat=1),
                      ram_bytes=1 << 30)
    assert session.run_suite(s, out, report=False) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("harness: error: cannot write ") and "runs.csv" in err[0]
    assert "No space left on device" in err[0] and "fake-good chain N=6 rep 1" in err[0]
    assert err[1].startswith("harness: the lost row's figures: {")
    figures = json.loads(err[1][err[1].index("{"):])
    assert figures["status"] == "ok" and figures["wall_s"] > 0 and figures["n"] == 6
    assert [r["n"] for r in read_rows(out)] == ["5"]


def test_a_new_workload_is_one_declaration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Declare a workload, give a program for it, and the whole harness runs,
    validates, records, reports and plots it: no other module changes."""
    monkeypatch.setitem(WORKLOADS, "double", Workload(
        "double", default_iterations=3, default_warmup_ms=0, expected=lambda n: n * (n - 1),
        uses_buffer=True))
    monkeypatch.setitem(PRESENTATIONS, "double", Presentation(
        "each of N tasks doubles its index; result = the sum", "double: a test workload",
        plot_caption="time to double N indices"))
    lang = tmp_path / "impls" / "doubler"
    lang.mkdir(parents=True)
    (lang / "double.py").write_text(
        "import json, sys\n"
        "a = sys.argv[1:]; o = dict(zip(a[1::2], a[2::2])); n, k = int(o['--n']), int(o['--iterations'])\n"
        "r = sum(2 * i for i in range(n))\n"
        "print(json.dumps({'workload': a[0], 'n': n, 'buffer': int(o['--buffer']), 'result': r,\n"
        "                  'results': [r] * k, 'iter_ns': [1000 + i for i in range(k)]}))\n")
    (lang / "impls.toml").write_text(
        '[language]\nname = "doubler"\ndetect = ["{python}", "-c", "print(1)"]\n'
        'build = ["true"]\ntest = ["true"]\n'
        f'[[impl]]\nid = "doubler"\nrun = ["{sys.executable}", "{{dir}}/double.py"]\n'
        'workloads = ["double"]\n')
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(lang.parent))
    out = tmp_path / "results"
    s = settings_from(Options(impl="doubler", n="10,100", buffer="2", repeat=2),
                      ram_bytes=1 << 30)
    assert session.run_suite(s, out, report=False) == 0
    rows = read_rows(out)
    assert [(r["n"], r["buffer"], r["status"], r["iterations"]) for r in rows] == [
        ("10", "2", "ok", "3"), ("100", "2", "ok", "3")] * 2
    from harness.present.outputs import write_report
    text = write_report(out / "latest").read_text()
    assert "## double: a test workload" in text and "| 100 | 2 | doubler |" in text
    assert (out / "latest" / "plots" / "double_time.png").stat().st_size > 1000


def test_check_out_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "latest").write_text("")
    with pytest.raises(RunDirError, match="not a symlink"):
        rundir.check_out(tmp_path)


# ---- text cells a spreadsheet would run (OWASP), written escaped and read back exactly ----

FORMULAS = ["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=a", "''-b",
            "'plain", "plain", "-XX:+UseZGC"]


def test_formula_cells_are_escaped_and_read_back_exactly(tmp_path: Path) -> None:
    run = RunDir.create_new(tmp_path)
    rows = [Row(impl="fake-good", workload="chain", n=5, buffer=None, rep=i + 1,
                status="crashed", runtime=text, error=text, stderr_tail=text, variant=text,
                style=text, exit_code=-1, result=-7, other_cpu_frac=-0.5)
            for i, text in enumerate(FORMULAS)]
    for row in rows:
        run.append_run(row)
    run.append_samples(dataclasses.replace(rows[0], machine="=cmd"), [Sample(0.5, 1024, 1)])
    cells = [c for line in csv.reader(run.runs_path.open(newline="")) for c in line]
    assert not any(c[:1] in ("=", "+", "@", "\t", "\r") for c in cells)
    assert not any(c.startswith("-") and not c.lstrip("-").replace(".", "").isdigit()
                   for c in cells)
    assert "-1" in cells and "-7" in cells and "-0.5" in cells  # numbers stay numbers
    read = run.runs().rows
    assert [(r.runtime, r.error, r.stderr_tail, r.variant, r.style) for r in read] \
        == [(t, t, t, t, t) for t in FORMULAS]
    assert (read[0].exit_code, read[0].result, read[0].other_cpu_frac) == (-1, -7, -0.5)
    assert run.samples()[0].machine == "=cmd" and "'=cmd" in run.samples_path.read_text()
    # --resume's rewrite (here: the failed rows it plans again) keeps them exact too
    run.prepare_resume({schema.row_key(read[0])})
    assert [r.error for r in read_runs(run.retried_path).rows] == FORMULAS[:1]
    assert [r.error for r in run.runs().rows] == FORMULAS[1:]


def test_an_older_format_reads_its_cells_as_written(tmp_path: Path) -> None:
    """A version 3 file was written without the escaping: a cell starting
    with ' is the text itself; --resume rewrites it in this format."""
    out = tmp_path / "results"
    run = good_run(out)
    env = json.loads(run.joinpath("env.json").read_text())
    run.joinpath("env.json").write_text(json.dumps(env | {"format_version": 3}))
    text = run.joinpath("runs.csv").read_text().replace(",chain,", ",chain,", 1)
    lines = text.splitlines(keepends=True)
    lines[1] = lines[1].replace(",Fake (", ",'=Fake (", 1)
    run.joinpath("runs.csv").write_text("".join(lines))
    assert read_runs(run / "runs.csv").rows[0].runtime.startswith("'=Fake (")
    proc = harness(*RUN, "--impl", "fake-good", "--workload", "chain", "--n", "5,6",
                   "--out", str(out), "--resume")
    assert proc.returncode == 0, proc.stderr
    rows = read_runs(run / "runs.csv").rows
    assert rows[0].runtime.startswith("'=Fake (") and len(rows) == 2
    assert ",'''=Fake (" not in run.joinpath("runs.csv").read_text()
    assert ",''=Fake (" in run.joinpath("runs.csv").read_text()


# ---- one rule for ids: the registry's, which every reader accepts ----

def test_an_id_the_readers_refuse_is_refused_when_the_registry_is_loaded(tmp_path: Path) -> None:
    """`my impl` used to run, then lose its report for good; a language name
    with / left a run directory. Now each is one line, exit 2, nothing written."""
    cases = {"id": ('name = "mylang"', 'id = "my impl"'),
             "slash": ('name = "my/lang"', 'id = "fine"'),
             "newline": ('name = "my\\nlang"', 'id = "fine"'),
             "escape": ('name = "my\\u001b[2Jlang"', 'id = "fine"'),
             "markup": ('name = "mylang"', 'id = "fine"\nruntime = "<img src=x onerror=alert(1)>"'),
             "control": ('name = "mylang"', 'id = "fine"\nruntime = "Go\\u001b]0;owned\\u0007"'),
             "description": ('name = "mylang"', 'id = "fine"\ndescription = "a\\nb"')}
    for case, (language, impl) in cases.items():
        folder = tmp_path / case
        folder.mkdir()
        (folder / "impls.toml").write_text(
            f'[language]\n{language}\ndetect = ["{{python}}", "-c", "print(1)"]\n'
            'build = ["{python}", "-c", "pass"]\ntest = ["{python}", "-c", "pass"]\n'
            f'[[impl]]\n{impl}\nrun = ["{{python}}", "{FAKES}/fake/fake.py"]\n'
            'workloads = ["chain"]\n')
        out = folder / "results"
        proc = harness("run", "--registry", str(folder / "impls.toml"), "--impl", "all",
                       "--workload", "chain", "--n", "5", "--repeat", "1", "--out", str(out))
        assert proc.returncode == 2, (case, proc.stdout + proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, (case, proc.stderr)
        assert proc.stderr.startswith("harness: error:") and "\x1b" not in proc.stderr, case
        assert not out.exists(), case


# ---- rows no run writes: one line, exit 2, nothing written ----

@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return good_run(tmp_path_factory.mktemp("recorded") / "results")


def _break(run: Path, case: str) -> None:
    if case == "env-date":
        env = json.loads((run / "env.json").read_text())
        (run / "env.json").write_text(json.dumps(env | {"started_at": "yesterday"}))
        return
    with (run / "runs.csv").open(newline="") as f:
        header, row = list(csv.reader(f))
    column, value = {"empty-n": ("n", ""), "nul-impl": ("impl", "fake\x00good"),
                     "unknown-workload": ("workload", "chainz"),
                     "date": ("started_at", "2026-13-45T99:00:00")}[case]
    row[header.index(column)] = value
    with (run / "runs.csv").open("w", newline="") as f:
        csv.writer(f).writerows([header, row])


@pytest.mark.parametrize("case", ["empty-n", "nul-impl", "unknown-workload", "date", "env-date"])
@pytest.mark.parametrize("command", ["report", "compare", "resume"])
def test_rows_no_run_writes_are_refused_in_one_line(case: str, command: str, recorded: Path,
                                                     tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    good = shutil.copytree(recorded, tmp_path / "good")
    run = shutil.copytree(recorded, out / recorded.name)
    (out / "latest").symlink_to(run.name)
    _break(run, case)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    # one case in a real process, each command; the others in this one
    proc = _read_by(command, good, run, out, "5,6", None if case == "empty-n" else capsys)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error:"), proc.stderr
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_resume_of_another_suites_run_is_refused_before_anything_is_written(out: Path) -> None:
    """--resume continues the newest run only with its own suite: the default
    suite resumed onto a calibrate run would record both plans in one
    directory (and rewrite its settings)."""
    args = [*RUN, "--impl", "fake-good", "--workload", "chain", "--n", "5", "--out", str(out)]
    assert harness(*args).returncode == 0
    before = (out / "latest" / "runs.csv").read_bytes(), (out / "latest" / "env.json").read_bytes()
    proc = harness(*RUN, "--suite", "quick", "--impl", "fake-good", "--out", str(out), "--resume")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "is a run without a suite, not the quick suite's: resume it with its own options, "
        "or start a new run")
    assert ((out / "latest" / "runs.csv").read_bytes(),
            (out / "latest" / "env.json").read_bytes()) == before
