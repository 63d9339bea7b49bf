"""Every registered implementation whose toolchain is present: build it and
run each of its workloads at a tiny N through the harness, with validation;
a server (http) serves 5 users x 3 requests in each style, every response
checked by the load generator."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.registry import load_registry
from harness.execute.toolchains import detect_toolchain

from ..conftest import builds, harness, read_rows, tool_missing

IMPLS = load_registry()  # the repository's own, not the fakes
LANGUAGES = sorted({i.language.name for i in IMPLS})


@pytest.mark.parametrize("language", [pytest.param(name, marks=builds(name))
                                      for name in LANGUAGES])
def test_every_workload_validates_at_tiny_n(language: str, tmp_path: Path) -> None:
    lang = next(i.language for i in IMPLS if i.language.name == language)
    tool = detect_toolchain(lang)
    if not tool.present:
        tool_missing(f"{language}'s toolchain", tool.reason)
    out = tmp_path / "results"
    # N = 100: a power of ten, so skynet runs too. 1 s sleeps: 100 threads can
    # take a good part of a second to start on a busy machine.
    proc = harness("run", "--no-report", "--impl", language, "--n", "100", "--buffer", "0,1,7",
                   "--duration-ms", "1000", "--users", "5", "--requests", "3", "--delay-ms", "20",
                   "--warmup-ms", "30", "--repeat", "1", "--timeout", "120", "--out", str(out),
                   timeout=1800)
    rows = read_rows(out)
    assert rows, proc.stdout + proc.stderr
    # a server may lack a style that cannot exist in it (its README says why): skipped
    no_loadgen = [r["error"] for r in rows if r["workload"] == "http" and r["status"] == "skipped"
             and r["error"].startswith("no load generator")]
    bad = [(r["impl"], r["workload"], r["buffer"], r["status"], r["error"]) for r in rows
           if r["status"] != "ok" and not (r["workload"] == "http" and r["status"] == "skipped"
                                           and ("has no" in r["error"] or r["error"] in no_loadgen))]
    assert not bad, bad
    expected = {(i.id, w) for i in IMPLS if i.language.name == language for w in i.workloads}
    assert {(r["impl"], r["workload"]) for r in rows} == expected
    assert_warmed_up(rows)
    if no_loadgen:  # every other workload checked: the servers alone went unloaded
        tool_missing("the load generator", f"{language}'s servers not loaded: {no_loadgen[0]}")


def assert_warmed_up(rows: list[dict[str, str]]) -> None:
    """Every workload that takes a warm-up ran one (validated: answers, and
    the stop rule); sleep none, and http's rows leave the column empty (a
    server runs no iterations)."""
    for r in rows:
        if r["status"] == "ok":
            takes = r["workload"] not in ("sleep", "http")
            runs = r["warmup_runs"]
            assert (runs == "") == (r["workload"] == "http"), (r["impl"], r["workload"], runs)
            assert (int(runs or 0) >= 1) == takes, (r["impl"], r["workload"])


# The runtimes of "Beyond the anchors" (Erlang, Elixir, Kotlin, PyPy, the C++
# floor), at N = 10000 for every workload they declare: where a toolchain
# does not install, the harness records `skipped` rows with the reason, and
# the test is skipped with it (under CI, a failure: conftest.tool_missing).
AT_10000 = [name for name in ("erlang", "elixir", "kotlin", "cpp", "python-pypy")
            if any(name in (i.id, i.language.name) for i in IMPLS)]


@pytest.mark.parametrize("name", [pytest.param(name, marks=builds(next(
    i.language.name for i in IMPLS if name in (i.id, i.language.name)))) for name in AT_10000])
def test_new_runtimes_validate_at_n_10000(name: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("run", "--no-report", "--impl", name, "--n", "10000", "--buffer", "0,1,100",
                   "--duration-ms", "2000", "--warmup-ms", "30", "--repeat", "1",
                   "--timeout", "120", "--out", str(out), timeout=1800)
    rows = read_rows(out)
    assert rows, proc.stdout + proc.stderr
    statuses = {r["status"] for r in rows}
    if statuses == {"skipped"}:
        why = rows[0]["error"]  # "toolchain missing: ..." or, for python-pypy, "not available: ..."
        kind = "toolchain" if why.startswith("toolchain missing: ") else "runtime"
        tool_missing(f"{name}'s {kind}", why.removeprefix("toolchain missing: ")
                .removeprefix("not available: "))
    bad = [(r["impl"], r["workload"], r["buffer"], r["status"], r["error"]) for r in rows
           if r["status"] != "ok"]
    assert not bad, bad
    impls = [i for i in IMPLS if name in (i.id, i.language.name)]
    assert {(r["impl"], r["workload"]) for r in rows} == {(i.id, w) for i in impls
                                                           for w in i.workloads}
    assert_warmed_up(rows)
