"""A published page names what the run's own rules did not run (a size
outgrown, a run too dear for the budget), as the report does: the notes
and the headline rankings' "has no place" lines, read from the committed
default run of 2026-12-02 later."""

from __future__ import annotations

from harness.publish.page import render_page
from harness.publish.readme_tables import load_page

from ..conftest import ROOT

RESULTS = ROOT / "docs" / "results"
NAME = "2026-12-02-amd-epyc-2c-later"


def test_a_page_names_the_runs_its_rules_did_not_run() -> None:
    run = load_page(RESULTS, NAME)
    dear = [g for g in run.skipped if any(r.expected_s is not None for r in g.rows)]
    assert {(g.impl, g.workload) for g in dear} >= {("java-platform", "chain-await")}
    text = render_page(run, NAME)
    ruled = next(line for line in text.splitlines()
                 if line.startswith("Not run, by the run's own rules: "))
    for g in dear:
        assert f"{g.impl} {g.workload} {g.key.settings} not run: expected to take at least" \
            in ruled.replace("\\", "")
    assert "csharp-threads sleep not run at N=1000000: it failed at N=100000" in ruled
    assert "java-platform has no place: not run: expected to take at least" in text
    assert ("csharp-threads has no place: not run: it failed at N=100000, by a limit that "
            "grows with size") in text
