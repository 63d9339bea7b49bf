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
from .base import Exporter
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


def export(run: RunDir, chosen: Exporter, out: Path | None) -> None:
    """The run's document on stdout, or in OUT; on stderr, a note of what
    it leaves out."""
    groups = analyse(run).groups
    kept = [g for g in groups if g.ok]  # a configuration with no ok run has no figure
    document = chosen.document(kept)
    text = json.dumps(document, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        write_text(out, text, run.path)  # never a device, a FIFO, nor the run's own files
    if len(kept) < len(groups):
        print(f"note: export left out {len(groups) - len(kept)} of {len(groups)} "
              f"configurations: no ok run", file=sys.stderr)
    if not document:
        print("note: the export is empty: no ok run has a figure it takes", file=sys.stderr)
