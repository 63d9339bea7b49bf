"""Black-box tests of the built C# program (bin/dotnet bin/Bench.dll) against
docs/protocol.md, at sizes small enough to run in a few seconds. Run by
`toolchain.sh test` after the build; the same checks hold for both build routes."""

import json
import subprocess
import sys
import unittest
from pathlib import Path

BIN = Path(__file__).resolve().parent.parent / "bin"
PROGRAM = [str(BIN / "dotnet"), str(BIN / "Bench.dll")]


def run(*args):
    return subprocess.run(PROGRAM + list(args), capture_output=True, text=True, timeout=60)


class Workloads(unittest.TestCase):
    def report(self, *args):
        proc = run(*args)
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

    def test_chain(self):
        self.check(self.report("async", "chain", "--n", "1000"), "chain", 1000, 1000, 2)

    def test_chain_await_deep_chain(self):
        # Deep enough that continuations must not pile up on one stack.
        report = self.report("async", "chain-await", "--n", "100000", "--iterations", "1")
        self.check(report, "chain-await", 100000, 100000, 1)

    def test_bounded_buffered(self):
        report = self.report("async", "bounded", "--n", "500", "--buffer", "16")
        self.check(report, "bounded", 500, 500 * 499 // 2, 10, buffer=16)
        self.assertNotIn("capacity", report)

    def test_bounded_rendezvous_runs_with_capacity_one(self):
        report = self.report("async", "bounded", "--n", "500", "--buffer", "0", "--iterations", "3")
        self.check(report, "bounded", 500, 500 * 499 // 2, 3, buffer=0)
        self.assertEqual(report["capacity"], 1)

    def test_sleep_async(self):
        self.check_sleep("async")

    def test_sleep_threads(self):
        self.check_sleep("threads")

    def check_sleep(self, model):
        report = self.report(model, "sleep", "--n", "200", "--duration-ms", "100")
        self.check(report, "sleep", 200, 200, 1)
        self.assertGreaterEqual(report["iter_ns"][0], 100_000_000)
        self.assertLess(report["spawn_ns"], report["iter_ns"][0])

    def test_version_names_the_compiler(self):
        proc = run("--version")
        self.assertEqual(proc.returncode, 0)
        self.assertRegex(proc.stdout, r"^\d+\.\d+\.\d+, (mcs|Roslyn)")


class BadArguments(unittest.TestCase):
    CASES = [
        [],
        ["async"],
        ["async", "spin", "--n", "5"],
        ["fibers", "sleep", "--n", "5"],
        ["threads", "chain", "--n", "5"],
        ["async", "chain"],
        ["async", "chain", "--n"],
        ["async", "chain", "--n", "0"],
        ["async", "chain", "--n", "-3"],
        ["async", "chain", "--n", "x"],
        ["async", "chain", "--n", "99999999999"],
        ["async", "bounded", "--n", "5", "--buffer", "-1"],
        ["async", "sleep", "--n", "5", "--duration-ms", "0"],
        ["async", "chain", "--n", "5", "--iterations", "0"],
        ["async", "chain", "--n", "5", "--fast", "1"],
        ["async", "chain", "--n", "5", "extra"],
    ]

    def test_exit_2_with_one_stderr_line(self):
        for args in self.CASES:
            with self.subTest(args=args):
                proc = run(*args)
                self.assertEqual(proc.returncode, 2)
                self.assertEqual(proc.stdout, "")
                self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.wasSuccessful() else 0)
