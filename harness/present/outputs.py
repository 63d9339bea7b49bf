"""Everything `harness report` writes for one run directory, from one
analysis: the plots, summary.csv and results.json, report.md and
report.html, written aside and moved into place together. Each output has
its own module; this one only runs them in order."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..analyse import analysis
from . import exports, html_report, plots
from .report import headline_places, run_questions, run_standings, write_markdown
from ..record.rundir import Outputs, RunDir


def write_report(run_dir: Path, draw: bool = True) -> Path:
    """Everything `harness report` writes: the plots (unless draw is False),
    summary.csv, results.json, report.md and report.html (html_report);
    returns report.md's path.
    The run is read and checked first; the outputs are written aside and
    moved into place together at the end (rundir.Outputs): bad input, a
    read-only directory or a full disk leaves the directory as it was."""
    run = RunDir(Path(run_dir))
    results = analysis.analyse(run)
    data = plots.read(run) if draw else None
    with Outputs(run.path) as staged:
        drawn = plots.draw_all(run, into=staged.dir / "plots", data=data) if draw else []
        old = run.path / "plots"
        pngs = sorted({p.name for p in drawn if p.suffix == ".png"}
                      | ({p.name for p in old.glob("*.png")} if old.is_dir() else set()))
        exports.write_exports(dataclasses.replace(results, run=RunDir(staged.dir)))
        # decided once, for both reports
        found, asked = run_standings(results), run_questions(results)
        placed = headline_places(results.groups, results.env)
        write_markdown(results, staged.dir, pngs, found, asked, placed)
        html_report.write_html(results, staged.dir, {
            name: staged.dir / "plots" / name if (staged.dir / "plots" / name).is_file()
            else old / name for name in pngs}, found, asked, placed)
    return run.path / "report.md"
