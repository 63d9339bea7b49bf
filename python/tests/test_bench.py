"""Runs bench.py as the harness does and checks its output against the protocol."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench.py"
LOOPS = ["asyncio", "uvloop"]


def bench(*args):
    return subprocess.run([sys.executable, str(BENCH), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def report(*args):
    proc = bench(*args)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def check(out, workload, n, expected, iterations, buffer=None):
    assert out["workload"] == workload
    assert out["n"] == n
    assert out["buffer"] == buffer
    assert out["results"] == [expected] * iterations
    assert out["result"] == expected
    assert len(out["iter_ns"]) == iterations
    assert all(isinstance(t, int) and t > 0 for t in out["iter_ns"])


@pytest.mark.parametrize("loop", LOOPS)
def test_sleep_overlaps(loop):
    n, duration_ms = 2000, 200
    out = report("--loop", loop, "sleep", "--n", n, "--duration-ms", duration_ms)
    check(out, "sleep", n, n, iterations=1)
    duration_ns = duration_ms * 1_000_000
    # The protocol's window: every task slept, and they slept at the same time.
    assert duration_ns <= out["iter_ns"][0] <= duration_ns + out["spawn_ns"] + 2_000_000_000


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("workload", ["chain", "chain-await"])
def test_chains_count_every_link(loop, workload):
    out = report("--loop", loop, workload, "--n", 1000, "--iterations", 3)
    check(out, workload, 1000, 1000, iterations=3)
    assert "spawn_ns" not in out


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("workload", ["chain", "chain-await"])
def test_chains_default_to_two_iterations(loop, workload):
    check(report("--loop", loop, workload, "--n", 1), workload, 1, 1, iterations=2)


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("buffer", [1, 7, 5000])
def test_bounded_sums_every_index(loop, buffer):
    n = 3000
    out = report("--loop", loop, "bounded", "--n", n, "--buffer", buffer)
    check(out, "bounded", n, n * (n - 1) // 2, iterations=10, buffer=buffer)
    assert "capacity" not in out


@pytest.mark.parametrize("loop", LOOPS)
def test_bounded_rendezvous_uses_capacity_one(loop):
    # asyncio.Queue(maxsize=0) would be unbounded, so B=0 runs with capacity 1.
    out = report("--loop", loop, "bounded", "--n", 100, "--buffer", 0, "--iterations", 2)
    check(out, "bounded", 100, 4950, iterations=2, buffer=0)
    assert out["capacity"] == 1


def test_runtime_names_the_loop():
    assert "uvloop" not in report("chain", "--n", 1)["runtime"]
    uvloop_label = report("--loop", "uvloop", "chain", "--n", 1)["runtime"]
    assert "uvloop" in uvloop_label
    assert bench("--loop", "uvloop", "--version").stdout.strip() == uvloop_label


@pytest.mark.parametrize("args", [
    [],
    ["sleep"],
    ["spin", "--n", "3"],
    ["chain", "--n", "0"],
    ["chain", "--n", "x"],
    ["chain", "--n", "-5"],
    ["chain", "--n", "1_000"],
    ["chain", "--n"],
    ["chain", "--n", "3", "--bogus"],
    ["chain", "--n", "3", "--it", "2"],
    ["chain", "--n", "3", "extra"],
    ["bounded", "--n", "3", "--buffer", "-1"],
    ["sleep", "--n", "3", "--duration-ms", "0"],
    ["chain", "--n", "3", "--iterations", "0"],
    ["--loop", "trio", "chain", "--n", "3"],
    ["-h"],
])
def test_bad_arguments_exit_2_with_one_line(args):
    proc = bench(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
