from __future__ import annotations

import json

from harness.execute.validation import validate
from harness.core.workloads import Request, sleep_window_ns

NS = 1_000_000_000


def line(**kw: object) -> str:
    base = {"workload": "chain", "n": 5, "buffer": None, "result": 5, "results": [5, 5],
            "iter_ns": [10, 20], "primed": 5}
    base.update(kw)
    return json.dumps(base)


def check(stdout: str, workload: str = "chain", n: int = 5, buffer: int | None = None,
          k: int = 2, d: int = 1000) -> tuple[bool, str]:
    v = validate(stdout, Request(workload, n, buffer, k, d))
    return v.ok, v.error


def test_good_chain() -> None:
    assert check(line()) == (True, "")


def test_a_chain_must_prime_min_n_1000_links() -> None:
    """docs/protocol.md, Priming: an untimed chain of min(N, 1000) links first."""
    assert "primed is None" in check(line(primed=None))[1]
    assert "expected 5" in check(line(primed=1000))[1]
    big = line(n=5000, result=5000, results=[5000, 5000], primed=1000)
    assert check(big, n=5000) == (True, "")
    assert "expected 1000" in check(line(n=5000, result=5000, results=[5000, 5000], primed=5000),
                                    n=5000)[1]
    assert "primed" in check(line(workload="chain-await", primed=True), workload="chain-await")[1]


def test_every_iteration_must_be_right() -> None:
    assert check(line(results=[4, 5]))[1] == "iteration 1 result 4 != expected 5"


def test_echo_and_shape() -> None:
    assert "workload" in check(line(workload="bounded"))[1]
    assert "n is" in check(line(n=6))[1]
    assert "buffer" in check(line(buffer=1))[1]
    assert "iter_ns" in check(line(iter_ns=[1]))[1]
    assert "iter_ns" in check(line(iter_ns=[1, 0]))[1]
    assert "result must" in check(line(result="5"))[1]
    assert "exactly one JSON line" in check(line() + "\n" + line())[1]
    assert "exactly one JSON line" in check("")[1]
    assert "not JSON" in check("{oops")[1]
    assert "not an object" in check("[1]")[1]


def test_bounded_expects_the_sum() -> None:
    good = json.dumps({"workload": "bounded", "n": 10, "buffer": 3, "result": 45,
                       "results": [45], "iter_ns": [7]})
    assert check(good, "bounded", 10, 3, 1) == (True, "")
    assert not check(good, "bounded", 10, 4, 1)[0]


def test_sleep_window() -> None:
    SLACK = 5_000_000  # a timer may end 5 ms early
    assert sleep_window_ns(10000, 4 * NS, 1) == (10 * NS - SLACK, 4 * NS + 10 * NS + 5 * NS)
    assert sleep_window_ns(1000, 0, 3) == (NS - SLACK, 3 * NS)
    assert sleep_window_ns(3000, 17 * NS, 1_000_000) == (3 * NS - SLACK, 17 * NS + 30 * NS)

    def sleep(t: int, spawn: int = 0) -> tuple[bool, str]:
        out = json.dumps({"workload": "sleep", "n": 3, "buffer": None, "result": 3, "results": [3],
                          "iter_ns": [t], "spawn_ns": spawn})
        return check(out, "sleep", 3, None, 1, 1000)

    assert sleep(NS)[0] and sleep(3 * NS)[0]
    assert sleep(NS - SLACK)[0]  # a timer that fired a little early (Node.js: up to 1 ms)
    assert "shorter than one sleep" in sleep(NS - SLACK - 1)[1]
    assert "one after another" in sleep(3 * NS + 1)[1]
    assert sleep(3 * NS + NS // 2, spawn=NS // 2)[0]
    no_spawn = json.dumps({"workload": "sleep", "n": 3, "buffer": None, "result": 3,
                           "results": [3], "iter_ns": [NS]})
    assert "spawn_ns" in check(no_spawn, "sleep", 3, None, 1, 1000)[1]


def test_sleep_tasks_must_all_be_alive_at_once() -> None:
    def sleep(spawn: int, tasks_start: str) -> tuple[bool, str]:
        out = json.dumps({"workload": "sleep", "n": 3, "buffer": None, "result": 3, "results": [3],
                          "iter_ns": [spawn + NS], "spawn_ns": spawn})
        v = validate(out, Request("sleep", 3, None, 1, 1000, tasks_start))
        return v.ok, v.error

    # Starting the tasks took longer than one sleep: with threads or
    # goroutines the first ones finished before the last ones started.
    assert "did not all overlap" in sleep(int(1.5 * NS), "when-spawned")[1]
    assert sleep(int(0.9 * NS), "when-spawned")[0]
    # An event loop cannot fire a timer before the spawning code yields.
    assert sleep(int(1.5 * NS), "after-spawning")[0]


def test_capacity_must_be_a_positive_integer() -> None:
    assert check(line(capacity=1)) == (True, "")
    assert "capacity" in check(line(capacity=0))[1]
    assert "capacity" in check(line(capacity="1"))[1]


def test_a_slow_join_on_a_busy_machine_is_not_a_failure_but_sequential_sleeps_are() -> None:
    def sleep(n: int, t: float, spawn: float, d: int) -> tuple[bool, str]:
        out = json.dumps({"workload": "sleep", "n": n, "buffer": None, "result": n,
                          "results": [n], "iter_ns": [int(t * NS)], "spawn_ns": int(spawn * NS)})
        v = validate(out, Request("sleep", n, None, 1, d, "after-spawning"))
        return v.ok, v.error

    # python-asyncio at 1M, D = 3 s, on a busy machine: 17 s to start, 9 s to wake and join
    assert sleep(1_000_000, 26.05, 17.0, 3000)[0]
    # five coroutines awaited one after another: five sleeps
    assert "one after another" in sleep(5, 5.01, 0.001, 1000)[1]


def warm(warmup_ms: int, **kw: object) -> str:
    v = validate(line(**kw), Request("chain", 5, None, 2, 1000, warmup_ms=warmup_ms))
    return v.error


def test_the_warmup_runs_until_its_time_is_up_and_not_one_run_more() -> None:
    ms = 1_000_000
    assert warm(10, warmup_ns=[4 * ms, 4 * ms, 3 * ms], warmup_results=[5, 5, 5]) == ""
    assert warm(0) == "" and warm(0, warmup_ns=[], warmup_results=[]) == ""
    assert "none was asked for" in warm(0, warmup_ns=[ms], warmup_results=[5])
    assert "1 to 10000 warm-up runs" in warm(10)
    assert "stopped after 8.0 ms" in warm(10, warmup_ns=[4 * ms, 4 * ms], warmup_results=[5, 5])
    assert "ran on after" in warm(10, warmup_ns=[11 * ms, ms], warmup_results=[5, 5])
    assert "warm-up run 2 result 4" in warm(10, warmup_ns=[6 * ms, 6 * ms], warmup_results=[5, 4])
    assert "same length" in warm(10, warmup_ns=[11 * ms], warmup_results=[5, 5])
    # The run cap ends a warm-up of microsecond runs before its time is up.
    assert warm(60_000, warmup_ns=[1000] * 10_000, warmup_results=[5] * 10_000) == ""
    assert "1 to 10000" in warm(60_000, warmup_ns=[1000] * 10_001, warmup_results=[5] * 10_001)
