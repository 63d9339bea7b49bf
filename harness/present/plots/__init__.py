"""PNG plots of one run directory (matplotlib, Agg backend): the plots a
workload's presentation may name, and draw_all, which draws every plot a run allows."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
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

from ...core.envinfo import usable_cores  # noqa: E402
from ...core.presentation import PRESENTATIONS, Presentation  # noqa: E402
from ...record.rundir import Outputs, RunDir, RunDirError  # noqa: E402
from ...core.workloads import workload_rank  # noqa: E402
from .draw import (Run, Whiskers, draw_whiskers, log_ticks, nudge, scaled,  # noqa: E402
                   whisker_extent)
from .ranked import SUMMARY_FIGURES, Bar, ranked_sections, summary, summary_sections  # noqa: E402
from .scaling import cpu_scaling  # noqa: E402
from .servers import http_ladder, http_latency, http_threads, http_throughput  # noqa: E402
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
    "http_ladder": http_ladder,
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
    tasks = [(kind, w) for w in workloads
             for kind in [*(k for k in PRESENTATIONS[w].plots if k != "rss_over_time"),
                          "cpu_scaling",  # every workload, when the run set --cpus
                          "version_sweep"]]  # when the run holds releases (IMPL@VERSION)
    tasks += [("rss_over_time", w) for w in workloads if "rss_over_time" in PRESENTATIONS[w].plots]
    tasks += [("summary", "")]
    global _DATA
    _DATA = data
    try:
        # Each plot is its own figure and file: drawn on every core (the
        # workers forked with the run's data, not sent it), the paths in
        # the order a serial drawing gives. A report is written after the
        # runs, when the cores are free.
        workers = min(len(tasks), usable_cores())
        if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            drawn = [_one(kind, w, out) for kind, w in tasks]
        else:
            with ProcessPoolExecutor(workers, multiprocessing.get_context("fork"),
                                     initializer=_die_with, initargs=(os.getpid(),)) as pool:
                try:
                    drawn = list(pool.map(_one, *zip(*tasks), [out] * len(tasks)))
                except BaseException:  # a signal, a plot's error: no worker draws on
                    for worker in list(getattr(pool, "_processes", {}).values()):
                        worker.kill()
                    raise
    finally:
        _DATA = None
    return [p for paths in drawn for p in paths]


_DATA: Run | None = None  # the run being drawn, which forked workers inherit


def _die_with(parent: int) -> None:
    """A plot worker ends with the report or merge that forked it: killed
    (SIGKILL) when that process dies however it dies, and stopped by the
    signals that stop it (a Ctrl-C to the group: no worker handles it)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)


def _one(kind: str, workload: str, out: Path) -> list[Path]:
    """One task of _draw: a kind of plot of one workload (or the summary)."""
    data = _DATA
    assert data is not None
    if kind == "summary":
        return summary(data, out)
    shown = PRESENTATIONS[workload]
    draw = {"cpu_scaling": cpu_scaling, "version_sweep": version_sweep}.get(kind) or PLOTS[kind]
    return draw(data, out, workload, shown)
