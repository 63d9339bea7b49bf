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
        self.check(self.report("async", "chain", "--n", "1000", "--iterations", "2"), "chain", 1000, 1000, 2)

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


def protocol_bad_input(workload, unimplemented):
    """docs/protocol.md's table of bad input for one workload the model runs
    (harness/tests/test_conformance.py runs the same table)."""
    w = workload
    return [
        [], [w], [w, "--n", "10"],
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
        [unimplemented, "--n", "10", "--iterations", "1"],
    ]


class BadArguments(unittest.TestCase):
    # (model, its workloads, a workload it does not run), as in impls.toml.
    MODELS = [
        ("async", ["sleep", "chain", "chain-await", "bounded"], "spin"),
        ("threads", ["sleep"], "chain"),
    ]
    # Beyond the table: the model itself, leftovers, values mcs's int would wrap.
    MORE = [
        [],
        ["fibers", "sleep", "--n", "5", "--iterations", "1", "--duration-ms", "5"],
        ["threads", "chain-await", "--n", "5", "--iterations", "1"],
        ["async", "chain", "--n", "5", "--iterations", "1", "extra"],
        ["async", "chain", "--n", "99999999999", "--iterations", "1"],
        ["async", "chain", "--n", "+5", "--iterations", "1"],
    ]

    def check_bad(self, args):
        with self.subTest(args=args):
            proc = run(*args)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(proc.stdout, "")
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            self.assertTrue(proc.stderr.endswith("\n"), proc.stderr)

    def test_protocol_table_exits_2_with_one_stderr_line(self):
        for model, workloads, unimplemented in self.MODELS:
            for workload in workloads:
                for args in protocol_bad_input(workload, unimplemented):
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


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.wasSuccessful() else 0)
