"""One outline (present/outline.py), four outputs: the headings of
report.md, report.html, a published page and a GitHub job summary, parsed
from each rendered from committed runs, are the outline's for that output,
in its order, less only the sections those runs have nothing for (named
here, with why). And no renderer writes a section's heading, or keeps a
section, of its own."""

from __future__ import annotations

import html
import inspect
import re
from pathlib import Path

import pytest

from harness.analyse import analysis
from harness.core import stats
from harness.present import html_report, outline, report
from harness.present.export import github_summary
from harness.present.outline import GITHUB, HTML, MD, PAGE
from harness.publish import page
from harness.publish.readme_tables import load_page
from harness.record.rundir import RunDir

from ..conftest import PUBLISHED, ROOT, published_page

FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"
RESULTS = ROOT / "docs" / "results"
# The fixture run: no design notes, and no plots drawn (so no At a glance or RSS over time).
FIXTURE_ABSENT = {"notes", "at-a-glance", "rss-over-time", "styles"}  # no ladders
ALL = {s.id for s in outline.OUTLINE} | {c.id for s in outline.OUTLINE for c in s.children}


def _by_id(section_id: str) -> outline.Section:
    return next(s for s in outline.OUTLINE + outline.VERDICTS.children if s.id == section_id)


def expected(output: outline.Output, workloads: list[str],
             absent: set[str], level: int = 2) -> list[tuple[int, str]]:
    """The outline's headings for the output, its sections at `level`, less
    the sections named absent."""
    gone = {_by_id(i).title for i in absent}
    return [(at, title) for at, title in outline.headings(output, workloads, level=level)
            if title not in gone]


def md_headings(text: str, levels: str = "2,3") -> list[tuple[int, str]]:
    return [(len(m[1]), m[2]) for m in re.finditer(rf"^(#{{{levels}}}) (.+)$", text, re.M)]


def html_headings(text: str) -> list[tuple[int, str]]:
    return [(int(m[1]), html.unescape(m[2])) for m in re.finditer(r"<h([23])>(.*?)</h\1>", text)]


@pytest.fixture(scope="module")
def results() -> analysis.Results:
    return analysis.analyse(RunDir(FIXTURE))


def _titles(results: analysis.Results) -> list[str]:
    return [report.section_title(w) for w in report.workload_groups(results.groups)]


def test_report_md_has_the_outlines_sections_in_its_order(results) -> None:
    found = md_headings(report.render_markdown(results, pngs=[]))
    assert found == expected(MD, _titles(results), FIXTURE_ABSENT)
    assert (3, outline.FAILURES.title) in found  # a child, under Verdicts


def test_report_html_has_the_outlines_sections_in_its_order(results) -> None:
    text = html_report.render_html(results, plots={})
    assert html_headings(text) == expected(HTML, _titles(results), FIXTURE_ABSENT)
    # its line of links names the sections written, in the same order
    nav = re.search(r"<nav>(.*?)</nav>", text)[1]
    assert re.findall(r'href="#([^"]+)"', nav)[:3] == ["verdicts", "environment", "warnings"]


def test_a_job_summary_has_the_outlines_sections_in_its_order(results) -> None:
    """Under its title (level 3), the verdicts' sections a summary has, the
    failures after the leaders as in the outline."""
    found = md_headings(github_summary.job_summary(results), "3,5")
    assert found[0][0] == 3 and found[0][1].startswith("Benchmark run ")
    assert found[1:] == expected(GITHUB, [], {"styles"}, level=github_summary.LEVEL)


@pytest.mark.parametrize("name, absent", [
    ("2026-12-02-amd-epyc-2c-later", {"calibration", "styles"}),  # neither calibration nor ladders
    ("2026-11-28-intel-xeon-2c-calibration", {"styles"}),
    # seed004: ladders, and none of the articles' sizes
    ("2026-12-02-intel-xeon-2c-seed004-evening", {"calibration", "goals", "places"}),
])
@PUBLISHED
def test_a_published_page_has_the_outlines_sections_in_its_order(name, absent) -> None:
    run = load_page(RESULTS, name)
    text = published_page(name)
    titles = [report.section_title(w) for w in report.workload_groups(run.groups)]
    found = md_headings(text)
    assert found == expected(PAGE, titles, absent)
    # a page has no Verdicts: its children stand in its place, at level 2
    assert (2, (outline.PLACES if "places" not in absent else outline.CLAIMS).title) in found
    assert found == md_headings((RESULTS / f"{name}.md").read_text())


@PUBLISHED
def test_the_how_to_read_text_is_written_once_for_report_and_page(results) -> None:
    md = report.render_markdown(results, pngs=[])
    published = published_page("2026-12-02-amd-epyc-2c-later")
    for text, statistics in ((md, "../../docs/statistics.md"), (published, "../statistics.md")):
        assert f"[docs/statistics.md]({statistics})" in text
        assert "is **not settled**, and one run has no interval at all" in text


def test_each_output_has_a_body_for_each_of_its_sections_and_no_other() -> None:
    """The renderers' tables of bodies are keyed by the outline's ids: a
    section added to the outline without a body, or a body kept for a
    section the outline does not give that output, fails here."""
    def ids(output: outline.Output) -> set[str]:
        return {i for i in ALL if output in _by_id(i).outputs} - {outline.WORKLOADS.id}
    assert set(report._MD_BODIES) == ids(MD)
    assert set(html_report._HTML_BODIES) == ids(HTML)
    assert set(page._BODIES) == ids(PAGE)
    assert set(github_summary._BODIES) == ids(GITHUB)
    assert len(ALL) == len(outline.OUTLINE) + len(outline.VERDICTS.children)  # ids unique


@pytest.mark.parametrize("module, own", [
    (report, []), (html_report, []), (page, []),
    (github_summary, ["### B"]),  # its title, "### Benchmark run ...", no section's
])
def test_no_renderer_writes_a_heading_of_its_own(module, own) -> None:
    """Every heading comes from the outline (md_heading, or the HTML
    section's title): no '## Title' or '<h2>Title' literal in a renderer."""
    source = inspect.getsource(module)
    assert re.findall(r"[\"'](#{2,3} [A-Za-z]|<h[23]>[A-Za-z])", source) == own


def test_a_parent_left_out_gives_way_to_its_children_at_its_level() -> None:
    written = outline.walk(PAGE, lambda s, level, inner: [f"{level} {s.id}"] + inner,
                           within=(outline.VERDICTS,))
    assert written == [f"2 {c.id}" for c in outline.VERDICTS.children if PAGE in c.outputs]
    written = outline.walk(MD, lambda s, level, inner: [f"{level} {s.id}"] + inner,
                           within=(outline.VERDICTS,))
    assert written == ["2 verdicts"] + [f"3 {c.id}" for c in outline.VERDICTS.children]


def test_a_checks_banner_is_one_text_in_both_reports() -> None:
    """The quick fixture's report.md (a quote) and report.html (a paragraph)
    say the outline's one banner."""
    results = analysis.analyse(RunDir(FIXTURE.parent / "quick"))
    md = report.render_markdown(results, pngs=[])
    page_html = html_report.render_html(results, plots={})
    banner = outline.CHECK_BANNER.format(suite="quick")
    assert "".join(f"> {line}\n" for line in banner.splitlines()) in md
    shown = re.search(r'<p class="banner">(.*?)</p>', page_html)[1]
    assert html.unescape(re.sub("<[^>]+>", "", shown)).startswith(
        re.sub("[*`]", "", " ".join(banner.splitlines())))


def test_the_styles_text_states_the_confidence_two_repeats_a_side_give():
    # the section's text quotes a confidence by hand: hold it to the interval's
    interval = stats.ratio_interval([1.0, 2.0], [3.0, 4.0])
    assert interval is not None
    assert f"({interval.confidence:.0%} at 2 a side)" in outline.STYLES.intro
