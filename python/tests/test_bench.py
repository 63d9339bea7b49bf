"""Runs bench.py as the harness does and checks its output against the protocol."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench.py"
LOOPS = ["asyncio", "uvloop"]
# python-pypy's interpreter, linked by pypy.sh setup (absent: its tests skip).
PYPY = BENCH.parent / ".pypy" / "pypy3"
needs_pypy = pytest.mark.skipif(not PYPY.exists(), reason="no PyPy: python/pypy.sh setup linked none")


def bench(*args, interpreter=sys.executable):
    return subprocess.run([str(interpreter), str(BENCH), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def report(*args, interpreter=sys.executable):
    proc = bench(*args, interpreter=interpreter)
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
@pytest.mark.parametrize("n", [1, 10, 10_000])
def test_skynet_sums_every_leaf(loop, n):
    out = report("--loop", loop, "skynet", "--n", n, "--iterations", 2)
    check(out, "skynet", n, n * (n - 1) // 2, iterations=2)
    assert "spawn_ns" not in out


def test_skynet_spawns_a_task_per_node():
    import asyncio

    sys.path.insert(0, str(BENCH.parent))
    import bench as program

    async def count():
        created = 0
        loop = asyncio.get_running_loop()

        def factory(loop, coro, **kwargs):
            nonlocal created
            created += 1
            return asyncio.Task(coro, loop=loop, **kwargs)

        loop.set_task_factory(factory)
        total = await asyncio.create_task(program.skynet(0, 100))
        return total, created

    # The root, 10 inner nodes and 100 leaves, each its own task.
    assert asyncio.run(count()) == (4950, 111)


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


def check_warmup(out, warmup_ms, expected):
    """The warm-up rule: runs until their total reaches W ms, the last one
    crossing it, each reported with its answer."""
    warmup_ns = out["warmup_ns"]
    assert len(warmup_ns) >= 1
    assert all(isinstance(t, int) and t > 0 for t in warmup_ns)
    assert out["warmup_results"] == [expected] * len(warmup_ns)
    assert sum(warmup_ns) >= warmup_ms * 1_000_000
    assert sum(warmup_ns[:-1]) < warmup_ms * 1_000_000


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("args, expected", [
    (["bounded", "--n", 1000, "--buffer", 1], 499500),
    (["skynet", "--n", 100], 4950),
    (["chain", "--n", 100], 100),
    (["chain-await", "--n", 100], 100),
    (["sleep", "--n", 10, "--duration-ms", 20], 10),
])
def test_warmup_runs_until_w_ms(loop, args, expected):
    out = report("--loop", loop, *args, "--iterations", 3, "--warmup-ms", 50)
    check_warmup(out, 50, expected)
    check(out, args[0], args[2], expected, iterations=3,
          buffer=args[4] if args[0] == "bounded" else None)


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("warmup", [[], ["--warmup-ms", 0]])
def test_no_warmup_by_default_or_at_zero(loop, warmup):
    out = report("--loop", loop, "chain", "--n", 10, "--iterations", 2, *warmup)
    check(out, "chain", 10, 10, iterations=2)
    assert out["warmup_ns"] == [] and out["warmup_results"] == []


def test_warmup_stops_after_max_runs():
    # The cap, whatever W: max_runs = 3 (the program's is MAX_WARMUP_RUNS)
    # with W = 60 s makes exactly three runs and returns at once.
    import asyncio
    import time

    sys.path.insert(0, str(BENCH.parent))
    import bench as program

    assert program.MAX_WARMUP_RUNS == 10_000
    args = program.parse_args(["bounded", "--n", "10", "--buffer", "1", "--iterations", "1",
                               "--warmup-ms", "60000"])
    start = time.monotonic()
    warmup_ns, answers = asyncio.run(program.warm_up(args, 1, True, False, max_runs=3))
    assert time.monotonic() - start < 10
    assert answers == [45] * 3
    assert len(warmup_ns) == 3 and sum(warmup_ns) < 60_000 * 1_000_000


def load_program():
    sys.path.insert(0, str(BENCH.parent))
    import bench as program

    return program


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("workload", ["chain", "chain-await"])
@pytest.mark.parametrize("n", [5, 2000])
def test_chains_prime_min_n_1000_links(loop, workload, n):
    # docs/protocol.md's priming: one untimed chain of min(N, 1000) links.
    out = report("--loop", loop, workload, "--n", n, "--iterations", 2)
    check(out, workload, n, n, iterations=2)
    assert out["primed"] == min(n, 1000)


@pytest.mark.parametrize("loop", LOOPS)
def test_other_workloads_do_not_prime(loop):
    out = report("--loop", loop, "bounded", "--n", 10, "--buffer", 1, "--iterations", 1)
    assert "primed" not in out


@pytest.mark.parametrize("workload, attribute", [("chain", "chain"),
                                                 ("chain-await", "chain_await")])
@pytest.mark.parametrize("n, warmup_ms", [(5, 0), (2000, 0), (2000, 5)])
def test_priming_comes_first_and_is_not_timed(monkeypatch, workload, attribute, n, warmup_ms):
    # The workload coroutine replaced by one that records its N and takes
    # 300 ms on its first call: the priming runs it first, at min(N, 1000),
    # and no iteration or warm-up run is 300 ms long.
    import asyncio

    program = load_program()
    calls = []

    async def stand_in(links):
        calls.append(links)
        if len(calls) == 1:
            await asyncio.sleep(0.3)
        return links

    monkeypatch.setattr(program, attribute, stand_in)
    args = program.parse_args([workload, "--n", str(n), "--iterations", "2",
                               "--warmup-ms", str(warmup_ms)])
    results, iter_ns, _, warmup_ns, _, primed = asyncio.run(program.run(args, None))
    assert primed == min(n, 1000) == calls[0]
    assert calls[1:] == [n] * (len(warmup_ns) + 2)
    assert results == [n, n] and len(iter_ns) == 2
    assert all(ns < 300_000_000 for ns in iter_ns + warmup_ns), (iter_ns, warmup_ns)


def test_a_wrong_priming_answer_exits_1_with_one_line(monkeypatch):
    program = load_program()

    async def off_by_one(links):
        return links - 1

    monkeypatch.setattr(program, "chain", off_by_one)
    with pytest.raises(SystemExit) as exit_:
        program.main(["chain", "--n", "2000", "--iterations", "2"])
    # sys.exit(message): exit status 1, the message as stderr's one line.
    assert exit_.value.code == ("bench.py: error: the priming chain of 1000 links "
                                "answered 999, not 1000")


def watch(monkeypatch, program, attribute):
    """Replaces bench.py's clock, the workload coroutine `attribute` and the
    collection with fakes that log each call in order (the workload by its
    first argument, N). The clock steps 1 ms a reading, so each timed pass
    takes 1 ms; a collection moves it 1 s, so one inside a pass would show
    in its time."""
    import types

    log = []
    clock = 0

    def perf_counter_ns():
        nonlocal clock
        log.append("clock")
        clock += 1_000_000
        return clock

    def collect():
        nonlocal clock
        log.append("collect")
        clock += 1_000_000_000

    async def stand_in(links, *_):
        log.append(f"run {links}")
        return links

    # Only bench.py's own `time` is replaced: the event loop keeps its clock.
    monkeypatch.setattr(program, "time", types.SimpleNamespace(perf_counter_ns=perf_counter_ns))
    monkeypatch.setattr(program, "collect", collect)
    monkeypatch.setattr(program, attribute, stand_in)
    return log


@pytest.mark.parametrize("workload, attribute", [("chain", "chain"),
                                                 ("chain-await", "chain_await")])
def test_collection_before_each_pass_outside_the_clock(monkeypatch, workload, attribute):
    # docs/protocol.md, "Collection between passes": after the priming, one
    # collection before each warm-up run and each iteration, the first
    # included, before its first clock reading.
    import asyncio

    program = load_program()
    monkeypatch.delenv("BENCH_COLLECT", raising=False)
    log = watch(monkeypatch, program, attribute)
    args = program.parse_args([workload, "--n", "2000", "--iterations", "2", "--warmup-ms", "2"])
    results, iter_ns, _, warmup_ns, warmup_results, primed = asyncio.run(program.run(args, None))
    pass_ = ["collect", "clock", "run 2000", "clock"]
    # The priming, then two warm-up runs of 1 ms (they reach W = 2 ms), then
    # the two iterations.
    assert log == ["run 1000"] + pass_ * (2 + 2)
    assert iter_ns == [1_000_000] * 2 and warmup_ns == [1_000_000] * 2
    assert results == [2000, 2000] and warmup_results == [2000, 2000] and primed == 1000


@pytest.mark.parametrize("args", [
    ["sleep", "--n", "10", "--duration-ms", "1"],
    ["chain", "--n", "10"],
    ["chain-await", "--n", "10"],
    ["bounded", "--n", "10", "--buffer", "1"],
    ["skynet", "--n", "10"],
])
def test_every_workload_collects_once_a_pass_but_a_fresh_first(monkeypatch, args):
    # The first pass collects only after the priming (chain, chain-await).
    import asyncio

    program = load_program()
    monkeypatch.delenv("BENCH_COLLECT", raising=False)
    collections = []
    monkeypatch.setattr(program, "collect", lambda: collections.append(1))
    parsed = program.parse_args([*args, "--iterations", "3", "--warmup-ms", "1"])
    capacity = 1 if args[0] == "bounded" else None
    _, iter_ns, _, warmup_ns, _, _ = asyncio.run(program.run(parsed, capacity))
    primed = args[0] in ("chain", "chain-await")
    assert len(collections) == len(warmup_ns) + len(iter_ns) - (not primed)


@pytest.mark.parametrize("argv, steps", [
    # No priming, no warm-up: iteration 1 has no collection, 2 and 3 have one.
    (["bounded", "--buffer", "1", "--iterations", "3"], ["fresh", "collected", "collected"]),
    # No priming, two warm-up runs of 1 ms: the first has none, then every
    # warm-up run and iteration has one.
    (["bounded", "--buffer", "1", "--iterations", "2", "--warmup-ms", "2"],
     ["fresh", "collected", "collected", "collected"]),
    # The priming ran first: the first pass has one too.
    (["chain", "--iterations", "2"], ["priming", "collected", "collected"]),
])
def test_collection_only_after_something_ran(monkeypatch, argv, steps):
    # docs/protocol.md, "Collection between passes": nothing of ours to
    # collect before the first pass of a fresh process.
    import asyncio

    program = load_program()
    monkeypatch.delenv("BENCH_COLLECT", raising=False)
    log = watch(monkeypatch, program, argv[0])
    args = program.parse_args([*argv, "--n", "10"])
    capacity = 1 if argv[0] == "bounded" else None
    _, iter_ns, _, warmup_ns, _, _ = asyncio.run(program.run(args, capacity))
    calls = {"fresh": ["clock", "run 10", "clock"],
             "collected": ["collect", "clock", "run 10", "clock"],
             "priming": ["run 10"]}
    assert log == [call for step in steps for call in calls[step]]
    assert warmup_ns + iter_ns == [1_000_000] * sum(step != "priming" for step in steps)


def test_the_collection_is_gc_collect():
    # A full collection: gc.collect() collects every generation.
    import gc

    assert load_program().collect is gc.collect


def test_bench_collect_0_skips_the_collection(monkeypatch):
    import asyncio

    program = load_program()
    monkeypatch.setenv("BENCH_COLLECT", "0")
    log = watch(monkeypatch, program, "chain")
    args = program.parse_args(["chain", "--n", "10", "--iterations", "2", "--warmup-ms", "1"])
    results, iter_ns, _, warmup_ns, _, primed = asyncio.run(program.run(args, None))
    assert log == ["run 10"] + ["clock", "run 10", "clock"] * (1 + 2)
    assert results == [10, 10] and primed == 10
    assert iter_ns == [1_000_000] * 2 and warmup_ns == [1_000_000]


@pytest.mark.parametrize("value, on", [("0", False), ("", True), ("1", True), ("00", True),
                                       (" 0", True), ("false", True), (None, True)])
def test_only_bench_collect_0_turns_it_off(monkeypatch, value, on):
    program = load_program()
    if value is None:
        monkeypatch.delenv("BENCH_COLLECT", raising=False)
    else:
        monkeypatch.setenv("BENCH_COLLECT", value)
    assert program.collect_enabled() is on


@pytest.mark.parametrize("loop", LOOPS)
def test_bench_collect_0_same_json_line(loop, monkeypatch):
    # The variant IMPL[BENCH_COLLECT=0] changes no key and no answer.
    monkeypatch.setenv("BENCH_COLLECT", "0")
    off = report("--loop", loop, "chain", "--n", 100, "--iterations", 2, "--warmup-ms", 1)
    monkeypatch.delenv("BENCH_COLLECT")
    on = report("--loop", loop, "chain", "--n", 100, "--iterations", 2, "--warmup-ms", 1)
    assert sorted(off) == sorted(on)
    check(off, "chain", 100, 100, iterations=2)
    assert off["primed"] == on["primed"] == 100


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
    assert "\n  --warmup-ms W " in proc.stdout
    assert proc.stderr == ""


# docs/protocol.md's bad input: the one table, which the harness's
# test_conformance.py runs against every implementation.
BAD_INPUT = json.loads((BENCH.parent.parent / "docs" / "protocol-bad-input.json").read_text())
WORKLOADS = ["sleep", "chain", "chain-await", "bounded", "skynet"]  # python-asyncio's


def expand(args, w):
    """A case's args for workload w: "{w}" its name, "{required}" its other
    required options (spliced)."""
    out = []
    for arg in args:
        out += BAD_INPUT["required"][w] if arg == "{required}" else [w if arg == "{w}" else arg]
    return out


def bad_table(w):
    """The table's cases with workload w, those of the workloads we declare,
    each workload we do not, and serve's (bench.py serves too)."""
    undeclared = [u for u in BAD_INPUT["required"] if u not in WORKLOADS]
    cases = []
    for case in BAD_INPUT["cases"]:
        when = case.get("when")
        if when in (None, "declared", "http") or when in WORKLOADS:
            cases.append(expand(case["args"], w))
        elif when == "undeclared":
            cases += [expand(case["args"], u) for u in undeclared]
    return cases


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
    ["skynet", "--n", "20", "--iterations", "1"],  # not a power of ten
    ["skynet", "--n", "1001", "--iterations", "1"],
    ["skynet", "--n", "10"],
]

# --warmup-ms: negative, not an integer, out of range, no value.
WARMUP_BAD = [
    ["chain", "--n", "3", "--iterations", "1", "--warmup-ms", "-1"],
    ["chain", "--n", "3", "--iterations", "1", "--warmup-ms=-1"],
    ["chain", "--n", "3", "--iterations", "1", "--warmup-ms", "x"],
    ["chain", "--n", "3", "--iterations", "1", "--warmup-ms", "1.5"],
    ["chain", "--n", "3", "--iterations", "1", "--warmup-ms", ""],
    ["chain", "--n", "3", "--iterations", "1", "--warmup-ms", "9223372036854775808"],
    ["chain", "--n", "3", "--iterations", "1", "--warmup-ms"],
    ["chain", "--warmup-ms", "--n", "3", "--iterations", "1"],
]


def assert_bad(args, loop):
    proc = bench("--loop", loop, *args)
    assert proc.returncode == 2, (args, proc.stderr)
    assert proc.stdout == "", args
    assert len(proc.stderr.splitlines()) == 1, (args, proc.stderr)
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("workload", WORKLOADS)
def test_protocol_bad_input_table(workload):
    for args in bad_table(workload):
        assert_bad(args, "asyncio")


@pytest.mark.parametrize("loop", LOOPS)
def test_more_bad_input(loop):
    for args in bad_table("chain") + MORE_BAD + WARMUP_BAD:
        assert_bad(args, loop)


@needs_pypy
@pytest.mark.parametrize("args, expected", [
    (["skynet", "--n", 1000, "--iterations", 2], 499500),
    (["chain", "--n", 1000, "--iterations", 2], 1000),
    (["chain-await", "--n", 1000, "--iterations", 2], 1000),
    (["bounded", "--n", 1000, "--buffer", 1, "--iterations", 2], 499500),
    (["sleep", "--n", 1000, "--duration-ms", 50, "--iterations", 1], 1000),
])
def test_pypy_runs_the_same_program(args, expected):
    # python-pypy: this bench.py on PyPy 3.9 (no asyncio.Runner there).
    out = report(*args, interpreter=PYPY)
    assert out["results"] == [expected] * args[-1]
    assert len(out["iter_ns"]) == args[-1]
    assert out.get("primed") == (1000 if args[0].startswith("chain") else None)
    assert out["runtime"].startswith("PyPy 7.")
    assert bench("--version", interpreter=PYPY).stdout.strip() == out["runtime"]


@needs_pypy
@pytest.mark.parametrize("workload", ["chain", "chain-await"])
@pytest.mark.parametrize("n", [5, 2000])
def test_pypy_primes(workload, n):
    out = report(workload, "--n", n, "--iterations", 2, interpreter=PYPY)
    check(out, workload, n, n, iterations=2)
    assert out["primed"] == min(n, 1000)


@needs_pypy
def test_pypy_warms_up():
    out = report("bounded", "--n", 1000, "--buffer", 1, "--iterations", 2, "--warmup-ms", 50,
                 interpreter=PYPY)
    check_warmup(out, 50, 499500)
    check(out, "bounded", 1000, 499500, iterations=2, buffer=1)


@needs_pypy
def test_pypy_bad_input():
    for args in (bad_table("skynet") + [["skynet", "--n", "20", "--iterations", "1"]]
                 + WARMUP_BAD):
        proc = bench(*args, interpreter=PYPY)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, (args, proc.stderr)
