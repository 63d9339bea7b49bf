"""The collection between passes is off at bounded's smallest sizes
(Workload.collect_from_n, docs/protocol.md "Collection between passes"):
the program gets BENCH_COLLECT=0 below 10,000 producers and nothing at or
above it, runs.csv's command says so as a shell line would, and a
variant's own BENCH_COLLECT wins over it. Runs the fake program."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from harness.core.workloads import NO_COLLECTION, WORKLOADS, Request

from ..conftest import harness, read_rows


def test_bounded_below_its_threshold_runs_without_the_collection(out: Path) -> None:
    proc = harness("run", "--no-report", "--repeat", "1", "--impl",
                   "fake-good,fake-good[BENCH_COLLECT=1]", "--workload", "bounded",
                   "--n", "10,10000", "--buffer", "1", "--iterations", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    seen = {(r["impl"], r["n"]): (json.loads(r["output"])["collect_env"], r["command"])
            for r in read_rows(out)}
    collect, command = seen[("fake-good", "10")]
    assert collect == "0" and shlex.split(command)[0] == "BENCH_COLLECT=0"
    collect, command = seen[("fake-good", "10000")]
    assert collect is None and "BENCH_COLLECT" not in command
    collect, command = seen[("fake-good[BENCH_COLLECT=1]", "10")]
    assert collect == "1" and "BENCH_COLLECT" not in command  # the variant's, in its name


def test_only_bounded_declares_a_threshold() -> None:
    """Every other workload collects at every size, as the protocol says."""
    for name, workload in WORKLOADS.items():
        small = Request(name, 10 if workload.uses_n else None, 1, 2, 100)
        assert (workload.env(small) == dict([NO_COLLECTION])) == (name == "bounded"), name
    bounded = WORKLOADS["bounded"]
    assert bounded.env(Request("bounded", 9_999, 1, 2, 0)) == {"BENCH_COLLECT": "0"}
    assert bounded.env(Request("bounded", 10_000, 1, 2, 0)) == {}
