"""A run as a GitHub Actions job summary (`report RUN --format github`,
appended to $GITHUB_STEP_SUMMARY): what report.md opens with, the verdicts
or a check's result, then the outline's sections a summary has (outline.py:
the headline rankings, the claims, the leaders, the failures), within
GitHub's 1 MiB a step. The tables, plots and every other figure stay in
report.md and report.html, which a workflow keeps as an artifact."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...analyse import questions, standings, verdicts
from ...analyse.analysis import Results
from ...core.formatting import GITHUB_LIMIT, fit_rows
from .. import outline
from ..report import (CHECK_SUITES, CLAIMS_HEADER, HEADLINE_HEADER, check_lines, claim_rows,
                      headline_cells, headline_places, md_heading, md_table, md_text,
                      places_block, run_questions, run_standings, styles_block)

# The sections' heading level: one below the summary's title (###), which
# sits among the other steps' summaries on the job's page.
LEVEL = 4


@dataclass(frozen=True)
class _Summary:
    """What the summary's sections are written from: the run's results and
    questions, the Leaders table's rows, and how many of them fit."""
    results: Results
    asked: questions.Questions | None
    rows: list[str]
    kept: int


def _places(s: _Summary) -> list[str] | None:
    env, groups = s.results.env, s.results.groups
    return places_block(headline_places(groups, env),
                        groups=standings.judged(groups, env.settings)) or None


def _claims(s: _Summary) -> list[str] | None:
    if s.asked is None or not s.asked.claims:
        return None
    return md_table(CLAIMS_HEADER, claim_rows(s.asked)) + [""]


def _leaders(s: _Summary) -> list[str]:
    """The leaders' table, its first `kept` rows, and how many more
    report.md has."""
    if not s.rows:
        return ["No runs were recorded.", ""]
    left = len(s.rows) - s.kept
    more = ["", f"... {left} more rows: report.md has them all."] if left else []
    return md_table(HEADLINE_HEADER, []) + s.rows[:s.kept] + more + [""]


def _failures(s: _Summary) -> list[str] | None:
    failed = verdicts.failures(s.results.groups)
    return [f"- {md_text(f)}" for f in failed] + [""] if failed else None


# Each section's body in a job summary (the outline gives their order and
# titles): its lines, or None where the run has none of it.
_BODIES: dict[str, Callable[[_Summary], list[str] | None]] = {
    outline.PLACES.id: _places,
    outline.CLAIMS.id: _claims,
    outline.STYLES.id: lambda s: styles_block(s.asked),
    outline.LEADERS.id: _leaders,
    outline.FAILURES.id: _failures,
}


def _sections(summary: _Summary) -> list[str]:
    def section(s: outline.Section, level: int, inner: list[str]) -> list[str]:
        body = _BODIES[s.id](summary)
        return [] if body is None else md_heading(s, level) + body + inner

    return outline.walk(outline.GITHUB, section, level=LEVEL)


def job_summary(results: Results, limit: int = GITHUB_LIMIT) -> str:
    """The summary: its title, the verdicts' lead (report.md's), the
    outline's sections for GITHUB, then where the rest is; the leaders' rows
    cut to keep it within `limit` bytes."""
    env, groups = results.env, results.groups
    settings = env.settings
    suite = settings.suite
    lines = [f"### Benchmark run {md_text(env.run_id or results.run.path.name)}"
             f"{f' ({md_text(suite)} suite)' if suite else ''}", ""]
    if suite in CHECK_SUITES:
        # a check has no verdicts, so none of the outline's sections: its result is all
        lines += ["A check that every implementation works, not a measurement.", ""]
        lines += check_lines(groups)
        return "\n".join(lines) + "\n"
    asked = run_questions(results)
    if asked is not None:
        lines += [f"**{md_text(asked.summary())}**", ""]
    if note := standings.unjudged_note(settings):
        lines += [md_text(note), ""]
    rows = ["| " + " | ".join(headline_cells(h)) + " |"
            for h in verdicts.headlines(groups, run_standings(results))]
    tail = ["Every figure, table and plot: report.md and report.html in the run directory."]
    # GitHub refuses a step's summary past 1 MiB: the leaders' rows that fit
    # beside every other line (with none of them, saying all are left out), counted
    bare = lines + _sections(_Summary(results, asked, rows, 0)) + tail
    kept, _ = fit_rows(bare, rows, [], limit)
    return "\n".join(lines + _sections(_Summary(results, asked, rows, len(kept))) + tail) + "\n"
