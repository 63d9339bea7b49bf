"""Every export loaded by its consumer's own rules, not by the shape this
project expects: github-action-benchmark's extract, normalize, alert and
comment code (gab_action.js, run by node) and Bencher's rules for a BMF
upload (bencher_load below), on every committed fixture run and on a run of
the default suite's size. What they check: each file loads; the figures
raise no alert against themselves and every one alerts when it triples; no
figure is 0 (the action divides by the previous value); a default run fits
Bencher's 255 benchmarks a day and GitHub's 65,536-character comment."""

from __future__ import annotations

import csv
import json
import math
import random
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from harness.core.metrics import METRICS
from harness.core.registry import resolve
from harness.core.schema import RUN_NAMES
from harness.plan.plan import configurations, plan
from harness.plan.options import Options
from harness.plan.settings import settings_from

from ..conftest import ROOT, harness, harness_main

FIXTURES = ROOT / "harness" / "tests" / "fixtures"
RUNS = [FIXTURES / "run", FIXTURES / "quick",
        *sorted((FIXTURES / "formats").iterdir())]
ACTION = Path(__file__).with_name("gab_action.js")
NODE = shutil.which("node")
COMMENT_LIMIT = 65_536  # GitHub's most characters in an issue or commit comment's body
TOOLS = {"smaller": "customSmallerIsBetter", "bigger": "customBiggerIsBetter"}


def export(*args: str | Path, capsys: pytest.CaptureFixture[str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    """`harness export ARGS`: in a process of its own, or with capsys in
    this one (conftest.harness_main: an export starts no program)."""
    if capsys is None:
        return harness("export", *(str(a) for a in args))
    return harness_main(capsys, "export", *(str(a) for a in args))


def in_process(run: Path, capsys: pytest.CaptureFixture[str]) -> pytest.CaptureFixture[str] | None:
    """The capture to export in-process with: every fixture run's but the
    main fixture's, which a real process exports in each test."""
    return None if run == FIXTURES / "run" else capsys


# -- Bencher ---------------------------------------------------------------
# Bencher v0.6.12 (commit 8d75325c3bc59403a2186a056b472c4f49d42838), what a BMF
# upload goes through, in Python:
#   lib/bencher_valid/src/lib.rs            MAX_LEN 64; is_valid_len: non-empty, trimmed, <= 64
#   lib/bencher_valid/src/slug.rs           is_valid_slug: is_valid_len and slug == slugify(slug)
#   lib/bencher_valid/src/benchmark_name.rs a name: non-empty, <= 1024 bytes; strip_ignore
#   lib/bencher_valid/src/resource_name.rs  a measure's name: is_valid_len
#   lib/bencher_valid/src/name_id.rs        a key is a UUID, else a slug, else a name
#   lib/bencher_schema/src/model/project/report/results/mod.rs  strip_ignore_suffix
#   lib/bencher_schema/src/model/project/measure.rs  get_or_create_inner: a built-in
#       measure by its name or slug, else a new one whose units are "Measure (units)"
#   lib/bencher_json/src/project/measure/built_in.rs  the built-in measures and units
#   lib/bencher_schema/src/context/rate_limiting/mod.rs  DEFAULT_UNCLAIMED_LIMIT = u8::MAX
MAX_LEN, MAX_BENCHMARK_NAME_LEN, UNCLAIMED_LIMIT = 64, 1024, 255
IGNORE_SUFFIXES = ("_bencher_ignore", "BencherIgnore", "-bencher-ignore")
BUILT_IN_UNITS = {"latency": "nanoseconds (ns)", "throughput": "operations / second (ops/s)",
                  "build-time": "seconds (s)", "file-size": "bytes (B)"}
BUILT_IN_NAMES = {"Latency": "latency", "Throughput": "throughput", "Build Time": "build-time",
                  "File Size": "file-size"}
GENERIC_UNITS = "Measure (units)"


def slugify(text: str) -> str:
    """The slug crate's slugify on ASCII text: letters lower-cased, every
    run of other characters one '-', none leading or trailing."""
    assert text.isascii(), text  # (deunicode's table is not re-implemented: labels are ASCII)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def is_valid_len(text: str) -> bool:
    return bool(text) and text == text.strip() and len(text.encode()) <= MAX_LEN


def is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def name_id(text: str, name_ok) -> tuple[str, str]:
    if is_uuid(text):
        return "uuid", text
    if is_valid_len(text) and text == slugify(text):
        return "slug", text
    if name_ok(text):
        return "name", text
    raise AssertionError(f"Bencher refuses the key {text!r}")


def strip_ignore(name: str) -> tuple[str, bool]:
    for suffix in IGNORE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)], True
    return name, False


def bencher_load(text: str) -> dict[str, Any]:
    """What Bencher makes of a BMF file: its benchmarks (as stored, whether
    they raise alerts) and the measures it creates with their units."""
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert isinstance(doc, dict)
    benchmarks: dict[str, bool] = {}
    measures: dict[str, str] = {}
    for key, metrics in doc.items():
        _, name = name_id(key, lambda t: 0 < len(t.encode()) <= MAX_BENCHMARK_NAME_LEN)
        name, ignored = strip_ignore(name)
        assert name and name not in benchmarks, f"{key!r}: two entries for one benchmark"
        benchmarks[name] = ignored
        assert isinstance(metrics, dict) and metrics, key
        for measure, metric in metrics.items():
            _, m = name_id(measure, is_valid_len)
            slug = BUILT_IN_NAMES.get(m, m)
            measures[slug] = BUILT_IN_UNITS.get(slug, GENERIC_UNITS)
            assert isinstance(metric, dict) and "value" in metric, (key, measure)
            assert set(metric) <= {"value", "lower_value", "upper_value"}, (key, measure)
            for v in metric.values():
                assert isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return {"benchmarks": benchmarks, "measures": measures, "doc": doc}


def check_bencher_units(loaded: dict[str, Any]) -> None:
    """A reader understands each measure's units: Bencher's own where one is
    used, else the name's last word is the unit (docs/usage.md's table)."""
    for slug, units in loaded["measures"].items():
        if units != GENERIC_UNITS:
            continue
        metric = METRICS[slug.replace("-", "_")]
        assert metric.unit in ("count", "rps") or slug.endswith(
            {"s": "-s", "bytes": "-bytes"}[metric.unit]), slug


@pytest.mark.parametrize("figures", ["headline", "all"])
@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_every_fixture_run_loads_in_bencher(run: Path, figures: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    proc = export(run, "--format", "bencher", "--figures", figures,
                  capsys=in_process(run, capsys))
    assert proc.returncode == 0, proc.stderr
    loaded = bencher_load(proc.stdout)
    check_bencher_units(loaded)
    assert not any(loaded["benchmarks"].values())  # a finished run: every figure may alert
    values = [m["value"] for ms in loaded["doc"].values() for m in ms.values()]
    assert values and 0 not in values
    if figures == "headline":  # Bencher's own latency where a configuration has a time
        assert "latency" in loaded["measures"] or set(loaded["measures"]) == {"peak-rss-bytes"}


# -- github-action-benchmark ----------------------------------------------

def action(tool: str, current: Path, previous: Path | None = None) -> dict[str, Any]:
    """gab_action.js's account of what the action makes of CURRENT (after
    PREVIOUS): it fails the test where the action would fail the step."""
    if NODE is None:
        pytest.skip("node is not installed: the action's rules run on node")
    args = [NODE, str(ACTION), tool, str(current)] + ([str(previous)] if previous else [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[:2000]
    return json.loads(proc.stdout)


def scaled(doc: list[dict[str, Any]], factor: float, path: Path) -> Path:
    path.write_text(json.dumps([{**e, "value": e["value"] * factor} for e in doc]))
    return path


def has_figure(run: Path, direction: str) -> bool:
    """Whether the run has a figure of this direction with an ok run (rps: http's)."""
    if direction == "smaller":
        return True
    with (run / "runs.csv").open(newline="") as f:
        return any(r.get("rps") and r["status"] == "ok" for r in csv.DictReader(f))


@pytest.mark.parametrize("figures", ["headline", "all"])
@pytest.mark.parametrize("direction", ["smaller", "bigger"])
@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_every_fixture_run_loads_in_the_action(run: Path, direction: str, figures: str,
                                               tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    proc = export(run, "--format", "github-action-benchmark", "--direction", direction,
                  "--figures", figures, "--out", out, capsys=in_process(run, capsys))
    if not has_figure(run, direction):
        # the action would throw "No benchmark result was found": refused here instead
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "nothing to export" in proc.stderr and list(tmp_path.iterdir()) == []
        return
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    tool = TOOLS[direction]
    alone = action(tool, out)
    assert len(alone["benches"]) == len(doc) and len({b["name"] for b in doc}) == len(doc)
    assert 0 not in [b["value"] for b in alone["benches"]]
    # the same figures again raise nothing; 1% worse still nothing; three times as bad
    # (past the action's default alert-threshold, 200%), every one
    worse = 3.0 if direction == "smaller" else 1 / 3
    assert action(tool, out, out)["alerts"] == []
    assert action(tool, scaled(doc, 1 + (worse - 1) / 100, tmp_path / "a.json"), out)["alerts"] == []
    doubled = action(tool, scaled(doc, worse, tmp_path / "b.json"), out)
    assert len(doubled["alerts"]) == len(doc)
    assert {a["ratio"] for a in doubled["alerts"]} <= {"3.00", "3"}


def test_bigger_on_a_run_without_http_is_one_line_exit_2_writing_nothing(tmp_path: Path) -> None:
    out = tmp_path / "bigger.json"
    for run in (FIXTURES / "run", FIXTURES / "formats" / "v2"):
        proc = export(run, "--format", "github-action-benchmark", "--direction", "bigger",
                      "--out", out)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr.startswith("harness: error: nothing to export") \
            and proc.stderr.count("\n") == 1 and "rps" in proc.stderr
        assert list(tmp_path.iterdir()) == []


def test_a_zero_counter_is_left_out_and_counted(tmp_path: Path) -> None:
    """The quick fixture's counters include medians of 0 (major faults):
    with --figures all they are named on stderr, never written."""
    with (FIXTURES / "quick" / "runs.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    assert any(r["major_faults"] == "0" for r in rows)  # the case exists in the fixture
    for fmt in (["--format", "bencher"], ["--format", "github-action-benchmark",
                                          "--direction", "smaller"]):
        proc = export(FIXTURES / "quick", *fmt, "--figures", "all")
        assert proc.returncode == 0, proc.stderr
        assert re.search(r"left out \d+ figures whose median is 0", proc.stderr)
        doc = json.loads(proc.stdout)
        values = ([m["value"] for ms in doc.values() for m in ms.values()]
                  if isinstance(doc, dict) else [e["value"] for e in doc])
        assert 0 not in values


# -- an unfinished run -------------------------------------------------------

def unfinished(tmp_path: Path) -> Path:
    run = tmp_path / "unfinished"
    shutil.copytree(FIXTURES / "formats" / "v7", run)
    env = json.loads((run / "env.json").read_text())
    env["finished_at"] = None
    (run / "env.json").write_text(json.dumps(env))
    return run


def test_an_unfinished_run_is_refused_unless_partial(tmp_path: Path) -> None:
    run = unfinished(tmp_path)
    out = tmp_path / "out.json"
    before = sorted(p.name for p in tmp_path.iterdir())
    for fmt in (["--format", "bencher"],
                ["--format", "github-action-benchmark", "--direction", "smaller"]):
        proc = export(run, *fmt, "--out", out)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "did not finish" in proc.stderr and "--partial" in proc.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == before
    # --partial: Bencher keeps the figures under the same benchmarks, raising no alert
    proc = export(run, "--format", "bencher", "--partial")
    assert proc.returncode == 0 and "did not finish" in proc.stderr, proc.stderr
    partial = bencher_load(proc.stdout)
    finished = bencher_load(export(FIXTURES / "formats" / "v7", "--format", "bencher").stdout)
    assert partial["benchmarks"] == {name: True for name in finished["benchmarks"]}
    # ... and each of the action's entries says so in its tooltip
    proc = export(run, "--format", "github-action-benchmark", "--direction", "smaller",
                  "--partial", "--out", out)
    assert proc.returncode == 0, proc.stderr
    entries = action(TOOLS["smaller"], out)["benches"]
    assert entries and all(e["extra"].startswith("partial run, not finished: ")
                           for e in entries)
    # a finished run is never marked, --partial or not
    proc = export(FIXTURES / "formats" / "v7", "--format", "bencher", "--partial")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert bencher_load(proc.stdout) == finished


# -- a run of the default suite's size -------------------------------------

def default_sized_run(folder: Path) -> tuple[Path, int]:
    """A run directory holding every configuration the default suite plans
    (`run --suite default`), 3 ok runs each with figures of 10 significant
    digits as a real run records them, and its count of configurations.
    Counters are sometimes 0, as the kernel's are."""
    s = settings_from(Options(suite="default"), ram_bytes=64 << 30)
    planned = configurations(plan(resolve(s.impls), s))
    rng = random.Random(50)
    rows = []
    for key, p in planned.items():
        for rep in (1, 2, 3):
            def t(low: float, high: float) -> float:
                return round(rng.uniform(low, high), 9)
            row: dict[str, Any] = {
                "run_id": "default-sized", "impl": key.impl, "language": p.impl.language.name,
                "runtime": p.impl.runtime_label, "workload": key.workload, "n": key.n,
                "buffer": key.buffer, "rep": rep, "status": "ok", "exit_code": 0,
                "wall_s": t(0.1, 60), "cpu_user_s": t(0.01, 60), "cpu_sys_s": t(0, 5),
                "ctx_switches_voluntary": rng.randint(0, 90000),
                "ctx_switches_involuntary": rng.choice([0, rng.randint(1, 900)]),
                "minor_faults": rng.randint(100, 900000), "major_faults": rng.choice([0, 0, 1]),
                "peak_rss_bytes": rng.randint(1_000_000, 3_000_000_000),
                "max_threads": rng.randint(1, 1000), **dict(key.params)}
            if key.workload == "http":
                row.update(rps=round(rng.uniform(50, 9000), 8), latency_p50_s=t(0.1, 2),
                           latency_p90_s=t(2, 3), latency_p99_s=t(3, 4), latency_max_s=t(4, 5),
                           gen_cpu_s=t(0.1, 9), load_s=t(1, 30), requests_done=1000,
                           http_errors=0)
            else:
                row.update(first_iter_s=t(1e-4, 30), warm_iter_s=t(1e-4, 30))
            if key.workload == "sleep":
                row.update(spawn_s=t(1e-6, 9), sleep_wait_s=t(1, 10))
            rows.append(row)
    run = folder / "default-sized"
    run.mkdir()
    env = json.loads((FIXTURES / "quick" / "env.json").read_text())
    env["settings"]["suite"] = "default"
    (run / "env.json").write_text(json.dumps(env))
    with (run / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, RUN_NAMES, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return run, len(planned)


@pytest.fixture(scope="module")
def default_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    return default_sized_run(tmp_path_factory.mktemp("export"))


def test_a_default_run_fits_bencher_in_a_day(default_run: tuple[Path, int]) -> None:
    run, configs = default_run
    proc = export(run, "--format", "bencher")
    assert proc.returncode == 0, proc.stderr
    loaded = bencher_load(proc.stdout)
    check_bencher_units(loaded)
    # one benchmark per configuration, and the day's allowance holds them all
    assert len(loaded["benchmarks"]) == configs <= UNCLAIMED_LIMIT
    assert "unclaimed" not in proc.stderr
    # and docs/usage.md quotes that count
    usage = " ".join((Path(__file__).resolve().parents[3] / "docs" / "usage.md").read_text().split())
    found = re.search(r"one per configuration \((\d+) with today's default suite", usage)
    assert found and int(found[1]) == configs, "docs/usage.md's count of a default run's benchmarks"


def test_a_default_run_fits_the_actions_comment(default_run: tuple[Path, int],
                                                tmp_path: Path) -> None:
    run, configs = default_run
    for direction, tool in TOOLS.items():
        out = tmp_path / f"{direction}.json"
        proc = export(run, "--format", "github-action-benchmark", "--direction", direction,
                      "--out", out)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(out.read_text())
        # every entry once against the last run (comment-always), and every one alerting
        again = action(tool, out, out)
        worse = action(tool, scaled(doc, 3.0 if direction == "smaller" else 1 / 3,
                                    tmp_path / "worse.json"), out)
        assert again["alerts"] == [] and len(worse["alerts"]) == len(doc)
        assert max(again["comment_chars"], worse["comment_chars"],
                   worse["alert_comment_chars"]) <= COMMENT_LIMIT, (direction, len(doc))
