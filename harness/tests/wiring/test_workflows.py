"""The GitHub Actions workflows (.github/workflows/*.yml) linted by
actionlint, and the bench workflow's job summary in place.

actionlint is built from the Go module proxy as the load generator is (harness/execute/loadgen.py):
`go install` of ACTIONLINT_VERSION into .tools/bin/ (git-ignored), announced
in one line, its output kept in .tools/actionlint-build.log, and built again
only when the binary there is missing or another version. No go on PATH:
the tests are skipped with that reason (under CI, a failure:
conftest.tool_missing). go there but the build failing is a failure: every
machine this project runs on reaches the module proxy.

shellcheck: actionlint runs it on `run:` scripts when it finds it on PATH,
which would make the outcome depend on the machine. So the first test turns
it off (`-shellcheck=`), and a second one asks for it by path, installing
Debian's `shellcheck` when missing (announced like chromium for the
report.html test; BENCH_NO_SYSTEM_INSTALL=1 refuses, and that test is then
skipped with the reason, under CI failed): the scripts are where quoting
mistakes hide.
pyflakes is off in both: no step runs `shell: python`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import ROOT
from harness.processes.children import run_contained
from harness.execute.loadgen import TOOLS

from ..conftest import tool_missing

ACTIONLINT_MODULE = "github.com/rhysd/actionlint"
ACTIONLINT_VERSION = "v1.7.12"
ACTIONLINT = TOOLS / "bin" / "actionlint"
BUILD_LOG = TOOLS / "actionlint-build.log"
WORKFLOWS = ROOT / ".github" / "workflows"
NO_SYSTEM_INSTALL = "BENCH_NO_SYSTEM_INSTALL"


def _announce(config: pytest.Config, text: str) -> None:
    """One line the user sees even while pytest captures output."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(text, file=sys.stderr, flush=True)


def _installed_version() -> str | None:
    """The first line of `actionlint -version` (v1.7.12 for a go-installed
    build), or None when there is no working binary."""
    if not ACTIONLINT.exists():
        return None
    try:
        out = subprocess.run([str(ACTIONLINT), "-version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.split("\n", 1)[0].strip() or None


def ensure_actionlint(config: pytest.Config) -> Path:
    """.tools/bin/actionlint at ACTIONLINT_VERSION, built first when missing."""
    if _installed_version() == ACTIONLINT_VERSION:
        return ACTIONLINT
    go = shutil.which("go")
    if go is None:
        tool_missing("go", "actionlint is built with Go, and there is no go on PATH")
    package = f"{ACTIONLINT_MODULE}/cmd/actionlint@{ACTIONLINT_VERSION}"
    _announce(config, f"harness tests: installing actionlint {ACTIONLINT_VERSION}, the workflows' "
                      f"linter, into {TOOLS.relative_to(ROOT)}/bin: go install {package} from "
                      f"the Go module proxy (about 5 MB of modules, an 8 MB binary, under 20 s "
                      f"on 2 cores; its output goes to {BUILD_LOG.relative_to(ROOT)})")
    # Built into a folder of this process's own, then renamed into place: a
    # test session running beside this one never sees half a binary.
    staging = TOOLS / f".actionlint-build.{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GOBIN=str(staging), CGO_ENABLED="0")
    argv = [go, "install", "-trimpath", package]
    started = time.monotonic()
    try:
        done = run_contained(argv, ROOT, env=env, timeout_s=900)
        try:
            BUILD_LOG.write_text(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}\n"
                                 f"[exit {done.returncode} after {time.monotonic() - started:.1f} s]\n")
        except OSError:
            pass
        built = staging / "actionlint"
        if done.returncode != 0 or not built.is_file():
            tail = [ln for ln in done.stderr.strip().splitlines() if not ln.startswith("go: downloading")]
            why = "timed out" if done.timed_out else f"exited {done.returncode}"
            pytest.fail(f"building actionlint failed (go install {why}: "
                        f"{tail[-1] if tail else 'no message'}; log: {BUILD_LOG.relative_to(ROOT)})",
                        pytrace=False)
        ACTIONLINT.parent.mkdir(parents=True, exist_ok=True)
        os.replace(built, ACTIONLINT)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    found = _installed_version()
    if found != ACTIONLINT_VERSION:
        pytest.fail(f"the actionlint built reports version {found!r}, not {ACTIONLINT_VERSION}",
                    pytrace=False)
    return ACTIONLINT


def ensure_shellcheck(config: pytest.Config) -> str:
    """shellcheck, installed with apt-get when missing (as root, announced);
    when it cannot be had, tool_missing(): skipped with the reason, under CI a failure."""
    found = shutil.which("shellcheck")
    if found:
        return found
    if os.environ.get(NO_SYSTEM_INSTALL) == "1":
        tool_missing("shellcheck", f"not installed, and {NO_SYSTEM_INSTALL}=1 refuses to "
                              f"apt-get install it")
    if shutil.which("apt-get") is None:
        tool_missing("shellcheck", "not installed, and no apt-get to install it")
    if os.geteuid() != 0:
        tool_missing("shellcheck", "not installed, and installing it needs root "
                              "(apt-get install -y shellcheck)")
    _announce(config, "harness tests: installing Debian's shellcheck for the workflow test "
                      f"(about 6 MB to download, 25 MB on disk; {NO_SYSTEM_INSTALL}=1 refuses) ...")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "shellcheck"]
    proc = subprocess.run(install, env=env, capture_output=True, text=True)
    if proc.returncode != 0:  # stale package lists: once more after an update
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, text=True)
        proc = subprocess.run(install, env=env, capture_output=True, text=True)
    found = shutil.which("shellcheck")
    if proc.returncode != 0 or not found:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        tool_missing("shellcheck", f"installing it failed (apt-get exited {proc.returncode}: {last})")
    return found


@pytest.fixture(scope="module")
def actionlint(pytestconfig: pytest.Config) -> Path:
    return ensure_actionlint(pytestconfig)


def _workflows() -> list[Path]:
    files = sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])
    assert files, f"no workflow in {WORKFLOWS.relative_to(ROOT)}"
    return files


def _lint(actionlint: Path, shellcheck: str) -> subprocess.CompletedProcess[str]:
    files = [str(p.relative_to(ROOT)) for p in _workflows()]
    return subprocess.run([str(actionlint), "-no-color", f"-shellcheck={shellcheck}", "-pyflakes=",
                           *files], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_every_workflow_passes_actionlint(actionlint: Path) -> None:
    proc = _lint(actionlint, "")
    assert proc.returncode == 0, (f"actionlint {ACTIONLINT_VERSION} (exit {proc.returncode}):\n"
                                  f"{proc.stdout}{proc.stderr}")


def test_the_workflows_run_scripts_pass_shellcheck(actionlint: Path,
                                                   pytestconfig: pytest.Config) -> None:
    shellcheck = ensure_shellcheck(pytestconfig)
    proc = _lint(actionlint, shellcheck)
    version = subprocess.run([shellcheck, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"version: (\S+)", version)
    assert proc.returncode == 0, (f"actionlint {ACTIONLINT_VERSION} with shellcheck "
                                  f"{found[1] if found else '?'} (exit {proc.returncode}):\n"
                                  f"{proc.stdout}{proc.stderr}")


def test_the_bench_workflow_writes_each_report_to_the_job_summary() -> None:
    """Both jobs, each machine's run and the merge, end with the report as
    the job's summary page (docs/usage.md)."""
    text = (WORKFLOWS / "bench.yml").read_text()
    summary = re.compile(r'harness report \S+ --format github >> "\$GITHUB_STEP_SUMMARY"')
    jobs = re.split(r"\n  (?=[a-z][\w-]*:\n)", text.split("\njobs:\n", 1)[1])
    assert len(jobs) == 2, [j.split(":", 1)[0] for j in jobs]
    for job in jobs:
        assert summary.search(job), f"job {job.split(':', 1)[0].strip()!r} writes no job summary"
