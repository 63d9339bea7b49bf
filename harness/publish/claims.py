"""The articles' claims (core/claims.py, docs/articles.md) judged on a run
directory or a published run's folder, printed as the Markdown table its
report and page show:

    .venv/bin/python -m harness claims results/latest

The verdicts are the run's questions' (analyse/questions.py: every claim
the run measured judged as one family), from its runs.csv where the
folder has one, else from its summary.csv (`python -m harness report
RUN_DIR` writes it).
"""

from __future__ import annotations

from pathlib import Path

from .. import UsageError
from .published import RUNS, SUMMARY, load_run
from ..present.report import CLAIMS_HEADER, ask_run, claim_rows, md_table


def table(folder: Path) -> list[str]:
    """The claims table of the run in `folder`; [] when it measured none."""
    run = load_run(folder)
    found = ask_run(run.groups, run.env)
    return md_table(CLAIMS_HEADER, claim_rows(found)) if found is not None and found.claims else []


def print_table(folder: Path) -> int:
    """`harness claims RUN_DIR`: the table on standard output."""
    if not (folder / RUNS).is_file() and not (folder / SUMMARY).is_file():
        raise UsageError(f"{folder} has neither {RUNS} nor {SUMMARY}")
    lines = table(folder)
    print("\n".join(lines) if lines else "This run measured no claim's two configurations.")
    return 0

