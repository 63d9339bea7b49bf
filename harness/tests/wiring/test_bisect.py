"""bisect and the release lists under misuse: a bisect owns its run
directory whatever else writes to --out, continues with --resume, bisects
a variant, and refuses in one line (exit 2, nothing written) what it cannot
search: an unreachable list, equal ends, a control character, a release
too long to be one. No network: releases come from the fakes' commands."""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness import UsageError
from harness.core.variants import MAX_RELEASE, parse, release_key

from ..conftest import FAKES, ROOT, fake_registry, harness

BISECT = ["--good", "1.0.0", "--bad", "1.7.0", "--workload", "chain", "--n", "5",
          "--figure", "warm_iter_s"]


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def versions_env(tmp_path: Path) -> dict[str, str]:
    """Releases built, and lists cached, under tmp_path."""
    return {"BENCH_VERSIONS_DIR": str(tmp_path / "versions")}


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """The harness in the background, its output unbuffered line by line."""
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), PYTHONUNBUFFERED="1",
               **versions_env(tmp_path))
    return subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_dir_of(first_line: str) -> Path:
    """The run directory a bisect names in its first line."""
    m = re.fullmatch(r"bisect: (?:recording into|continuing) (\S+)", first_line.strip())
    assert m, f"the first line names no run directory: {first_line!r}"
    return Path(m.group(1))


def reps(run: Path) -> Counter[tuple[str, str]]:
    """How often each (impl, rep) is in runs.csv: 1 each, in one bisect's directory."""
    with (run / "runs.csv").open(newline="") as f:
        return Counter((r["impl"], r["rep"]) for r in csv.DictReader(f))


def one_line_refusal(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), proc.stderr
    return lines[0]


# --- 5: one run directory, owned ------------------------------------------------

def test_a_bisect_owns_its_run_directory_whatever_else_writes_to_out(tmp_path: Path) -> None:
    out = tmp_path / "results"
    first = start(tmp_path, "bisect", "fake-releases", *BISECT, "--repeat", "6", "--out", str(out))
    assert first.stdout is not None
    mine = run_dir_of(first.stdout.readline())
    # while it measures: a second bisect into the same --out, and one that
    # asks to continue the first's directory
    second = start(tmp_path, "bisect", "fake-releases", *BISECT, "--out", str(out))
    intruder = harness("bisect", "fake-releases", *BISECT, "--out", str(out), "--resume", str(mine),
                       extra_env=versions_env(tmp_path))
    out1, err1 = first.communicate(timeout=300)
    out2, err2 = second.communicate(timeout=300)
    assert "in use by another run" in one_line_refusal(intruder)
    assert "[1/" not in intruder.stdout  # refused before measuring
    assert first.returncode == 0, err1
    assert second.returncode == 0, err2
    assert "first release where warm iter changed: fake-releases@1.4.0 " in out1
    assert "first release where warm iter changed: fake-releases@1.4.0 " in out2
    theirs = run_dir_of(out2.splitlines()[0])
    assert theirs != mine
    for run, runs in ((mine, 6), (theirs, 4)):
        counted = reps(run)
        assert set(counted.values()) == {1}  # no row twice, none of the other's
        assert {impl for impl, _ in counted} >= {"fake-releases@1.0.0", "fake-releases@1.7.0",
                                                   "fake-releases@1.4.0"}
        assert Counter(impl for impl, _ in counted)["fake-releases@1.0.0"] == runs
        assert f"rows: {run / 'runs.csv'}" in (out1 if run == mine else out2)


# --- 11: an interrupted bisect continues ------------------------------------------

def test_an_interrupted_bisect_continues_with_its_resume(tmp_path: Path) -> None:
    out = tmp_path / "results"
    args = ["bisect", "fake-releases", *BISECT, "--out", str(out)]
    first = start(tmp_path, *args)
    assert first.stdout is not None
    mine = run_dir_of(first.stdout.readline())
    for line in first.stdout:  # the ends are measured: stop it at the first step between
        if re.match(r"bisect: .* measuring 1\.\d\.0 ", line):
            break
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    assert f"continue with the same bisect command and --resume {mine}" in err
    kept = reps(mine)
    assert Counter(impl for impl, _ in kept)["fake-releases@1.0.0"] == 4

    proc = harness(*args, "--resume", str(mine), extra_env=versions_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"bisect: continuing {mine}"
    assert "first release where warm iter changed: fake-releases@1.4.0 " in proc.stdout
    again = reps(mine)
    assert set(again.values()) == {1} and set(kept) <= set(again)  # kept, none run twice
    assert "fake-releases@1.0.0 chain N=5 rep" not in proc.stdout  # the ends were not run again
    assert [p.name for p in out.iterdir()] == [mine.parent.name]


# --- 6: a variant ---------------------------------------------------------------

def test_bisecting_a_variant_finds_the_release(tmp_path: Path) -> None:
    proc = harness("bisect", "fake-releases[FAKE_VARIANT=on]", *BISECT,
                   "--out", str(tmp_path / "results"), extra_env=versions_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "first release where warm iter changed: fake-releases@1.4.0[FAKE_VARIANT=on] " \
        in proc.stdout
    run = run_dir_of(proc.stdout.splitlines()[0])
    assert {impl for impl, _ in reps(run)} >= {"fake-releases@1.0.0[FAKE_VARIANT=on]",
                                               "fake-releases@1.7.0[FAKE_VARIANT=on]"}
    assert "--baseline 'fake-releases@1.0.0[FAKE_VARIANT=on]'" in proc.stdout


PROXY = "fake-releases[FAKE_PROXY=https://ci:hunter2xyz@proxy.example.com]"


def test_a_variant_with_a_credential_is_bisected_under_its_masked_label(tmp_path: Path) -> None:
    proc = harness("bisect", PROXY, *BISECT, "--out", str(tmp_path / "results"),
                   extra_env=versions_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "first release where warm iter changed: fake-releases@1.4.0[FAKE_PROXY=https://" \
        in proc.stdout
    run = run_dir_of(proc.stdout.splitlines()[0])
    assert "hunter2xyz" not in proc.stdout + (run / "runs.csv").read_text()


def test_each_step_gives_the_program_the_settings_as_typed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import bisect, cli
    from harness.releases import versions
    monkeypatch.setattr(versions, "INDEX_DIR", tmp_path / "index")
    asked: list[list[str]] = []

    def run_suite(s: Any, out: Path, **_: Any) -> int:  # records nothing: no ok run follows
        asked.append(s.impls)
        return 0

    monkeypatch.setattr(bisect, "run_suite", run_suite)
    assert cli.main(["bisect", PROXY, *BISECT, "--out", str(tmp_path / "results")]) == 1
    typed = PROXY.replace("fake-releases[", "fake-releases@{}[")
    assert asked == [[typed.format("1.0.0"), typed.format("1.7.0")]]


def test_every_spelling_of_a_configuration_reads_back_as_its_label() -> None:
    for text in ("fake[X=1]@1.0.0", "fake@1.0.0[X=1]", " fake@1.0.0[X=1] "):
        assert parse(text).label == "fake@1.0.0[X=1]"
    assert parse("fake[X=1]").at("1.4.0").label == "fake@1.4.0[X=1]"


# --- 9 and 10: refused in one line, before anything is written ----------------------

@pytest.mark.parametrize("args, message", [
    (["fake-releases", "--good", "1.4.0", "--bad", "1.4.0"], "--good and --bad are both 1.4.0"),
    (["fake-releases@1.4.0", "--good", "1.0.0", "--bad", "1.7.0"], "names a release"),
    (["fake-releases[X=a\nb]", "--good", "1.0.0", "--bad", "1.7.0"], "control character"),
    (["fake-releases[X=\x1b[2J]", "--good", "1.0.0", "--bad", "1.7.0"], "control character"),
    (["fake-releases[-x\x07]", "--good", "1.0.0", "--bad", "1.7.0"], "control character"),
    (["fake-releases", "--good", "1.0.0\n", "--bad", "1.7.0"], "is not a release"),
])
def test_bisect_refuses_before_measuring(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "results"
    proc = harness("bisect", *args, "--workload", "chain", "--n", "5", "--out", str(out),
                   extra_env=versions_env(tmp_path))
    assert message in one_line_refusal(proc)
    assert "\x1b" not in proc.stderr
    assert not out.exists()


def test_bisect_resume_takes_only_a_bisects_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "5", "--repeat", "1",
                   "--out", str(out), "--no-report")
    assert proc.returncode == 0, proc.stderr
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    for where in (out / "latest", tmp_path / "nowhere"):
        proc = harness("bisect", "fake-releases", *BISECT, "--resume", str(where),
                       extra_env=versions_env(tmp_path))
        one_line_refusal(proc)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def listing(tmp_path: Path, code: str) -> Path:
    """A registry whose one implementation's releases come from this Python code."""
    return fake_registry(tmp_path, "listed", "listed-a", impl_extra=f"""[impl.versions]
list = ["{{python}}", "-c", {code!r}]
install = ["{{python}}", "-c", "pass"]
run = ["{{python}}", "{FAKES / 'fake'}/fake.py", "--mode", "good"]
""")


def test_an_unreachable_release_list_is_one_line_for_bisect(tmp_path: Path) -> None:
    registry = listing(tmp_path, "import sys; sys.exit('no route to host')")
    out = tmp_path / "results"
    proc = harness("bisect", "listed-a", "--good", "1.0.0", "--bad", "1.1.0", "--workload", "chain",
                   "--n", "5", "--registry", str(registry), "--out", str(out),
                   extra_env=versions_env(tmp_path))
    assert "cannot list the releases to search" in one_line_refusal(proc)
    assert "no route to host" in proc.stderr
    assert not out.exists()


def test_a_listed_release_of_5000_digits_is_no_traceback(tmp_path: Path) -> None:
    huge = "9" * 5000
    registry = listing(tmp_path, f"print('1.0.0 1.1.0 {huge}')")
    env = versions_env(tmp_path)
    out = tmp_path / "results"
    proc = harness("list", "--versions", "listed-a", "--registry", str(registry), extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].split() == ["1.1.0", "1.0.0"]  # not a release: left out
    proc = harness("run", "--impl", "listed-a@1.1.0", "--registry", str(registry), "--workload",
                   "chain", "--n", "5", "--dry-run", "--out", str(out), extra_env=env)
    assert proc.returncode == 0, proc.stderr
    for args in (["run", "--impl", f"listed-a@{huge}", "--workload", "chain", "--dry-run"],
                 ["bisect", "listed-a", "--good", "1.0.0", "--bad", huge, "--workload", "chain"]):
        proc = harness(*args, "--n", "5", "--registry", str(registry), "--out", str(out),
                       extra_env=env)
        line = one_line_refusal(proc)
        assert len(line) < 200
    assert not out.exists()


def test_release_order_takes_numbers_of_any_length() -> None:
    huge = "9" * 5000
    assert sorted([huge, "10.0", "9.0", "09.1", "1.0.0-rc.1", "1.0.0"], key=release_key) == \
        ["1.0.0-rc.1", "1.0.0", "9.0", "09.1", "10.0", huge]
    with pytest.raises(UsageError, match=f"at most {MAX_RELEASE} characters"):
        parse(f"go@{huge}")


# --- 10 and 11: list --versions ----------------------------------------------------

def test_the_hint_for_a_missing_release_is_a_command_that_works(tmp_path: Path) -> None:
    env = versions_env(tmp_path)
    proc = harness("run", "--impl", "fake-releases@3.0.0", "--workload", "chain", "--n", "5",
                   "--out", str(tmp_path / "results"), extra_env=env)
    hint = re.search(r"`(list --versions [^`]+)`", one_line_refusal(proc))
    assert hint, proc.stderr
    proc = harness(*hint.group(1).split(), extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("fake-releases: 9 releases")
    proc = harness("list", "fake-good", "--impl", "fake-good")
    assert "name the implementations once" in one_line_refusal(proc)


def test_list_versions_does_not_ignore_a_named_release(tmp_path: Path) -> None:
    env = versions_env(tmp_path)
    proc = harness("list", "--versions", "--impl", "fake-releases@0.0.0", extra_env=env)
    assert "no release 0.0.0" in one_line_refusal(proc)
    assert proc.stdout == ""
    proc = harness("list", "--versions", "fake-releases@1.4.0", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "fake-releases@1.4.0: a release of fake-releases's release list (newest: 1.7.0)"]
