"""The Makefile passes each value to the harness as one argument: hostile
values run nothing, and paths with spaces or quotes stay whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..conftest import FAKES, ROOT, read_rows

# Stands in for .venv/bin/python (VPY=): records its arguments and the
# variables the recipe gave it, runs nothing.
RECORDER = """#!{python}
import json, os, sys
with open(os.environ["ARGV_OUT"], "w") as f:
    json.dump({{"argv": sys.argv[1:], "LANG": os.environ.get("LANG"), "N": os.environ.get("N")}}, f)
"""


def make(*args: str, tmp_path: Path) -> dict:
    recorder = tmp_path / "python"
    recorder.write_text(RECORDER.format(python=sys.executable))
    recorder.chmod(0o755)
    record = tmp_path / "argv.json"
    env = dict(os.environ, ARGV_OUT=str(record), LANG="C.UTF-8")
    # -o: the venv's set-up is not what is tested here, never remade
    proc = subprocess.run(["make", "-s", "-o", ".venv/.installed", "-o", ".venv/.installed-test",
                           f"VPY={recorder}", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(record.read_text())


def test_documented_form_is_unchanged(tmp_path: Path) -> None:
    got = make("bench", "LANG=go", "N=1000000", tmp_path=tmp_path)
    assert got["argv"] == ["-m", "harness", "run", "--impl", "go", "--n", "1000000"]
    assert got["LANG"] != "go" and got["N"] is None  # neither reaches the programs


def test_hostile_values_are_single_arguments_and_run_nothing(tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    values = {
        "N": f"1;touch {mark}-n",
        "WORKLOAD": f"chain$(shell touch {mark}-workload)",
        "BUF": f"`touch {mark}-buf`",
        "REPEAT": f"$$(touch {mark}-repeat)",
        "OUT": f"{tmp_path}/my results/it's \"here\" $HOME",
    }
    got = make("bench", "IMPL=fake-good", *(f"{k}={v}" for k, v in values.items()),
               tmp_path=tmp_path)
    assert got["argv"] == ["-m", "harness", "run", "--impl", "fake-good", "--n", values["N"],
                           "--workload", values["WORKLOAD"], "--buffer", values["BUF"],
                           "--repeat", values["REPEAT"], "--out", values["OUT"]]
    assert not list(tmp_path.glob("ran*"))
    got = make("report", f"OUT={values['OUT']}", tmp_path=tmp_path)
    assert got["argv"] == ["-m", "harness", "report", values["OUT"] + "/latest"]
    got = make("build", f"LANG=go;touch {mark}-lang", tmp_path=tmp_path)
    assert got["argv"] == ["-m", "harness", "build", "--impl", f"go;touch {mark}-lang"]
    assert not list(tmp_path.glob("ran*"))


def test_an_out_with_spaces_and_quotes_is_one_directory(tmp_path: Path) -> None:
    out = tmp_path / "my results" / "it's here"
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES))
    proc = subprocess.run(["make", "-s", "bench", "LANG=fake-good", "N=4", "WORKLOAD=chain",
                           "REPEAT=1", f"OUT={out}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["status"] for r in read_rows(out)] == ["ok"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my results"]


def test_duration_registry_and_args_are_single_arguments(tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    got = make("bench", "LANG=go", "DURATION=50", f"REGISTRY=a/impls.toml {tmp_path}/it's.toml",
               f"ARGS=--cpus 1,2 --timeout 60 $(shell touch {mark}-a) `touch {mark}-b` \"q\" x;y",
               tmp_path=tmp_path)
    assert got["argv"] == ["-m", "harness", "run", "--impl", "go", "--n", "1000",
                           "--duration-ms", "50", "--registry", "a/impls.toml",
                           "--registry", f"{tmp_path}/it's.toml",
                           "--cpus", "1,2", "--timeout", "60", "$(shell", "touch", f"{mark}-a)",
                           "`touch", f"{mark}-b`", '"q"', "x;y"]
    assert not list(tmp_path.glob("ran*"))
    got = make("build", "LANG=go", "REGISTRY=mine/impls.toml", tmp_path=tmp_path)
    assert got["argv"] == ["-m", "harness", "build", "--impl", "go", "--registry", "mine/impls.toml"]


def dry(*args: str) -> list[str]:
    """The commands make would run (make -n), the venv's set-up left out."""
    # --no-print-directory: under `make test` (MAKELEVEL set) make -n would print
    # "make[1]: Entering directory" lines around the commands
    proc = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed",
                           "-o", ".venv/.installed-test", *args],
                          cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_make_test_with_lang_runs_only_that_languages_tests() -> None:
    assert [line.split() for line in dry("test", "LANG=go")] == [
        [".venv/bin/python", "-m", "pytest", "-q", "-n", "auto", "--dist", "loadgroup", "--durations=25",
         "-p", "harness.tests.select_impl", "--impl", "'go'"],
        [".venv/bin/python", "-m", "harness", "test", "--impl", "'go'"]]
    assert [line.split() for line in dry("test")] == [
        [".venv/bin/python", "-m", "pytest", "-q", "-n", "auto", "--dist", "loadgroup", "--durations=25"],
        [".venv/bin/python", "-m", "harness", "test", "--impl", "'all'"]]


def test_the_selection_keeps_only_the_tests_of_the_language() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only",
                           "-p", "harness.tests.select_impl", "--impl", "go"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    selected = [line for line in proc.stdout.splitlines() if "::" in line]
    assert selected and all(line.endswith("[go]") for line in selected), selected
    files = {line.split("::")[0] for line in selected}
    assert {"harness/tests/wiring/test_conformance.py", "harness/tests/wiring/test_smoke.py"} <= files
