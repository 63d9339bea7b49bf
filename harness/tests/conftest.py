from __future__ import annotations

import csv
import functools
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Generator, Iterator, NoReturn

import psutil
import pytest

from harness.execute.langtests import ci

ROOT = Path(__file__).resolve().parents[2]
FAKES = Path(__file__).resolve().parent / "fakes"


# The attribute that marks a skip or failure raised by tool_missing (pytest
# names a subclass of its exceptions in the report's line: hence no subclass)
TOOL = "untested_for_want_of"


def tool_missing(tool: str, reason: str) -> NoReturn:
    """A tool that `make test` installs (docs/usage.md, "What make test
    runs": the load generator, Chromium, perf, Slurm, shellcheck, a language's toolchain) is
    not here and could not be installed. On a developer's machine the test is
    skipped with the reason; under CI (CI=true, as .ci/run sets) it fails,
    since a test that did not run there is a feature left untested. A tool
    that is present but that the machine refuses (perf's counters in a VM, a
    mount without root) is not missing: the test calls pytest.skip with why."""
    __tracebackhide__ = True  # the skip is reported at the test's line, not here
    exc: BaseException
    if ci():
        exc = pytest.fail.Exception(f"CI: {tool} missing, and make test installs it: {reason}",
                                    pytrace=False)
    else:
        exc = pytest.skip.Exception(f"{tool} missing: {reason}")
    setattr(exc, TOOL, tool)
    raise exc from None  # the reason is in the message: no second traceback of what raised it


SLURM_LOCAL = ROOT / "cluster" / "slurm-local.sh"


def pytest_configure(config: pytest.Config) -> None:
    """Tests install tools with apt-get (chromium, shellcheck, Slurm, a
    language's set-up), several at once under pytest-xdist: apt takes its
    lock without waiting unless told to wait (read before the machine's own
    configuration, which may say otherwise)."""
    os.environ.setdefault("APT_CONFIG", str(Path(__file__).parent / "fixtures" / "apt-wait.conf"))


def install_slurm(pytestconfig: pytest.Config, for_what: str) -> None:
    """Debian's Slurm packages (cluster/slurm-local.sh install), so that a
    test of Slurm runs on a fresh machine whichever test comes first; said
    before it is installed. tool_missing where it cannot be."""
    if all(shutil.which(t) or Path("/usr/sbin", t).exists()
           for t in ("slurmctld", "slurmd", "sbatch", "munged")):
        return
    if os.geteuid() != 0 and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode:
        tool_missing("Slurm", "not installed, and installing it needs root or sudo that asks no "
                              "password")
    if not shutil.which("apt-get"):
        tool_missing("Slurm", "not installed, and no apt-get to install it")
    if os.environ.get("BENCH_NO_SYSTEM_INSTALL") == "1":
        tool_missing("Slurm", "not installed, and BENCH_NO_SYSTEM_INSTALL=1 refuses to install it")
    # said while pytest captures the output: the script's own line would wait for the end
    with pytestconfig.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print(f"harness tests: cluster/slurm-local.sh installs Debian's slurmctld, slurmd, "
              f"slurm-client and munge system-wide for {for_what} (about 3.3 MB to download, "
              "13 MB on disk; BENCH_NO_SYSTEM_INSTALL=1 refuses) ...", file=sys.stderr, flush=True)
    done = subprocess.run([str(SLURM_LOCAL), "install"], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr


# tool: {test file: tests it kept from running}
UNTESTED: defaultdict[str, Counter[str]] = defaultdict(Counter)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    # a module's fixture that called tool_missing() raises the same exception for each of its tests
    exc = call.excinfo.value if call.excinfo is not None else None
    if isinstance(exc, (pytest.skip.Exception, pytest.fail.Exception)) and hasattr(exc, TOOL):
        # on this phase's report (a new list: pytest shares the item's with every phase),
        # which pytest-xdist's workers send to the process that prints the summary
        report.user_properties = [*report.user_properties, (TOOL, getattr(exc, TOOL))]
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for key, tool in report.user_properties:
        if key == TOOL:
            UNTESTED[tool][report.nodeid.split("::")[0]] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Each tool that was missing, with the test groups it left untested."""
    if not UNTESTED:
        return
    title = ("CI: failed, tools make test installs were missing" if ci() else
             "untested here: tools make test installs were missing (CI=true fails on these)")
    terminalreporter.section(title, sep="=", red=ci(), yellow=not ci())
    for tool, groups in sorted(UNTESTED.items()):
        terminalreporter.line(f"{tool}:")
        for group, count in sorted(groups.items()):
            terminalreporter.line(f"  {group}: {count} test{'s' if count != 1 else ''} "
                                  f"{'failed' if ci() else 'skipped'} for want of it")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--dist loadgroup on a worker: each test of an xdist_group named
    `NODEID@GROUP`, by which the scheduler keeps the group on one worker.
    pytest-xdist 3.8 sets `item._nodeid` for that, which pytest 9's nodes no
    longer read (their id is `_id`, a NodeId), so it is done here."""
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import NodeId  # pytest's own type of a node's id
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is not None and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{mark.args[0]}")  # type: ignore[attr-defined]


RESULTS = ROOT / "docs" / "results"
# The tests that read a published page as harness/publish/ renders it: under
# pytest-xdist they run on one worker, which renders each page once.
PUBLISHED = pytest.mark.xdist_group("published-pages")


@functools.cache
def published_page(name: str) -> str:
    """docs/results/NAME.md as harness/publish/ writes it from the files
    beside it, rendered once per process: a calibration page's A/A gate
    trials take half a minute, and three tests read the same page."""
    from harness.publish import page, readme_tables
    return page.render_page(readme_tables.load_page(RESULTS, name), name)


def builds(language: str) -> pytest.MarkDecorator:
    """The mark of a test that builds a language of the repository in its
    folder: under pytest-xdist (make test) such tests of one language run on
    one worker, one after another, never two builds of a folder at once."""
    return pytest.mark.xdist_group(f"builds-{language}")


def harness(*args: str, extra_env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), **(extra_env or {}))
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def harness_main(capsys: pytest.CaptureFixture[str],
                 *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m harness ARGS` run in this process, as __main__ runs it
    (cli.main; argparse's own exit caught), its exit status and output as
    harness() gives them. Where the command starts no program of its own
    (bad input refused, an export), the same check as harness() without a
    process's second of start-up; an exception that would be a traceback
    fails the test. Each such test keeps a case in a real process
    (harness()), so the command's start is tested too."""
    from harness import cli
    try:
        status = cli.main(list(args))
    except SystemExit as exc:  # cli.Parser.error
        # as the interpreter exits with it: None is 0, a message 1
        status = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["harness", *args], status, out, err)


def fake_registry(folder: Path, language: str, impl_id: str, language_extra: str = "",
                  impl_extra: str = "") -> Path:
    """An impls.toml of its own (for --registry): one language whose one
    implementation is the good fake, running chain; extra TOML lines for the
    [language] table and the [[impl]]."""
    path = folder / "impls.toml"
    path.write_text(f"""[language]
name = "{language}"
detect = ["{{python}}", "-c", "print('Python')"]
build = ["{{python}}", "-c", "pass"]
test = ["{{python}}", "-c", "pass"]
{language_extra}

[[impl]]
id = "{impl_id}"
run = ["{{python}}", "{FAKES / 'fake'}/fake.py", "--mode", "good"]
workloads = ["chain"]
{impl_extra}
""")
    return path


def read_rows(out: Path) -> list[dict[str, str]]:
    with (out / "latest" / "runs.csv").open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "results"


def leftovers(token: str) -> list[psutil.Process]:
    """Processes still alive from a test's fakes: they inherit FAKE_TOKEN,
    so other sessions running the same tests on the machine do not count."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("FAKE_TOKEN") == token:
                found.append(p)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def cmdline(p: psutil.Process) -> list[str]:
    """p's command line, or [] once it has ended or is a zombie (it may end
    between being listed and being asked)."""
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def gone_within(token: str, seconds: float) -> list[psutil.Process]:
    """The test's processes still alive after waiting up to `seconds` for them to go."""
    deadline = time.monotonic() + seconds
    while (left := leftovers(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def token() -> Iterator[str]:
    """A FAKE_TOKEN for the processes a test starts; whatever of them is
    still alive at the end is killed (only what this test started)."""
    value = uuid.uuid4().hex
    yield value
    for p in leftovers(value):
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
