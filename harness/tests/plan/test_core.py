"""The pure core, table-driven: settings from options and suites, the plan,
estimates from history, implementation selection, sizes."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness import UsageError
from harness.plan.plan import Planned, estimate_s, history_from, plan
from harness.core.claims import CAPACITY_AT_10_MS, REQUESTS_PER_USER, SEED004_STEP_S
from harness.core.registry import Impl, Language, load_registry, select
from harness.record.rundir import RunDir, earlier_runs
from harness.core.schema import ConfigKey, Row
from harness.plan.options import Options
from harness.plan import suites as suites_module
from harness.plan.settings import Part, parse_size, settings_from
from harness.plan.suites import load_suites
from harness.core.workloads import LADDER_STEP_S, STYLES, WORKLOADS

GIB = 1 << 30


def lang(name: str) -> Language:
    return Language(name, Path("."), ["true"], ["true"], ["true"])


GO, RUST = lang("go"), lang("rust")
IMPLS = [Impl("go", GO, "Go", ["go-bin"], ["sleep", "chain", "bounded"]),
         Impl("rust-tokio", RUST, "Rust", ["tokio-bin"], ["sleep", "chain", "bounded"]),
         Impl("rust-futures", RUST, "Rust", ["futures-bin"], ["sleep"]),
         # an id equal to another language's name: the language wins
         Impl("rust", lang("odd"), "odd", ["odd-bin"], ["chain"])]


def settings(**opts: Any):
    return settings_from(Options.from_record(opts), ram_bytes=10 * GIB)


@pytest.mark.parametrize("text,expected", [
    ("8G", 8 * GIB), ("512M", 512 << 20), ("64MiB", 64 << 20), ("1048576", 1 << 20),
    ("1.5g", int(1.5 * GIB)), ("2 KB", 2048), ("1T", 1 << 40),
])
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["lots", "", "-1G", "0", "0.1", "8X", "G"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_size(text)


@pytest.mark.parametrize("opts,message", [
    ({"n": "1,1"}, "repeated value"), ({"n": "0"}, "positive"), ({"buffer": "-1"}, ">= 0"),
    ({"workload": ","}, "--workload is empty"), ({"impl": " , "}, "--impl is empty"),
    ({"workload": "nope"}, "unknown workload"), ({"suite": "nope"}, "unknown suite"),
    ({"repeat": 0}, "--repeat"), ({"iterations": 0}, "--iterations"),
    ({"duration_ms": 0}, "--duration-ms"), ({"timeout": float("inf")}, "--timeout"),
    ({"timeout": float("nan")}, "--timeout"), ({"timeout": -1.0}, "--timeout"),
    ({"sample_interval_ms": float("inf")}, "--sample-interval-ms"),
    ({"style": "blocking"}, "--style: unknown value 'blocking'"), ({"users": "0"}, "--users"),
    ({"pool_threads": "x"}, "--threads"),
])
def test_bad_options_are_usage_errors(opts: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        settings(**opts)


def test_defaults_without_a_suite() -> None:
    s = settings()
    assert s.parts == [Part(list(WORKLOADS), [1000], [1])]
    assert (s.repeat, s.duration_ms, s.iterations, s.timeout_s) == (4, 10000, None, 300.0)
    assert s.max_rss_bytes == 8 * GIB and s.sample_interval_s == 0.01 and s.impls == ["all"]


def test_an_option_overrides_every_part_of_a_suite() -> None:
    suite = load_suites()["default"]
    s = settings(suite="default", n="7", buffer="3", repeat=2, duration_ms=50, iterations=4,
                 workload="sleep,bounded")
    assert s.parts and all(p.ns == [7] and p.buffers == [3] for p in s.parts)
    assert all(p.repeat is None and p.duration_ms is None and p.iterations is None for p in s.parts)
    assert (s.repeat, s.duration_ms, s.iterations) == (2, 50, 4)
    assert {w for p in s.parts for w in p.workloads} == {"sleep", "bounded"}
    # parts left with no workload are dropped, the rest keep their order
    assert len(s.parts) == sum(1 for p in suite.parts if set(p.workloads) & {"sleep", "bounded"})


def test_a_suite_supplies_what_no_option_gives() -> None:
    suite = load_suites()["quick"]
    s = settings(suite="quick")
    assert s.repeat == suite.repeat and s.duration_ms == suite.duration_ms
    assert [p.ns for p in s.parts] == [p.n or [1000] for p in suite.parts]
    http = [p for p in s.parts if p.workloads == ["http"]]
    assert [p.params for p in http] == [{"users": [5], "requests": [3], "delay_ms": [20]}]


def test_a_part_may_have_its_own_timeout_which_timeout_overrides() -> None:
    impl = Impl("x", GO, "Go", ["x-bin"], ["chain", "chain-await", "bounded"])
    runs = plan([impl], settings(suite="default"))
    chains = {p.timeout_s for p in runs if p.key.n == 1_000_000}  # (impl x: chains only)
    assert chains == {90.0}  # the 1M chains' own (suites.toml)
    assert {p.timeout_s for p in runs if p.key.n == 20_000} == {120.0}  # the 20k chains' own
    assert {p.timeout_s for p in runs if p.key.workload == "bounded"} == {300.0}  # the run's
    assert {p.timeout_s for p in plan([impl], settings(suite="default", timeout=5.0))} == {5.0}


def test_plan_expands_a_workloads_own_dimensions() -> None:
    server = Impl("srv", GO, "Go", ["srv-bin"], ["chain", "http"])
    s = settings(workload="http", users="5,10", style="async,sync", pool_threads="4", n="99")
    runs = plan([server], s)
    assert len(runs) == 4 * 2 * 2  # repeats (the default 4) x users x styles; N does not apply to http
    first = runs[0]
    assert first.key.n is None and first.key.buffer is None
    assert first.key.params == (("users", 5), ("requests", 20), ("delay_ms", 100),
                                ("pool_threads", 4), ("style", "async"), ("rate", None),
                                ("step_s", None))
    assert first.label == "srv http users=5 requests=20 delay_ms=100 pool_threads=4 style=async rep 1"
    assert first.argv() == ["srv-bin", "serve", "--port", "0", "--delay-ms", "100",
                            "--threads", "4"]
    # a row read back has the same key: the dimensions are columns
    row = Row(impl="srv", workload="http", users=5, requests=20, delay_ms=100, pool_threads=4,
              style="async")
    assert ConfigKey.of(row) == first.key
    # no --threads: the server's own pool, and no --threads argument
    assert "--threads" not in plan([server], settings(workload="http"))[0].argv()


def test_a_rate_ladder_is_a_step_per_rate_without_users() -> None:
    """--rate: the open loop, each rate a configuration of its own, one
    style's steps in a row and rising; it has no users nor requests per user
    (their defaults do not multiply the steps), and its step's length is in
    its key even where defaulted."""
    server = Impl("srv", GO, "Go", ["srv-bin"], ["http"])
    runs = plan([server], settings(workload="http", rate="50,100", style="async,sync", repeat=1))
    assert [(p.key.param("style"), p.key.param("rate")) for p in runs] == [
        ("async", 50), ("async", 100), ("sync", 50), ("sync", 100)]
    assert {(p.key.param("users"), p.key.param("requests"), p.key.param("step_s"))
            for p in runs} == {(None, None, LADDER_STEP_S)}
    row = Row(impl="srv", workload="http", delay_ms=100, style="async", rate=50,
              step_s=LADDER_STEP_S)
    assert ConfigKey.of(row) == runs[0].key


def test_seed004_scales_vaughans_loads() -> None:
    s = settings(suite="seed004")
    assert [(p.params.get("users"), p.params.get("requests"), p.params.get("delay_ms"),
             p.params.get("style"), p.params.get("rate")) for p in s.parts][:3] == [
        ([50], [20], [100], None, None), ([150], [10], [100], None, None),
        # his growth to 2000 users at his own D, within what the load generator can send
        ([50, 2000], [5], [1000], ["when-all"], None)]
    # then the open loop: a doubling ladder up to the generator's one-core ceiling, the
    # server on one core and the generator on the other
    ladder, *styles = s.parts[3:]
    assert ladder.params["rate"] == [100 * 2 ** i for i in range(8)]
    assert ladder.params["delay_ms"] == [100]
    # which style sustains the most: the same ladder at a tenth of the wait,
    # from 800, where the servers' knees lie under the generator's ceiling
    assert [(p.params["delay_ms"], p.params["rate"]) for p in styles] == [
        ([10], [800 * 2 ** i for i in range(5)])] * 2
    assert {st for p in styles for st in p.params["style"]} == set(STYLES)
    # the capacity claims read the D = 10 ms ladder where it has a server's blocking styles
    [blocking] = [p for p in styles if "sync" in p.params["style"]]
    assert tuple(blocking.impls) == CAPACITY_AT_10_MS
    for part in (ladder, *styles):
        assert part.params["cpus"] == [1] and part.params["step_s"] == [SEED004_STEP_S]
        assert part.max_repeat == 5
    # the claims name these loads and steps
    assert {(u, p.params["delay_ms"][0]): p.params["requests"][0]
            for p in s.parts[:3] for u in p.params["users"]} == REQUESTS_PER_USER
    # once, then more runs (a ladder's: whole repeats) while a claim is open,
    # within one sitting
    assert s.timeout_s == 30 and s.repeat == 1 and s.until_settled
    assert s.budget_s == 110 * 60 and s.max_repeat == 8


def test_plan_repeats_are_the_outer_loop_and_buffers_only_where_used() -> None:
    s = settings(impl="go,rust-tokio", workload="chain,bounded", n="10,20", buffer="0,5", repeat=2)
    runs = plan(IMPLS[:2], s)
    labels = [p.label for p in runs]
    assert len(runs) == 2 * 2 * (2 + 4)  # reps x impls x (chain at 2 N + bounded at 2 N x 2 B)
    assert all(p.rep == 1 for p in runs[:len(runs) // 2])  # a full first pass comes first
    assert "go chain N=10 rep 1" in labels and "go bounded N=20 B=5 rep 2" in labels
    assert all(p.key.buffer is None for p in runs if p.key.workload == "chain")
    assert {p.iterations for p in runs if p.key.workload == "bounded"} == \
        {WORKLOADS["bounded"].default_iterations}


def test_plan_skips_undeclared_workloads_and_duplicates_across_parts() -> None:
    s = settings(suite="default", n="5", repeat=1, workload="sleep")
    runs = plan([IMPLS[2]], s)  # sleep appears in three parts of the default suite
    assert [p.label for p in runs] == ["rust-futures sleep N=5 rep 1"]
    assert runs[0].duration_ms == 1000  # the first part's own sleep time wins


def test_per_part_repeat_and_iterations() -> None:
    s = settings(suite="default", impl="go", workload="bounded")
    runs = plan([IMPLS[0]], s)
    # each part's own: 60 timed runs at 10 producers (microseconds each), 3 at 10k
    assert {(p.key.n, p.iterations) for p in runs} == {(10, 60), (10000, 3)}
    assert max(p.rep for p in runs) == 1  # the suite's repeat


def test_program_arguments_come_from_the_declaration() -> None:
    p = Planned(IMPLS[0], ConfigKey("go", "bounded", 10, 0), 1, 500, 4)
    assert p.argv() == ["go-bin", "bounded", "--n", "10", "--buffer", "0", "--iterations", "4"]
    p = Planned(IMPLS[0], ConfigKey("go", "bounded", 10, 0), 1, 500, 4, warmup_ms=250)
    assert p.argv()[-2:] == ["--warmup-ms", "250"]
    p = Planned(IMPLS[0], ConfigKey("go", "sleep", 10, None), 1, 500, 1)
    assert p.argv() == ["go-bin", "sleep", "--n", "10", "--duration-ms", "500", "--iterations", "1"]
    assert p.command() == p.argv()  # the collection between passes: on, nothing to set


def test_bounded_below_10000_producers_is_planned_without_the_collection() -> None:
    """docs/protocol.md, "Not at the smallest passes": the run's command
    (runs.csv's, and the dry run's) begins with BENCH_COLLECT=0 there."""
    small = Planned(IMPLS[0], ConfigKey("go", "bounded", 10, 1), 1, 500, 60)
    assert small.command() == ["BENCH_COLLECT=0", *small.argv()]
    large = Planned(IMPLS[0], ConfigKey("go", "bounded", 10_000, 1), 1, 500, 3)
    assert large.command() == large.argv()
    # a variant's own value wins; runs.csv has it in the variant's name, the
    # dry run in front of the line
    collected = dataclasses.replace(IMPLS[0], settings_env=(("BENCH_COLLECT", "1"),))
    mine = dataclasses.replace(small, impl=collected)
    assert mine.command() == mine.argv()
    assert mine.command(variant=True) == ["BENCH_COLLECT=1", *mine.argv()]


def row(impl: str, workload: str, n: int, status: str = "ok", **kw: Any) -> Row:
    return Row(impl=impl, workload=workload, n=n, buffer=None, rep=1, status=status,
               iterations=2, **kw)


def test_history_is_the_median_of_ok_rows_of_the_declared_column() -> None:
    history = history_from([
        row("go", "chain", 10, wall_s=1.0), row("go", "chain", 10, wall_s=3.0),
        row("go", "chain", 10, wall_s=2.0), row("go", "chain", 10, "timeout", wall_s=300.0),
        row("go", "sleep", 10, wall_s=10.5, spawn_s=0.25), row("gone", "vanished", 1, wall_s=1.0),
    ])
    assert history == {(ConfigKey("go", "chain", 10, None), 2, 0): 2.0,
                       (ConfigKey("go", "sleep", 10, None), 2, 0): 0.25}


@pytest.mark.parametrize("workload,duration_ms,past,expected", [
    ("chain", 1000, 4.0, 4.0),  # history wins
    ("chain", 1000, None, 0.3 + 2 * 1000 * 2e-6),
    ("bounded", 1000, None, 0.3 + 2 * 1000 * 1e-6),
    ("sleep", 1000, 0.5, 0.3 + 2 * (1.0 + 0.5)),  # sleep: the known sleep plus past spawn time
    ("sleep", 2000, None, 0.3 + 2 * (2.0 + 1000 * 5e-6)),
])
def test_estimate_s(workload: str, duration_ms: int, past: float | None, expected: float) -> None:
    key = ConfigKey("go", workload, 1000, 1 if workload == "bounded" else None)
    p = Planned(IMPLS[0], key, 1, duration_ms, 2)
    history = {(key, 2, 0): past} if past is not None else {}
    assert estimate_s(p, history) == pytest.approx(expected)


def test_history_reads_earlier_run_directories_and_skips_broken_ones(tmp_path: Path) -> None:
    assert earlier_runs(tmp_path / "absent") == []
    run = RunDir.create_new(tmp_path)
    run.append_run(row("go", "chain", 10, wall_s=1.5, run_id="r", language="go"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "runs.csv").write_text("not,a,runs,file\n1,2,3,4\n")
    assert history_from(earlier_runs(tmp_path)) == {(ConfigKey("go", "chain", 10, None), 2, 0): 1.5}


@pytest.mark.parametrize("names,expected", [
    (["go"], ["go"]),
    (["rust"], ["rust-tokio", "rust-futures"]),  # a language name wins over an id
    (["rust-futures", "go", "rust-futures"], ["rust-futures", "go"]),
])
def test_select(names: list[str], expected: list[str]) -> None:
    assert [i.id for i in select(IMPLS, names)] == expected


def test_select_unknown_names_the_known() -> None:
    with pytest.raises(UsageError, match="known: go, odd, rust"):
        select(IMPLS, ["nope"])


def test_a_part_may_name_its_own_implementations() -> None:
    """suites.toml `impls` on a part: that part runs only those (of the run's),
    the other parts every one; each name is a declared implementation."""
    go_http = Impl("go", GO, "Go", ["go-bin"], ["sleep", "http"])
    cs_http = Impl("csharp-async", lang("csharp"), "C#", ["cs-bin"], ["sleep", "http"])
    runs = plan([go_http, cs_http], settings(suite="default"))
    judged = {(p.impl.id, p.key.param("style")) for p in runs
              if p.key.workload == "http" and p.key.param("users") == 50}
    assert judged == {("csharp-async", s) for s in ("async", "parallel", "sync", "when-all")}
    assert {p.impl.id for p in runs if p.key.param("users") == 10} == {"go", "csharp-async"}
    assert {p.impl.id for p in runs if p.key.workload == "sleep"} == {"go", "csharp-async"}
    declared = {impl.id for impl in load_registry()}
    named = {name for suite in load_suites().values() for part in suite.parts
             for name in part.impls or ()}
    assert named and named <= declared


def test_a_part_impls_that_is_not_a_list_of_names_is_a_usage_error(monkeypatch, tmp_path) -> None:
    bad = tmp_path / "suites.toml"
    bad.write_text('[x]\n[[x.part]]\nworkloads = ["sleep"]\nimpls = "go"\n')
    monkeypatch.setattr(suites_module, "SUITES_PATH", bad)
    with pytest.raises(UsageError, match=r"^suites.toml: x.part\[0\]: impls 'go' must be a list "
                                         r"of implementation names$"):
        settings(suite="x")


def test_an_adaptive_sleep_is_estimated_as_the_scheduler_will_set_it() -> None:
    small, big = ConfigKey("go", "sleep", 10, None), ConfigKey("go", "sleep", 1000, None)
    history = {(small, 1, 0): 0.004, (big, 1, 0): 0.5}
    first = Planned(IMPLS[0], big, 1, 5000, 1, adaptive_sleep=True)
    # the first run: the smaller size's start grown 100 times and by half
    # again, 0.6 s: 2 x 0.6 + 1 s
    assert estimate_s(first, history) == pytest.approx(0.3 + 2.2 + 0.5)
    # a later one: its own start, 0.5 s: 2 s
    assert estimate_s(Planned(IMPLS[0], big, 2, 5000, 1, adaptive_sleep=True), history) == \
        pytest.approx(0.3 + 2.0 + 0.5)
    # no smaller size known: the first run sleeps the whole duration
    assert estimate_s(first, {(big, 1, 0): 0.5}) == pytest.approx(0.3 + 5.0 + 0.5)
