"""PNG plots of one run directory (matplotlib, Agg backend): the plots a
workload's presentation may name, and draw_all, which draws every plot a run allows."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

# Only this package imports matplotlib, and only `report`/`plot` reach it: the
# measuring process never pays for it. Every module of the package is reached
# through this file: the backend is chosen before any of them imports pyplot.
import matplotlib

matplotlib.use("Agg")
# Texts are data (names, host names): two `$` in one must stay text, never
# mathtext (`$\\frac$` would raise), and no plot writes formulas.
matplotlib.rcParams["text.parse_math"] = False

from ...core.presentation import PRESENTATIONS, Presentation  # noqa: E402
from ...record.rundir import Outputs, RunDir, RunDirError  # noqa: E402
from ...core.workloads import workload_rank  # noqa: E402
from .draw import (Run, Whiskers, draw_whiskers, log_ticks, nudge, scaled,  # noqa: E402
                   whisker_extent)
from .ranked import SUMMARY_FIGURES, Bar, ranked_sections, summary, summary_sections  # noqa: E402
from .scaling import cpu_scaling  # noqa: E402
from .servers import http_latency, http_threads, http_throughput  # noqa: E402
from .sweep import STOCK, sweep_points, version_sweep  # noqa: E402
from .tasks import (buffer_grid, mem_per_task_bars, rss_bars, rss_lines,  # noqa: E402
                    rss_over_time, time_lines)

# What other modules and the tests use.
__all__ = ["PLOTS", "SUMMARY_FIGURES", "STOCK", "Bar", "Run", "Whiskers", "draw_all",
           "draw_whiskers", "log_ticks", "nudge", "ranked_sections", "read", "scaled",
           "summary_sections", "sweep_points", "whisker_extent"]


# Every plot a workload's presentation may name (presentation.Presentation.plots).
PLOTS: dict[str, Callable[[Run, Path, str, Presentation], list[Path]]] = {
    "rss_bars": rss_bars, "mem_per_task_bars": mem_per_task_bars, "time_lines": time_lines,
    "rss_lines": rss_lines, "buffer_grid": buffer_grid, "rss_over_time": rss_over_time,
    "http_throughput": http_throughput, "http_threads": http_threads, "http_latency": http_latency,
}


def read(run: RunDir) -> Run:
    """What the plots draw, read and checked: nothing is written before."""
    data = Run(run)
    plots = run.path / "plots"
    if (plots.exists() or plots.is_symlink()) and not plots.is_dir():
        raise RunDirError(f"{plots} exists and is not a folder: move it away")
    return data


def draw_all(run: RunDir, into: Path | None = None, data: Run | None = None) -> list[Path]:
    """Draw every plot the run's data allows into its plots/ folder; return
    the paths. RSS over time comes last, for every workload. The run is
    read (data: read(run), if already) before anything is written; the
    plots are drawn aside and moved into plots/ at the end (rundir.Outputs),
    or into `into` (a staging folder's plots/, for the report)."""
    data = data if data is not None else read(run)
    if into is None:
        with Outputs(run.path) as staged:
            drawn = _draw(data, staged.dir / "plots")
        return [run.path / "plots" / p.name for p in drawn]
    return _draw(data, into)


def _draw(data: Run, out: Path) -> list[Path]:
    out.mkdir(exist_ok=True)
    workloads = [w for w in sorted({g.workload for g in data.groups}
                                   | {s.workload for s in data.samples},
                                   key=workload_rank) if w in PRESENTATIONS]
    paths: list[Path] = []
    for w in workloads:
        shown = PRESENTATIONS[w]
        paths += [p for kind in shown.plots if kind != "rss_over_time"
                  for p in PLOTS[kind](data, out, w, shown)]
        paths += cpu_scaling(data, out, w, shown)  # every workload, when the run set --cpus
        paths += version_sweep(data, out, w, shown)  # when the run holds releases (IMPL@VERSION)
    for w in workloads:
        if "rss_over_time" in PRESENTATIONS[w].plots:
            paths += rss_over_time(data, out, w, PRESENTATIONS[w])
    return paths + summary(data, out)
