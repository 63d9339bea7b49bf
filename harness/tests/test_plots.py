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
