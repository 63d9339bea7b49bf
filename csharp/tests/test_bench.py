"""Black-box tests of the built C# program (bin/dotnet bin/Bench.dll) against
docs/protocol.md, at sizes small enough to run in a few seconds. Run by
`toolchain.sh test` after the build; the same checks hold for both build routes."""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path

BIN = Path(__file__).resolve().parent.parent / "bin"
PROGRAM = [str(BIN / "dotnet"), str(BIN / "Bench.dll")]


def run(*args, env=None):
    return subprocess.run(PROGRAM + list(args), capture_output=True, text=True, timeout=60, env=env)


class Workloads(unittest.TestCase):
    def report(self, *args, env=None):
        proc = run(*args, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(len(lines), 1, proc.stdout)
        return json.loads(lines[0])

    def check(self, report, workload, n, expected, iterations, buffer=None):
        self.assertEqual(report["workload"], workload)
        self.assertEqual(report["n"], n)
        self.assertEqual(report["buffer"], buffer)
        self.assertEqual(report["results"], [expected] * iterations)
        self.assertEqual(report["result"], expected)
        self.assertEqual(len(report["iter_ns"]), iterations)
        self.assertTrue(all(t > 0 for t in report["iter_ns"]))
        self.assertRegex(report["runtime"], r"^\.NET \d+\.\d+\.\d+ \((mcs|Roslyn)")

    def check_warmup(self, report, warmup_ms, expected):
        """At least one warm-up run, each answer right, and the rule: the runs until their
        total reached W ms, the last one being the one that got there."""
        runs = report["warmup_ns"]
        self.assertGreaterEqual(len(runs), 1)
        self.assertEqual(report["warmup_results"], [expected] * len(runs))
        self.assertTrue(all(isinstance(t, int) and t > 0 for t in runs), runs)
        self.assertGreaterEqual(sum(runs), warmup_ms * 1_000_000)
        self.assertLess(sum(runs[:-1]), warmup_ms * 1_000_000)

    def test_chain(self):
        report = self.report("async", "chain", "--n", "1000", "--iterations", "2")
        self.check(report, "chain", 1000, 1000, 2)
        # No --warmup-ms (or 0): no warm-up run, the two keys empty.
        self.assertEqual((report["warmup_ns"], report["warmup_results"]), ([], []))
        report = self.report("async", "chain", "--n", "10", "--iterations", "1", "--warmup-ms", "0")
        self.assertEqual((report["warmup_ns"], report["warmup_results"]), ([], []))

    def test_chain_and_chain_await_are_primed(self):
        # docs/protocol.md "Priming": one untimed chain of P = min(N, 1000) links before
        # the timed passes, reported as "primed"; iter_ns still has one entry a pass.
        for workload in ("chain", "chain-await"):
            for n in (5, 2000):
                with self.subTest(workload=workload, n=n):
                    report = self.report("async", workload, "--n", str(n), "--iterations", "3")
                    self.check(report, workload, n, n, 3)
                    self.assertEqual(report["primed"], min(n, 1000))
        # With --warmup-ms too (the priming comes first, and is not a warm-up run).
        report = self.report("async", "chain-await", "--n", "2000", "--iterations", "2", "--warmup-ms", "1")
        self.check(report, "chain-await", 2000, 2000, 2)
        self.assertEqual(report["primed"], 1000)
        self.check_warmup(report, 1, 2000)
        # Only chain and chain-await prime.
        report = self.report("async", "bounded", "--n", "10", "--buffer", "1", "--iterations", "1")
        self.assertNotIn("primed", report)

    def test_bench_collect_changes_nothing_in_the_line(self):
        # docs/protocol.md "Collection between passes": collected (unset, or any value but
        # "0") or not (BENCH_COLLECT=0), the same keys and answers. The order of collections
        # and passes is checked in process (tests/UnitTests.cs).
        base = {k: v for k, v in os.environ.items() if k != "BENCH_COLLECT"}
        for value in (None, "0", "1"):
            env = dict(base) if value is None else dict(base, BENCH_COLLECT=value)
            with self.subTest(BENCH_COLLECT=value):
                report = self.report("async", "chain", "--n", "2000", "--iterations", "3", "--warmup-ms", "1",
                                     env=env)
                self.check(report, "chain", 2000, 2000, 3)
                self.check_warmup(report, 1, 2000)
                self.assertEqual(report["primed"], 1000)
                self.assertEqual(sorted(report), sorted(["workload", "n", "buffer", "result", "results", "iter_ns",
                                                         "warmup_ns", "warmup_results", "primed", "runtime"]))

    def test_warmup_runs_before_the_iterations(self):
        report = self.report("async", "bounded", "--n", "1000", "--buffer", "1", "--iterations", "3",
                             "--warmup-ms", "100")
        self.check(report, "bounded", 1000, 1000 * 999 // 2, 3, buffer=1)
        self.check_warmup(report, 100, 1000 * 999 // 2)

    def test_warmup_of_sleep_threads(self):
        # Each run takes at least D = 20 ms: W = 400 needs many runs, never one even when
        # a busy machine makes a run take several times D (W = 50 once ended after one).
        report = self.report("threads", "sleep", "--n", "10", "--duration-ms", "20", "--iterations", "1",
                             "--warmup-ms", "400")
        self.check(report, "sleep", 10, 10, 1)
        self.check_warmup(report, 400, 10)
        self.assertGreaterEqual(len(report["warmup_ns"]), 2)

    def test_warmup_stops_after_10000_runs(self):
        # At N = 10 a run takes microseconds: W = 60 s ends at the cap of 10000 runs
        # (Program.MaxWarmupRuns), well before W, each answer reported.
        start = time.monotonic()
        report = self.report("async", "bounded", "--n", "10", "--buffer", "1", "--iterations", "2",
                             "--warmup-ms", "60000")
        self.assertLess(time.monotonic() - start, 30)
        self.check(report, "bounded", 10, 45, 2, buffer=1)
        self.assertEqual(len(report["warmup_ns"]), 10000)
        self.assertEqual(report["warmup_results"], [45] * 10000)
        self.assertLess(sum(report["warmup_ns"]), 60000 * 1_000_000)

    def test_chain_await_deep_chain(self):
        # Deep enough that continuations must not pile up on one stack.
        report = self.report("async", "chain-await", "--n", "100000", "--iterations", "1")
        self.check(report, "chain-await", 100000, 100000, 1)

    def test_bounded_buffered(self):
        report = self.report("async", "bounded", "--n", "500", "--buffer", "16", "--iterations", "10")
        self.check(report, "bounded", 500, 500 * 499 // 2, 10, buffer=16)
        self.assertNotIn("capacity", report)

    def test_bounded_rendezvous_runs_with_capacity_one(self):
        report = self.report("async", "bounded", "--n", "500", "--buffer", "0", "--iterations", "3")
        self.check(report, "bounded", 500, 500 * 499 // 2, 3, buffer=0)
        self.assertEqual(report["capacity"], 1)

    def test_skynet(self):
        for n in (1, 10, 10000):
            report = self.report("async", "skynet", "--n", str(n), "--iterations", "2")
            self.check(report, "skynet", n, n * (n - 1) // 2, 2)

    def test_sleep_async(self):
        self.check_sleep("async")

    def test_sleep_threads(self):
        self.check_sleep("threads")

    def check_sleep(self, model):
        report = self.report(model, "sleep", "--n", "200", "--duration-ms", "100", "--iterations", "1")
        self.check(report, "sleep", 200, 200, 1)
        self.assertGreaterEqual(report["iter_ns"][0], 100_000_000)
        self.assertLess(report["spawn_ns"], report["iter_ns"][0])

    def test_version_names_the_compiler(self):
        proc = run("--version")
        self.assertEqual(proc.returncode, 0)
        self.assertRegex(proc.stdout, r"^\d+\.\d+\.\d+, (mcs|Roslyn)")


# docs/protocol.md's bad input: the one table, which the harness's
# test_conformance.py runs against every implementation.
BAD_INPUT = json.loads((BIN.parent.parent / "docs" / "protocol-bad-input.json").read_text())


def expand(args, w):
    """A case's args for workload w: "{w}" its name, "{required}" its other
    required options (spliced)."""
    out = []
    for arg in args:
        out += BAD_INPUT["required"][w] if arg == "{required}" else [w if arg == "{w}" else arg]
    return out


def protocol_bad_input(workload, workloads, serves):
    """The table's cases with one workload the model runs, those of the
    model's workloads, each workload it does not run, and serve's when it
    serves."""
    cases = []
    for case in BAD_INPUT["cases"]:
        when = case.get("when")
        if when in (None, "declared") or when in workloads or (when == "http" and serves):
            cases.append(expand(case["args"], workload))
        elif when == "undeclared":
            cases += [expand(case["args"], w) for w in BAD_INPUT["required"] if w not in workloads]
    return cases


class BadArguments(unittest.TestCase):
    # (model, its program workloads, whether it serves), as in impls.toml.
    MODELS = [
        ("async", ["sleep", "chain", "chain-await", "bounded", "skynet"], True),
        ("threads", ["sleep"], False),
    ]
    # Beyond the table: the model itself, leftovers, values mcs's int would wrap, bad --warmup-ms.
    MORE = [
        [],
        ["fibers", "sleep", "--n", "5", "--iterations", "1", "--duration-ms", "5"],
        ["threads", "chain-await", "--n", "5", "--iterations", "1"],
        ["async", "chain", "--n", "5", "--iterations", "1", "extra"],
        ["async", "chain", "--n", "99999999999", "--iterations", "1"],
        ["async", "chain", "--n", "+5", "--iterations", "1"],
        ["async", "chain", "--n", "5", "--iterations", "1", "--warmup-ms", "-1"],
        ["async", "chain", "--n", "5", "--iterations", "1", "--warmup-ms", "x"],
        ["async", "chain", "--n", "5", "--iterations", "1", "--warmup-ms", "1.5"],
        ["async", "chain", "--n", "5", "--iterations", "1", "--warmup-ms", "99999999999"],
        ["async", "chain", "--n", "5", "--iterations", "1", "--warmup-ms"],
        ["threads", "sleep", "--n", "5", "--iterations", "1", "--duration-ms", "5", "--warmup-ms", "-1"],
        ["async", "skynet", "--n", "2", "--iterations", "1"],  # not a power of ten
        ["async", "skynet", "--n", "20", "--iterations", "1"],
        ["async", "skynet", "--n", "1001", "--iterations", "1"],
        ["threads", "chain", "--n", "5", "--iterations", "1"],
        ["threads", "serve", "--port", "0", "--delay-ms", "10"],
        ["serve", "--port", "0", "--delay-ms", "10"],
    ]

    def check_bad(self, args):
        with self.subTest(args=args):
            proc = run(*args)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(proc.stdout, "")
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            self.assertTrue(proc.stderr.endswith("\n"), proc.stderr)

    def test_protocol_table_exits_2_with_one_stderr_line(self):
        for model, workloads, serves in self.MODELS:
            for workload in workloads:
                for args in protocol_bad_input(workload, workloads, serves):
                    self.check_bad([model] + args)

    def test_more_bad_input(self):
        for args in self.MORE:
            self.check_bad(args)

    def test_help_on_stdout_exit_0(self):
        for args in (["async", "--help"], ["threads", "-h"], ["--help"]):
            with self.subTest(args=args):
                proc = run(*args)
                self.assertEqual(proc.returncode, 0)
                self.assertEqual(proc.stderr, "")
                self.assertTrue(proc.stdout.startswith("usage: "), proc.stdout)
                self.assertIn("--warmup-ms W", proc.stdout)


# --- serve: functional tests only (a handful of requests, D = 20 ms; timing
# checked from below, the style's floor, never from above).

DELAY_MS = 20
STYLES = ["sync", "sync-over-async", "parallel", "async", "when-all"]
FLOOR_MS = {"sync": 3 * DELAY_MS, "sync-over-async": 3 * DELAY_MS, "async": 3 * DELAY_MS,
            "parallel": 2 * DELAY_MS, "when-all": 2 * DELAY_MS}
# .NET's timers (Task.Delay) count in Environment.TickCount64, which on Linux reads
# CLOCK_MONOTONIC_COARSE: it advances by the kernel's tick (4 ms here), so a
# Task.Delay(40) can end up to one tick early by a precise clock (36.4 ms was
# seen: README.md). A style's answer may therefore come one tick early per timer
# waited in sequence: two in the 3·D styles, one in parallel and when-all.
COARSE_TICK_MS = time.clock_getres(6) * 1000  # 6: CLOCK_MONOTONIC_COARSE on Linux
SEQUENTIAL_TIMERS = {"sync": 2, "sync-over-async": 2, "async": 2, "parallel": 1, "when-all": 1}


def lowest_ms(style):
    """The least time a correct answer of style can take, timer granularity allowed."""
    return FLOOR_MS[style] - SEQUENTIAL_TIMERS[style] * COARSE_TICK_MS


class ServerProcess:
    """`Bench.dll async serve ...` with its ready line read (60 s allowed: the
    runtime starts slowly on a busy machine)."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(PROGRAM + ["async", "serve"] + list(args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        lines = []
        reader = threading.Thread(target=lambda: lines.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(60)
        if not lines or not lines[0].endswith("\n"):
            self.kill()
            raise AssertionError(f"no ready line: {lines!r}, stderr {self.proc.stderr.read()!r}")
        self.line = lines[0]
        self.ready = json.loads(self.line)
        self.port = self.ready["listening"]

    def stop(self, sig):
        """Sends sig; returns (exit status, stdout after the ready line, stderr)."""
        self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"still running 30 s after {sig!r}")
        return self.proc.returncode, out, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def get(conn, path):
    """GET on a kept-alive connection: (status, body, content type, seconds)."""
    start = time.monotonic()
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read().decode()
    return response.status, body, response.getheader("Content-Type"), time.monotonic() - start


def listening_addresses(port):
    """Local addresses of the LISTEN sockets on port, from /proc/net/tcp{,6} (Linux)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[1].endswith(f":{port:04X}"):
                    found.append(fields[1])
    return found


class Serve(unittest.TestCase):
    def test_styles_health_errors_keepalive_and_sigterm(self):
        server = ServerProcess("--port", "0", "--delay-ms", str(DELAY_MS))
        try:
            ready = server.ready
            self.assertEqual(list(ready), ["listening", "styles", "threads", "runtime"])
            self.assertGreater(ready["listening"], 0)
            self.assertEqual(ready["styles"], STYLES)
            self.assertIsNone(ready["threads"])
            self.assertRegex(ready["runtime"], r"^\.NET \d+\.\d+\.\d+ \((mcs|Roslyn)")
            self.assertEqual(listening_addresses(server.port), [f"0100007F:{server.port:04X}"])  # 127.0.0.1 only

            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            self.assertEqual(get(conn, "/health")[:2], (200, "ok"))
            first_socket = conn.sock  # http.client opens a new socket if the server closed this one
            for style in STYLES:
                for num in (0, 7, 2**31 - 1):
                    with self.subTest(style=style, num=num):
                        status, body, content_type, seconds = get(conn, f"/{style}/{num}")
                        self.assertEqual((status, body, content_type), (200, str(2 * num + num // 2), "text/plain"))
                        self.assertGreaterEqual(seconds * 1000, lowest_ms(style), "answered below the style's floor")
            self.assertIs(conn.sock, first_socket, "the connection was not kept alive")

            for path, want in [("/nope/5", 404), ("/sync", 404), ("/", 404), ("/health/1", 404),
                               ("/sync/abc", 400), ("/async/-1", 400), ("/when-all/+5", 400),
                               ("/parallel/2147483648", 400), ("/sync-over-async/", 400), ("/sync/1.5", 400),
                               ("/sync/99999999999999999999", 400)]:
                with self.subTest(path=path):
                    self.assertEqual(get(conn, path)[0], want)
            conn.close()

            code, out, err = server.stop(signal.SIGTERM)
            self.assertEqual((code, out), (0, ""), err)
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
        finally:
            server.kill()

    def test_concurrent_requests_on_separate_connections(self):
        # A handful at once, one of each style, each on its own connection: all
        # answered right (timing checked from below only).
        server = ServerProcess("--port", "0", "--delay-ms", str(DELAY_MS))
        try:
            results = {}

            def one(style):
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
                results[style] = get(conn, f"/{style}/10")
                conn.close()

            threads = [threading.Thread(target=one, args=(style,)) for style in STYLES]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            for style in STYLES:
                status, body, _, seconds = results[style]
                self.assertEqual((status, body), (200, "25"), style)
                self.assertGreaterEqual(seconds * 1000, lowest_ms(style), style)
            self.assertEqual(server.stop(signal.SIGTERM)[0], 0)
        finally:
            server.kill()

    def test_threads_reported_and_sigint_exits_0(self):
        server = ServerProcess("--port", "0", "--delay-ms", "10", "--threads", "3")
        try:
            self.assertEqual(server.ready["threads"], 3)
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            self.assertEqual(get(conn, "/parallel/10")[:2], (200, "25"))
            conn.close()
            code, out, err = server.stop(signal.SIGINT)
            self.assertEqual((code, out), (0, ""), err)
        finally:
            server.kill()

    def test_port_in_use_is_one_line(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            proc = run("async", "serve", "--port", str(taken.getsockname()[1]), "--delay-ms", "10")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)

    BAD = [
        [],
        ["--port", "0"],
        ["--delay-ms", "10"],
        ["--port", "0", "--delay-ms", "0"],
        ["--port", "0", "--delay-ms", "-5"],
        ["--port", "0", "--delay-ms", "abc"],
        ["--port", "-1", "--delay-ms", "10"],
        ["--port", "65536", "--delay-ms", "10"],
        ["--port", "0x10", "--delay-ms", "10"],
        ["--port", "0", "--delay-ms", "10", "--threads", "0"],
        ["--port", "0", "--delay-ms", "10", "--threads", "-2"],
        ["--port", "0", "--delay-ms", "10", "--threads"],
        ["--port", "0", "--delay-ms", "10", "--threads", "40000"],  # above the pool's maximum
        ["--port", "0", "--delay-ms", "99999999999999999999999"],
        ["--port", "0", "--delay-ms", "10", "--n", "5"],
        ["--port", "0", "--delay-ms", "10", "extra"],
    ]

    def test_bad_arguments_exit_2_with_one_stderr_line(self):
        for args in self.BAD:
            with self.subTest(args=args):
                proc = run("async", "serve", *args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertEqual(proc.stdout, "")
                self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
                self.assertTrue(proc.stderr.endswith("\n"), proc.stderr)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.wasSuccessful() else 0)
