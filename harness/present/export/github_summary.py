"""A run as a GitHub Actions job summary (`report RUN --format github`,
appended to $GITHUB_STEP_SUMMARY): what report.md opens with, the verdicts
or a check's result, then the failures, within GitHub's 1 MiB a step. The
tables, plots and every other figure stay in report.md and report.html,
which a workflow keeps as an artifact."""

from __future__ import annotations

from ...analyse import standings, verdicts
from ...analyse.analysis import Results
from ...core.formatting import GITHUB_LIMIT, fit_rows
from ..report import (CHECK_SUITES, CLAIMS_HEADER, HEADLINE_HEADER, check_lines, claim_rows,
                      headline_cells, headline_places, md_text, places_block, run_questions,
                      run_standings)


def job_summary(results: Results, limit: int = GITHUB_LIMIT) -> str:
    env, groups = results.env, results.groups
    settings = env.settings
    suite = settings.suite
    lines = [f"### Benchmark run {md_text(env.run_id or results.run.path.name)}"
             f"{f' ({md_text(suite)} suite)' if suite else ''}", ""]
    if suite in CHECK_SUITES:
        lines += ["A check that every implementation works, not a measurement.", ""]
        lines += check_lines(groups)
        return "\n".join(lines) + "\n"
    found = run_standings(results)
    asked = run_questions(results)
    if asked is not None:
        lines += [f"**{md_text(asked.summary())}**", ""]
    if note := standings.unjudged_note(settings):
        lines += [md_text(note), ""]
    # the headline: places to quote
    lines += places_block(headline_places(groups, env), groups=standings.judged(groups, settings))
    if asked is not None and asked.claims:
        lines += ["| " + " | ".join(CLAIMS_HEADER) + " |",
                  "|" + "|".join("---" for _ in CLAIMS_HEADER) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in claim_rows(asked)] + [""]
    failed = [f"- {md_text(f)}" for f in verdicts.failures(groups)]
    if failed:
        lines += ["**Failures**", ""] + failed + [""]
    rows = ["| " + " | ".join(headline_cells(h)) + " |"
            for h in verdicts.headlines(groups, found)]
    if not rows:
        return "\n".join(lines + ["No runs were recorded."]) + "\n"
    table = ["| " + " | ".join(HEADLINE_HEADER) + " |",
             "|" + "|".join("---" for _ in HEADLINE_HEADER) + "|"]
    tail = ["", "Every figure, table and plot: report.md and report.html in the run directory."]
    # GitHub refuses a step's summary past 1 MiB: cut rows, and count them
    kept, left = fit_rows(lines + table, rows, tail, limit)
    more = ["", f"... {left} more rows: report.md has them all."] if left else []
    return "\n".join(lines + table + kept + more + tail) + "\n"
