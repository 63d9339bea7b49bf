"""`report RUN --format github`: a run as a GitHub Actions job summary,
printed and nothing written, within GitHub's 1 MiB, its data escaped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.analyse.analysis import analyse
from harness.present import outline
from harness.present.export.github_summary import LEVEL, job_summary
from harness.present.report import PLACES_HEADER
from harness.record.rundir import RunDir

from ..conftest import harness

FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"


def _listing(path: Path) -> list[tuple[str, float]]:
    return sorted((str(p.relative_to(path)), p.stat().st_mtime) for p in path.rglob("*"))


def test_the_summary_opens_with_the_verdicts_and_writes_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    before = _listing(run)
    proc = harness("report", str(run), "--format", "github")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("### Benchmark run ")
    assert lines[2].startswith("**Verdicts settled, each family on its own")
    places = "| " + " | ".join(PLACES_HEADER) + " |"
    leaders = "| workload | figure | at | leader | runner-up | × leader | verdict | runs |"
    assert places in lines and leaders in lines
    # the headline rankings' places first, the floor's leaders table last
    assert next(x for x in lines if x.startswith("| ")) == places
    assert lines.index(places) < lines.index(leaders)
    # the fixture's oom, timeout and crashed rows, after the leaders as in the outline
    failures = "#" * LEVEL + " " + outline.FAILURES.title
    assert failures in lines and lines.index(leaders) < lines.index(failures)
    assert lines[-1].startswith("Every figure, table and plot: report.md")
    assert _listing(run) == before


def test_a_long_summary_is_cut_to_the_limit_and_says_so() -> None:
    results = analyse(RunDir(FIXTURE))
    whole = job_summary(results)
    rows = [line for line in whole.splitlines() if line.startswith("| ") and "---" not in line]
    cut = job_summary(results, limit=len(whole.encode()) - 100)
    assert len(cut.encode()) <= len(whole.encode()) - 100
    assert "more rows: report.md has them all." in cut
    assert len([line for line in cut.splitlines() if line.startswith("| ")]) < len(rows)


def test_markup_in_the_data_stays_text(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    env = json.loads((run / "env.json").read_text())
    env["run_id"] = "<img src=x onerror=alert(1)>"
    (run / "env.json").write_text(json.dumps(env))
    text = job_summary(analyse(RunDir(run)))
    # report.md's escaping (md_text): a backslash makes the bracket text
    assert "\\<img" in text and "<img" not in text.replace("\\<img", "")


def test_a_check_reads_as_a_check(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    env = json.loads((run / "env.json").read_text())
    env["settings"]["suite"] = "quick"
    (run / "env.json").write_text(json.dumps(env))
    text = job_summary(analyse(RunDir(run)))
    assert "not a measurement" in text and "Verdicts settled" not in text
