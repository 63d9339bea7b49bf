"""Nothing left running, whatever dies: the launcher itself killed or
stopped (the harness empties its program's tree and names the launcher in
the row), every command the harness starts (build, test, detect) killed with
the harness on every way out, and stderr bounded on disk.

Processes are found by a FAKE_TOKEN in their environment (conftest.leftovers),
so other sessions running these tests on the same machine do not count; the
test signals only processes it started, and kills what its own leave."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.processes.launcher import STDERR_TAIL_BYTES, start_process
from harness.core.registry import program_env

from ..conftest import FAKES, ROOT, cmdline, gone_within, leftovers

FAKE = FAKES / "fake" / "fake.py"




@pytest.fixture(params=["cgroup", "process-tree"])
def containment(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _wait_for(predicate, seconds: float = 60) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


# ---- point 1: the launcher killed or stopped ----

# A stand-in harness: runs the escaping fake (a setsid child, a double-forked
# grandchild) through the launcher and prints the Outcome and the row's error.
STAND_IN = """
import json, os, sys
sys.path.insert(0, {root!r})
from harness.processes.launcher import start_process
from harness.execute.executor import classify
with start_process([sys.executable, {fake!r}, "--mode", "escape", "chain", "--n", "1"],
                   dict(os.environ), "/", {timeout}, None, 0.01) as running:
    print(running.program_pid, flush=True)
    out = running.finish()
status, error, _ = classify(None, None, out)
print(json.dumps({{"failure": out.launcher_failure, "signal": out.signal, "status": status,
                  "error": error, "containment": out.containment}}), flush=True)
"""


def _launcher_of(parent: subprocess.Popen[str]) -> psutil.Process:
    kids = [c for c in psutil.Process(parent.pid).children() if c.name() == "launch"]
    assert len(kids) == 1, kids
    return kids[0]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP])
def test_a_killed_or_stopped_launcher_leaves_nothing_and_is_named(sig: int, containment: str,
                                                                token: str) -> None:
    timeout = 2 if sig == signal.SIGSTOP else 600
    env = dict(os.environ, FAKE_TOKEN=token,
               BENCH_LAUNCHER_CGROUP="1" if containment == "cgroup" else "0")
    parent = subprocess.Popen(
        [sys.executable, "-c", STAND_IN.format(root=str(ROOT), fake=str(FAKE), timeout=timeout)],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        parent.stdout.readline()  # the program has started
        # the stand-in, the launcher, the fake, its setsid child, its double-forked grandchild
        assert _wait_for(lambda: sum(1 for p in leftovers(token)
                                     if "fake-escaper" in " ".join(cmdline(p))) >= 2), \
            "the fake's tree never started"
        launcher = _launcher_of(parent)
        launcher.send_signal(sig)
        result = json.loads(parent.stdout.readline())
        assert parent.wait(timeout=60) == 0
    finally:
        if parent.poll() is None:
            parent.kill()
    # nothing of the tree is left once the harness's side has returned (killed
    # at once; up to 10 s for a loaded machine to finish them off)
    assert not gone_within(token, 10.0)
    if sig == signal.SIGKILL:
        assert result["failure"] == "was killed (SIGKILL)"
        assert result["error"] == ("the launcher was killed (SIGKILL); its program tree was "
                                   "killed by the harness")
    else:
        assert result["failure"].startswith("was stopped (SIGSTOP) past its 2 s timeout")
    assert result["status"] == "crashed" and result["signal"] is None
    assert result["containment"] == containment
    if containment == "cgroup":  # its cgroup was removed too
        from harness.processes.launcher import _own_cgroup
        own = _own_cgroup()
        assert own is not None and not list(Path(own).glob(f"harness-run.{parent.pid}.*"))


# ---- point 2: commands the harness starts die with it ----

REGISTRY = """[language]
name = "lingerer"
detect = ["{{python}}", "-c", "print('Python')"]
build = {build}
test = {test}

[[impl]]
id = "lingering"
run = ["{{python}}", "{fake}", "--mode", "good"]
workloads = ["chain"]
"""
LINGER = '["sh", "-c", "sleep 40 & sleep 40"]'
QUICK = '["{python}", "-c", "pass"]'


def _sleeps(token: str) -> list[psutil.Process]:
    found = []
    for p in leftovers(token):
        try:
            if p.name() == "sleep":
                found.append(p)
        except psutil.NoSuchProcess:
            continue
    return found


def _harness_until_sleeping(tmp_path: Path, token: str, args: list[str], build: str,
                            test: str) -> subprocess.Popen[str]:
    registry = tmp_path / "impls.toml"
    registry.write_text(REGISTRY.format(build=build, test=test, fake=FAKE))
    proc = subprocess.Popen([sys.executable, "-m", "harness", *args, "--impl", "lingering",
                             "--registry", str(registry)],
                            env=dict(os.environ, FAKE_TOKEN=token), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not _wait_for(lambda: len(_sleeps(token)) >= 2):
        proc.kill()
        pytest.fail(f"the command never started: {proc.communicate()}")
    return proc


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("command", ["run", "build"])
def test_a_build_dies_with_the_harness(command: str, sig: int, tmp_path: Path,
                                       token: str) -> None:
    args = [command] + (["--workload", "chain", "--n", "10", "--repeat", "1", "--no-report",
                         "--out", str(tmp_path / "results")] if command == "run" else [])
    proc = _harness_until_sleeping(tmp_path, token, args, LINGER, QUICK)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert not gone_within(token, 10.0)
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig, err
        assert len(err.strip().splitlines()) <= 2, err  # (run also says where it records)


def test_a_test_command_dies_with_the_harness_on_ctrl_c(tmp_path: Path, token: str) -> None:
    proc = _harness_until_sleeping(tmp_path, token, ["test"], QUICK, LINGER)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=90)  # a bound on a hang, wide for a loaded CI machine
    assert proc.returncode == 130, err
    assert not gone_within(token, 10.0)


def test_a_hung_detect_is_cut_with_its_children(tmp_path: Path, token: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.execute import toolchains
    monkeypatch.setattr(toolchains, "DETECT_TIMEOUT_S", 1)
    monkeypatch.setenv("FAKE_TOKEN", token)
    started = time.monotonic()
    tool = toolchains.detect(["sh", "-c", "sleep 40 & sleep 40"], tmp_path)
    assert not tool.present and "timed out after 1 s" in tool.reason
    assert time.monotonic() - started < 15
    assert not gone_within(token, 10.0)


# ---- point 10: stderr is bounded on disk ----

FLOOD_STDERR = """
import os
chunk = b"x" * (1 << 20)
for _ in range(1024):
    os.write(2, chunk)
os.write(2, b"\\n" + "\\n".join(f"end {i}" for i in range(25)).encode() + b"\\n")
"""


def test_a_gigabyte_of_stderr_takes_no_disk(token: str) -> None:
    biggest = 0
    with start_process([sys.executable, "-c", FLOOD_STDERR], program_env({"FAKE_TOKEN": token}),
                       "/", 300, None, 0.01) as running:
        assert running.program_pid is not None
        launcher = psutil.Process(running.program_pid).ppid()
        fd2 = f"/proc/{launcher}/fd/2"  # the launcher's stderr: the temporary file
        while running.running():
            try:
                st = os.stat(fd2)
                biggest = max(biggest, st.st_size, st.st_blocks * 512)
            except FileNotFoundError:
                break
            time.sleep(0.02)
        out = running.finish()
    assert out.exit_code == 0
    assert out.stderr_tail.splitlines() == [f"end {i}" for i in range(5, 25)]
    assert biggest <= 4 * STDERR_TAIL_BYTES, biggest


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_the_report_is_written_stops_it_in_one_line(sig: int, tmp_path: Path) -> None:
    """`run` is told to stop while `harness report` draws: the report process
    goes with it, the rows stay, and it says so (exit 128 + the signal)."""
    out = tmp_path / "results"
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES))
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--impl", "fake-good",
                             "--workload", "chain", "--n", "5", "--repeat", "1", "--out", str(out)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("done:"):
            break
    reports = []
    deadline = time.monotonic() + 30
    while not reports and time.monotonic() < deadline:  # the report process has started
        reports = [p for p in psutil.Process(proc.pid).children(recursive=True)
                   if "report" in cmdline(p)]
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert "interrupted while writing the report" in err and "Traceback" not in err

    def running(p: psutil.Process) -> bool:
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    assert _wait_for(lambda: not any(running(p) for p in reports), 10), reports
    assert len((out / "latest" / "runs.csv").read_text().splitlines()) == 2
