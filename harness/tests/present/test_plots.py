"""Plots render from the committed fixture: every file exists, is a PNG, is not blank."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image
from matplotlib import pyplot as plt

from harness.present import plots
from harness.present.plots import draw, ranked, servers, tasks
from harness.core.presentation import PRESENTATIONS
from harness.core.schema import PAST_END, Row
from harness.record.rundir import RunDir

FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"
ROOT = Path(__file__).resolve().parents[3]
EXPECTED = {
    "sleep_rss.png", "sleep_mem_per_task.png", "chain_time.png", "chain_rss.png",
    "bounded_time.png", "rss_over_time_sleep.png", "rss_over_time_chain.png",
    "rss_over_time_bounded.png", "summary.png",
}


def assert_real_png(path: Path) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
    rgb = (image.imread(path)[..., :3] * 255).astype(np.uint32)
    ink = np.any(rgb < 230, axis=-1).mean()  # share of pixels that are not (near) white
    assert ink > 0.02, f"{path.name} looks blank ({ink:.1%} ink)"
    colours = np.unique(rgb[..., 0] << 16 | rgb[..., 1] << 8 | rgb[..., 2])
    assert len(colours) > 20, f"{path.name} has almost no colours"


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> tuple[Path, list[Path]]:
    run = tmp_path_factory.mktemp("plots") / "run"
    shutil.copytree(FIXTURE, run)
    return run, plots.draw_all(RunDir(run))


def test_every_plot_is_drawn(drawn):
    run, paths = drawn
    assert {p.name for p in paths} == EXPECTED
    assert {p.name for p in (run / "plots").glob("*.png")} == EXPECTED
    for path in paths:
        assert_real_png(path)


def test_plots_drawn_on_every_core_are_those_drawn_on_one(tmp_path, monkeypatch):
    """The workers draw the same files, byte for byte, and the paths come
    in the order one process draws them."""
    drawn = {}
    for workers in (1, 2):
        run = tmp_path / str(workers)
        shutil.copytree(FIXTURE, run)
        monkeypatch.setattr(plots, "usable_cores", lambda: workers)
        drawn[workers] = plots.draw_all(RunDir(run))
    assert [p.name for p in drawn[1]] == [p.name for p in drawn[2]]
    assert [p.read_bytes() for p in drawn[1]] == [p.read_bytes() for p in drawn[2]]


def test_without_samples_the_other_plots_still_come(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    (run / "samples.csv").unlink()
    (run / "env.json").unlink()  # the small print says the machine is unknown
    names = {p.name for p in plots.draw_all(RunDir(run))}
    assert names == {n for n in EXPECTED if not n.startswith("rss_over_time")}


def test_an_implementation_keeps_its_colour_whatever_else_ran(tmp_path):
    """Colours come from the registry, not from the run's subset."""
    both = tmp_path / "both"
    shutil.copytree(FIXTURE, both)
    alone = tmp_path / "alone"
    shutil.copytree(FIXTURE, alone)
    lines = (alone / "runs.csv").read_text().splitlines(keepends=True)
    impl = lines[0].split(",").index("impl")
    (alone / "runs.csv").write_text("".join(
        [lines[0]] + [line for line in lines[1:] if line.split(",")[impl] == "rust-tokio"]))
    (alone / "samples.csv").unlink()
    a, b = plots.Run(RunDir(both)), plots.Run(RunDir(alone))
    assert len(a.color) == 3 and set(b.color) == {"rust-tokio"}
    assert a.color["rust-tokio"] == b.color["rust-tokio"]
    assert a.line["rust-tokio"] == b.line["rust-tokio"]
    # no two implementations of the registry share a colour
    colours = [a.color[i] for i in a.color]
    assert len(set(colours)) == len(colours)
    # a language's variants share its hue: go is not rust's colour
    assert a.color["go"] != a.color["rust-tokio"]


def test_only_the_plot_module_imports_matplotlib():
    code = ("import sys, harness.analyse.analysis, harness.present.report, harness.present.exports, harness.present.compare, harness.session; "
            "sys.exit('matplotlib' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


# ---------------------------------------------------------------- uncertainty

MIB = 1 << 20


def _synthetic(tmp_path: Path) -> plots.Run:
    """sleep at N = 1,000 and 100,000: go grows 250 MiB (measured, 3 runs),
    nodejs 20 MiB (measured, 3 runs), rust-tokio 0.5 MiB (below the 1 MiB
    resolution, 3 runs); chain at N = 1,000: go 3 runs, rust-tokio 6,
    nodejs one."""
    run = RunDir.create_new(tmp_path)

    def add(impl, workload, n, rep, **figures):
        run.append_run(Row(**{"impl": impl, "language": impl, "workload": workload, "n": n,
                        "buffer": None, "rep": rep, "status": "ok", "iterations": 3, **figures}))

    growth = {"go": 250 * MIB, "nodejs": 20 * MIB, "rust-tokio": MIB // 2}
    for impl, grown in growth.items():
        for rep, wobble in enumerate((0, 4096, -4096), start=1):
            add(impl, "sleep", 1000, rep, peak_rss_bytes=10 * MIB + wobble)
            add(impl, "sleep", 100_000, rep, peak_rss_bytes=10 * MIB + grown + wobble)
    for impl, times in {"go": (2e-3, 3e-3, 2.5e-3), "rust-tokio": (1e-3, 1.1e-3, 0.9e-3,
                                                                   1.05e-3, 0.95e-3, 1.2e-3),
                        "nodejs": (4e-3,)}.items():
        for rep, t in enumerate(times, start=1):
            add(impl, "chain", 1000, rep, first_iter_s=t, warm_iter_s=t, peak_rss_bytes=MIB)
    return plots.Run(run)


def test_memory_below_resolution_is_not_ranked_among_the_measured(tmp_path: Path) -> None:
    run = _synthetic(tmp_path)
    title, bars, _ = ranked._panel(run, "sleep", PRESENTATIONS["sleep"].panel)
    assert "N = 100,000" in title
    sections = plots.summary_sections(bars)
    measured, last = sections[0], sections[-1]
    # the measured ones alone are ranked, lowest first
    assert measured.heading == ""
    assert [b.series for b in measured.bars] == ["nodejs", "go"]
    assert [b.value for b in measured.bars] == sorted(b.value for b in measured.bars)
    # the one below resolution is in a group of its own, last, saying why
    assert [b.series for b in last.bars] == ["rust-tokio"]
    assert last.bars[0].value is None and last.bars[0].below == (1000, 100_000)
    assert "below resolution" in last.heading and "1 MiB" in last.heading
    assert "N = 1,000 to 100,000" in last.heading
    assert all(b.series != "rust-tokio" for sec in sections[:-1] for b in sec.bars)


def test_summary_sections_keep_failures_and_unresolved_apart() -> None:
    bars = [plots.Bar("slow", 3.0), plots.Bar("tiny", None, below=(1, 300)),
            plots.Bar("fast", 1.0), plots.Bar("dead", None, failure="oom"),
            plots.Bar("mid", 2.0)]
    sections = plots.summary_sections(bars)
    assert [(s.heading.split(",")[0].split(":")[0], [b.series for b in s.bars])
            for s in sections] == [("", ["fast", "mid", "slow"]), ("no ok run", ["dead"]),
                                   ("below resolution", ["tiny"])]
    assert "< 3.42 KiB a task" in sections[-1].heading  # 1 MiB over N = 1 .. 300


def test_whisker_extents_are_the_interval_around_the_median(tmp_path: Path) -> None:
    run = _synthetic(tmp_path)
    chain = {g.impl: g for g in run.of("chain")}
    go = chain["go"]
    iv = go.interval("warm_iter_s")
    assert iv is not None and not iv.settled  # 3 runs: [min, max] at 75%
    assert plots.whisker_extent(go.median("warm_iter_s"), iv) == pytest.approx((0.5e-3, 0.5e-3))
    assert chain["rust-tokio"].interval("warm_iter_s").settled  # 6 runs reach 95%
    assert plots.whisker_extent(4e-3, chain["nodejs"].interval("warm_iter_s")) is None
    # scaled to the plot's unit with the value
    ms = plots.scaled(iv, 1e3)
    assert (ms.low, ms.estimate, ms.high) == pytest.approx((2.0, 2.5, 3.0))


def test_groups_of_several_runs_get_whiskers_one_run_none(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    run = _synthetic(tmp_path)
    groups = run.of("chain")
    fig, ax = plt.subplots()
    shown = plots.Whiskers()
    y, interval = tasks._scaled("warm_iter_s", 1e3)
    tasks._lines(ax, run, groups, lambda g: g.n, y, interval, set(), shown)
    bars = [c for c in ax.containers if c.has_yerr]
    # go (3 runs, 75%): dashed; rust-tokio (6 runs, 95%): solid; nodejs (1 run): none
    assert len(bars) == 2
    styles = {c.lines[2][0].get_gid(): c for c in bars}
    assert set(styles) == {"interval", "interval-unsettled"}
    solid = styles["interval"].lines[2][0].get_segments()
    dashed = styles["interval-unsettled"].lines[2][0].get_segments()
    assert len(solid) == len(dashed) == 1  # one point each, nodejs has none
    rust = {g.impl: g for g in groups}["rust-tokio"].interval("warm_iter_s")
    (_, lo), (_, hi) = solid[0]
    assert (lo, hi) == pytest.approx((rust.low * 1e3, rust.high * 1e3))
    assert dashed[0][0][1] == pytest.approx(2.0) and dashed[0][1][1] == pytest.approx(3.0)
    assert rust.settled and shown.settled and shown.single
    caption = shown.caption()
    assert "whiskers: 95% interval" in caption and "one run: no interval" in caption
    assert "dashed" in caption and "75%" in caption
    plt.close(fig)

    # a figure of one run alone: no whisker at all, and the caption says so
    fig, ax = plt.subplots()
    alone = plots.Whiskers()
    assert plots.draw_whiskers(ax, [1.0], [4.0], [None], [1], "black", alone) == []
    assert not ax.containers and alone.single and "dashed" not in alone.caption()
    plt.close(fig)


# ---------------------------------------------------------------- telling runtimes apart

def test_a_one_n_chart_ranks_the_measured_best_first_then_what_cannot_be_ranked() -> None:
    bars = [plots.Bar("slow", 3.0), plots.Bar("dead", None, failure="timeout"),
            plots.Bar("fast", 1.0), plots.Bar("tie-b", 2.0), plots.Bar("tie-a", 2.0)]
    order = [[b.series for b in s.bars] for s in plots.ranked_sections(bars)]
    assert order == [["fast", "tie-a", "tie-b", "slow"], ["dead"]]
    # where higher is better (throughput), the highest is at the top
    order = [[b.series for b in s.bars] for s in plots.ranked_sections(bars, higher_better=True)]
    assert order == [["slow", "tie-a", "tie-b", "fast"], ["dead"]]


def test_nudging_separates_overlapping_labels_by_the_font_height() -> None:
    gap = 9.0  # a label's height
    wanted = [100.0, 101.0, 99.5, 300.0, 104.0, 50.0]
    placed = plots.nudge(wanted, gap)
    ordered = sorted(placed)
    assert all(b - a >= gap - 1e-9 for a, b in zip(ordered, ordered[1:]))
    # the order is kept, lone labels stay where they are, a crowd stays centred
    assert sorted(range(6), key=lambda i: placed[i]) == sorted(range(6), key=lambda i: wanted[i])
    assert placed[3] == 300.0 and placed[5] == 50.0
    crowd = [0, 1, 2, 4]
    assert sum(placed[i] for i in crowd) / 4 == pytest.approx(sum(wanted[i] for i in crowd) / 4)
    assert plots.nudge([10.0, 40.0], gap) == [10.0, 40.0]  # apart already: untouched
    assert plots.nudge([], gap) == []


def test_a_language_s_variants_differ_in_marker_and_dash_stable_by_id() -> None:
    from harness.present.colors import LINE_STYLES, Palette, variant_styles
    from harness.core.registry import load_registry

    registry = load_registry()
    palette = Palette(registry)
    by_language: dict[str, list[str]] = {}
    for impl in registry:
        by_language.setdefault(impl.language.name, []).append(impl.id)
    for language, ids in by_language.items():
        markers = [palette.marker(i) for i in ids]
        dashes = [palette.line_style(i) for i in ids]
        assert len(set(markers)) == len(ids), (language, markers)
        if len(ids) <= len(LINE_STYLES):
            assert len(set(map(str, dashes))) == len(ids), (language, dashes)
        assert not {"X", "v"} & set(markers)  # those mark failures and zeros
    # by id alone: the registry's order does not move them
    again = Palette(list(reversed(registry)))
    assert all(again.marker(i.id) == palette.marker(i.id)
               and again.line_style(i.id) == palette.line_style(i.id) for i in registry)
    assert variant_styles(["b", "a", "c"]) == variant_styles(["c", "a", "b"]) == {"a": 0, "b": 1, "c": 2}
    assert Palette([]).marker("unknown-impl") == Palette([]).marker("unknown-impl")


def test_log_ticks_read_the_span() -> None:
    assert plots.log_ticks(0.5, 2000) == [1.0, 10.0, 100.0, 1000.0]
    narrow = plots.log_ticks(60, 180)  # less than a decade: 1..9 times a power
    assert len(narrow) >= 3 and all(60 <= t <= 180 for t in narrow) and 100.0 in narrow
    assert plots.log_ticks(100, 64 * 1024, base=2)[0] == 128.0


def _synthetic_everything(tmp_path: Path) -> RunDir:
    """Every workload of the presentations, at one N and at several, with
    failures, one-run groups and an http workload at one load and at two."""
    run = RunDir.create_new(tmp_path)

    def add(impl, workload, n, rep, buffer=None, status="ok", **figures):
        run.append_run(Row(**{"impl": impl, "language": impl.split("-")[0], "workload": workload,
                        "n": n, "buffer": buffer, "rep": rep, "status": status, "iterations": 3,
                        **figures}))

    impls = ["go", "rust-tokio", "rust-smol", "python-asyncio", "python-uvloop"]
    for k, impl in enumerate(impls, start=1):
        for rep in (1, 2, 3):
            for n in (1000, 100_000):
                add(impl, "sleep", n, rep, peak_rss_bytes=(10 + k * n / 1000) * MIB + rep)
                add(impl, "chain", n, rep, first_iter_s=k * n * 1e-7 * rep,
                    warm_iter_s=k * n * 1e-7, peak_rss_bytes=k * MIB)
            add(impl, "skynet", 1_000_000, rep, first_iter_s=k * 0.1, warm_iter_s=k * 0.09,
                peak_rss_bytes=k * 100 * MIB)
            for buffer in (0, 100):
                add(impl, "bounded", 100, rep, buffer=buffer, first_iter_s=k * 1e-4,
                    warm_iter_s=k * 1e-4 * rep, peak_rss_bytes=MIB)
            add(impl, "bounded", 10_000, rep, buffer=100, warm_iter_s=k * 1e-3,
                first_iter_s=k * 1e-3, peak_rss_bytes=MIB)
    add("python-asyncio", "chain", 1_000_000, 1, status="timeout")
    add("go", "chain", 1_000_000, 1, first_iter_s=0.2, warm_iter_s=0.1, peak_rss_bytes=MIB)
    return run


def test_every_plot_of_a_synthetic_run_is_drawn(tmp_path: Path) -> None:
    run = _synthetic_everything(tmp_path / "a")
    paths = plots.draw_all(run)
    names = {p.name for p in paths}
    for workload in ("sleep", "chain", "skynet", "bounded"):
        expected = {"sleep": {"sleep_rss.png", "sleep_mem_per_task.png"},
                    "chain": {"chain_time.png", "chain_rss.png"},
                    "skynet": {"skynet_time.png", "skynet_rss.png"},  # one N: ranked charts
                    "bounded": {"bounded_time.png"}}[workload]
        assert expected <= names, (workload, names)
    assert "summary.png" in names
    for path in paths:
        assert_real_png(path)


def test_http_plots_at_one_load_and_at_several(tmp_path: Path) -> None:
    for loads in ((10,), (5, 50)):
        run = RunDir.create_new(tmp_path / f"http-{len(loads)}")
        for impl in ("go", "rust-tokio", "python-asyncio"):
            for users in loads:
                for style in ("sync", "async"):
                    for rep in (1, 2):
                        fail = impl == "python-asyncio" and style == "sync" and users == loads[-1]
                        run.append_run(Row(**{
                            "impl": impl, "language": impl.split("-")[0], "workload": "http",
                            "n": None, "buffer": None, "rep": rep, "users": users,
                            "requests": 10, "delay_ms": 50, "style": style,
                            "status": "timeout" if fail else "ok",
                            **({} if fail else {
                                "rps": 10.0 * users / (2 if style == "sync" else 1) + rep,
                                "max_threads": 4 + rep, "latency_p50_s": 0.1,
                                "latency_p90_s": 0.2, "latency_p99_s": 0.3,
                                "latency_max_s": 0.4, "peak_rss_bytes": MIB})}))
        paths = plots.draw_all(run)
        assert {"http_throughput.png", "http_threads.png",
                "http_latency.png"} <= {p.name for p in paths}
        for path in paths:
            assert_real_png(path)


def test_the_ladder_plot_draws_p99_against_rate_with_each_styles_sustained_rate(
        tmp_path: Path) -> None:
    """Two servers' ladders: go's async sustained to 400, its sync saturated
    at 200 (hollow) with 400 not run; rust-tokio's first step invalid. The
    key names each style's sustained rate; the closed-loop plots draw
    nothing of a ladder."""
    run = RunDir.create_new(tmp_path / "ladder")
    p99 = {"async": [0.31, 0.31, 0.32, 0.33, 0.35], "sync": [0.31, 0.35, 0.5, 0.9]}
    for rep in (1, 2):
        for impl in ("go", "rust-tokio"):
            for style, curve in p99.items():
                for rate, latency in zip((25, 50, 100, 200, 400), curve + [None]):
                    status, verdict = "ok", "sustained"
                    if impl == "rust-tokio":
                        status, verdict = ("invalid", None) if rate == 25 else ("skipped",
                                                                                PAST_END)
                    elif latency is None:
                        status, verdict = "skipped", PAST_END
                    elif style == "sync" and rate == 200:
                        verdict = "saturated"
                    run.append_run(Row(
                        impl=impl, language=impl.split("-")[0], workload="http", rep=rep,
                        delay_ms=100, style=style, rate=rate, step_s=10, status=status,
                        step_verdict=verdict, **({"latency_p99_s": latency, "rps": rate}
                                                 if status == "ok" else {})))
    drawn = plots.draw_all(run)
    names = {p.name for p in drawn}
    assert "http_ladder.png" in names and "http_throughput.png" not in names
    assert_real_png(run.path / "plots" / "http_ladder.png")
    ladder = next(g for g in plots.read(run).groups
                  if g.impl == "go" and g.param("style") == "sync" and g.param("rate") is None)
    assert ladder.values("sustained_rps") == (100, 100) and ladder.values("knee_rps") == (200, 200)


def test_drawing_says_nothing_on_the_terminal_whatever_the_text(tmp_path: Path) -> None:
    """matplotlib warned "Glyph 27 missing" (an ESC, a CJK character: a
    host name holds what it likes) and "No artists with labels" (a version
    sweep's panel where every release failed), and a name with two `$` was
    parsed as mathtext (`$\\frac$` raised). Every text is drawn in glyphs
    its font has, and every plot is drawn without a warning."""
    import warnings

    run = RunDir.create_new(tmp_path, lambda run_id: {
        "format_version": 3, "run_id": run_id,
        "host": {"hostname": "h\x1b[2J\t\u4e2d\u6587$\\frac$", "cpu_model": "cpu\x07\u0301",
                 "os": "Linux $x^2$"}})
    for impl in ("go@1.0.0", "go@1.1.0", "rust-tokio@1.0.0", "rust-tokio@1.1.0"):
        for rep in (1, 2):
            run.append_run(Row(**{"impl": impl, "language": impl.split("-")[0].split("@")[0],
                            "workload": "chain", "n": 10, "rep": rep, "status": "ok",
                            "iterations": 3, "first_iter_s": 0.01 * rep, "warm_iter_s": 0.01,
                            "peak_rss_bytes": MIB}))
            # N = 1000: every release of every implementation timed out
            run.append_run(Row(**{"impl": impl, "language": impl.split("-")[0].split("@")[0],
                            "workload": "chain", "n": 1000, "rep": rep, "status": "timeout"}))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        paths = plots.draw_all(run)
    assert "chain_versions.png" in {p.name for p in paths}
    assert [str(w.message) for w in said] == []
    for path in paths:
        assert_real_png(path)


def test_the_ladder_plot_draws_each_wait_on_a_panel_of_its_own(tmp_path: Path) -> None:
    """One server's ladders at D = 100 and 10 ms (seed004's two): two
    panels, each its own steps, never one line zigzagging through both."""
    run = RunDir.create_new(tmp_path / "waits")
    for delay, rates in ((100, (100, 200, 400)), (10, (800, 1600))):
        for rate in rates:
            run.append_run(Row(impl="go", language="go", workload="http", rep=1, delay_ms=delay,
                               style="async", rate=rate, step_s=5, status="ok",
                               step_verdict="sustained", latency_p99_s=3 * delay / 1e3, rps=rate))
    panels = servers._ladder_panels(plots.read(run), "http")
    assert {(impl, delay): sorted(g.param("rate") for g in members)
            for (impl, delay), members in panels.items()} == {
        ("go", 10): [800, 1600], ("go", 100): [100, 200, 400]}
    assert "http_ladder.png" in {p.name for p in plots.draw_all(run)}


def test_panels_that_share_their_y_axis_show_every_panels_lowest_point() -> None:
    """log_y on panels of one grid: the lowest decade of any panel, not of
    the last one scaled (a D = 10 ms ladder's 30 ms beside D = 100 ms's 300)."""
    fig, axes = draw.panel_grid(2, 4.6, 3.9)
    axes[0].plot([1, 2], [30, 40])
    axes[1].plot([1, 2], [300, 400])
    for ax in axes:
        draw.log_y(ax)
    assert axes[1].get_ylim()[0] == axes[0].get_ylim()[0] == 10
    assert axes[0].get_ylim()[1] >= 400 * 1.3
    plt.close(fig)
