"""Plots render from the committed fixture: every file exists, is a PNG, is not blank."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from harness import plots
from harness.rundir import RunDir

FIXTURE = Path(__file__).parent / "fixtures" / "run"
ROOT = Path(__file__).resolve().parents[2]
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
    a, b = plots._Run(RunDir(both)), plots._Run(RunDir(alone))
    assert len(a.color) == 3 and set(b.color) == {"rust-tokio"}
    assert a.color["rust-tokio"] == b.color["rust-tokio"]
    assert a.line["rust-tokio"] == b.line["rust-tokio"]
    # no two implementations of the registry share a colour
    colours = [a.color[i] for i in a.color]
    assert len(set(colours)) == len(colours)
    # a language's variants share its hue: go is not rust's colour
    assert a.color["go"] != a.color["rust-tokio"]


def test_only_the_plot_module_imports_matplotlib():
    code = ("import sys, harness.analysis, harness.report, harness.exports, harness.compare, harness.session; "
            "sys.exit('matplotlib' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


# ---------------------------------------------------------------- uncertainty

MIB = 1 << 20


def _synthetic(tmp_path: Path) -> plots._Run:
    """sleep at N = 1,000 and 100,000: go grows 250 MiB (measured, 3 runs),
    nodejs 20 MiB (measured, 3 runs), rust-tokio 0.5 MiB (below the 1 MiB
    resolution, 3 runs); chain at N = 1,000: go 3 runs, rust-tokio 6,
    nodejs one."""
    run = RunDir.create_new(tmp_path)

    def add(impl, workload, n, rep, **figures):
        run.append_run({"impl": impl, "language": impl, "workload": workload, "n": n,
                        "buffer": None, "rep": rep, "status": "ok", "iterations": 3, **figures})

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
    return plots._Run(run)


def test_memory_below_resolution_is_not_ranked_among_the_measured(tmp_path: Path) -> None:
    run = _synthetic(tmp_path)
    title, bars, _ = plots._panel(run, "sleep", plots.PRESENTATIONS["sleep"].panel)
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
    y, interval = plots._scaled("warm_iter_s", 1e3)
    plots._lines(ax, run, groups, lambda g: g.n, y, interval, set(), shown)
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
