"""`harness export`: Bencher Metric Format and github-action-benchmark's
custom JSON from the committed fixture runs, each checked against the shape
its tool publishes, with figures computed here by hand; bad input is one
line, exit 2, and writes nothing."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from typing import Any

import pytest

from ..conftest import ROOT, harness, harness_main

FIXTURES = ROOT / "harness" / "tests" / "fixtures"
RUN, V4 = FIXTURES / "run", FIXTURES / "formats" / "v4"
GAB = ("--format", "github-action-benchmark", "--direction")


def export(*args: str) -> tuple[Any, str]:
    proc = harness("export", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def check_bmf(doc: Any) -> None:
    """The BMF JSON schema (draft-07, https://bencher.dev/bmf.json, printed on
    https://bencher.dev/docs/reference/bencher-metric-format/): an object of
    benchmarks (any non-empty name), each an object of measures (any
    non-empty name), each an object with a number "value" and optional
    number "lower_value" and "upper_value". Stricter here: nothing else, and
    the measure a slug (lower-case kebab case, at most 64 characters)."""
    assert isinstance(doc, dict) and doc
    for benchmark, measures in doc.items():
        assert isinstance(benchmark, str) and 0 < len(benchmark) <= 1024
        assert isinstance(measures, dict) and measures
        for slug, metric in measures.items():
            assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug) and len(slug) <= 64
            assert isinstance(metric, dict) and "value" in metric
            assert set(metric) <= {"value", "lower_value", "upper_value"}
            assert all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       and math.isfinite(v) for v in metric.values())
            if "lower_value" in metric or "upper_value" in metric:
                assert metric["lower_value"] <= metric["value"] <= metric["upper_value"]


# The action's "range" as it reads one (src/extractRangeInfo.ts).
RANGE = re.compile(r"(\+-|±)\s*(\d.+)")


def check_gab(doc: Any) -> None:
    """github-action-benchmark's custom tools read an array of its
    BenchmarkResult (src/extract.ts; the README's custom example): "name",
    "unit" text and "value" a number, required; "range" and "extra" text,
    optional. Names are unique: the action draws a chart per name."""
    assert isinstance(doc, list)
    for entry in doc:
        assert {"name", "unit", "value"} <= set(entry) <= {"name", "unit", "value", "range",
                                                           "extra"}
        assert isinstance(entry["name"], str) and isinstance(entry["unit"], str)
        assert isinstance(entry["value"], (int, float)) and math.isfinite(entry["value"])
        assert all(isinstance(entry[k], str) for k in ("range", "extra") if k in entry)
        if "range" in entry:
            assert RANGE.fullmatch(entry["range"])
    assert len({e["name"] for e in doc}) == len(doc)


def test_bencher_on_the_fixture_run():
    doc, err = export(str(RUN), "--format", "bencher")
    check_bmf(doc)
    # go chain N=20000's three ok runs, by hand (runs.csv lines 17-19): warm
    # 0.003, 0.00303, 0.00297 s; the median's interval from 3 runs is
    # [min, max] (sign-test order statistics, at 1 - 2/2^3 = 75%)
    go = doc["go chain N=20000"]
    # the warm iteration in Bencher's own latency measure, in nanoseconds
    assert go["latency"] == {"value": 3_000_000, "lower_value": 2_970_000,
                             "upper_value": 3_030_000}
    assert go["peak-rss-bytes"] == {"value": 56000000, "lower_value": 55720000,
                                    "upper_value": 56279999}
    # by default the headline figures: chain's are the cold and warm iterations and peak RSS
    assert set(go) == {"first-iter-s", "latency", "peak-rss-bytes"}
    assert set(doc["go sleep N=1"]) == {"peak-rss-bytes"}  # sleep's: peak RSS alone
    # only ok runs count: 2 ok and 1 crashed, the median of the two
    assert doc["rust-tokio chain N=1000000"]["latency"]["value"] == pytest.approx(120_600_000)
    # no ok run, no benchmark: 3 skipped (csharp), oom, timeout, invalid
    assert "node chain N=1000000" not in doc and "csharp sleep N=1" not in doc
    assert len(doc) == 36
    assert err == "note: export left out 6 of 42 configurations: no ok run\n"
    # --figures all: a measure per figure the configuration has (chain has no spawn time)
    every, _ = export(str(RUN), "--format", "bencher", "--figures", "all")
    check_bmf(every)
    assert set(every["go chain N=20000"]) == {"wall-s", "cpu-s", "first-iter-s", "latency",
                                              "peak-rss-bytes", "max-threads"}


def test_bencher_one_run_has_no_bounds(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    with (RUN / "runs.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if not (r["impl"], r["workload"], r["n"], r["rep"]) in {
            ("go", "chain", "20000", "2"), ("go", "chain", "20000", "3")}]
    with (run / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, reader.fieldnames)
        writer.writeheader()
        writer.writerows(rows)
    doc, _ = export(str(run), "--format", "bencher")
    check_bmf(doc)
    assert doc["go chain N=20000"]["latency"] == {"value": 3_000_000}
    gab, _ = export(str(run), *GAB, "smaller")
    check_gab(gab)
    assert next(e for e in gab if e["name"] == "go chain N=20000 warm-iter-s") == {
        "name": "go chain N=20000 warm-iter-s", "unit": "s", "value": 0.003,
        "extra": "1 ok run, no interval"}


def test_bencher_on_the_v4_run():
    doc, err = export(str(V4), "--format", "bencher")
    check_bmf(doc)
    assert len(doc) == 20 and err == ""
    # a variant and a release keep their labels
    assert doc["go[GOGC=off] chain N=1000"]["latency"] == {
        "value": 1176414, "lower_value": 1051087, "upper_value": 1301741}
    assert "nodejs@22.12.0 sleep N=1000" in doc


def test_gab_smaller_on_the_fixture_run():
    doc, err = export(str(RUN), *GAB, "smaller")
    check_gab(doc)
    entries = {e["name"]: e for e in doc}
    warm = entries["go chain N=20000 warm-iter-s"]
    # the interval and its confidence in the tooltip; no symmetric "range"
    assert warm == {"name": "go chain N=20000 warm-iter-s", "unit": "s", "value": 0.003,
                    "extra": "median of 3 ok runs, 75% interval [2.97 ms, 3.03 ms]"}
    assert entries["go chain N=20000 peak-rss-bytes"]["unit"] == "bytes"
    # every headline figure of every configuration with an ok run (36, as Bencher's)
    bmf, _ = export(str(RUN), "--format", "bencher")
    assert len(doc) == sum(len(measures) for measures in bmf.values())
    assert "left out 6 of 42" in err


def test_gab_bigger_holds_throughput_alone(tmp_path):
    run = tmp_path / "http"
    run.mkdir()
    shutil.copy(V4 / "env.json", run)
    with (V4 / "runs.csv").open(newline="") as f:
        header = next(csv.reader(f))
    with (run / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, header, restval="")
        writer.writeheader()
        for rep, rps in enumerate([1000.0, 1100.0, 1050.0], 1):
            writer.writerow({"run_id": "x", "impl": "go", "language": "go", "runtime": "Go",
                             "workload": "http", "users": 50, "requests": 20, "rep": rep,
                             "status": "ok", "exit_code": 0, "wall_s": 2.0, "cpu_user_s": 1.0,
                             "cpu_sys_s": 0.5, "peak_rss_bytes": 10_000_000, "rps": rps,
                             "latency_p50_s": 0.01})
        writer.writerow({"run_id": "x", "impl": "go", "language": "go", "runtime": "Go",
                         "workload": "http", "users": 50, "requests": 20, "rep": 4,
                         "status": "crashed", "exit_code": 1, "rps": 99999.0})
    bigger, _ = export(str(run), *GAB, "bigger")
    check_gab(bigger)
    assert len(bigger) == 1
    (entry,) = bigger
    # the median of the ok runs: the crashed run's figure is no figure
    assert entry["unit"] == "requests/s" and entry["value"] == 1050.0
    assert entry["name"].endswith(" rps")
    assert entry["extra"] == "median of 3 ok runs, 75% interval [1,000 req/s, 1,100 req/s]"
    smaller, _ = export(str(run), *GAB, "smaller")
    check_gab(smaller)
    assert "rps" not in {e["name"].rsplit(" ", 1)[1] for e in smaller}
    assert {"latency-p50-s", "peak-rss-bytes"} <= {e["name"].rsplit(" ", 1)[1] for e in smaller}


def test_out_is_written_whole_and_replaces_the_old_file(tmp_path):
    out = tmp_path / "bmf.json"
    out.write_text("old")
    proc = harness("export", str(V4), "--format", "bencher", "--out", str(out))
    assert proc.returncode == 0 and proc.stdout == ""
    check_bmf(json.loads(out.read_text()))
    assert out.read_text() == harness("export", str(V4), "--format", "bencher").stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bmf.json"]  # no temporary file left


@pytest.mark.parametrize("args", [
    [str(FIXTURES / "missing"), "--format", "bencher"],
    [str(FIXTURES), "--format", "bencher"],  # a folder without runs.csv
    [str(RUN), "--format", "csv"],
    [str(RUN)],  # no --format
    [str(RUN), "--format", "github-action-benchmark"],  # no --direction
    [str(RUN), *GAB, "sideways"],
    [str(RUN), *GAB, "bigger"],  # no http: nothing where bigger is better
    [str(RUN), "--format", "bencher", "--figures", "some"],
    [str(RUN), "--format", "bencher", "--direction", "smaller"],
    [str(RUN), "--format", "bencher", "--out", "{tmp}/no/such/folder/bmf.json"],
    [str(RUN), "--format", "bencher", "--out", "{tmp}"],  # a folder
    [str(RUN), "--format", "bencher", "--out", "{tmp}/.."],
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(args, tmp_path, capsys):
    command = ["export", *(a.replace("{tmp}", str(tmp_path)) for a in args)]
    # the first case in a real process, the others in the test's (conftest.harness_main)
    proc = harness(*command) if args[0].endswith("missing") else harness_main(capsys, *command)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("harness: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stdout == "" and list(tmp_path.iterdir()) == []
