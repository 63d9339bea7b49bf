"""The run format: every version this harness has written is read by
today's code from a committed run directory (pyperf's practice), the
version is recorded, a newer one is refused in one line, and a key outside
the format is an error, not a figure silently dropped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.core import schema
from harness.record import rundir
from harness.analyse.analysis import analyse
from harness.record.rundir import RunDir, RunDirError, open_run_dir
from harness.core.schema import (ENV_KEYS, FORMAT_VERSION, FORMATS, RUN_NAMES, SAMPLE_NAMES, Env,
                                 Row)
from harness.core.workloads import WORKLOADS

from ..conftest import harness, harness_main

FORMATS_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
DOC = Path(__file__).resolve().parents[3] / "docs" / "data-format.md"


def copy_of(version: int, tmp_path: Path) -> RunDir:
    path = tmp_path / f"v{version}"
    shutil.copytree(FORMATS_DIR / f"v{version}", path)
    return RunDir(path)


def test_a_fixture_for_every_version() -> None:
    assert sorted((p.name for p in FORMATS_DIR.iterdir()), key=lambda name: int(name[1:])) \
        == [f"v{v}" for v in FORMATS]
    assert FORMATS[-1] == FORMAT_VERSION


@pytest.mark.parametrize("version", FORMATS)
def test_every_version_is_read_and_analysed(version: int, tmp_path: Path) -> None:
    run = copy_of(version, tmp_path)
    assert rundir.format_version(run.env(), run.env_path) == version
    table = run.runs()
    assert table.torn is None and len(table.rows) > 10
    assert all(isinstance(r.status, schema.Status) for r in table.rows)  # read as members
    assert run.samples() and analyse(run).groups


@pytest.mark.parametrize("version", FORMATS)
def test_report_and_compare_read_every_version(version: int, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Today's format in a real process; the older ones in the test's
    (conftest.harness_main: report and compare start no program)."""
    run = copy_of(version, tmp_path)
    for args in (["report", str(run.path)],
                 ["compare", str(run.path), str(FORMATS_DIR / f"v{FORMAT_VERSION}")]):
        proc = harness(*args) if version == FORMAT_VERSION else harness_main(capsys, *args)
        assert proc.returncode == 0, proc.stderr


def test_the_format_does_not_depend_on_the_workload_declarations(tmp_path: Path) -> None:
    """Removing a workload (here every one but chain) leaves older runs,
    with that workload's own columns, readable."""
    # restored whole, in its order: monkeypatch.delitem would put the
    # workloads back at the end, and the reading order is the declaration's
    saved = dict(WORKLOADS)
    try:
        for name in [w for w in WORKLOADS if w != "chain"]:
            del WORKLOADS[name]
        for version in FORMATS:
            assert copy_of(version, tmp_path / str(version)).runs().rows
    finally:
        WORKLOADS.clear()
        WORKLOADS.update(saved)


def test_every_declared_column_is_in_the_format() -> None:
    """A workload or dimension that writes a column the format lacks needs a
    new format version (and a fixture): this test says so first."""
    for w in WORKLOADS.values():
        assert {name for name, _ in w.row_columns} <= set(RUN_NAMES), w.name
        assert {d.name for d in w.dimensions} <= set(RUN_NAMES) & set(SAMPLE_NAMES), w.name


def test_the_format_is_documented() -> None:
    """docs/data-format.md names every column and key of this version."""
    text = DOC.read_text()
    documented = {name.strip("` ") for line in text.splitlines() if line.startswith("| ")
                  for name in line.split("|")[1].split(",")}
    missing = (set(RUN_NAMES) | set(SAMPLE_NAMES) | ENV_KEYS) - documented
    assert not missing, f"not in docs/data-format.md: {sorted(missing)}"
    assert f"format_version: {FORMAT_VERSION}" in text or f"Version {FORMAT_VERSION}" in text


def test_a_new_run_records_its_version(tmp_path: Path) -> None:
    run = RunDir.create_new(tmp_path)
    assert json.loads(run.env_path.read_text())["format_version"] == FORMAT_VERSION


def test_a_newer_version_is_refused_in_one_line(tmp_path: Path) -> None:
    run = copy_of(FORMAT_VERSION, tmp_path)
    env = json.loads(run.env_path.read_text())
    env["format_version"] = FORMAT_VERSION + 1
    run.env_path.write_text(json.dumps(env))
    with pytest.raises(RunDirError, match="newer harness"):
        run.runs()
    proc = harness("report", str(run.path))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "newer harness" in proc.stderr


@pytest.mark.parametrize("value", ["2", 0, None, True])
def test_a_malformed_version_is_refused(value: object, tmp_path: Path) -> None:
    run = copy_of(FORMAT_VERSION, tmp_path)
    env = json.loads(run.env_path.read_text())
    env["format_version"] = value
    run.env_path.write_text(json.dumps(env))
    with pytest.raises(RunDirError, match="format_version"):
        run.env()


def test_unknown_keys_are_errors_not_dropped(tmp_path: Path) -> None:
    run = copy_of(FORMAT_VERSION, tmp_path)
    # a figure the format has no column for: no Row holds it, and no dict is written
    with pytest.raises(TypeError, match="speed"):
        Row(impl="go", workload="chain", n=1, rep=9, status="ok", speed=3.0)
    with pytest.raises(TypeError, match="takes a Row"):
        run.append_run({"impl": "go", "workload": "chain", "n": 1, "buffer": None, "rep": 9,
                        "status": "ok", "speed": 3.0})
    with pytest.raises(ValueError, match="keys outside format"):
        run.write_env(Env(run.env().data | {"mood": "good"}))
    env = json.loads(run.env_path.read_text())
    run.env_path.write_text(json.dumps(env | {"mood": "good"}))
    with pytest.raises(RunDirError, match="unknown keys \\['mood'\\]"):
        open_run_dir(run.path).env()
    # A format 1 directory may hold keys of its time: they are read.
    old = copy_of(1, tmp_path)
    env = json.loads(old.env_path.read_text())
    old.env_path.write_text(json.dumps(env | {"mood": "good"}))
    assert old.env().data["mood"] == "good"


def test_a_version_2_header_must_be_whole(tmp_path: Path) -> None:
    run = copy_of(FORMAT_VERSION, tmp_path)
    lines = run.runs_path.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    drop = header.index("strays")
    cut = [",".join(c for i, c in enumerate(line.rstrip("\n").split(",")) if i != drop) + "\n"
           for line in lines[:1]]
    run.runs_path.write_text("".join(cut))
    with pytest.raises(RunDirError, match="missing columns \\['strays'\\]"):
        run.runs()


def test_resume_brings_a_version_1_directory_to_this_version(tmp_path: Path) -> None:
    """--resume on a format 1 run: its rows stay, its files are rewritten
    with whole headers and its env.json names this version."""
    out = tmp_path / "results"
    out.mkdir()
    run = copy_of(1, out)
    (out / "latest").symlink_to(run.path.name)
    before = run.runs().rows
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "5", "--repeat", "1",
                   "--out", str(out), "--resume", "--no-report")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(run.env_path.read_text())["format_version"] == FORMAT_VERSION
    rows = run.runs().rows
    assert rows[:len(before)] == before and rows[-1].impl == "fake-good"
    assert run.runs_path.read_text().splitlines()[0] == ",".join(RUN_NAMES)
