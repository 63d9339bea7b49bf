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
    out = report("--loop", loop, "sleep", "--n", n, "--duration-ms", duration_ms,
                 "--iterations", 1)
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
@pytest.mark.parametrize("buffer", [1, 7, 5000])
def test_bounded_sums_every_index(loop, buffer):
    n = 3000
    out = report("--loop", loop, "bounded", "--n", n, "--buffer", buffer, "--iterations", 3)
    check(out, "bounded", n, n * (n - 1) // 2, iterations=3, buffer=buffer)
    assert "capacity" not in out


@pytest.mark.parametrize("loop", LOOPS)
def test_bounded_rendezvous_uses_capacity_one(loop):
    # asyncio.Queue(maxsize=0) would be unbounded, so B=0 runs with capacity 1.
    out = report("--loop", loop, "bounded", "--n", 100, "--buffer", 0, "--iterations", 2)
    check(out, "bounded", 100, 4950, iterations=2, buffer=0)
    assert out["capacity"] == 1


def test_runtime_names_the_loop():
    assert "uvloop" not in report("chain", "--n", 1, "--iterations", 1)["runtime"]
    uvloop_label = report("--loop", "uvloop", "chain", "--n", 1, "--iterations", 1)["runtime"]
    assert "uvloop" in uvloop_label
    assert bench("--loop", "uvloop", "--version").stdout.strip() == uvloop_label


def test_extra_options_are_accepted_and_ignored():
    # The harness passes only what a workload uses; the others are harmless.
    out = report("chain", "--n", 5, "--iterations", 1, "--buffer", 3, "--duration-ms", 9)
    check(out, "chain", 5, 5, iterations=1)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_usage_on_stdout(flag):
    proc = bench(flag)
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: bench.py")
    assert "--iterations K" in proc.stdout
    assert proc.stderr == ""


def bad_table(w):
    """docs/protocol.md's bad input (the lead's harness/tests/test_conformance.py
    runs the same table), for workload w."""
    return [
        [],
        [w],
        [w, "--n", "10"],
        [w, "--n", "0", "--iterations", "1"],
        [w, "--n", "-3", "--iterations", "1"],
        [w, "--n", "abc", "--iterations", "1"],
        [w, "--n", "10", "--iterations", "0"],
        [w, "--n", "10", "--iterations", "1", "--bogus", "1"],
        [w, "--n"],
        [w, "--n", "99999999999999999999999", "--iterations", "1"],
        ["nope", "--n", "10", "--iterations", "1"],
        ["bounded", "--n", "10", "--iterations", "1"],
        ["bounded", "--n", "10", "--iterations", "1", "--buffer", "-1"],
        ["sleep", "--n", "10", "--iterations", "1"],
        ["sleep", "--n", "10", "--iterations", "1", "--duration-ms", "0"],
    ]


# Ours beyond the table: other malformed numbers and options.
MORE_BAD = [
    ["chain", "--n", "1_000", "--iterations", "1"],
    ["chain", "--n", "+5", "--iterations", "1"],
    ["chain", "--n", " 5", "--iterations", "1"],
    ["chain", "--n", "\u0665", "--iterations", "1"],  # ARABIC-INDIC FIVE: int() takes it
    ["chain", "--n", "9223372036854775808", "--iterations", "1"],  # 2^63
    ["chain", "--n", "3", "--it", "2"],
    ["chain", "--n", "3", "--iterations", "1", "extra"],
    ["chain", "--n", "3", "--iterations", "1", "--bogus\nsecond line"],
    ["chain", "--n", "3", "--iterations"],
    ["--loop", "trio", "chain", "--n", "3", "--iterations", "1"],
    ["--loop"],
]


def assert_bad(args, loop):
    proc = bench("--loop", loop, *args)
    assert proc.returncode == 2, (args, proc.stderr)
    assert proc.stdout == "", args
    assert len(proc.stderr.splitlines()) == 1, (args, proc.stderr)
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("workload", ["sleep", "chain", "chain-await", "bounded"])
def test_protocol_bad_input_table(workload):
    for args in bad_table(workload):
        assert_bad(args, "asyncio")


@pytest.mark.parametrize("loop", LOOPS)
def test_more_bad_input(loop):
    for args in bad_table("chain") + MORE_BAD:
        assert_bad(args, loop)
