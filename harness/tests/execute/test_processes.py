"""The launcher under faults: bounded output, nothing left running whatever
dies first, and a SIGKILL told apart from the kernel's OOM killer.

Processes are found by a FAKE_TOKEN in their environment, so other sessions
running these tests on the same machine do not count; whatever a test leaves
(on today's code, or a regression) is killed at its end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.processes.launcher import STDOUT_CAP_BYTES, Outcome, run_process
from harness.core.registry import program_env

from ..conftest import FAKES, ROOT, gone_within, leftovers as _leftovers

FAKE = FAKES / "fake" / "fake.py"
MODES = ["cgroup", "process-tree"]  # the second is the fallback where cgroup v2 is not writable




@pytest.fixture(params=MODES)
def containment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "process-tree":
        monkeypatch.setenv("BENCH_LAUNCHER_CGROUP", "0")
    return str(request.param)


def fake(mode: str, token: str, timeout_s: float = 60) -> Outcome:
    return run_process([sys.executable, str(FAKE), "--mode", mode, "chain", "--n", "5"],
                       program_env({"FAKE_TOKEN": token}), "/", timeout_s, None, 0.01)


# ---- point 5: output is bounded ----

def test_stdout_past_the_cap_is_truncated_and_the_program_stopped(token: str) -> None:
    out = fake("flood", token)  # writes stdout forever
    assert out.stdout_truncated
    assert len(out.stdout.encode()) <= STDOUT_CAP_BYTES
    assert out.status == "exited" and out.signal == signal.SIGKILL, out.status
    assert out.oom_killed is False
    assert not _leftovers(token)


def test_normal_output_is_whole(token: str) -> None:
    out = fake("good", token)
    assert out.exit_code == 0 and not out.stdout_truncated
    assert json.loads(out.stdout)["result"] == 5


def test_stderr_keeps_its_last_20_lines(token: str) -> None:
    out = fake("stderr", token)  # 30 lines, exit 4
    assert out.exit_code == 4
    assert out.stderr_tail.splitlines() == [f"fake: line {i}" for i in range(11, 31)]


def test_stderr_read_is_bounded() -> None:
    code = ("import sys\nsys.stderr.write('z' * (8 << 20) + '\\n')\n"
            "sys.stderr.write('\\n'.join(f'end {i}' for i in range(25)) + '\\n')")
    out = run_process([sys.executable, "-c", code], program_env(), "/", 60, None, 0.01)
    assert out.stderr_tail.splitlines() == [f"end {i}" for i in range(5, 25)]
    assert len(out.stderr) < 64 << 10


# ---- point 6: the harness dying takes the launcher and the program with it ----

# A stand-in harness that dies of the signal, even where it was started
# with SIGHUP ignored (nohup, some CI runners).
PARENT = """
import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL)
sys.path.insert(0, {root!r})
from harness.processes.launcher import run_process
run_process([sys.executable, {fake!r}, "--mode", "escape", "chain", "--n", "1"],
            dict(os.environ), "/", 600, None, 0.01)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP])
def test_harness_killed_leaves_no_process_and_no_file(sig: int, containment: str, token: str,
                                                      tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, FAKE_TOKEN=token, TMPDIR=str(tmp))
    parent = subprocess.Popen([sys.executable, "-c", PARENT.format(root=str(ROOT), fake=str(FAKE))],
                              env=env, cwd=ROOT)
    deadline = time.monotonic() + 60
    # the parent, the launcher, the fake, its setsid child and its double-forked
    # grandchild; seen twice in a row, since a double fork's middle process
    # makes the count pass 5 for a moment before the grandchild is complete
    seen = 0
    while seen < 2 and time.monotonic() < deadline:
        seen = seen + 1 if len(_leftovers(token)) >= 5 else 0
        time.sleep(0.05)
    assert seen == 2, "the fake's tree never started"
    parent.send_signal(sig)
    parent.wait(timeout=30)
    assert not gone_within(token, 10.0)
    assert list(tmp.iterdir()) == []


# ---- point 7: descendants in their own session do not escape ----

def test_timeout_kills_descendants_in_their_own_session(containment: str, token: str) -> None:
    out = fake("escape", token, timeout_s=1.5)  # hangs after starting setsid descendants
    assert out.status == "timeout"
    if containment == "process-tree":
        assert out.containment == "process-tree"
    assert not _leftovers(token)


def test_descendants_left_behind_are_killed_when_the_program_exits(containment: str,
                                                                  token: str) -> None:
    out = fake("daemon", token)  # answers, exits 0, leaves two setsid descendants running
    assert out.exit_code == 0 and json.loads(out.stdout)["result"] == 5
    assert out.strays >= 2
    assert not _leftovers(token)


# ---- point 8: SIGKILL is an OOM kill only when the kernel says so ----

def test_a_sigkill_from_elsewhere_is_not_called_oom(token: str) -> None:
    out = fake("selfkill", token)
    assert out.signal == signal.SIGKILL and out.status == "exited"
    assert out.oom_killed is False


def test_max_rss_is_oom_status_not_the_oom_killer(token: str) -> None:
    out = run_process([sys.executable, str(FAKE), "--mode", "hog", "chain", "--n", "5"],
                      program_env({"FAKE_TOKEN": token}), "/", 60, 150 << 20, 0.01)
    assert out.status == "oom" and out.oom_killed is False
    assert not _leftovers(token)


def _memory_cgroup(name: str, limit: int) -> tuple[Path, Path] | None:
    """A new memory cgroup limited to `limit` bytes: (its directory, the file
    to join it), or None where none can be made (v2 without the memory
    controller delegated here, v1 not mounted, no permission)."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        own[controllers] = path
    mounts = [line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for m in mounts:
        fstype, opts = m[m.index("-") + 1], m[m.index("-") + 3]
        if fstype == "cgroup2" and "" in own:
            d = Path(m[4] + own[""].rstrip("/")) / name
            limit_file = "memory.max"
        elif fstype == "cgroup" and "memory" in opts.split(","):
            key = next((k for k in own if "memory" in k.split(",")), None)
            if key is None:
                continue
            d = Path(m[4] + own[key].rstrip("/")) / name
            limit_file = "memory.limit_in_bytes"
        else:
            continue
        try:
            d.mkdir()
        except OSError:
            continue
        try:
            (d / limit_file).write_text(str(limit))
            return d, d / "cgroup.procs"
        except OSError:
            d.rmdir()
    return None


HOG_PARENT = """
import dataclasses, json, os, sys
sys.path.insert(0, {root!r})
from harness.processes.launcher import run_process
out = run_process([sys.executable, {fake!r}, "--mode", "hog", "chain", "--n", "1"],
                  dict(os.environ), "/", 120, None, 0.01)
print(json.dumps({{"signal": out.signal, "status": out.status, "oom_killed": out.oom_killed}}))
"""


def test_the_kernels_oom_killer_is_named(token: str) -> None:
    made = _memory_cgroup(f"harness-test-oom.{os.getpid()}", 300 << 20)
    if made is None:
        pytest.skip("no memory cgroup can be made here to provoke the kernel's OOM killer")
    cgroup, procs = made
    try:
        script = PARENT_SH.format(procs=procs)
        proc = subprocess.run(["sh", "-c", script, "sh", sys.executable,
                               HOG_PARENT.format(root=str(ROOT), fake=str(FAKE))],
                              env=dict(os.environ, FAKE_TOKEN=token), capture_output=True,
                              text=True, timeout=180)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result == {"signal": 9, "status": "exited", "oom_killed": True}, proc.stderr
    finally:
        gone_within(token, 5)
        for _ in range(50):
            try:
                cgroup.rmdir()
                break
            except OSError:
                time.sleep(0.1)


PARENT_SH = 'echo $$ > {procs} && exec "$1" -c "$2"'


# ---- a SIGKILLed run's cache folder is removed by the next run ----

def test_a_sigkilled_runs_cache_is_swept_by_the_next_run(token: str, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), FAKE_TOKEN=token, TMPDIR=str(tmp))
    args = [sys.executable, "-m", "harness", "run", "--no-report", "--repeat", "1", "--impl",
            "fake-good", "--workload", "sleep", "--n", "1", "--out", str(tmp_path / "results")]
    proc = subprocess.Popen([*args, "--duration-ms", "60000"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(tmp.glob("harness-cache-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.wait(timeout=10)
    assert not gone_within(token, 10.0)
    assert list(tmp.glob("harness-cache-*")), "the run never made its cache"
    done = subprocess.run([*args, "--duration-ms", "10"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert list(tmp.iterdir()) == []


def test_only_caches_of_dead_harnesses_are_swept(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile
    from harness.execute.executor import sweep_caches
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    live = tmp_path / f"harness-cache-{os.getpid()}-abc"
    gone = tmp_path / f"harness-cache-{dead}-abc"
    other = tmp_path / "harness-cache-x"
    for folder in (live, gone, other):
        (folder / "deno").mkdir(parents=True)
    sweep_caches()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
