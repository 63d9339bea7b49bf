"""What CI may leave untested: a tool that `make test` installs, missing,
skips its tests with the reason on a developer's machine and fails them
under CI=true, naming the tool and the test file (conftest.tool_missing); a
machine that refuses what is there stays a skip. `harness test` exits 3
when no language was tested, and under CI=true 1 for a language skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT, harness

TESTS = """
import pytest
from harness.tests.conftest import tool_missing

def test_needs_actionlint():
    tool_missing("actionlint", "actionlint is built with Go, and there is no go on PATH")

def test_refused_by_the_kernel():
    pytest.skip("perf is installed but cannot count here")

def test_runs():
    assert True
"""


def pytest_run(tmp_path: Path, ci: str | None, *options: str) -> subprocess.CompletedProcess[str]:
    """The file above under the project's pytest settings and conftest hooks."""
    test = tmp_path / "test_tools.py"
    test.write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-p", "harness.tests.conftest", *options, str(test)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_missing_tool_is_a_skip_with_its_reason_on_a_developers_machine(tmp_path: Path) -> None:
    proc = pytest_run(tmp_path, None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 2 skipped" in proc.stdout
    # each reason printed, at the test's own line, not only a count
    assert ("SKIPPED [1] test_tools.py:6: actionlint missing: actionlint is built with Go, "
            "and there is no go on PATH") in proc.stdout
    assert "SKIPPED [1] test_tools.py:9: perf is installed but cannot count here" in proc.stdout
    assert "CI=true fails on these" in proc.stdout
    assert "actionlint:\n  test_tools.py: 1 test skipped for want of it" in proc.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_a_missing_tool_fails_naming_the_tool_and_its_tests(tmp_path: Path,
                                                                      ci: str) -> None:
    proc = pytest_run(tmp_path, ci)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed, 1 passed, 1 skipped" in proc.stdout
    assert ("FAILED test_tools.py::test_needs_actionlint - Failed: CI: actionlint missing, "
            "and make test installs it: actionlint is built with Go") in proc.stdout
    assert "CI: failed, tools make test installs were missing" in proc.stdout
    assert "actionlint:\n  test_tools.py: 1 test failed for want of it" in proc.stdout
    # the machine refusing a tool that is there is still a skip, with its reason
    assert "SKIPPED [1] test_tools.py:9: perf is installed but cannot count here" in proc.stdout


def test_the_missing_tools_are_summed_up_when_workers_ran_the_tests(tmp_path: Path) -> None:
    """make test runs the suite on pytest-xdist's workers: the tools they
    found missing still reach the summary, each test counted once."""
    proc = pytest_run(tmp_path, "true", "-n", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed, 1 passed, 1 skipped" in proc.stdout
    assert "CI: failed, tools make test installs were missing" in proc.stdout
    assert "actionlint:\n  test_tools.py: 1 test failed for want of it" in proc.stdout


GROUPED = """
import pytest
from harness.tests.conftest import builds

@pytest.mark.parametrize("n", [pytest.param(n, marks=builds("same")) for n in range(6)])
def test_grouped(n):
    pass
"""


def test_the_tests_of_one_language_build_run_on_one_worker(tmp_path: Path) -> None:
    """conftest.builds under --dist loadgroup (make test's): every test of
    the group on one worker, never two builds of a folder at once."""
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-p", "harness.tests.conftest", "-n", "2", "--dist", "loadgroup",
                           str(tmp_path / "test_grouped.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the group in each test's id: what the scheduler keeps on one worker
    assert proc.stdout.count("@builds-same") == 6, proc.stdout
    assert "6 passed" in proc.stdout, proc.stdout


def harness_test(impl: str, ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {"CI": ci} if ci is not None else {}
    if ci is None and "CI" in os.environ:  # this session's own CI must not decide the case
        env["CI"] = "false"
    return harness("test", "--impl", impl, extra_env=env)


def test_harness_test_with_nothing_tested_exits_3_with_each_reason() -> None:
    proc = harness_test("fake-missing", None)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "languages: 0 passed, 0 failed, 1 skipped" in proc.stdout
    assert proc.stderr.splitlines() == [
        "harness: nothing was tested: every language was skipped (exit status 3)",
        "  fakemissing: toolchain missing: no-such-toolchain-anywhere not found"]


def test_harness_test_skips_a_language_locally_and_fails_it_under_ci() -> None:
    local = harness_test("fake-missing,fake-good", None)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "fake: PASSED" in local.stdout and "1 passed, 0 failed, 1 skipped" in local.stdout
    assert not local.stderr
    ci = harness_test("fake-missing,fake-good", "true")
    assert ci.returncode == 1, ci.stdout + ci.stderr
    assert ci.stderr.splitlines() == [
        "harness: CI: 1 language untested, a failure here: make test installs every "
        "language's toolchain",
        "  fakemissing: toolchain missing: no-such-toolchain-anywhere not found"]


def test_harness_test_fails_on_a_failed_build() -> None:
    proc = harness_test("fake-broken", None)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "fakebroken: BUILD-FAILED" in proc.stdout
