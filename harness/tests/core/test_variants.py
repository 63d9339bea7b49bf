"""Variants and releases (IMPL[K=V;-flag], IMPL@VERSION): the names, how a
variant's settings reach its program, a release's install into its own
folder, the registry's release list, compare --baseline, and bisect on a
fake whose releases differ in speed at a known one. No network: the fake's
releases come from a command."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest

from harness import UsageError
from harness.analyse.bisection import Bisection, classify
from harness.present.bisect_report import report_lines
from harness.present.colors import Palette
from harness.core.registry import load_registry, select
from harness.core.stats import Interval
from harness.core.variants import Spec, base_of, parse, release_key, split_names, stable

from ..conftest import FAKES, harness, tool_missing


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def run_env(tmp_path: Path) -> dict[str, str]:
    """The harness's environment in these tests: releases built under tmp_path."""
    return {"BENCH_VERSIONS_DIR": str(tmp_path / "versions")}


def rows(out: Path) -> list[dict[str, str]]:
    with (out / "latest" / "runs.csv").open(newline="") as f:
        return list(csv.DictReader(f))


# --- names --------------------------------------------------------------

@pytest.mark.parametrize("text, spec", [
    ("go", Spec("go")),
    ("go[GOGC=off]", Spec("go", env=(("GOGC", "off"),))),
    ("rust-tokio@1.5.0", Spec("rust-tokio", "1.5.0")),
    ("java-virtual[-XX:+UseZGC;-Xss256k]", Spec("java-virtual", flags=("-XX:+UseZGC", "-Xss256k"))),
    ("nodejs[UV_THREADPOOL_SIZE=1;--max-old-space-size=64]@22.12.0",
     Spec("nodejs", "22.12.0", (("UV_THREADPOOL_SIZE", "1"),), ("--max-old-space-size=64",))),
    ("go[GODEBUG=a=1,b=2]", Spec("go", env=(("GODEBUG", "a=1,b=2"),))),
    ("erlang[+S 1;+sbwt none]", Spec("erlang", flags=("+S 1", "+sbwt none"))),
])
def test_names_are_taken_apart(text: str, spec: Spec) -> None:
    assert parse(text) == spec
    assert parse(spec.label) == spec  # the label is canonical and reads back
    assert base_of(spec.label) == spec.base


def test_the_label_puts_the_release_first() -> None:
    assert parse("nodejs[A=1]@22.12.0").label == "nodejs@22.12.0[A=1]"
    assert parse("go[GOGC=off;-x]").settings == "GOGC=off;-x"


@pytest.mark.parametrize("text", [
    "go[]", "go[GOGC]", "go[=1]", "go[1X=2]", "go[A=1;;B=2]", "go[A=1;A=2]", "go[A=1", "go]",
    "go[A=1][B=2]", "go[A=1]x", "go@", "go@../x", "@1.0", "go[API_TOKEN=x]", "go[my_password=x]",
    "go[X=a\nb]", "go[X=\x1b[2J]", "go[-x\x07]", "go[X=a\u2028b]", "go@" + "1" * 101,
])
def test_bad_names_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse(text)


def test_a_control_character_in_a_setting_is_refused_writing_nothing(tmp_path: Path) -> None:
    out = tmp_path / "results"
    for name in ("fake-good[X=a\nb]", "fake-good[X=\x1b[2J]", "fake-good[-x\x07]"):
        proc = harness("run", "--impl", name, "--workload", "chain", "--n", "5", "--out", str(out))
        assert proc.returncode == 2 and "control character" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "\x1b" not in proc.stderr
        assert not out.exists()


def test_commas_inside_brackets_belong_to_the_setting() -> None:
    assert split_names("go[GODEBUG=a=1,b=2],go, rust-tokio@1.5.0") == \
        ["go[GODEBUG=a=1,b=2]", "go", "rust-tokio@1.5.0"]


# --- the registry ---------------------------------------------------------

def test_a_variant_adds_its_environment_and_flags(tmp_path: Path) -> None:
    registry = tmp_path / "impls.toml"
    registry.write_text("""[language]
name = "flagged"
detect = ["{python}", "-c", "print(1)"]
build = ["{python}", "-c", "pass"]
test = ["{python}", "-c", "pass"]

[[impl]]
id = "flagged-a"
run = ["{python}", "{flags}", "{dir}/x.py"]
workloads = ["chain"]
env = { KEEP = "1" }
floor = true
""")
    impls = load_registry([registry])
    (stock,) = select(impls, ["flagged-a"])
    assert stock.argv()[1:] == [str(tmp_path / "x.py")]  # {flags} is nothing for the stock build
    (variant,) = select(impls, ["flagged[X=1;-O;-X dev]"])  # the language's name works too
    assert variant.id == "flagged-a[X=1;-O;-X dev]" and variant.base == "flagged-a"
    assert variant.argv()[1:] == ["-O", "-X dev", str(tmp_path / "x.py")]
    assert variant.env == {"KEEP": "1", "X": "1"}
    assert variant.floor is False and stock.floor is True  # the floor is the stock build alone


def test_a_release_may_run_fewer_workloads_than_the_stock_build() -> None:
    stock, release = select(load_registry(), ["fake-releases", "fake-releases@1.0.0"])
    assert stock.workloads == ["chain", "bounded"] and release.workloads == ["chain"]


def test_flags_need_a_place_and_releases_a_source() -> None:
    impls = load_registry()
    with pytest.raises(UsageError, match="takes no runtime flags"):
        select(impls, ["fake-good[-x]"])
    with pytest.raises(UsageError, match="no other releases"):
        select(impls, ["fake-good@1.0.0"])


def test_a_variant_has_its_implementations_colour_and_its_own_marker() -> None:
    palette = Palette(load_registry())
    assert palette.color("fake-good[X=1]") == palette.color("fake-good")
    assert (palette.marker("fake-good[X=1]"), palette.line_style("fake-good[X=1]")) != \
        (palette.marker("fake-good"), palette.line_style("fake-good"))


# --- release lists ------------------------------------------------------------

def test_releases_are_ordered_across_version_schemes() -> None:
    found = ["1.10.0", "1.9.1", "1.0.0-rc.1", "1.0.0", "0.9", "2.0.0-beta.2", "1.21rc2", "1.21.0"]
    assert sorted(found, key=release_key) == \
        ["0.9", "1.0.0-rc.1", "1.0.0", "1.9.1", "1.10.0", "1.21rc2", "1.21.0", "2.0.0-beta.2"]
    assert [v for v in found if stable(v)] == ["1.10.0", "1.9.1", "1.0.0", "0.9", "1.21.0"]


def test_list_versions_prints_the_releases_newest_first(tmp_path: Path) -> None:
    proc = harness("list", "--versions", "--impl", "fake-releases,fake-good",
                   extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("fake-releases: 9 releases")
    assert lines[1].split() == ["1.7.0", "1.6.0", "1.5.0", "1.4.0", "1.3.0", "1.2.0", "1.1.0",
                                "1.0.0", "0.9.0"]  # the pre-release is left out
    assert "fake-good: no other releases" in proc.stdout


def test_a_release_that_does_not_exist_is_one_line_and_nothing_written(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-releases@3.0.0", "--workload", "chain", "--n", "5",
                   "--out", str(out), extra_env=run_env(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "harness: error: fake-releases@3.0.0: no release 3.0.0 of fake-releases's release list "
        "(newest: 1.7.0; `list --versions fake-releases`)"]
    assert not out.exists()


# --- runs -----------------------------------------------------------------------

def test_a_variant_runs_beside_its_stock_build_and_compare_pairs_them(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-good[FAKE_VARIANT=on],fake-good", "--workload", "chain",
                   "--n", "5", "--repeat", "4", "--out", str(out), "--no-report")
    assert proc.returncode == 0, proc.stderr
    found = rows(out)
    assert {(r["impl"], r["variant"], r["version"], r["status"]) for r in found} == {
        ("fake-good[FAKE_VARIANT=on]", "FAKE_VARIANT=on", "", "ok"), ("fake-good", "", "", "ok")}
    # interleaved: each pass runs the variant and the stock build
    assert [r["impl"] for r in found[:2]] == ["fake-good[FAKE_VARIANT=on]", "fake-good"]
    for r in found:
        seen = json.loads(r["output"])["env_names"]
        assert ("FAKE_VARIANT" in seen) == (r["variant"] != "")
    env = json.loads((out / "latest" / "env.json").read_text())
    assert env["variants"] == {"fake-good[FAKE_VARIANT=on]": {
        "impl": "fake-good", "version": None, "env": {"FAKE_VARIANT": "on"}, "flags": []}}
    proc = harness("compare", str(out / "latest"), "--baseline", "fake-good", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    (pair,) = json.loads(proc.stdout)["configurations"]
    assert pair["impl"] == "fake-good[FAKE_VARIANT=on]" and pair["old_ok"] == pair["new_ok"] == 4
    assert pair["changes"]["first_iter_s"]["verdict"] == "level"  # the same figures
    proc = harness("compare", str(out / "latest"), "--baseline", "fake-nothing")
    assert proc.returncode == 2 and "not in this run" in proc.stderr


def test_a_release_is_installed_once_and_a_failed_build_is_a_row(tmp_path: Path) -> None:
    out = tmp_path / "results"
    args = ["run", "--impl", "fake-releases@1.4.0,fake-releases@0.9.0,fake-releases", "--workload",
            "chain", "--n", "5", "--repeat", "1", "--out", str(out), "--no-report"]
    proc = harness(*args, extra_env=run_env(tmp_path))
    assert proc.returncode == 1, proc.stderr  # the failed build
    assert "fake-releases@1.4.0: installing 1.4.0 of fake-releases's release list" in proc.stdout
    by_impl = {r["impl"]: r for r in rows(out)}
    assert by_impl["fake-releases@1.4.0"]["status"] == "ok"
    assert by_impl["fake-releases@1.4.0"]["version"] == "1.4.0"
    assert json.loads(by_impl["fake-releases@1.4.0"]["output"])["iter_ns"] == [1500, 1502]
    assert json.loads(by_impl["fake-releases"]["output"])["iter_ns"] == [1000, 1001]
    failed = by_impl["fake-releases@0.9.0"]
    assert failed["status"] == "build-failed"
    assert "error[E0433]: failed to resolve" in failed["error"]
    assert (tmp_path / "versions" / "fake-releases" / "1.4.0" / ".installed").exists()
    proc = harness(*args[:2], "fake-releases@1.4.0", *args[3:], extra_env=run_env(tmp_path))
    assert proc.returncode == 0 and "using the build in" in proc.stdout
    # made by another toolchain than the one installed now: built again
    marker = tmp_path / "versions" / "fake-releases" / "1.4.0" / ".installed"
    toolchain = marker.read_text().splitlines()[1]
    marker.write_text("fake-releases@1.4.0\nPython 2.7.18\n")
    proc = harness(*args[:2], "fake-releases@1.4.0", *args[3:], extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"was made by Python 2.7.18, not {toolchain}: building it again" in proc.stdout
    assert marker.read_text().splitlines()[1] == toolchain


def test_a_build_without_a_workload_gives_skipped_rows_saying_why(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-releases@1.2.0,fake-releases@1.1.0", "--workload", "chain",
                   "--n", "5", "--repeat", "1", "--out", str(out), "--no-report",
                   extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    by_impl = {r["impl"]: r for r in rows(out)}
    assert by_impl["fake-releases@1.1.0"]["status"] == "ok"
    assert by_impl["fake-releases@1.2.0"]["status"] == "skipped"
    assert by_impl["fake-releases@1.2.0"]["error"] == \
        "this release's build has no chain: 1.2.0 was built without chain"


# --- bisect -----------------------------------------------------------------------

RELEASES = [f"1.{i}.0" for i in range(10)]


def synthetic(change_at: str, noise: float = 0.0):
    """A measure/values pair: each release's figure 1.0, or 1.3 from change_at
    on, with a made-up spread; records how many runs each got."""
    runs: dict[str, int] = {}

    def measure(todo: list[str], n: int) -> None:
        for r in todo:
            runs[r] = n

    def values(release: str) -> tuple[float, ...]:
        level = 1.3 if release_key(release) >= release_key(change_at) else 1.0
        return tuple(level * (1 + noise * ((i % 3) - 1)) for i in range(runs.get(release, 0)))

    return measure, values, runs


@pytest.mark.parametrize("change_at", ["1.1.0", "1.4.0", "1.9.0"])
def test_bisect_finds_a_planted_change(change_at: str) -> None:
    measure, values, runs = synthetic(change_at, noise=0.02)
    found = Bisection(RELEASES, "warm_iter_s", 4, 10, measure, values, say=lambda _: None).search()
    assert found.first_bad == change_at
    assert found.change is not None and found.change.low > 1.2
    assert len(runs) <= 2 + 4  # the ends, then a binary search over 8 releases between


def test_the_verdict_names_what_the_kernel_counted_beside_the_figure() -> None:
    """Voluntary context switches 3.1x from the first bad release on, page
    faults unchanged, no major fault at all (left out: no ratio of zeros)."""
    measure, values, runs = synthetic("1.4.0", noise=0.02)
    found = Bisection(RELEASES, "warm_iter_s", 4, 10, measure, values, say=lambda _: None).search()

    def counted(release: str, metric: str) -> tuple[float, ...]:
        if metric == "warm_iter_s":
            return values(release)
        level = {"ctx_switches_voluntary": 1000 * (3.1 if release >= "1.4.0" else 1.0),
                 "ctx_switches_involuntary": 50, "minor_faults": 20000,
                 "major_faults": 0}.get(metric, 0)  # perf's: not counted (no --counters)
        return tuple(level * (1 + 0.01 * ((i % 3) - 1)) for i in range(runs.get(release, 0)))

    lines = report_lines(found, str, counted)
    assert lines[0].startswith("first release where warm iter changed: 1.4.0")
    beside = lines[1]
    assert beside.startswith("  beside it (1.3.0 → 1.4.0): voluntary context switches +210.0% [")
    assert "involuntary context switches +0.00% [" in beside and "minor page faults +0.00%" in beside
    assert "major" not in beside


def test_bisect_says_when_there_is_nothing_to_find() -> None:
    measure, values, _ = synthetic("9.0.0", noise=0.02)  # no release changes
    found = Bisection(RELEASES, "warm_iter_s", 4, 10, measure, values, say=lambda _: None).search()
    assert found.first_bad is None and found.why.startswith("no change of warm iter detected")


def test_a_release_halfway_between_is_placed_by_its_estimate_and_says_so() -> None:
    measure, base_values, runs = synthetic("1.6.0", noise=0.02)

    def values(release: str) -> tuple[float, ...]:  # 1.4.0 and 1.5.0 sit on the midpoint
        if release in ("1.4.0", "1.5.0"):
            return tuple(1.14 * (1 + 0.02 * ((i % 3) - 1)) for i in range(runs.get(release, 0)))
        return base_values(release)

    found = Bisection(RELEASES, "warm_iter_s", 4, 8, measure, values, say=lambda _: None).search()
    # each got --max-repeat runs, then was placed by its estimate (just below the midpoint)
    assert runs["1.4.0"] == runs["1.5.0"] == 8
    assert found.first_bad == "1.6.0" and found.unsettled == ("1.4.0", "1.5.0")
    assert not found.settled


def test_classify_reads_the_interval_against_the_midpoint() -> None:
    def iv(low: float, high: float, confidence: float = 0.96) -> Interval:
        return Interval((low + high) / 2, low, high, confidence, (4, 4))

    assert classify(iv(1.3, 1.4), 1.15, worse_up=True) == "bad"
    assert classify(iv(0.95, 1.05), 1.15, worse_up=True) == "good"
    assert classify(iv(1.1, 1.2), 1.15, worse_up=True) is None  # holds the midpoint
    assert classify(iv(1.3, 1.4, confidence=0.8), 1.15, worse_up=True) is None  # not settled
    assert classify(iv(0.6, 0.7), 0.85, worse_up=False) == "bad"


def test_bisect_on_a_fake_finds_the_release_and_keeps_every_row(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("bisect", "fake-releases", "--good", "1.0.0", "--bad", "1.7.0", "--workload",
                   "chain", "--n", "5", "--figure", "warm_iter_s", "--out", str(out),
                   extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "first release where warm iter changed: fake-releases@1.4.0 (1.3.0 → 1.4.0: +50.0%" \
        in proc.stdout
    (run,) = out.glob("bisect-*/2*")  # one run directory for every step, in the bisect's folder
    assert proc.stdout.splitlines()[0] == f"bisect: recording into {run}"
    measured = {r["impl"] for r in rows(run.parent)}
    assert {"fake-releases@1.0.0", "fake-releases@1.7.0", "fake-releases@1.4.0"} <= measured
    assert (run / "plots" / "chain_versions.png").exists()  # its report, with the sweep


def test_bisect_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    for args, message in [
        (["--good", "1.0.0", "--bad", "9.9.9"], "no release 9.9.9"),
        (["--good", "1.0.0", "--bad", "1.7.0", "--figure", "rps"], "not a figure of chain"),
    ]:
        proc = harness("bisect", "fake-releases", *args, "--workload", "chain", "--n", "5",
                       "--out", str(tmp_path / "results"), extra_env=run_env(tmp_path))
        assert proc.returncode == 2 and message in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "results").exists()


# --- the sweep plot ------------------------------------------------------------------

def test_a_sweep_has_a_line_per_implementation_run_at_two_releases_or_more() -> None:
    from harness.analyse.analysis import Group
    from harness.present.plots import STOCK, sweep_points

    def group(impl: str) -> Group:
        return Group(impl, "chain", 10, None, "fake", "Fake", rows=[])

    lines = sweep_points([group(i) for i in (
        "fake-releases@1.10.0", "fake-releases", "fake-releases@1.9.0", "fake-releases@1.10.0[X=1]",
        "fake-good", "fake-good[X=1]")])
    # one release and nothing else (the variant), or only stock builds: no line
    assert list(lines) == ["fake-releases"]
    assert [v for v, _ in lines["fake-releases"]] == ["1.9.0", "1.10.0", STOCK]


def test_a_run_with_releases_draws_its_sweep(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-releases@1.0.0,fake-releases@1.4.0,fake-releases",
                   "--workload", "chain", "--n", "5", "--repeat", "2", "--out", str(out),
                   extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (out / "latest" / "plots" / "chain_versions.png").exists()
    assert "chain_versions.png" in (out / "latest" / "report.md").read_text()


@pytest.mark.parametrize("log, line", [
    ("Compiling x\nerror[E0432]: unresolved import `tokio::sync`\nerror: aborting", "error[E0432]: unresolved import `tokio::sync`"),
    ("[INFO] Building\n[ERROR] Failed to execute goal x\n[ERROR] more", "[ERROR] Failed to execute goal x"),
    ("src/a.kt:1: error: nope\nlast", "src/a.kt:1: error: nope"),
    ("nothing matched\nthe last line", "the last line"),
])
def test_a_failed_install_is_known_by_its_first_error(log: str, line: str) -> None:
    from harness.execute.builder import first_error
    assert first_error(log) == line


def test_bisect_stops_at_a_release_with_no_ok_run() -> None:
    measure, base_values, runs = synthetic("1.6.0", noise=0.02)

    def values(release: str) -> tuple[float, ...]:
        return () if release == "1.4.0" else base_values(release)  # its build failed

    found = Bisection(RELEASES, "warm_iter_s", 4, 10, measure, values, say=lambda _: None).search()
    assert found.first_bad is None and found.why.startswith("1.4.0 has no ok run")
    assert runs["1.4.0"] == 4  # not run again and again


def test_a_release_folder_that_cannot_be_written_is_a_build_failed_row(tmp_path: Path) -> None:
    versions = tmp_path / "versions"
    versions.write_text("not a folder")  # mkdir under it fails, as on a read-only tree
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-releases@1.0.0", "--workload", "chain", "--n", "5",
                   "--repeat", "1", "--out", str(out), "--no-report",
                   extra_env={"BENCH_VERSIONS_DIR": str(versions)})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (row,) = rows(out)
    assert row["status"] == "build-failed" and "install failed" in row["error"]


# --- a local source or build: IMPL@path:DIR ---------------------------------

def git_checkout(root: Path, slowdown: str) -> Path:
    """A git repository holding a fake implementation's source: its slowdown."""
    root.mkdir(parents=True)
    (root / "slowdown").write_text(slowdown)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root)}
    for cmd in (["init", "-q"], ["add", "slowdown"], ["commit", "-q", "-m", "fake source"]):
        subprocess.run(["git", "-C", str(root), *cmd], check=True, env={**os.environ, **env})
    return root


def test_a_local_path_is_written_absolute_in_the_label(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = parse("rust-tokio@path:src/../tokio")
    assert spec.version == f"path:{tmp_path / 'tokio'}"
    assert parse(spec.label) == spec
    assert parse("rust-tokio@path:tokio[A=1]").label == f"rust-tokio@path:{tmp_path / 'tokio'}[A=1]"
    with pytest.raises(UsageError, match="names a folder"):
        parse("rust-tokio@path:")


def test_a_local_build_is_measured_beside_the_stock_one_and_recorded(tmp_path: Path) -> None:
    source = git_checkout(tmp_path / "checkout", "1.5")
    out = tmp_path / "results"
    label = f"fake-releases@path:{source}"
    args = ["run", "--impl", f"{label},fake-releases", "--workload", "chain", "--n", "5",
            "--repeat", "2", "--out", str(out), "--no-report"]
    proc = harness(*args, extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"{label}: building {source} into" in proc.stdout
    local = [r for r in rows(out) if r["impl"] == label]
    assert [r["status"] for r in local] == ["ok", "ok"] and local[0]["version"] == f"path:{source}"
    assert json.loads(local[0]["output"])["iter_ns"] == [1500, 1502]  # its own build's
    env = json.loads((out / "latest" / "env.json").read_text())
    commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    assert env["variants"][label]["local"] == {"path": str(source), "commit": commit, "dirty": False}
    proc = harness("compare", str(out / "latest"), "--baseline", "fake-releases", "--format", "json")
    (pair,) = json.loads(proc.stdout)["configurations"]
    assert pair["impl"] == label and pair["old_ok"] == pair["new_ok"] == 2

    # an edit: a new build (cached by content), recorded as dirty
    (source / "slowdown").write_text("2.0")
    proc = harness(*args[:2], label, *args[3:], extra_env=run_env(tmp_path))
    assert proc.returncode == 0 and "building" in proc.stdout, proc.stderr
    assert len(list((tmp_path / "versions" / "fake-releases").glob("path-*"))) == 2
    assert json.loads(rows(out)[0]["output"])["iter_ns"] == [2000, 2002]
    env = json.loads((out / "latest" / "env.json").read_text())
    assert env["variants"][label]["local"]["dirty"] is True
    # the same content again: the build is reused
    proc = harness(*args[:2], label, *args[3:], extra_env=run_env(tmp_path))
    assert proc.returncode == 0 and "using the build in" in proc.stdout


def test_a_local_source_that_does_not_build_is_a_row_and_a_missing_one_bad_input(
        tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "results"
    proc = harness("run", "--impl", f"fake-releases@path:{empty}", "--workload", "chain", "--n", "5",
                   "--repeat", "1", "--out", str(out), "--no-report", extra_env=run_env(tmp_path))
    assert proc.returncode == 1
    (row,) = rows(out)
    assert row["status"] == "build-failed" and "slowdown is missing" in row["error"]
    assert row["version"] == f"path:{empty}"
    for name, message in ((f"fake-releases@path:{tmp_path / 'nowhere'}", "does not exist"),
                          (f"fake-good@path:{empty}", "no other releases")):
        proc = harness("run", "--impl", name, "--workload", "chain", "--n", "5", "--out",
                       str(tmp_path / "refused"), extra_env=run_env(tmp_path))
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "refused").exists()


LOCAL_ONLY = """
[language]
name = "localonly"
detect = ["true"]
build = ["true"]
test = ["true"]

[[impl]]
id = "local-only"
run = ["{python}", "-c", "pass"]
workloads = ["chain"]
[impl.versions]
path_install = ["true"]
run = ["{cache}/program"]
"""


def test_an_implementation_may_take_local_builds_alone(tmp_path: Path) -> None:
    """[impl.versions] with a path_install and no release source: path:DIR
    works, a release is refused in one line, as is listing releases."""
    registry = tmp_path / "localonly" / "impls.toml"
    registry.parent.mkdir()
    registry.write_text(LOCAL_ONLY)
    (local,) = select(load_registry([registry]), [f"local-only@path:{tmp_path}"])
    assert local.argv() == [str(local.cache / "program")] and local.cache.name.startswith("path-")
    with pytest.raises(UsageError, match="only local builds"):
        select(load_registry([registry]), ["local-only@1.0.0"])
    proc = harness("list", "--versions", "local-only", "--registry", str(registry))
    assert proc.returncode == 2 and "only local builds" in proc.stderr, proc.stderr
    registry.write_text(LOCAL_ONLY.replace('path_install = ["true"]\n', ""))
    with pytest.raises(Exception, match="give either 'source'"):
        load_registry([registry])


def test_bisect_finds_the_commit_and_skips_one_that_does_not_build(tmp_path: Path) -> None:
    """A repository of 8 commits of the fake's source: 1.5x slower from the
    sixth on, the fourth without a source (its build fails). The bisect
    between the first and the last names the sixth, with its subject."""
    source = git_checkout(tmp_path / "fake-src", "1.0")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for i, slowdown in enumerate([None, "1.0", None, "1.5", "1.5", "1.5", "1.5"], start=2):
        target = source / "slowdown"
        if slowdown is None:
            target.unlink(missing_ok=True)
        else:
            target.write_text(slowdown)
        subprocess.run(["git", "-C", str(source), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(source), "commit", "-q", "--allow-empty", "-m",
                        f"commit {i}"], check=True, env=env)
    log = subprocess.run(["git", "-C", str(source), "log", "--reverse", "--format=%H"],
                         capture_output=True, text=True, check=True).stdout.split()
    out = tmp_path / "results"
    proc = harness("bisect", "fake-releases", "--source", str(source), "--good", log[0], "--bad",
                   "HEAD", "--workload", "chain", "--n", "5", "--figure", "warm_iter_s", "--out",
                   str(out), extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = f"first commit where warm iter changed: fake-releases@git:{log[4][:12]} (commit 5)"
    assert want in proc.stdout, proc.stdout
    measured = {r["impl"]: r["status"] for r in rows(next(out.glob("bisect-*")))}
    # the middle, commit 4, does not build: skipped, the next nearest measured instead
    broken = f"fake-releases@git:{log[3][:12]}"
    assert measured[broken] == "build-failed"
    assert f"skipped (no ok run: see their rows): {broken} (commit 4)" in proc.stdout
    # it lies between the last good and the first bad: the change may be there too
    assert f"may also be at one of the skipped between them: {broken} (commit 4)" in proc.stdout
    assert measured[f"fake-releases@git:{log[2][:12]}"] == "ok"  # commit 3: good


def test_bisect_goes_on_from_the_releases_into_the_commits_between_their_tags(
        tmp_path: Path) -> None:
    """fake-releases is 1.5x slower from 1.4.0; its source's history tags
    fake-1.3.0, then three commits, the second of which is slower, then
    fake-1.4.0: the release found, the bisect names that commit."""
    source = git_checkout(tmp_path / "fake-src", "1.0")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(source), *args], check=True, env=env)

    git("tag", "fake-1.3.0")
    for i, slowdown in enumerate(["1.0", "1.5", "1.5"], start=1):
        (source / "slowdown").write_text(slowdown + "\n" * i)  # each commit a change
        git("commit", "-q", "-am", f"after 1.3.0, commit {i}")
    git("tag", "fake-1.4.0")
    for release in ("1.0.0", "1.7.0"):  # the ends' tags, on the history before
        git("tag", f"fake-{release}", "fake-1.3.0" if release == "1.0.0" else "fake-1.4.0")
    out = tmp_path / "results"
    proc = harness("bisect", "fake-releases", "--source", str(source), "--good", "1.0.0", "--bad",
                   "1.7.0", "--workload", "chain", "--n", "5", "--figure", "warm_iter_s", "--out",
                   str(out), extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "first release where warm iter changed: fake-releases@1.4.0" in proc.stdout
    assert "on into the 2 commits between fake-1.3.0 and fake-1.4.0" in proc.stdout
    assert "first commit where warm iter changed: fake-releases@git:" in proc.stdout
    assert "(after 1.3.0, commit 2)" in proc.stdout.split("first commit where")[1].splitlines()[0]


def test_a_commit_is_named_by_its_hash_and_subject_and_bad_ones_refused(tmp_path: Path) -> None:
    source = git_checkout(tmp_path / "fake-src", "1.5")
    commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-releases@git:HEAD", "--source", str(source), "--workload",
                   "chain", "--n", "5", "--repeat", "1", "--out", str(out), "--no-report",
                   extra_env=run_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    (row,) = rows(out)
    assert row["impl"] == f"fake-releases@git:{commit[:12]}" and row["version"] == f"git:{commit[:12]}"
    assert row["runtime"].endswith(f"git:{commit[:12]} fake source)")
    env = json.loads((out / "latest" / "env.json").read_text())
    assert env["variants"][row["impl"]]["local"] == {
        "source": str(source), "commit": commit, "subject": "fake source"}
    assert (tmp_path / "versions" / "worktrees" / commit[:12] / "slowdown").read_text() == "1.5"
    for args, message in ((["fake-releases@git:HEAD"], "needs --source DIR"),
                          (["fake-releases@git:nope", "--source", str(source)], "is not a commit"),
                          (["fake-releases@git:--all", "--source", str(source)], "names a commit"),
                          (["fake-releases@git:HEAD", "--source", str(tmp_path / "no")], "not a folder")):
        proc = harness("run", "--impl", *args, "--workload", "chain", "--n", "5", "--out",
                       str(tmp_path / "refused"), extra_env=run_env(tmp_path))
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "refused").exists()


GO_RELEASE = Path(__file__).resolve().parents[3] / "go" / "release.sh"


@pytest.mark.parametrize("builds", [True, False])
def test_go_builds_a_source_checkout_with_its_make_bash(tmp_path: Path, builds: bool) -> None:
    """go@path:DIR and go@git:REV's worktree: a tree with src/make.bash and no
    bin/go is built by its make.bash (bootstrapped by the go on PATH) before
    the program is; a make.bash that fails is one error line, the row's
    reason. The make.bash here stands in for Go's (minutes a build): it
    installs a bin/go that is the go on PATH."""
    go = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True)
    if go.returncode != 0:
        tool_missing("go", "no go on PATH")
    real = go.stdout.strip()
    tree = tmp_path / "go-source"
    (tree / "src").mkdir(parents=True)
    make = tree / "src" / "make.bash"
    make.write_text("#!/bin/sh\n" + (
        f'echo "bootstrap $GOROOT_BOOTSTRAP" > ../made\nmkdir -p ../bin\n'
        f'printf \'#!/bin/sh\\nexec env GOROOT={real} {real}/bin/go "$@"\\n\' > ../bin/go\n'
        f'chmod +x ../bin/go\n' if builds else 'echo "cmd/dist: no bootstrap toolchain" >&2\nexit 2\n'))
    make.chmod(0o755)
    cache = tmp_path / "cache"
    cache.mkdir()
    proc = subprocess.run(["sh", str(GO_RELEASE), str(cache), f"path:{tree}"],
                          capture_output=True, text=True, timeout=300)
    if builds:
        assert proc.returncode == 0, proc.stderr
        assert (tree / "made").read_text().strip() == f"bootstrap {real}"
        assert (cache / "bench").is_file() and (cache / "serve").is_file()
        assert "building the Go toolchain" in proc.stderr
    else:
        assert proc.returncode == 1
        assert proc.stderr.strip().splitlines()[-1] == (
            f"error: make.bash of {tree} failed: cmd/dist: no bootstrap toolchain")
        assert not (cache / "bench").exists()
