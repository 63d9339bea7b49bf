"""The harness as a user meets it: bad input, statuses, files, resume, signals."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from ..conftest import (FAKES, ROOT, cmdline, fake_registry, harness, harness_main,
                        leftovers as _leftovers, read_rows)

# FAKE_TOKEN marks the fakes a test started (conftest.leftovers): the programs get it
# only because the test asks (the programs' environment is an allow-list).
RUN = ["run", "--no-report", "--repeat", "1", "--inherit-env", "FAKE_TOKEN"]


def exit_and_stderr(capsys: pytest.CaptureFixture[str], args: list[str],
                    process: bool) -> tuple[int | str | None, str]:
    """`python -m harness ARGS`'s exit status and stderr (the registry of
    this environment's BENCH_IMPLS_PATH): in a process of its own (process),
    else in this one (conftest.harness_main)."""
    if process:
        proc = subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        return proc.returncode, proc.stderr
    done = harness_main(capsys, *args)
    return done.returncode, done.stderr


@pytest.mark.parametrize("args,process", [
    (["--n", "-1"], True), (["--n", "0"], False), (["--n", "abc"], False),
    (["--n", "10,x"], False), (["--buffer", "-1"], False), (["--impl", "nope"], False),
    (["--workload", "nope"], False), (["--repeat", "0"], False), (["--max-rss", "lots"], False),
    (["--timeout", "0"], False), (["--suite", "nope"], False), (["--bogus"], True),
    (["--n"], False),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
        args: list[str], process: bool, out: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    impl = ["--impl", "fake-good"] if "--impl" not in args else []
    status, err = exit_and_stderr(capsys, [*RUN, *impl, "--out", str(out), *args], process)
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not out.exists()


def test_unwritable_out(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = harness(*RUN, "--impl", "fake-good", "--out", str(blocker / "results"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_good_run_records_every_column(out: Path) -> None:
    proc = harness(*RUN, "--impl", "fake-good", "--workload", "sleep,chain,chain-await,bounded",
                   "--n", "10,20", "--buffer", "0,5", "--duration-ms", "50", "--iterations", "3",
                   "--out", str(out), extra_env={"PYTHONPYCACHEPREFIX": str(out / "pyc")})
    rows = [r for r in read_rows(out) if r["impl"] == "fake-good"]
    # sleep, chain, chain-await at 2 sizes; bounded at 2 sizes x 2 buffers
    assert len(rows) == 3 * 2 + 4, proc.stdout
    assert {r["status"] for r in rows} == {"ok"}, rows
    bounded = [r for r in rows if r["workload"] == "bounded"]
    assert sorted((r["n"], r["buffer"], r["expected"]) for r in bounded) == [
        ("10", "0", "45"), ("10", "5", "45"), ("20", "0", "190"), ("20", "5", "190")]
    for r in rows:
        assert r["runtime"].startswith("Fake (Python 3.")
        assert r["peak_rss_method"] == "wait4-launcher"
        assert int(r["peak_rss_bytes"]) > 1_000_000
        assert float(r["wall_s"]) > 0 and r["cpu_user_s"] != ""
        assert r["iterations"] == "3" and r["first_iter_s"] and r["warm_iter_s"]
        assert float(r["load_avg_1m"]) >= 0
        # bounded below 10,000 producers: without the collection between
        # passes, which the command says as a shell line would
        command = r["command"].removeprefix("BENCH_COLLECT=0 ")
        assert (command != r["command"]) == (r["workload"] == "bounded"), r["command"]
        assert command.startswith(sys.executable) and "--iterations 3" in command
        assert json.loads(r["output"])["workload"] == r["workload"]
        # each run found its cache folder empty, though every run wrote to its own
        assert json.loads(r["output"])["cache_found"] == [], r["output"]
        # Python reads its installed bytecode and writes none of its own
        assert json.loads(r["output"])["pycache_prefix"] is None, r["output"]
        assert json.loads(r["output"])["writes_bytecode"] is False, r["output"]
    assert all(r["spawn_s"] and r["sleep_wait_s"] for r in rows if r["workload"] == "sleep")
    # too short for /proc's ticks to tell (under 0.2 core-seconds): recorded as unknown
    assert all(r["other_cpu_frac"] == "" or 0 <= float(r["other_cpu_frac"]) <= 1 for r in rows)
    assert all(r["buffer"] == "" for r in rows if r["workload"] != "bounded")

    env = json.loads((out / "latest" / "env.json").read_text())
    assert env["host"]["cores"] >= 1 and env["host"]["ram_bytes"] > 0
    assert env["toolchains"]["fake"].startswith("Python")
    assert env["git"]["commit"] and env["finished_at"]
    assert env["settings"]["duration_ms"] == 50
    # what the programs ran with: no pycache prefix, no bytecode written
    assert env["program_env"]["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "PYTHONPYCACHEPREFIX" not in env["program_env"]
    samples = (out / "latest" / "samples.csv").read_text().splitlines()
    assert samples[0] == ("run_id,impl,workload,n,buffer,users,requests,delay_ms,pool_threads,"
                          "style,rate,step_s,cpus,machine,rep,t_s,rss_bytes,threads")
    assert len(samples) > 10  # the 50 ms sleeps alone give several samples each
    assert (out / "latest").is_symlink()


@pytest.mark.parametrize("impl,status,error", [
    ("fake-wrong", "invalid", "result 21 != expected 20"),
    ("fake-garbage", "invalid", "not JSON"),
    ("fake-crash", "crashed", "exit 3: fake: something broke"),
    ("fake-missing", "skipped", "toolchain missing"),
    ("fake-unavailable", "skipped", "not available: no runtime binary for this platform"),
    ("fake-broken", "build-failed", "compile error: fake"),
    ("fake-flood", "invalid", "output too large (over 1 MiB on stdout)"),
    ("fake-selfkill", "crashed", "killed by SIGKILL"),
    ("fake-stderr", "crashed", "exit 4: fake: line 30"),
])
def test_failures_are_recorded_rows(impl: str, status: str, error: str, out: Path) -> None:
    proc = harness(*RUN, "--impl", impl, "--workload", "chain", "--n", "20", "--out", str(out))
    # every row skipped: nothing measured, exit 3 (test_first_run.py)
    assert proc.returncode == (3 if status == "skipped" else 1), proc.stdout + proc.stderr
    [row] = read_rows(out)
    assert row["status"] == status and error in row["error"], row


def _token() -> str:
    return uuid.uuid4().hex


def test_timeout_kills_the_whole_tree(out: Path) -> None:
    token = _token()
    started = time.monotonic()
    harness(*RUN, "--impl", "fake-hang", "--workload", "chain", "--n", "7", "--timeout", "1.5",
            "--out", str(out), extra_env={"FAKE_TOKEN": token})
    assert time.monotonic() - started < 60
    [row] = read_rows(out)
    assert row["status"] == "timeout", row
    assert not _leftovers(token)


def test_max_rss_gives_oom_and_kills(out: Path) -> None:
    token = _token()
    harness(*RUN, "--impl", "fake-hog", "--workload", "chain", "--n", "7", "--max-rss", "150M",
            "--timeout", "60", "--out", str(out), extra_env={"FAKE_TOKEN": token})
    [row] = read_rows(out)
    assert row["status"] == "oom", row
    # The kill follows a sampled reading above the limit; the row's peak is the
    # kernel's high-water mark, whose per-CPU counters can lag a few pages
    # behind (CI saw 149.98 MiB), so "near the limit" is the check.
    assert 140 * 2**20 < int(row["peak_rss_bytes"]) < 400 * 2**20
    assert not _leftovers(token)


def test_resume_skips_ok_rows_and_retries_the_rest(out: Path) -> None:
    args = [*RUN, "--impl", "fake-good,fake-crash", "--workload", "chain", "--n", "5",
            "--out", str(out)]
    harness(*args)
    first = read_rows(out)
    assert sorted(r["status"] for r in first) == ["crashed", "ok"]
    proc = harness(*args, "--resume")
    assert "already ok" in proc.stdout
    rows = read_rows(out)
    assert [r["status"] for r in rows] == ["ok", "crashed"]
    assert rows[0] == first[[r["status"] for r in first].index("ok")]  # the ok row is untouched
    retried = (out / "latest" / "retried.csv").read_text().splitlines()
    assert len(retried) == 2 and retried[1].split(",")[1] == "fake-crash"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_interrupt_keeps_completed_rows_and_leaves_nothing(sig: int, out: Path) -> None:
    token = _token()
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), FAKE_TOKEN=token)
    proc = subprocess.Popen([sys.executable, "-m", "harness", *RUN, "--impl", "fake-good,fake-hang",
                             "--workload", "chain", "--n", "3", "--timeout", "120", "--out", str(out)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(_leftovers(token)) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)  # the harness, its launcher, the fake and its grandchild
    assert len(_leftovers(token)) >= 4, "the hanging fake never started"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig
    assert "interrupted" in err and "Traceback" not in err
    rows = read_rows(out)
    assert [(r["impl"], r["status"]) for r in rows] == [("fake-good", "ok")]
    time.sleep(0.2)
    assert not _leftovers(token)


def test_list_shows_the_matrix_and_missing_toolchains() -> None:
    proc = harness("list")
    assert proc.returncode == 0
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert "MISSING" in lines["fake-missing"]
    assert lines["fake-wrong"].split()[1:6] == ["fake", "-", "yes", "-", "-"]
    assert "go" in lines


def test_make_keeps_lang_out_of_the_programs_environment(out: Path) -> None:
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), LANG="C.UTF-8")
    proc = subprocess.run(["make", "-s", "bench", "LANG=fake-good", "N=4", "WORKLOAD=chain",
                           "REPEAT=1", f"OUT={out}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [row] = read_rows(out)
    output = json.loads(row["output"])
    assert output["lang_env"] != "fake-good" and not output["make_env"]
    assert json.loads((out / "latest" / "env.json").read_text())["program_env"].get("LANG") != "fake-good"


def test_report_of_a_run_where_nothing_was_ok(out: Path) -> None:
    proc = harness("run", "--repeat", "1", "--impl", "fake-wrong,fake-crash", "--workload", "chain",
                   "--n", "10", "--out", str(out))
    assert "could not be written" not in proc.stderr, proc.stderr
    report = (out / "latest" / "report.md").read_text()
    assert "invalid" in report and "crashed" in report
    assert (out / "latest" / "plots" / "chain_time.png").stat().st_size > 1000


def test_a_broken_registry_entry_is_one_line_exit_2(tmp_path: Path) -> None:
    lang = tmp_path / "bad"
    lang.mkdir()
    (lang / "impls.toml").write_text(
        '[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n'
        '[[impl]]\nid = "bad-impl"\nrun = ["true"]\nworkloads = ["sleep"]\ntasks_start = "sometimes"\n')
    env = dict(os.environ, BENCH_IMPLS_PATH=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "harness", "list"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "tasks_start must be one of" in proc.stderr


def test_other_processes_cpu_during_a_run_is_recorded(out: Path) -> None:
    """Two busy loops hold both cores while a fake sleeps half a second:
    the row records that other processes used the CPU."""
    hogs = [subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 30\n"
                              "while time.time() < end: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        proc = harness(*RUN, "--impl", "fake-good", "--workload", "sleep", "--n", "3",
                       "--duration-ms", "500", "--out", str(out))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert proc.returncode == 0, proc.stderr
    [row] = read_rows(out)
    assert float(row["other_cpu_frac"]) > 0.1, row


@pytest.mark.parametrize("body,key", [
    ('language = "go"\n', "[language]"),
    ('[language]\nname = "bad"\ndetect = "true"\nbuild = ["true"]\ntest = ["true"]\n', "'detect'"),
    ('impl = 3\n[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n',
     "'impl'"),
    ('impl = [1]\n[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n',
     "[[impl]]"),
    ('[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n'
     '[[impl]]\nid = "b"\nrun = ["true"]\nworkloads = "sleep"\n', "'workloads'"),
    ('[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n'
     '[[impl]]\nid = "b"\nrun = ["true"]\nworkloads = ["sleep"]\nenv = "X=1"\n', "'env'"),
    ('[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n'
     '[[impl]]\nid = "b"\nrun = ["true"]\nworkloads = ["sleep"]\nruntime = 3\n', "'runtime'"),
    ('[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n'
     '[[impl]]\nid = "b"\nrun = ["true"]\nworkloads = ["sleep"]\ntasks_start = "sometimes"\n',
     "tasks_start"),
    ('[language]\nname = "bad"\ndetect = ["true"]\nbuild = ["true"]\ntest = ["true"]\n'
     'build_cores = 0\n', "build_cores"),
    ('[language\nname = "bad"\n', "impls.toml"),
    (b'\xff\xfe\x00', "impls.toml"),
])
def test_a_malformed_impls_toml_is_one_line_naming_file_and_key(
        body: str | bytes, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    lang = tmp_path / "bad"
    lang.mkdir()
    path = lang / "impls.toml"
    path.write_bytes(body if isinstance(body, bytes) else body.encode())
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(tmp_path))
    # in a real process: the TOML that does not parse (the two last cases)
    process = key == "impls.toml"
    for args in (["list"], ["run", "--impl", "bad", "--dry-run"]):
        status, err = exit_and_stderr(capsys, args, process)
        assert status == 2, err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert str(path) in err and key in err, err


@pytest.mark.parametrize("args", [
    ["--sample-interval-ms", "inf"], ["--timeout", "inf"], ["--timeout", "nan"],
    ["--workload", ","], ["--impl", ","], ["--n", ""],
])
def test_odd_values_are_one_line_exit_2(args: list[str], out: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    status, err = exit_and_stderr(capsys, [*RUN, "--impl", "fake-good", "--workload", "chain",
                                           "--n", "5", "--out", str(out), *args],
                                  process=args[0] == "--timeout" and args[1] == "nan")
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("option,value,bounds", [
    ("--timeout", "1e-300", "0.001 to 2592000 seconds"), ("--timeout", "1e300", "30 days"),
    ("--timeout", "0", "1 ms"), ("--max-rss", "1", "16M to 8388607T"),
    ("--max-rss", "99999999999999999999T", "8388607T"), ("--max-rss", "9" * 400, "16M"),
    ("--sample-interval-ms", "1e-9", "1 to 60000 ms"), ("--sample-interval-ms", "1e300", "60000"),
    ("--inherit-env", "", "--inherit-env is empty"),
])
def test_values_out_of_range_are_one_line_naming_the_range(
        option: str, value: str, bounds: str, out: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Accepted before: a timeout of 1e-300 s or 1e300 s (0 was refused), a
    limit of 1 byte or past 64 bits, a sample every picosecond, no name to
    inherit. In-process: the refusal comes before any program or file."""
    from harness import cli
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    for extra in (["--dry-run"], []):
        status = cli.main([*RUN, "--impl", "fake-good", "--workload", "chain", "--n", "5",
                           "--out", str(out), option, value, *extra])
        err = capsys.readouterr().err
        assert status == 2, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert err.startswith("harness: error: ") and option in err and bounds in err, err
    assert not out.exists()


def test_a_crash_keeps_the_last_20_lines_of_stderr_and_sigkill_is_not_called_oom(out: Path) -> None:
    harness(*RUN, "--impl", "fake-stderr,fake-selfkill", "--workload", "chain", "--n", "5",
            "--out", str(out))
    rows = {r["impl"]: r for r in read_rows(out)}
    assert rows["fake-stderr"]["stderr_tail"].splitlines() == [f"fake: line {i}" for i in range(11, 31)]
    assert "OOM" not in rows["fake-selfkill"]["error"]


def test_harness_sigkilled_mid_sleep_run_leaves_nothing_within_2_s(out: Path) -> None:
    token = _token()
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), FAKE_TOKEN=token)
    log = out.parent / "harness.log"
    with log.open("w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "harness", *RUN, "--impl", "fake-good",
                                 "--workload", "sleep", "--n", "3", "--duration-ms", "60000",
                                 "--out", str(out)], cwd=ROOT, env=env,
                                stdout=f, stderr=subprocess.STDOUT)
    def sleeping() -> bool:  # the measured fake itself (python fake.py ...), not a build step
        return any(len(c := cmdline(p)) > 1 and c[1].endswith("fake.py")
                   for p in _leftovers(token))
    deadline = time.monotonic() + 120  # a bound on the start, wide for a loaded machine
    while not sleeping() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    state = "still running" if proc.poll() is None else f"exited {proc.returncode}"
    assert sleeping() and len(_leftovers(token)) >= 3, (  # the harness, its launcher, the fake
        f"the sleep run never started (the harness {state}): {log.read_text()[-2000:]}")
    time.sleep(0.5)  # in the middle of the 60 s sleep
    proc.kill()
    proc.wait(timeout=10)
    gone_by = time.monotonic() + 2.0
    while _leftovers(token) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not _leftovers(token)


def test_bring_your_own_program_with_registry(out: Path, tmp_path: Path) -> None:
    """--registry: an implementation declared outside the tree, paths relative to its file."""
    mine = tmp_path / "elsewhere"
    mine.mkdir()
    shutil.copy(FAKES / "fake" / "fake.py", mine / "patched.py")
    (mine / "impls.toml").write_text(
        '[language]\nname = "patched"\ndetect = ["{python}", "--version"]\n'
        'build = ["{python}", "-c", "pass"]\ntest = ["{python}", "-c", "pass"]\n\n'
        '[[impl]]\nid = "patched-go"\nruntime = "a patched runtime"\n'
        'run = ["{python}", "{dir}/patched.py", "--mode", "good"]\nworkloads = ["chain"]\n')
    proc = harness(*RUN, "--impl", "patched-go,fake-good", "--workload", "chain", "--n", "5",
                   "--registry", str(mine / "impls.toml"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = read_rows(out)
    assert {(r["impl"], r["status"]) for r in rows} == {("patched-go", "ok"), ("fake-good", "ok")}
    env = json.loads((out / "latest" / "env.json").read_text())
    assert env["registries"][str(mine / "impls.toml")].startswith("[language]")
    listed = harness("list", "--registry", str(mine / "impls.toml")).stdout
    assert f"from {mine / 'impls.toml'}" in listed
    # without it, the implementation is unknown: one line, exit 2
    proc = harness(*RUN, "--impl", "patched-go", "--out", str(out))
    assert proc.returncode == 2 and "unknown implementation" in proc.stderr
    # a missing file, or a language name already taken, is one line too
    for bad in (tmp_path / "nope.toml", FAKES / "fake" / "impls.toml"):
        proc = harness("list", "--registry", str(bad))
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_setup_says_what_it_installs_as_it_goes(tmp_path: Path, out: Path) -> None:
    """A set-up's stderr line that starts with its language's name reaches
    the user; the rest of its output goes to the build log only."""
    registry = fake_registry(tmp_path, "announcer", "announced", language_extra=(
        """setup = ["sh", "-c", "echo 'announcer: installing nothing, about 0 MB' >&2; """
        """echo 'noise' >&2"]"""))
    proc = harness("run", "--impl", "announced", "--workload", "chain", "--n", "10", "--repeat", "1",
                   "--no-report", "--registry", str(registry), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "announcer: installing nothing, about 0 MB" in proc.stderr
    assert "noise" not in proc.stderr
    log = (out / "latest" / "build-announcer.log").read_text()
    assert "noise" in log and "announcer: installing nothing" in log


def test_a_build_step_killed_by_a_signal_is_not_called_a_timeout(tmp_path: Path) -> None:
    from harness.execute.builder import _step
    from harness.core.registry import Language
    lang = Language("sig", tmp_path, ["true"], ["true"], ["true"])
    code, _, err = _step(["sh", "-c", "echo 'sig: starting' >&2; kill -9 $$"], lang)
    assert code == -9 and "killed after" not in err and "sig: starting" in err
