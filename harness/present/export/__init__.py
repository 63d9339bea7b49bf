"""`harness export`: a run's figures for a tool that keeps their history and
raises alerts (Bencher, github-action-benchmark). Each format is one module
with an `Exporter`; this one picks it, reads the run as `report` does, and
writes the document whole or not at all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ... import UsageError
from ...analyse.analysis import analyse
from ...record.rundir import RunDir
from ...record.safe_output import write_text
from .base import Exporter, choose
from .bencher import Bencher
from .gab import GithubActionBenchmark


def exporter(fmt: str, direction: str | None) -> Exporter:
    """The exporter of --format, with --direction where the format takes one."""
    if fmt == "bencher":
        if direction is not None:  # a Bencher measure has its own direction, set in Bencher
            raise UsageError("--direction is for --format github-action-benchmark: a Bencher "
                             "file holds every figure")
        return Bencher()
    if direction is None:
        raise UsageError("--format github-action-benchmark needs --direction smaller (for tool "
                         "customSmallerIsBetter) or bigger (customBiggerIsBetter): the action "
                         "reads one direction from a file")
    return GithubActionBenchmark(bigger=direction == "bigger")


def export(run: RunDir, chosen: Exporter, out: Path | None, every: bool = False,
           partial: bool = False) -> None:
    """The run's document on stdout, or in OUT; on stderr, a note of what
    it leaves out. Refused, with nothing written, for a run that did not
    finish (unless partial) and where the format takes nothing of the run."""
    results = analyse(run)
    unfinished = not results.env.finished_at
    if unfinished and not partial:
        raise UsageError(f"{run.path}: the run did not finish (env.json has no finished_at: it "
                         f"is still going, or was stopped), so its figures are partial; "
                         f"--partial exports them, marked so")
    groups = results.groups
    kept = [g for g in groups if g.ok]  # a configuration with no ok run has no figure
    picked = choose(kept, every)
    document = chosen.document(picked.figures, unfinished)  # --partial marks only an unfinished run
    if not document:
        raise UsageError(f"nothing to export from {run.path}: {chosen.takes}")
    text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        write_text(out, text, run.path)  # never a device, a FIFO, nor the run's own files
    for note in notes(len(groups), len(kept), picked.zeros, unfinished) + chosen.notes(document):
        print(f"note: {note}", file=sys.stderr)


def notes(groups: int, kept: int, zeros: int, unfinished: bool) -> list[str]:
    """What the export left out, and that the run did not finish: one line each."""
    out = []
    if kept < groups:
        out.append(f"export left out {groups - kept} of {groups} configurations: no ok run")
    if zeros:
        out.append(f"export left out {zeros} figures whose median is 0 (a counter that "
                   f"counted nothing): a tool that divides by the last value alarms on any next")
    if unfinished:
        out.append("the run did not finish: its figures are exported marked as partial")
    return out

