"""Concurrency benchmark program for asyncio and uvloop (see docs/protocol.md).

    bench.py [--loop asyncio|uvloop] WORKLOAD --n N --iterations K
             [--buffer B] [--duration-ms D] [--warmup-ms W]
    bench.py [--loop asyncio|uvloop] [--server aiohttp|threads] serve
             --port P --delay-ms D [--threads T]
    bench.py [--loop asyncio|uvloop] [--server aiohttp|threads] --version
    bench.py --help

Prints one JSON line on stdout; bad arguments exit 2 with one line on stderr,
a wrong priming answer (docs/protocol.md, "Priming") exits 1 with one line.
`serve` is the protocol's HTTP server, in server.py (imported for it only).

Every task is a plain asyncio.create_task kept in a list and awaited: no
asyncio.TaskGroup (nor gather, which adds a future and a callback per task), which adds per task a done-callback (a bound method and a
copied context) and a set entry that this benchmark does not need (about
150 MiB at a million sleeping tasks). A Task object already holds the task;
awaiting a finished one returns at once, so joining costs nothing per task.

The same file runs on PyPy (python-pypy, Python 3.9): no asyncio.Runner
there, so main() falls back to asyncio.run, which does the same (a new loop,
the main coroutine run as a Task on it).
"""

import argparse
import asyncio
import gc
import json
import os
import platform
import re
import sys
import time
from typing import Callable, List, Optional, Tuple

WORKLOADS = ("sleep", "chain", "chain-await", "bounded", "skynet")
SERVERS = ("aiohttp", "threads")
INT64_MAX = 2**63 - 1
MAX_DELAY_MS = 2**30 - 1  # 2*D fits 31 bits, as in the other languages
MAX_THREADS = 32767       # .NET's default pool maximum here (csharp/README.md)
# --warmup-ms stops after this many runs even short of W ms: at N = 10 a run
# takes microseconds, and the JSON line lists every warm-up run.
MAX_WARMUP_RUNS = 10_000
# docs/protocol.md's priming: chain and chain-await run one untimed chain of
# min(N, PRIME_LINKS) links before the warm-up and the first timed pass.
PRIME_LINKS = 1000
PRIMED_WORKLOADS = ("chain", "chain-await")
# docs/protocol.md, "Collection between passes": one full collection before
# each pass that follows something run in this process, outside its clock. A
# variable so the tests can watch it.
collect: Callable[[], object] = gc.collect


def collect_enabled() -> bool:
    """Only BENCH_COLLECT=0 exactly turns the collection off (the variant
    IMPL[BENCH_COLLECT=0], docs/usage.md)."""
    return os.environ.get("BENCH_COLLECT") != "0"


class PrimingError(Exception):
    """The priming chain's answer was wrong: main() prints one line, exits 1."""


async def sleep(n, duration_ms):
    """N tasks each sleep D ms; returns (tasks completed, spawn_ns)."""
    delay = duration_ms / 1000  # one float for all N tasks, not one each
    start = time.perf_counter_ns()
    # sleep(..., result=1) makes each task's join result its own count.
    tasks = [asyncio.create_task(asyncio.sleep(delay, 1)) for _ in range(n)]
    # create_task only schedules a task; yielding once lets every task run
    # its first step and arm its timer, so "started" means really sleeping.
    await asyncio.sleep(0)
    spawn_ns = time.perf_counter_ns() - start
    done = 0
    for task in tasks:
        done += await task
    return done, spawn_ns


async def relay(inbox, outbox):
    await outbox.put(await inbox.get() + 1)


async def chain(n):
    # asyncio has no rendezvous queue (maxsize=0 means unbounded): capacity 1
    # is the closest, and each channel carries exactly one value anyway.
    channels = [asyncio.Queue(maxsize=1) for _ in range(n + 1)]
    relays = [asyncio.create_task(relay(channels[i], channels[i + 1])) for i in range(n)]
    await channels[0].put(0)
    result = await channels[n].get()
    # Every relay finished in the step that made its put, so these awaits
    # return at once; they keep the iteration's end honest all the same.
    for task in relays:
        await task
    return result


async def successor(previous):
    value = await previous + 1
    # The protocol's one yield per task (Yakunin 2017's Task.Yield), kept so
    # every implementation does the same work per link.
    await asyncio.sleep(0)
    return value


async def chain_await(n):
    source = asyncio.get_running_loop().create_future()
    last = source
    # Each task holds its predecessor, so `last` keeps the whole chain alive.
    for _ in range(n):
        last = asyncio.create_task(successor(last))
    # Let every task start and suspend on its predecessor before the source
    # completes, so the whole chain is pending as the protocol requires.
    await asyncio.sleep(0)
    source.set_result(0)
    return await last


async def bounded(n, capacity):
    # This coroutine is the consumer. asyncio.Runner.run wraps it in a Task
    # on the same loop as the producers (loop.create_task), so it already is
    # "a task of the same kind as the producers"; a separate consumer task
    # would only add a hop, and on one thread it could not start receiving
    # any earlier: no task runs until this one yields in its first get().
    queue = asyncio.Queue(maxsize=capacity)
    # Each producer task is the put itself: one send of its index.
    producers = [asyncio.create_task(queue.put(i)) for i in range(n)]
    total = 0
    for _ in range(n):
        total += await queue.get()
    for task in producers:
        await task
    return total


async def skynet(num, size):
    """A node of the skynet tree covering leaves num..num+size-1: a leaf
    returns its index, a parent starts its 10 children as tasks, all before
    awaiting the first, and returns their sum. Awaiting each in turn, not
    gather: gather adds a future and a done-callback per child, and a child
    already finished when its turn comes costs no suspension at all."""
    if size == 1:
        return num
    size //= 10
    children = [asyncio.create_task(skynet(num + k * size, size)) for k in range(10)]
    total = 0
    for child in children:
        total += await child
    return total


async def timed_run(args: argparse.Namespace, capacity: Optional[int], collecting: bool,
                    ran: bool) -> Tuple[int, int, Optional[int]]:
    """One run of the workload, timed: (ns, its answer, sleep's spawn_ns or None),
    after a full collection if collecting and something ran before it in this
    process (ran: the priming or a pass). Warm-up runs and iterations both
    come here, so they are timed alike."""
    if collecting and ran:
        # The last pass's garbage is collected here, before the clock, not
        # inside this pass (docs/protocol.md, "Collection between passes").
        # Nothing of ours to collect before the first pass of a fresh
        # process; a full collection there only adds the collector's own
        # structures to the peak RSS (sleep N = 1: Java 44 -> 51 MiB, Go 2.4 -> 2.7).
        collect()
    spawn_ns = None
    start = time.perf_counter_ns()
    if args.workload == "sleep":
        result, spawn_ns = await sleep(args.n, args.duration_ms)
    elif args.workload == "chain":
        result = await chain(args.n)
    elif args.workload == "chain-await":
        result = await chain_await(args.n)
    elif args.workload == "skynet":
        # The root is a task too, like every node (the protocol's clock
        # runs from spawning the root to holding its sum).
        result = await asyncio.create_task(skynet(0, args.n))
    else:
        result = await bounded(args.n, capacity)
    return time.perf_counter_ns() - start, result, spawn_ns


async def prime(args: argparse.Namespace) -> Optional[int]:
    """The priming (docs/protocol.md): for chain and chain-await, one untimed
    run of the same coroutine on P = min(N, PRIME_LINKS) links, its answer
    checked; returns P (None for the other workloads). A JIT (PyPy's) has
    then seen a relay resume before the cold pass at size N."""
    if args.workload not in PRIMED_WORKLOADS:
        return None
    links = min(args.n, PRIME_LINKS)
    workload = chain if args.workload == "chain" else chain_await
    answer = await workload(links)
    if answer != links:
        raise PrimingError(f"the priming {args.workload} of {links} links answered "
                           f"{answer}, not {links}")
    return links


async def warm_up(args: argparse.Namespace, capacity: Optional[int], collecting: bool,
                  primed: bool, max_runs: int = MAX_WARMUP_RUNS) -> Tuple[List[int], List[int]]:
    """Warm-up runs until they total W ms or number max_runs, so that PyPy's
    iterations measure the JIT's compiled code rather than its progress; the
    last one crosses W (or is the max_runs-th). Each run collects first if
    collecting, the first only if primed. Returns (warmup_ns, answers)."""
    warmup_ns: List[int] = []
    warmup_results: List[int] = []
    total, target = 0, args.warmup_ms * 1_000_000
    while total < target and len(warmup_ns) < max_runs:
        ns, result, _ = await timed_run(args, capacity, collecting, primed or bool(warmup_ns))
        warmup_ns.append(ns)
        warmup_results.append(result)
        total += ns
    return warmup_ns, warmup_results


async def run(args: argparse.Namespace, capacity: Optional[int]) -> Tuple[
        List[int], List[int], Optional[int], List[int], List[int], Optional[int]]:
    """Primes (chain, chain-await), warms up, then runs the K timed
    iterations, each run after a collection unless BENCH_COLLECT=0 or it is
    the process's first (no priming)."""
    collecting = collect_enabled()
    primed = await prime(args)
    warmup_ns, warmup_results = await warm_up(args, capacity, collecting, primed is not None)
    ran = primed is not None or bool(warmup_ns)
    results: List[int] = []
    iter_ns: List[int] = []
    spawn_ns = None
    for i in range(args.iterations):
        ns, result, spawned = await timed_run(args, capacity, collecting, ran or i > 0)
        if spawn_ns is None:  # the protocol reports the first iteration's
            spawn_ns = spawned
        iter_ns.append(ns)
        results.append(result)
    return results, iter_ns, spawn_ns, warmup_ns, warmup_results, primed


def runtime_label(loop_name, server=None):
    if platform.python_implementation() == "PyPy":
        pypy = sys.pypy_version_info
        label = f"PyPy {pypy.major}.{pypy.minor}.{pypy.micro} (Python {platform.python_version()})"
    else:
        label = f"{platform.python_implementation()} {platform.python_version()}"
    if loop_name == "uvloop":
        import uvloop

        label += f", uvloop {uvloop.__version__}"
    if server == "aiohttp":
        import importlib.metadata  # here: the other workloads need not import it

        # The installed version, without importing aiohttp itself.
        label += f", aiohttp {importlib.metadata.version('aiohttp')}"
    elif server == "threads":
        label += ", stdlib threads"
    return label


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # The protocol allows exactly one line on stderr, not argparse's usage.
        message = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def count(minimum, maximum=INT64_MAX, maximum_text="2^63-1"):
    """ASCII decimal digits only (no sign, '_', spaces or other scripts'
    digits, all of which int() accepts), from minimum to maximum."""

    def parse(text):
        if not re.fullmatch(r"[0-9]+", text) or not minimum <= int(text) <= maximum:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {minimum} to {maximum_text}, got {text!r}")
        return int(text)

    return parse


def add_loop_option(parser):
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="the event loop (default asyncio)")


SERVE_USAGE = ("bench.py [--loop asyncio|uvloop] [--server aiohttp|threads] serve "
               "--port P --delay-ms D [--threads T]")


def parse_serve_args(argv):
    """The protocol's `serve`; the options before `serve` (--loop, --server)
    may come from the registry's run argv."""
    parser = Parser(
        prog="bench.py", allow_abbrev=False, usage=SERVE_USAGE,
        description="docs/protocol.md's HTTP server on 127.0.0.1: prints one JSON "
                    "line when it listens, serves until SIGTERM or SIGINT, exits 0.")
    add_loop_option(parser)
    parser.add_argument("--server", choices=SERVERS, default="aiohttp",
                        help="aiohttp: all five styles on one event loop (default); "
                             "threads: the blocking styles on a pool of T handler threads")
    parser.add_argument("workload", choices=("serve",), metavar="serve")
    parser.add_argument("--port", type=count(0, 65535, "65535"), metavar="P",
                        help="TCP port on 127.0.0.1 (0 = a free port; required)")
    parser.add_argument("--delay-ms", type=count(1, MAX_DELAY_MS, "2^30-1"), metavar="D",
                        help="the simulated calls take 2*D ms (double) and D ms (halve) "
                             "(>= 1, required)")
    parser.add_argument("--threads", type=count(1, MAX_THREADS, str(MAX_THREADS)), metavar="T",
                        help="the size of the pools: parallel's calls, and with "
                             "--server threads the handler threads (default "
                             "min(32, cores + 4), ThreadPoolExecutor's)")
    args = parser.parse_args(argv)
    args.version = False
    missing = [name for name in ("--port", "--delay-ms")
               if getattr(args, name[2:].replace("-", "_")) is None]
    if missing:
        parser.error(f"serve needs {' and '.join(missing)}")
    return args


def parse_args(argv):
    if "serve" in argv:
        return parse_serve_args(argv)
    parser = Parser(
        prog="bench.py", allow_abbrev=False,
        usage="bench.py [--loop asyncio|uvloop] WORKLOAD --n N --iterations K "
              "[--buffer B] [--duration-ms D] [--warmup-ms W]\n       " + SERVE_USAGE,
        description="One run of a docs/protocol.md workload; prints one JSON line. "
                    "`bench.py serve --help` describes the HTTP server.")
    add_loop_option(parser)
    parser.add_argument("--server", choices=SERVERS,
                        help="with --version: label the given server's runtime "
                             "(see serve --help)")
    parser.add_argument("--version", action="store_true",
                        help="print the runtime label and exit")
    parser.add_argument("workload", nargs="?", choices=WORKLOADS, metavar="WORKLOAD",
                        help=", ".join(WORKLOADS))
    parser.add_argument("--n", type=count(1), metavar="N",
                        help="number of tasks (>= 1, required; skynet: leaves, a power of ten)")
    parser.add_argument("--iterations", type=count(1), metavar="K",
                        help="in-process iterations (>= 1, required)")
    parser.add_argument("--buffer", type=count(0), metavar="B",
                        help="channel capacity, required by bounded (>= 0; 0 = rendezvous)")
    parser.add_argument("--duration-ms", type=count(1), metavar="D",
                        help="how long each task sleeps, required by sleep (>= 1)")
    parser.add_argument("--warmup-ms", type=count(0), default=0, metavar="W",
                        help="warm-up runs until they total W ms, at most %d runs "
                             "(>= 0, default 0)" % MAX_WARMUP_RUNS)
    args = parser.parse_args(argv)
    if not args.version:
        if args.workload is None:
            parser.error(f"missing WORKLOAD ({', '.join(WORKLOADS)}, serve)")
        if args.server is not None:
            parser.error("--server is only for serve")
        required = ["n", "iterations"]
        if args.workload == "bounded":
            required.append("buffer")
        if args.workload == "sleep":
            required.append("duration_ms")
        missing = ["--" + name.replace("_", "-") for name in required
                   if getattr(args, name) is None]
        if missing:
            parser.error(f"{args.workload} needs {' and '.join(missing)}")
        if args.workload == "skynet" and not power_of_ten(args.n):
            parser.error(f"skynet needs N a power of ten (1, 10, 100, ...): 10 children a node, "
                         f"got {args.n}")
    return args


def power_of_ten(n):
    while n % 10 == 0:
        n //= 10
    return n == 1


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        print(runtime_label(args.loop, args.server))
        return
    loop_factory = None
    if args.loop == "uvloop":
        # Imported only when chosen, so python-asyncio's RSS carries no uvloop.
        import uvloop

        loop_factory = uvloop.new_event_loop
    if args.workload == "serve":
        import server  # beside this script; only serve pays for it (and aiohttp)

        sys.exit(server.serve(args, loop_factory, runtime_label(args.loop, args.server)))
    # B = 0 (a rendezvous) runs as maxsize=1: maxsize=0 would be unbounded.
    capacity = max(args.buffer, 1) if args.workload == "bounded" else None
    # The loop is created before run() starts any clock.
    try:
        if hasattr(asyncio, "Runner"):
            with asyncio.Runner(loop_factory=loop_factory) as runner:
                runs = runner.run(run(args, capacity))
        else:
            # Python < 3.11 (PyPy 7.3.11 is 3.9, asyncio's loop only): asyncio.run
            # is what Runner.run does, a new loop running run() as a Task.
            runs = asyncio.run(run(args, capacity))
    except PrimingError as error:
        sys.exit(f"bench.py: error: {error}")
    results, iter_ns, spawn_ns, warmup_ns, warmup_results, primed = runs
    report = {
        "workload": args.workload,
        "n": args.n,
        "buffer": args.buffer if args.workload == "bounded" else None,
        "result": results[-1],
        "results": results,
        "iter_ns": iter_ns,
        "warmup_ns": warmup_ns,
        "warmup_results": warmup_results,
    }
    if primed is not None:
        report["primed"] = primed
    if spawn_ns is not None:
        report["spawn_ns"] = spawn_ns
    if capacity is not None and capacity != args.buffer:
        report["capacity"] = capacity
    report["runtime"] = runtime_label(args.loop)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
