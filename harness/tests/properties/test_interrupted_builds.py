"""Interrupted and concurrent commit builds (issue 47): the harness killed
at each step of an `IMPL@git:REV` build (INT, TERM, KILL; alone and with
its process group), then the same command again, measures only a complete
tree and leaves the source repository's worktrees and status as a build
that was never interrupted does; two runs of one commit both measure it; a
SIGKILLed merge leaves nothing after the next merge.

Every process a test starts carries its FAKE_TOKEN: the `token` fixture
kills whatever of them is left, and each test checks none is."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from ..conftest import FAKES, ROOT, gone_within, harness, read_rows

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
# 20,000 small files: `git worktree add` takes 1.5 s here, time to be
# stopped at each of its steps, and no longer. A build killed after its
# checkout (at its install or its run: each found by its marker) is as well
# tested on a small tree, which each such case checks out in a moment.
FOLDERS, FILES = 200, 100
SMALL = 10, 20


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV}).stdout


def fake_source(repo: Path, folders: int, files: int) -> Path:
    """A git repository of a fake implementation's source (its slowdown)
    and folders × files small files."""
    repo.mkdir()
    (repo / "slowdown").write_text("1.5")
    for i in range(folders):
        (repo / f"d{i}").mkdir()
        for j in range(files):
            (repo / f"d{i}" / f"f{j}.txt").write_text(f"{i} {j}\n" * 20)
    git(repo, "init", "-q")
    git(repo, "config", "gc.auto", "0")  # no background gc holding its own lock files
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fake source")
    return repo


def tracked(repo: Path) -> int:
    """The source's f*.txt files, as a whole checkout of it holds them."""
    return sum(name.endswith(".txt") for name in git(repo, "ls-files").splitlines())


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A source big enough that checking it out takes over a second."""
    return fake_source(tmp_path_factory.mktemp("big") / "src", FOLDERS, FILES)


@pytest.fixture(scope="module")
def small_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A source whose checkout is quick: for the steps after it."""
    return fake_source(tmp_path_factory.mktemp("small") / "src", *SMALL)


def state(repo: Path) -> tuple[str, str, list[str]]:
    """What a user sees of their repository: its worktrees, its status, and
    any lock file git left in its metadata."""
    locks = sorted(str(p.relative_to(repo)) for p in (repo / ".git").rglob("*.lock"))
    return git(repo, "worktree", "list", "--porcelain"), git(repo, "status", "--porcelain"), locks


def command(repo: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "harness", "run", "--impl", "fake-releases@git:HEAD",
            "--source", str(repo), "--workload", "chain", "--n", "5", "--repeat", "1",
            "--no-report", "--out", str(out)]


def env_for(versions: Path, token: str) -> dict[str, str]:
    return dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), BENCH_VERSIONS_DIR=str(versions),
                FAKE_TOKEN=token)


def wait_for(ready: Callable[[], bool], proc: subprocess.Popen, limit_s: float = 120) -> bool:
    """Poll until ready() (True) or the process ended first (False)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if ready():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.002)
    raise AssertionError("the step was never reached")


def checking_out(repo: Path) -> Callable[[], bool]:
    """`git worktree add` has begun: its record is in .git/worktrees."""
    records = repo / ".git" / "worktrees"
    return lambda: records.is_dir() and any(records.iterdir())


def checked_out(versions: Path) -> Callable[[], bool]:
    """The checkout finished (its marker written): the install comes next."""
    return lambda: any((versions / "worktrees").glob("*.complete"))


def measuring(versions: Path) -> Callable[[], bool]:
    """The build is done (its marker written): the run comes next."""
    return lambda: any(versions.glob("fake-releases/*/.installed"))


STEPS = {"checkout": lambda repo, versions: checking_out(repo),
         "install": lambda repo, versions: checked_out(versions),
         "measure": lambda repo, versions: measuring(versions)}
# every step, every signal, the harness alone and its process group
CASES = [(step, sig, group) for step in STEPS
         for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL) for group in (False, True)]


@pytest.mark.parametrize("step,sig,group", CASES,
                         ids=[f"{s}-{g.name}-{'group' if p else 'alone'}" for s, g, p in CASES])
def test_a_commit_build_killed_at_each_step_is_redone_and_leaves_the_repository_as_it_was(
        request: pytest.FixtureRequest, tmp_path: Path, token: str, step: str,
        sig: signal.Signals, group: bool) -> None:
    source: Path = request.getfixturevalue("source" if step == "checkout" else "small_source")
    before = state(source)
    versions, out = tmp_path / "versions", tmp_path / "results"
    proc = subprocess.Popen(command(source, out), cwd=ROOT, env=env_for(versions, token),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        reached = wait_for(STEPS[step](source, versions), proc)
        if reached:
            os.killpg(proc.pid, sig) if group else os.kill(proc.pid, sig)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert reached, f"the run ended before the {step} step: {proc.stderr.read() if proc.stderr else ''}"
    assert not gone_within(token, 5), "a process of the killed build is still running"

    again = subprocess.run(command(source, out), cwd=ROOT, env=env_for(versions, token),
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    rows = [r for r in read_rows(out) if r["status"] == "ok"]
    assert rows and all(r["impl"].startswith("fake-releases@git:") for r in rows)
    (tree,) = [p for p in (versions / "worktrees").iterdir() if p.is_dir()]
    # the whole tree was measured: git finds nothing missing or changed in it
    assert git(tree, "status", "--porcelain") == ""
    assert sum(1 for _ in tree.rglob("f*.txt")) == tracked(source) > 0
    listed, status, locks = state(source)
    assert status == before[1] and locks == []
    assert "locked" not in listed and "prunable" not in listed
    assert listed.count("worktree ") == before[0].count("worktree ") + 1
    git(source, "worktree", "remove", "--force", str(tree))  # the next case starts as this one did
    assert state(source) == before


def test_a_commit_build_removed_by_make_clean_is_made_again(small_source: Path, tmp_path: Path,
                                                           token: str) -> None:
    """`make clean` removes .versions: the source repository still lists the
    worktree, and the next build takes its place instead of failing."""
    source = small_source
    before = state(source)
    versions, out = tmp_path / "versions", tmp_path / "results"
    for _ in range(2):
        done = subprocess.run(command(source, out), cwd=ROOT, env=env_for(versions, token),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        (tree,) = [p for p in (versions / "worktrees").iterdir() if p.is_dir()]
        subprocess.run(["rm", "-rf", str(versions)], check=True)
    listed, status, locks = state(source)
    assert status == before[1] and locks == [] and listed.count("worktree ") == 2
    git(source, "worktree", "prune")
    assert state(source) == before
    assert not gone_within(token, 5)


def test_two_concurrent_runs_of_one_commit_both_measure_it(source: Path, tmp_path: Path,
                                                           token: str) -> None:
    versions = tmp_path / "versions"
    outs = [tmp_path / "a", tmp_path / "b"]
    procs = [subprocess.Popen(command(source, out), cwd=ROOT, env=env_for(versions, token),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for out in outs]
    said = [p.communicate(timeout=300) for p in procs]
    for p, (stdout, stderr) in zip(procs, said):
        assert p.returncode == 0, stderr
    for out in outs:
        assert [r["status"] for r in read_rows(out)] == ["ok"]
    assert sum("using the build in" in stdout for stdout, _ in said) == 1  # built once
    (tree,) = [p for p in (versions / "worktrees").iterdir() if p.is_dir()]
    git(source, "worktree", "remove", "--force", str(tree))
    assert not gone_within(token, 5)


def test_a_sigkilled_merge_leaves_nothing_after_the_next_merge(tmp_path: Path,
                                                               token: str) -> None:
    runs = []
    for name in ("a", "b"):
        time.sleep(1.1 if runs else 0)  # a run's id is its second: two in one would be one run
        out = tmp_path / name
        done = harness("run", "--no-build", "--impl", "fake-good", "--workload", "chain",
                       "--n", "5", "--repeat", "2", "--no-report", "--out", str(out))
        assert done.returncode == 0, done.stderr
        runs.append(str(out / "latest"))
    merged = tmp_path / "merged"
    # killed while it writes aside: what the kill leaves depends on how far
    # it got (and on the process watching its children); a staging folder of
    # a dead writer is planted as well, so that the sweep is always tested
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "merge", *runs, "--out", str(merged)],
        cwd=ROOT, env=dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), FAKE_TOKEN=token),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: any(merged.glob(".writing-*")), proc)
    proc.kill()
    proc.wait()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    planted = merged / f".writing-{dead}-20990101-000000-abcdef"
    planted.mkdir(parents=True, exist_ok=True)
    (planted / "runs.csv").write_text("partial\n")
    done = harness("merge", *runs, "--out", str(merged), "--no-report")
    assert done.returncode == 0, done.stderr
    left = sorted(p.name for p in merged.iterdir())
    assert not [n for n in left if n.startswith(".writing-")], left
    # the merge's run directory and latest, nothing else: no empty reserved folder
    assert len(left) == 2 and "latest" in left
    assert (merged / "latest" / "runs.csv").is_file()
