"""cluster/slurm-local.sh after an interrupted run: the daemons of an
earlier `up` still running while their folder was removed and made again
(their pid files gone or naming something else), and a port of the
cluster's held by a process that is not one of its daemons."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from ..conftest import SLURM_LOCAL
from .test_slurm import DAEMONS, cluster_lock, daemons_of, reap_daemons, slurm_here


def script(command: str, folder: Path, path: str | None = None
           ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BENCH_SLURM_DIR=str(folder), **({"PATH": path} if path else {}))
    return subprocess.run([str(SLURM_LOCAL), command], env=env, capture_output=True, text=True,
                          timeout=300)


def as_root(*command: str) -> None:
    subprocess.run([*([] if os.geteuid() == 0 else ["sudo", "-n"]), *command], check=True)


@pytest.fixture
def folder(pytestconfig: pytest.Config) -> Iterator[Path]:
    """A cluster folder of this test's own, short enough for munge's socket
    path (108 bytes at most), the cluster's lock held; `down` after it,
    which must leave none of the folder's daemons."""
    slurm_here(pytestconfig, "the slurm-local.sh tests")
    path = Path(f"/var/tmp/bench-slurm-test-{os.getpid()}")
    with cluster_lock():
        try:
            yield path
        finally:
            down = script("down", path)
            reap_daemons()
            assert down.returncode == 0, down.stderr
            assert daemons_of(path) == {}


def test_up_stops_the_daemons_an_interrupted_run_left_and_down_those_of_stale_pid_files(
        folder: Path) -> None:
    first = script("up", folder)
    assert first.returncode == 0, first.stderr
    left = daemons_of(folder)
    assert sorted(left.values()) == sorted(DAEMONS)
    # An interrupted run whose folder went (removed by hand, or by a down
    # that did not know its daemons): a new up makes it again, pid files
    # and all, while the old daemons hold the ports.
    as_root("rm", "-rf", str(folder))
    again = script("up", folder)
    reap_daemons()
    assert again.returncode == 0, again.stderr
    said = [line for line in again.stderr.splitlines() if "left running" in line]
    assert said == [f"slurm-local: stopped what an earlier up of {folder} left running: "
                    + ", ".join(f"{name} (pid {pid})" for name in ("slurmd", "slurmctld", "munged")
                                for pid, of in left.items() if of == name)], again.stderr
    now = daemons_of(folder)
    assert sorted(now.values()) == sorted(DAEMONS) and not set(now) & set(left)
    idle = subprocess.run(["sinfo", "--noheader", "--states=idle", "--format=%D"],
                          env=dict(os.environ, SLURM_CONF=f"{folder}/slurm.conf"),
                          capture_output=True, text=True, timeout=30)
    assert idle.stdout.strip() == "1", idle
    # pid files that name another process, or none: down finds the
    # daemons by their command line, and leaves that process alone
    other = subprocess.Popen(["sleep", "300"])
    try:
        for name in ("slurmctld", "slurmd"):
            as_root("sh", "-c", f"echo {other.pid} > {folder}/{name}.pid")
        as_root("rm", f"{folder}/munged.pid")
        down = script("down", folder)
        reap_daemons()
        assert down.returncode == 0, down.stderr
        assert "no daemon or job of it left" in down.stderr
        assert daemons_of(folder) == {} and other.poll() is None and not folder.exists()
    finally:
        other.kill()
        other.wait()


def without_ss(bin_dir: Path) -> str:
    """A PATH of every command on this one but ss: the script's fallback
    reads /proc for the port's holder."""
    bin_dir.mkdir()
    for entry in os.environ["PATH"].split(os.pathsep):
        for tool in Path(entry).glob("*") if Path(entry).is_dir() else ():
            if tool.name != "ss" and not (bin_dir / tool.name).is_symlink():
                (bin_dir / tool.name).symlink_to(tool)
    return str(bin_dir)


@pytest.mark.parametrize("ss", [True, False], ids=["ss", "proc"])
def test_up_refuses_a_port_held_by_another_process_and_starts_nothing(
        folder: Path, tmp_path: Path, ss: bool) -> None:
    if not ss and os.geteuid() != 0:
        pytest.skip("sudo sets its own PATH, with ss on it: run as root to test without ss")
    listen = tmp_path / "listen.py"
    listen.write_text("import socket, sys\n"
                      "s = socket.socket()\n"
                      "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                      "s.bind(('127.0.0.1', 6918))\n"
                      "s.listen()\n"
                      "print('listening', flush=True)\n"
                      "sys.stdin.read()\n")
    server = subprocess.Popen([sys.executable, str(listen)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline() == "listening\n"
        up = script("up", folder, path=None if ss else without_ss(tmp_path / "bin"))
        assert up.returncode == 2, up.stderr
        assert up.stderr.splitlines() == [
            f"slurm-local: port 6918 is held by pid {server.pid} ({sys.executable} {listen}), "
            f"not by a daemon of {folder}: nothing started"]
        assert not folder.exists() and daemons_of(folder) == {}
    finally:
        server.kill()
        server.wait()
