"""Hostile input: bad options, malformed or out-of-range run files, paths
that are missing, a file, a FIFO, a symlink loop or read-only, a full disk.
Each is one line on stderr starting "harness: error:", exit status 2, no
traceback, no hang, and nothing written (docs/promises.md, "Hostile input").

One test per point of the issue "Nothing left running, nothing leaked"
(11: tracebacks, 12: hangs, 13: refused but something written, 14: accepted
but invalid), then a property-style test feeding every subcommand a
generated set of malformed values and files. Cases run in-process through
harness.cli.main where they can (a subprocess only where a hang needs a
timeout), and no language is ever built (the fakes, --no-build)."""

from __future__ import annotations

import csv
import errno
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from harness import cli
from harness.record.rundir import RunDir
from harness.core.schema import FORMAT_VERSION
from harness.plan.options import Options
from harness.plan.settings import LIMITS, MAX_REPEAT, PROGRAM_MAX

from ..conftest import FAKES, ROOT, harness, install_slurm

V2 = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "v2"
RUN = ["run", "--no-build", "--no-report", "--impl", "fake-good", "--workload", "chain",
       "--n", "1", "--repeat", "1"]
# fake-wrong's chain row at N = 1 is `invalid` in the fixture: --resume plans it again
RESUME = ["run", "--no-build", "--no-report", "--impl", "fake-wrong", "--workload", "chain",
          "--n", "1", "--repeat", "1", "--resume"]


@pytest.fixture(autouse=True)
def _fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def _reached(*args: object, **kwargs: object) -> None:
    raise AssertionError("bad input reached the build or a program")


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A case that slips through fails at once, and runs no program (an
    `--impl ""` read as "all" would start every implementation)."""
    from harness import session
    monkeypatch.setattr(session, "Preparation", _reached)
    monkeypatch.setattr(session, "ProcessExecutor", _reached)


# ---------------------------------------------------------------- helpers

def call(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[object, str]:
    """harness.cli.main in this process: (exit status, stderr)."""
    capsys.readouterr()
    try:
        status: object = cli.main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own refusals
        status = exc.code
    except BaseException as exc:  # noqa: BLE001 (a traceback is what is tested for)
        status = f"raised {type(exc).__name__}: {exc}"
    return status, capsys.readouterr().err


def refused(status: object, err: str) -> None:
    lines = err.strip().splitlines()
    assert status == 2, f"exit {status!r}, stderr: {err}"
    assert "Traceback" not in err, err
    assert len(lines) == 1 and lines[0].startswith("harness: error:"), err


def snapshot(*roots: Path) -> dict[str, tuple]:
    """Every entry under roots: its kind, and a file's size and mtime."""
    seen: dict[str, tuple] = {}
    for root in roots:
        if not (root.exists() or root.is_symlink()):
            continue
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                path = Path(folder, name)
                st = path.lstat()
                seen[str(path)] = (st.st_mode >> 12, st.st_size if name in files else 0,
                                   st.st_mtime_ns if name in files else 0)
    return seen


def refused_leaving(root: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """argv refused in one line, with nothing under root changed; its stderr."""
    before = snapshot(root)
    status, err = call(capsys, argv)
    refused(status, err)
    assert snapshot(root) == before
    return err


def run_dir(parent: Path, name: str = "run", source: Path = V2) -> Path:
    """A copy of the committed format 2 run directory, with its own run id."""
    path = parent / name
    shutil.copytree(source, path)
    env = json.loads((path / "env.json").read_text())
    env["run_id"] = name
    (path / "env.json").write_text(json.dumps(env, indent=2) + "\n")
    return path


def latest_of(parent: Path, name: str = "run") -> tuple[Path, Path]:
    """OUT holding a copy of the fixture and `latest` pointing at it (for --resume)."""
    out = parent / "out"
    out.mkdir()
    run = run_dir(out, name)
    (out / "latest").symlink_to(name)
    return out, run


def set_cell(path: Path, column: str, value: str, line: int = 2) -> None:
    rows = list(csv.reader(path.open(newline="")))
    rows[line - 1][rows[0].index(column)] = value
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)


def set_env(run: Path, key: str, value: object) -> None:
    env = json.loads((run / "env.json").read_text())
    env[key] = value
    (run / "env.json").write_text(json.dumps(env))


def commands(run: Path, tmp: Path) -> dict[str, list[str]]:
    """Every reader of a run directory, on `run`."""
    other = run_dir(tmp, "other") if not (tmp / "other").exists() else tmp / "other"
    return {
        "report": ["report", str(run)],
        "plot": ["plot", str(run)],
        "compare": ["compare", str(other), str(run)],
        "merge": ["merge", str(other), str(run), "--out", str(tmp / "merged")],
    }


def _mount(args: list[str]) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """A tiny tmpfs of its own (root only), unmounted afterwards."""
    mounted: list[Path] = []

    def make(size: str) -> Path:
        path = tmp_path / f"tmpfs{len(mounted)}"
        path.mkdir()
        if not _mount(["-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]):
            pytest.skip("cannot mount a tmpfs here (needs root)")
        mounted.append(path)
        return path

    yield make
    for path in reversed(mounted):
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def read_only(path: Path) -> None:
    """No write into path succeeds: a read-only remount (root ignores modes)
    or, for another user, its modes."""
    if os.geteuid() == 0:
        if not _mount(["-o", "remount,ro", str(path)]):
            pytest.skip("cannot remount read-only")
    else:
        for folder, _, _ in os.walk(path):
            os.chmod(folder, 0o555)


def fill(path: Path, leave: int = 0) -> None:
    """A full disk: a filler file takes every free page, then gives back `leave` bytes."""
    fd = os.open(path / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    size = 0
    try:
        while True:
            size += os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    os.truncate(path / "filler", max(0, size - leave))


# ---------------------------------------------------------------- 11: tracebacks

def _case_11(kind: str, tmp: Path) -> tuple[list[str], list[Path]]:
    if kind == "registry symlink loop":
        (tmp / "loop").symlink_to(tmp / "loop")
        return ["list", "--registry", str(tmp / "loop")], [tmp]
    if kind == "--n beyond every size (the report's log axis)":
        return [*RUN, "--n", "9" * 38, "--out", str(tmp / "out")], [tmp]
    what, _, command = kind.partition(" / ")
    run = run_dir(tmp)
    if what.startswith("cell "):
        column, value = what[5:].split("=")
        set_cell(run / "runs.csv", column, value)
    elif what == "empty impl":
        set_cell(run / "runs.csv", "impl", "")
    elif what == "plots is a file":
        (run / "plots").write_text("mine")
    elif what == "host a list":
        set_env(run, "host", ["a", "b"])
    elif what == "machines an int":
        set_env(run, "machines", 3)
    elif what == "merge --out a file":
        (tmp / "file").write_text("mine")
        return ["merge", str(run), str(run_dir(tmp, "other")), "--out", str(tmp / "file")], [tmp]
    if command == "resume":
        out = tmp / "out"
        out.mkdir()
        run.rename(out / "run")
        (out / "latest").symlink_to("run")
        return [*RESUME, "--out", str(out)], [tmp]
    return commands(run, tmp)[command], [tmp]


CASES_11 = (["registry symlink loop", "--n beyond every size (the report's log axis)"]
            + [f"cell wall_s={v} / {c}" for v in ("1e400", "inf")
               for c in ("report", "plot", "compare", "merge", "resume")]
            + [f"cell {col}={v} / {c}" for col, v in (("warm_iter_s", "nan"),
                                                     ("first_iter_s", "inf"),
                                                     ("cpu_user_s", "-1"))
               for c in ("report", "plot")]
            + [f"empty impl / {c}" for c in ("report", "compare", "merge")]
            + ["plots is a file / report", "merge --out a file"]
            + [f"{w} / {c}" for w in ("host a list", "machines an int")
               for c in ("report", "merge")])


@pytest.mark.parametrize("kind", CASES_11)
def test_11_bad_input_is_one_line_not_a_traceback(kind: str, tmp_path: Path, nothing_runs: None,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    argv, roots = _case_11(kind, tmp_path)
    before = snapshot(*roots)
    refused(*call(capsys, argv))
    assert snapshot(*roots) == before


def test_11_repeat_beyond_memory_is_refused_not_planned(tmp_path: Path) -> None:
    """`--repeat 1000000000` used to plan runs until memory ran out (a dry
    run grew without end): a subprocess with a memory cap and a timeout."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            "from harness.cli import main; sys.exit(main(sys.argv[1:]))")
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES))
    for extra in (["--dry-run"], []):
        proc = subprocess.run([sys.executable, "-c", code, *RUN, "--repeat", "1000000000",
                               "--out", str(tmp_path / "out"), *extra], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        refused(proc.returncode, proc.stderr)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["report", "plot", "merge"])
def test_11_a_read_only_directory_is_one_line(command: str, tmpfs: Callable[[str], Path],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    disk = tmpfs("4m")
    run = run_dir(disk)
    argv = commands(run, disk)[command]
    if command == "merge":  # the results folder is the read-only one
        argv = ["merge", str(run), str(disk / "other"), "--out", str(disk / "merged")]
    read_only(disk)
    refused_leaving(disk, capsys, argv)


def test_11_a_full_disk_in_report_is_one_line_and_leaves_nothing(
        tmpfs: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    disk = tmpfs("256k")
    run = run_dir(disk)
    fill(disk)
    assert "No space left" in refused_leaving(disk, capsys, ["report", str(run)])


# ---------------------------------------------------------------- 12: hangs

def test_12_a_fifo_as_registry_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for command in ("list", "build", "test"):
        proc = harness(command, "--registry", str(tmp_path / "fifo"), timeout=30)
        refused(proc.returncode, proc.stderr)
        assert "fifo" in proc.stderr


def test_12_a_fifo_in_the_run_directory_is_refused_without_blocking(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("env.json", "samples.csv"):
        run = run_dir(tmp_path, f"run-{name}")
        (run / name).unlink()
        os.mkfifo(run / name)
        proc = harness("report", str(run), timeout=60)
        refused(proc.returncode, proc.stderr)


# ---------------------------------------------------------------- 13: refused, nothing written

def _case_13(kind: str, tmp: Path) -> tuple[list[str], Path]:
    if kind.startswith("resume"):
        out, run = latest_of(tmp)
        (run / "samples.csv").unlink()  # it used to be created before runs.csv was read
        (run / "runs.csv").write_text("garbage\n")
        return [*RESUME, "--out", str(out)], tmp
    if kind == "merge with a malformed samples.csv":
        run = run_dir(tmp)
        with (run / "samples.csv").open("a") as f:
            f.write("half,a,row\n")
        return ["merge", str(run_dir(tmp, "other")), str(run), "--out", str(tmp / "m")], tmp
    command, _, what = kind.partition(" on a malformed ")
    run = run_dir(tmp)
    (run / what).write_text("{" if what == "env.json" else "garbage\n")
    return [command, str(run)], tmp


@pytest.mark.parametrize("kind", [
    "report on a malformed runs.csv", "plot on a malformed runs.csv",
    "report on a malformed env.json", "plot on a malformed env.json",
    "resume on a malformed runs.csv", "merge with a malformed samples.csv"])
def test_13_refused_input_leaves_nothing_written(kind: str, tmp_path: Path, nothing_runs: None,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    argv, root = _case_13(kind, tmp_path)
    refused_leaving(root, capsys, argv)


def test_13_resume_on_a_full_disk_leaves_no_temporary_file(
        tmpfs: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    disk = tmpfs("512k")
    out, run = latest_of(disk)
    (run / ".lock").write_text("1")
    fill(disk, leave=8192)  # room for the lock's pid, not for runs.csv rewritten
    files = {p.name: p.read_bytes() for p in run.iterdir() if p.name != ".lock"}
    status, err = call(capsys, [*RESUME, "--out", str(out)])
    refused(status, err)
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.name != ".lock"} == files


# ---------------------------------------------------------------- 14: accepted but invalid

@pytest.mark.parametrize("option,value", [
    ("--n", "9223372036854775808"), ("--duration-ms", str(10**21)),
    ("--iterations", str(2**63)), ("--warmup-ms", str(10**20)),
    ("--n", str(PROGRAM_MAX + 1)), ("--buffer", str(PROGRAM_MAX + 1)),
    ("--repeat", str(MAX_REPEAT + 1))])
def test_14_values_no_program_accepts_are_refused(option: str, value: str, tmp_path: Path,
                                                  nothing_runs: None,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for extra in (["--dry-run"], []):
        status, err = call(capsys, [*RUN, "--workload", "bounded", option, value,
                                    "--out", str(tmp_path / "out"), *extra])
        refused(status, err)
        assert option in err
    assert not (tmp_path / "out").exists()


def test_14_the_limits_are_declared_once_and_fit_every_program() -> None:
    """Java, Kotlin and C# parse these as a signed 32-bit int (docs/protocol.md)."""
    for option in ("--n", "--buffer", "--iterations", "--duration-ms", "--warmup-ms"):
        assert LIMITS[option][2] == PROGRAM_MAX == 2**31 - 1


def test_14_an_empty_out_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nothing_runs: None,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in ([*RUN, "--out", ""], [*RUN, "--out", " "],
                 ["merge", str(V2), str(V2), "--out", ""]):
        refused(*call(capsys, argv))
    assert list(tmp_path.iterdir()) == []


def test_14_a_registry_id_taken_by_a_built_in_is_refused_naming_both_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "impls.toml"
    path.write_text('[language]\nname = "mine"\ndetect = ["true"]\nbuild = ["true"]\n'
                    'test = ["true"]\n\n[[impl]]\nid = "rust-tokio"\nrun = ["true"]\n'
                    'workloads = ["chain"]\n')
    status, err = call(capsys, ["list", "--registry", str(path)])
    refused(status, err)
    assert str(path) in err and str(ROOT / "rust" / "impls.toml") in err


# ---------------------------------------------------------------- the property

Case = tuple[str, Callable[[Path], tuple[list[str], list[Path]]]]

BAD_INTS = ["", "-1", "abc", "1.5", "1e400", "inf", "nan", "1,1", str(PROGRAM_MAX + 1),
            "9223372036854775808", "9" * 38]
# option: its bad values beyond BAD_INTS (0 is fine for a buffer and a warm-up)
INT_OPTIONS = {"--n": ["0"], "--buffer": [], "--iterations": ["0"], "--duration-ms": ["0"],
               "--warmup-ms": [], "--repeat": ["0", str(MAX_REPEAT + 1)],
               "--max-repeat": ["0", str(MAX_REPEAT + 1)], "--users": ["0"],
               "--requests": ["0"], "--delay-ms": ["0", str(2**30)], "--threads": ["0", "32768"],
               "--cpus": ["0", "4096"]}
OTHER_OPTIONS = {
    # a timeout from 1 ms to 30 days, a sample from 1 ms to a minute, a
    # limit from 16M to 8388607T (settings.TIMEOUT_S, SAMPLE_INTERVAL_MS, MAX_RSS)
    "--timeout": ["", "-1", "0", "abc", "inf", "-inf", "nan", "1e400", "1e-300", "1e300"],
    "--sample-interval-ms": ["", "-1", "0", "abc", "inf", "nan", "1e-9", "1e300"],
    "--until-ci": ["", "0", "-5%", "abc", "inf", "nan"],
    "--max-rss": ["abc", "0", "-1G", "1X", "", "1", "15M", "99999999999999999999T", "9" * 400],
    "--workload": ["", ",", "nope", "chain,nope", "ch\x1bain"],
    "--impl": ["", ",", "nope", "fake-good\x1b[2J", "fake-good\nfake-wrong"],
    "--style": ["", "nope"],
    "--inherit-env": [",", "1BAD", "A-B", "", "A\x1bB"],
    "--suite": ["nope"],
    "--out": ["", " "],
}


def _option_cases() -> list[Case]:
    cases: list[Case] = []
    values = {o: BAD_INTS + extra for o, extra in INT_OPTIONS.items()} | OTHER_OPTIONS
    for option, bad in values.items():
        for i, value in enumerate(bad):
            # both modes refuse in the same check: a real run gets every third value
            for mode in ("--dry-run", "run") if i % 3 == 0 else ("--dry-run",):
                def make(tmp: Path, option: str = option, value: str = value,
                         mode: str = mode) -> tuple[list[str], list[Path]]:
                    argv = [*RUN, "--out", str(tmp / "out"), option, value]
                    return argv + (["--dry-run"] if mode == "--dry-run" else []), [tmp]
                cases.append((f"run {mode} {option} {value!r}", make))
    return cases


def _make(kind: str, path: Path) -> Path:
    """A path of a hostile kind: missing, a folder, a FIFO, a symlink loop,
    an empty file, bad bytes, bad TOML, an impls.toml whose id is taken."""
    if kind == "a folder":
        path.mkdir()
    elif kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "a symlink loop":
        path.symlink_to(path.name)
    elif kind == "an empty file":
        path.write_text("")
    elif kind == "bad bytes":
        path.write_bytes(b"\xff\xfe\x00[language\n")
    elif kind == "bad TOML":
        path.write_text("[language\nname = \n")
    elif kind == "a taken id":
        path.write_text('[language]\nname = "mine"\ndetect = ["true"]\nbuild = ["true"]\n'
                        'test = ["true"]\n[[impl]]\nid = "fake-good"\nrun = ["true"]\n'
                        'workloads = ["chain"]\n')
    return path


def _path(kind: str, tmp: Path) -> Path:
    return _make(kind, tmp / kind.replace(" ", "-"))


PATH_KINDS = ["missing", "a folder", "a FIFO", "a symlink loop", "an empty file", "bad bytes",
              "bad TOML", "a taken id"]


def _registry_cases() -> list[Case]:
    cases: list[Case] = []
    for kind in PATH_KINDS:
        for command in (["list"], ["build"], ["test"], [*RUN, "--dry-run"]):
            def make(tmp: Path, kind: str = kind, command: list[str] = command
                     ) -> tuple[list[str], list[Path]]:
                return [*command, "--registry", str(_path(kind, tmp))], [tmp]
            cases.append((f"{command[0]} --registry {kind}", make))
    for command in ("build", "test"):
        for value in ("nope", "", ","):
            cases.append((f"{command} --impl {value!r}",
                          lambda tmp, c=command, v=value: ([c, "--impl", v], [tmp])))
    return cases


# runs.csv and samples.csv columns, each with cells its reader refuses
FLOAT_BAD = ["1e400", "inf", "-inf", "nan", "-1", "abc"]
INT_BAD = ["1e400", "inf", "nan", "-1", "abc", "1.5", "99999999999999999999999"]
RUN_CELLS = {"wall_s": FLOAT_BAD, "cpu_sys_s": FLOAT_BAD, "warm_iter_s": FLOAT_BAD,
             "first_iter_s": FLOAT_BAD[:4], "load_avg_1m": FLOAT_BAD[:4],
             "other_cpu_frac": ["1e400", "inf", "nan", "abc"],
             "n": INT_BAD, "buffer": INT_BAD[:5], "rep": INT_BAD[:5] + [""],
             "peak_rss_bytes": INT_BAD, "max_threads": INT_BAD[:4], "iterations": INT_BAD[:4],
             "exit_code": ["1e400", "abc", "1.5", str(2**64)], "impl": [""], "workload": [""],
             "status": ["", "fine"]}
SAMPLE_CELLS = {"t_s": ["inf", "nan", "-1", ""], "rss_bytes": ["-1", "1e400", "abc"],
                "threads": ["1.5", ""], "impl": [""]}


def _cell_cases() -> list[Case]:
    cases: list[Case] = []
    readers = ("report", "plot", "compare", "merge", "resume")
    for column, bad in RUN_CELLS.items():
        for i, value in enumerate(bad):
            # every reader on the first bad value of a column, two on the others
            for command in readers if i == 0 else dict.fromkeys(("report", readers[i % 5])):
                def make(tmp: Path, column: str = column, value: str = value,
                         command: str = command) -> tuple[list[str], list[Path]]:
                    if command == "resume":
                        out, run = latest_of(tmp)
                        set_cell(run / "runs.csv", column, value)
                        return [*RESUME, "--out", str(out)], [tmp]
                    run = run_dir(tmp)
                    set_cell(run / "runs.csv", column, value)
                    return commands(run, tmp)[command], [tmp]
                cases.append((f"runs.csv {column}={value!r} {command}", make))
    for column, bad in SAMPLE_CELLS.items():
        for value in bad:
            for command in ("report", "plot", "merge"):
                def make_s(tmp: Path, column: str = column, value: str = value,
                           command: str = command) -> tuple[list[str], list[Path]]:
                    run = run_dir(tmp)
                    set_cell(run / "samples.csv", column, value)
                    return commands(run, tmp)[command], [tmp]
                cases.append((f"samples.csv {column}={value!r} {command}", make_s))
    return cases


WRONG = {"host": [["a"], 3], "git": [[1], "x"], "settings": [[], 1], "toolchains": ["x", 2],
         "runtimes": [[], True], "program_env": ["x"], "registries": [1],
         "floor_impls": ["x", [1]], "invocations": [{}, [1]], "machine_state": ["x"],
         "machines": [3, {"m": 1}, {"m": {"host": []}}], "run_id": [1], "started_at": [5],
         "finished_at": [[]], "format_version": ["2", 99, 0, True]}


def _env_cases() -> list[Case]:
    cases: list[Case] = []
    readers = ("report", "plot", "compare", "merge", "resume")
    for key, values in WRONG.items():
        for i, value in enumerate(values):
            for command in readers if i == 0 else ("report", "merge"):
                def make(tmp: Path, key: str = key, value: object = value,
                         command: str = command) -> tuple[list[str], list[Path]]:
                    if command == "resume":
                        out, run = latest_of(tmp)
                        set_env(run, key, value)
                        return [*RESUME, "--out", str(out)], [tmp]
                    run = run_dir(tmp)
                    set_env(run, key, value)
                    return commands(run, tmp)[command], [tmp]
                cases.append((f"env.json {key}={json.dumps(value)} {command}", make))
    for text in ("{", "[]", "null", '{"format_version": NaN}', "\xff"):
        for command in readers:
            def make_t(tmp: Path, text: str = text, command: str = command
                       ) -> tuple[list[str], list[Path]]:
                if command == "resume":
                    out, run = latest_of(tmp)
                    (run / "env.json").write_text(text)
                    return [*RESUME, "--out", str(out)], [tmp]
                run = run_dir(tmp)
                (run / "env.json").write_text(text)
                return commands(run, tmp)[command], [tmp]
            cases.append((f"env.json {text!r} {command}", make_t))
    return cases


def _dir_cases() -> list[Case]:
    """The run directory, a file of it, or merge's --out: a hostile path."""
    cases: list[Case] = []
    for kind in ("missing", "a folder", "a FIFO", "a symlink loop", "an empty file"):
        for command in ("report", "plot", "compare", "merge"):
            def make(tmp: Path, kind: str = kind, command: str = command
                     ) -> tuple[list[str], list[Path]]:
                return commands(_path(kind, tmp), tmp)[command], [tmp]
            cases.append((f"{command} on {kind}", make))
        for name in ("runs.csv", "env.json", "samples.csv"):
            if kind == "missing" and name != "runs.csv":
                continue  # no env.json (format 1) or samples.csv is a valid directory
            for command in ("report", "plot", "merge"):
                def make_f(tmp: Path, kind: str = kind, name: str = name,
                           command: str = command) -> tuple[list[str], list[Path]]:
                    run = run_dir(tmp)
                    (run / name).unlink()
                    _make(kind, run / name)
                    return commands(run, tmp)[command], [tmp]
                cases.append((f"{command} with {name} {kind}", make_f))
        if kind not in ("missing", "a folder"):
            def make_o(tmp: Path, kind: str = kind) -> tuple[list[str], list[Path]]:
                run = run_dir(tmp)
                return ["merge", str(run), str(run_dir(tmp, "other")), "--out",
                        str(_path(kind, tmp))], [tmp]
            cases.append((f"merge --out {kind}", make_o))
    for labels in ("", ",", "a", "a,b,c"):
        cases.append((f"merge --labels {labels!r}", lambda tmp, labels=labels: (
            ["merge", str(run_dir(tmp)), str(run_dir(tmp, "other")), "--out",
             str(tmp / "m"), "--labels", labels], [tmp])))
    cases.append(("merge of one directory", lambda tmp: (
        ["merge", str(run_dir(tmp)), "--out", str(tmp / "m")], [tmp])))
    cases.append(("merge of the same rows twice", lambda tmp: (
        ["merge", str(run_dir(tmp)), str(tmp / "run"), "--out", str(tmp / "m")], [tmp])))
    return cases


# Release and variant names a hostile or careless user may type: a path or a
# shell command for a release, a release longer than int() reads, a newline
# or an ESC in a setting (report.md's tables, the terminal), no setting name,
# an unclosed bracket, an empty release.
NAMES = ["fake-releases@../../tmp/x", "fake-releases@$(id)", "fake-releases@;rm -rf ~",
         "fake-releases@" + "1" * 5000, "fake-releases@", "fake-releases@1.0.0@1.1.0",
         "fake-good[X=a\nb]", "fake-good[X=\x1b[2J]", "fake-good[=1]", "fake-good[X=1",
         "fake-good[X=\x00]", "fake-good@1.0.0"]
BISECT = ["--workload", "chain", "--n", "1", "--repeat", "1"]


def _versions(tmp: Path) -> Path:
    """The releases' folder of the property test (VERSIONS_DIR, patched)."""
    return tmp.parent / "versions"


def _name_cases() -> list[Case]:
    """Release and variant names, in every command that takes one; then
    bisect's releases and compare's directories."""
    cases: list[Case] = []
    for i, name in enumerate(NAMES):
        commands = {"run --dry-run": [*RUN[:4], name, *RUN[5:], "--dry-run"],
                    "list --versions": ["list", "--versions", "--impl", name],
                    "bisect": ["bisect", name, "--good", "1.0.0", "--bad", "1.7.0", *BISECT]}
        if i % 3 == 0:  # a real run refuses in the same check
            commands["run run"] = [*RUN[:4], name, *RUN[5:]]
        for command, argv in commands.items():
            def make(tmp: Path, argv: list[str] = argv) -> tuple[list[str], list[Path]]:
                return [*argv, "--out", str(tmp / "out")] if argv[0] != "list" else argv, \
                    [tmp, _versions(tmp)]
            cases.append((f"{command} {name[:40]!r}", make))
    cases.append(("list --versions of a release not listed", lambda tmp: (
        ["list", "--versions", "--impl", "fake-releases@0.0.0"], [tmp, _versions(tmp)])))
    for good, bad in (("1.0.0", "1.0.0"), ("1.0.0", "1.0"), ("", "1.7.0"), ("1.0.0", "../x"),
                      ("1.0.0", "9" * 5000)):
        cases.append((f"bisect --good {good!r} --bad {bad[:20]!r}", lambda tmp, g=good, b=bad: (
            ["bisect", "fake-releases", "--good", g, "--bad", b, *BISECT,
             "--out", str(tmp / "out")], [tmp, _versions(tmp)])))
    cases.append(("bisect of an implementation without releases", lambda tmp: (
        ["bisect", "fake-good", "--good", "1.0.0", "--bad", "1.7.0", *BISECT,
         "--out", str(tmp / "out")], [tmp, _versions(tmp)])))
    cases.append(("compare RUN RUN", lambda tmp: (
        ["compare", str(run_dir(tmp)), str(tmp / "run")], [tmp])))
    cases.append(("compare RUN RUN/.", lambda tmp: (
        ["compare", str(run_dir(tmp)), str(tmp / "run" / ".")], [tmp])))
    cases.append(("compare RUN and a symlink to RUN", lambda tmp: (
        ["compare", str(run_dir(tmp)), str(_link(tmp / "link", "run"))], [tmp])))
    cases.append(("compare --baseline unknown", lambda tmp: (
        ["compare", str(run_dir(tmp)), "--baseline", "nope"], [tmp])))
    cases.append(("compare --baseline ''", lambda tmp: (
        ["compare", str(run_dir(tmp)), "--baseline", ""], [tmp])))
    return cases


def _link(path: Path, target: str) -> Path:
    path.symlink_to(target)
    return path


# Names an impls.toml may give its language or an implementation, which
# every file and page of a run then shows: markup, control characters, a
# path, a space, a spreadsheet formula.
REGISTRY_NAMES = ["<b>x</b>", "<details open ontoggle=alert(1)>", "a\x1b[2Jb", "a\nb",
                  "a\rb", "a\x00b", "a/b", "../x", "my impl", "=cmd|' /C calc'!A0", "@SUM(1)"]


def _registry_file(tmp: Path, language: str, impl: str) -> Path:
    path = tmp / "impls.toml"
    # a JSON string is a TOML basic string: the control characters as escapes
    path.write_text(f'[language]\nname = {json.dumps(language)}\ndetect = ["true"]\n'
                    f'build = ["true"]\ntest = ["true"]\n[[impl]]\nid = {json.dumps(impl)}\n'
                    f'run = ["true"]\nworkloads = ["chain"]\n')
    return path


def _registry_name_cases() -> list[Case]:
    cases: list[Case] = []
    for i, name in enumerate(REGISTRY_NAMES):
        for where in ("language", "impl"):
            commands = {"list": ["list"], "run --dry-run": [*RUN, "--dry-run"]}
            if i % 3 == 0:
                commands["run run"] = RUN
            for command, argv in commands.items():
                def make(tmp: Path, name: str = name, where: str = where,
                         argv: list[str] = argv) -> tuple[list[str], list[Path]]:
                    language, impl = (name, "mine") if where == "language" else ("mine", name)
                    path = _registry_file(tmp, language, impl)
                    if argv[0] == "run":  # run the registry's own implementation
                        argv = [*argv[:4], impl, *argv[5:], "--out", str(tmp / "out")]
                    return [*argv, "--registry", str(path)], [tmp]
                cases.append((f"{command} --registry with {where} {name!r}", make))
    return cases


def in_current_format(run: Path) -> Path:
    """run's rows and env.json as this harness writes them (its format),
    without samples.csv."""
    rows = RunDir(run).runs().rows
    fresh = RunDir.create_new(run.parent / ".fresh")
    for row in rows:
        fresh.append_run(row)
    env = json.loads((run / "env.json").read_text()) | {"format_version": FORMAT_VERSION}
    (run / "env.json").write_text(json.dumps(env))
    shutil.copy(fresh.path / "runs.csv", run / "runs.csv")
    (run / "samples.csv").unlink()
    shutil.rmtree(run.parent / ".fresh")
    return run


# Cells of runs.csv the harness never writes so: a spreadsheet formula (an
# id can hold none; a program's output and stderr are written quoted, in
# the current format, and the readers unquote them), a control character
# or a NUL byte in an id; an unknown workload, an empty n.
FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "-1+cmd", "@SUM(A1)"]
STRAY_CELLS = {"impl": FORMULAS + ["a\x1b[2Jb", "a\x00b", "a\nb"],
               "output": FORMULAS[:1], "stderr_tail": FORMULAS[:1],
               "workload": ["nope"], "n": [""]}


def _stray_cell_cases() -> list[Case]:
    cases: list[Case] = []
    readers = ("report", "plot", "compare", "merge", "resume")
    for column, bad in STRAY_CELLS.items():
        for i, value in enumerate(bad):
            for command in readers if i == 0 else ("report", readers[2 + i % 3]):
                def make(tmp: Path, column: str = column, value: str = value,
                         command: str = command) -> tuple[list[str], list[Path]]:
                    current = column in ("output", "stderr_tail")
                    if command == "resume":
                        out, run = latest_of(tmp)
                        run = in_current_format(run) if current else run
                        set_cell(run / "runs.csv", column, value)
                        return [*RESUME, "--out", str(out)], [tmp]
                    run = in_current_format(run_dir(tmp)) if current else run_dir(tmp)
                    set_cell(run / "runs.csv", column, value)
                    return commands(run, tmp)[command], [tmp]
                cases.append((f"runs.csv {column}={value!r} {command}", make))
    for value in ("yesterday", "2024-13-45T00:00:00"):
        for command in ("report", "merge"):
            def make_d(tmp: Path, value: str = value, command: str = command
                       ) -> tuple[list[str], list[Path]]:
                run = run_dir(tmp)
                set_env(run, "started_at", value)
                return commands(run, tmp)[command], [tmp]
            cases.append((f"env.json started_at={value!r} {command}", make_d))
    return cases


CASES = (_option_cases() + _registry_cases() + _cell_cases() + _env_cases() + _dir_cases()
         + _name_cases() + _registry_name_cases() + _stray_cell_cases())


def test_the_property_covers_every_class() -> None:
    assert len(CASES) >= 200, len(CASES)
    assert len({name for name, _ in CASES}) == len(CASES)  # each case its own name
    for command in ("run --dry-run", "run run", "list", "build", "test", "report", "plot",
                    "compare", "merge", "resume", "bisect", "list --versions"):
        assert any(command in name for name, _ in CASES), command
    names = [name for name, _ in CASES]
    for what in ("--timeout '1e-300'", "--timeout '1e300'", "--max-rss '1'",
                 "--max-rss '99999999999999999999T'", "--sample-interval-ms '1e-9'",
                 "--inherit-env ''", "'fake-releases@../../tmp/x'", "'fake-releases@$(id)'",
                 r"'fake-good[X=\x1b[2J]'", "'fake-good[=1]'", "bisect --good '1.0.0' --bad '1.0.0'",
                 "compare RUN RUN", "with impl 'my impl'", "with language 'a/b'",
                 "with language '<b>x</b>'", r"with impl 'a\x1b[2Jb'",
                 "runs.csv impl=\"=cmd|' /C calc'!A0\"", "runs.csv output=\"=cmd",
                 "runs.csv stderr_tail=\"=cmd", r"runs.csv impl='a\x00b' resume"):
        assert any(what in name for name in names), what


def test_every_subcommand_refuses_hostile_input_in_one_line_writing_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], nothing_runs: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """For each generated case: exit 2, one stderr line starting
    "harness: error:", no traceback, and no file of the case's folders
    created, changed or removed."""
    importlib.import_module("harness.present.plots")  # matplotlib's import, once, before the cases
    from harness.core import registry
    from harness.releases import versions
    # releases are listed (the fake's list command) and kept under tmp_path,
    # where each case's snapshot sees them
    monkeypatch.setattr(registry, "VERSIONS_DIR", tmp_path / "versions")
    monkeypatch.setattr(versions, "INDEX_DIR", tmp_path / "versions" / "index")
    # the release list cached first, as after any listing: a refused name
    # leaves even the day's cache as it was
    assert call(capsys, ["list", "--versions", "--impl", "fake-releases"])[0] == 0
    failures = []
    for i, (name, make) in enumerate(CASES):
        tmp = tmp_path / str(i)
        tmp.mkdir()
        argv, roots = make(tmp)
        before = snapshot(*roots)
        status, err = call(capsys, argv)
        lines = err.strip().splitlines()
        if status != 2 or "Traceback" in err or len(lines) != 1 \
                or not lines[0].startswith("harness: error:"):
            failures.append(f"{name}: exit {status!r}, stderr {err.strip()[-300:]!r}")
        elif (after := snapshot(*roots)) != before:
            changed = sorted(set(after.items()) ^ set(before.items()))
            failures.append(f"{name}: wrote {changed[:3]}")
        shutil.rmtree(tmp, ignore_errors=True)
    assert not failures, f"{len(failures)} of {len(CASES)} cases:\n" + "\n".join(failures)


# ---------------------------------------------------------------- 15: issue 47 (round 4)

def _slurm_opt_spellings() -> list[str]:
    """Every spelling sbatch takes of an option the harness owns: each
    prefix of each long name (sbatch accepts any unique one), with `=` and
    in the next word; each short letter attached, in the next word and
    bundled after a flag; and --chdir=/ (every task outside the checkout)."""
    from harness.cluster.slurm_options import OWNED_LONG, OWNED_SHORT
    words = [f"--{name[:k]}{form}" for name in OWNED_LONG for k in range(1, len(name) + 1)
             for form in ("=X", " X")]
    words += [f"{form}" for c in OWNED_SHORT for form in (f"-{c}X", f"-{c} X", f"-v{c}X")]
    return words + ["--chdir=/", "--outp=ELSEWHERE --arr=1-50", "--time=5 --exclusive /bin/sh",
                    "-- /bin/sh", "--time 5 script.sh"]


SLURM_OPTS = _slurm_opt_spellings()


def test_15_every_spelling_of_an_owned_slurm_option_is_refused_writing_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], nothing_runs: None) -> None:
    out = tmp_path / "out"
    failures = []
    for value in SLURM_OPTS:
        status, err = call(capsys, [*RUN, "--on", "slurm", f"--slurm-opt={value}", "--out", out])
        if status != 2 or len(err.strip().splitlines()) != 1 or "--slurm-opt" not in err:
            failures.append(f"{value!r}: exit {status!r}: {err.strip()[-200:]}")
    assert not failures, "\n".join(failures)
    assert not out.exists()
    assert len(SLURM_OPTS) > 200


def test_15_options_of_the_users_own_pass(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cluster.slurm import cluster_options
    for value in ("--time=5", "--time 5", "-t 5", "-t5", "--account=a --qos q", "--exclusive",
                  "--mem=4G -J name --comment '--array=1'", "--nodelist=n[1-2]", "--hold"):
        assert cluster_options(Options(on="slurm", slurm_opt=value)) is not None, value


def test_15_the_owned_options_are_sbatchs_and_its_every_abbreviation_is_refused(
        tmp_path: Path, pytestconfig: pytest.Config) -> None:
    """Against sbatch's own parser (a configuration it can read, no
    controller): each owned name is an option sbatch knows, and every
    prefix sbatch accepts of it is refused here."""
    install_slurm(pytestconfig, "the test of sbatch's options")
    from harness import UsageError
    from harness.cluster.slurm_options import FLAG_LONG, OWNED_LONG, check
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\nNodeName=localhost\n"
                    "PartitionName=p Nodes=localhost Default=YES\n")
    env = dict(os.environ, SLURM_CONF=str(conf))
    for name in OWNED_LONG:
        for k in range(1, len(name) + 1):
            word = f"--{name[:k]}" if name in FLAG_LONG else f"--{name[:k]}=1"
            said = subprocess.run(["sbatch", word, "--help"], capture_output=True, text=True,
                                  env=env, timeout=30).stderr
            if "ambiguous" in said or "unrecognized option" in said:
                assert k < len(name), f"sbatch does not know --{name}: {said}"
                continue
            with pytest.raises(UsageError):
                check([word])


def test_15_nodes_beyond_any_runs_replicates_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], nothing_runs: None) -> None:
    for nodes in ("99999999999999999999999", "1001"):
        refused_leaving(tmp_path, capsys, [*RUN, "--on", "slurm", "--nodes", nodes,
                                           "--out", tmp_path / "out"])


class _Quiet:
    """A cluster with nothing queued: --resume gets as far as reading the run's records."""

    def __call__(self) -> _Quiet:
        return self

    def partitions(self) -> dict[str, bool]:
        return {"p": True}

    def states(self, jobs: list[str]) -> list[object]:
        return []


def _wrong_shapes() -> list[tuple[str, object]]:
    """(file of a run --on slurm, valid JSON of a wrong shape for it)."""
    tops: list[object] = [[], 5, "x", None, True]
    jobs = tops + [{"submissions": v} for v in (5, "x", {}, None, [5], [[]], [{"x": 1}],
                                                  [{"array": 1, "replicates": []}],
                                                  [{"array": "1", "replicates": "1"}],
                                                  [{"array": "1", "replicates": [1.5]}],
                                                  [{"array": "1", "build": 5, "replicates": [1]}])]
    tasks = tops + [{"node": 5}, {"exit": "0"}, {"exit": 1.5}, {"exit": True}, {"job": []},
                    {"started_at": {}}]
    builds = tops + [{"node": 5}, {"languages": []}, {"languages": {"go": 5}},
                     {"languages": {"go": {"status": 1}}}, {"impls": {"x": {"reason": "r"}}},
                     {"languages": {"go": {"status": "ok", "x": 1}}}, {"token": 7}]
    return ([("slurm/jobs.json", v) for v in jobs] + [("tasks/1/task.json", v) for v in tasks]
            + [("slurm/build.json", v) for v in builds])


WRONG_SHAPES = _wrong_shapes()


def test_15_every_wrong_shape_of_a_slurm_record_is_one_line_naming_it_and_no_lock(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        nothing_runs: None) -> None:
    import functools
    from harness.cluster import slurm
    monkeypatch.setattr(cli, "run_on_slurm", functools.partial(slurm.run_on_slurm,
                                                               scheduler=_Quiet()))
    failures = []
    for i, (name, data) in enumerate(WRONG_SHAPES):
        (tmp_path / str(i)).mkdir()
        out, run = latest_of(tmp_path / str(i))
        (run / "slurm").mkdir()
        (run / "slurm" / "options.json").write_text("{}\n")
        (run / "slurm" / "jobs.json").write_text('{"submissions": []}\n')
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_text(json.dumps(data))
        before = snapshot(out)
        status, err = call(capsys, ["run", "--on", "slurm", "--resume", "--no-build", "--no-report",
                                    "--impl", "fake-good", "--workload", "chain", "--n", "1",
                                    "--repeat", "1", "--out", out])
        lines = [line for line in err.strip().splitlines() if line.startswith("harness:")]
        if status != 2 or "Traceback" in err or len(lines) != 1 or name not in lines[0]:
            failures.append(f"{name} = {data!r}: exit {status!r}: {err.strip()[-200:]}")
        elif snapshot(out) != before or (run / ".lock").exists():
            failures.append(f"{name} = {data!r}: wrote into the run")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("data", [[], {"versions": "abc", "fetched_at": 1},
                                  {"versions": [1], "fetched_at": 1},
                                  {"versions": [], "fetched_at": "x"}, {"versions": []}])
def test_15_a_release_index_of_a_wrong_shape_is_one_line_naming_it(
        data: object, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.releases import versions
    monkeypatch.setattr(versions, "INDEX_DIR", tmp_path)
    (tmp_path / "list-fake-releases.json").write_text(json.dumps(data))
    err = refused_leaving(tmp_path, capsys, ["list", "--versions", "--impl", "fake-releases"])
    assert "list-fake-releases.json" in err


@pytest.mark.parametrize("data", [[], {"go": 5}, {"go": {"seconds": "1", "steps": 1}},
                                  {"go": {"seconds": 1, "steps": 1.5}}, {"go": {"steps": 1}}])
def test_15_build_times_of_a_wrong_shape_are_refused_naming_the_file(
        data: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import UsageError
    from harness.execute import build_records
    path = tmp_path / "build-times.json"
    monkeypatch.setattr(build_records, "BUILD_TIMES", path)
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="build-times.json"):
        build_records.recorded_builds()


def test_15_a_fifo_or_device_in_a_local_build_never_hangs(tmp_path: Path) -> None:
    """Hashing @path:DIR opens nothing but regular files: a FIFO inside it,
    the FIFO itself, or /dev, each one line, exit 2, within the timeout."""
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "slowdown").write_text("1.0")
    os.mkfifo(tree / "pipe")
    for where in (tree, tree / "pipe", Path("/dev")):
        proc = harness("run", "--impl", f"fake-releases@path:{where}", "--workload", "chain",
                       "--n", "1", "--dry-run", "--out", str(tmp_path / "out"), timeout=60)
        refused(proc.returncode, proc.stderr)
        assert "FIFO" in proc.stderr or "device" in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["a FIFO", "the run's runs.csv", "the run's env.json",
                                  "a symlink loop", "a folder", "the run folder",
                                  "a link to the run's runs.csv"])
def test_15_export_out_never_replaces_what_is_not_a_new_or_regular_file(
        kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dir(tmp_path)
    target = {"a FIFO": tmp_path / "fifo", "the run's runs.csv": run / "runs.csv",
              "the run's env.json": run / "env.json", "a symlink loop": tmp_path / "loop",
              "a folder": tmp_path, "the run folder": run,
              "a link to the run's runs.csv": tmp_path / "link"}[kind]
    if kind == "a FIFO":
        os.mkfifo(target)
    elif kind == "a symlink loop":
        target.symlink_to(target)
    elif kind.startswith("a link"):
        target.symlink_to(run / "runs.csv")
    err = refused_leaving(tmp_path, capsys, ["export", run, "--format", "bencher", "--out", target])
    assert str(target) in err


def test_15_export_out_is_written_whole_and_a_killed_ones_leftover_is_swept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dir(tmp_path)
    out = tmp_path / "bmf.json"
    dead = subprocess.Popen(["true"])
    dead.wait()
    leftover = tmp_path / f".bmf.json.{dead.pid}.writing"  # as a killed export leaves it
    leftover.write_text("{half")
    status, err = call(capsys, ["export", run, "--format", "bencher", "--out", out])
    assert status == 0, err
    assert json.loads(out.read_text()) and not leftover.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bmf.json", "run"]


def test_15_source_and_margin_that_mean_nothing_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], nothing_runs: None) -> None:
    for argv in ([*RUN, "--source", "", "--out", tmp_path / "out"],
                 [*RUN, "--source", tmp_path, "--out", tmp_path / "out"],
                 ["compare", run_dir(tmp_path, "a"), run_dir(tmp_path, "b"), "--margin", "=5%"]):
        refused_leaving(tmp_path, capsys, argv)
