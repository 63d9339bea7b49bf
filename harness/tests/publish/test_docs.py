"""The documentation: README.md's size, every relative link in README.md,
docs/**/*.md and results/README.md (anchors included), and docs/results,
whose pages must be what harness/publish/ generates from the files
committed beside them and must say the verdicts those files give; and the
figures README.md and the docs quote from published runs."""

from __future__ import annotations

import csv
import json
import re
import shutil
import statistics
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "docs" / "results"
# Generated block included: detail goes to docs/, so README has room left.
README_LIMIT = 12_000


from harness.analyse import questions, standings
from harness.analyse.analysis import group_runs, ratios
from harness.core.formatting import fmt_elapsed
from harness.core.schema import ConfigKey, Env, Row
from harness.present.exports import SUMMARY_FIELDS
from harness.present.outputs import write_report
from harness.present import report
from harness.present.report import build_table, claim_rows, md_text, ranking_rows, workload_groups
from harness import cli
from harness.publish import figures, page, published, readme
from harness.publish import readme_tables as rt
from harness.plan.suites import load_suites
from harness.record.rundir import RunDir, read_env

from ..conftest import PUBLISHED, published_page


def test_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size < README_LIMIT, f"README.md is {size} bytes, not under {README_LIMIT}"


# --- links -----------------------------------------------------------------

def doc_files() -> list[Path]:
    return sorted([ROOT / "README.md", ROOT / "results" / "README.md",
                   *(ROOT / "docs").rglob("*.md")])


LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code, where a link is no link."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    text = re.sub(r"^(```|~~~).*?^\1", "", path.read_text(), flags=re.M | re.S)
    for line in text.splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def relative_links(path: Path) -> list[str]:
    return [t for t in LINK.findall(prose(path.read_text()))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I)]


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_inside_the_repository(doc):
    """Every relative link names a file of the repository; a #fragment on a
    Markdown target (or on the page itself) must be one of its headings."""
    broken = []
    for target in relative_links(doc):
        file_part, _, fragment = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_checker_sees_links():
    text = "[a](docs/x.md) `[b](no.md)` ![c](img.png \"t\") [d](https://x.org) [e](#h)"
    assert LINK.findall(prose(text)) == ["docs/x.md", "img.png", "https://x.org", "#h"]
    assert slug("sleep: peak RSS") == "sleep-peak-rss"
    assert slug("Core scaling (`run --cpus`): ×floor") == "core-scaling-run---cpus-floor"


# --- docs/results ----------------------------------------------------------

@PUBLISHED
def test_committed_pages_are_what_the_generator_writes():
    names = rt.pages(RESULTS)
    assert names, "docs/results has no page"
    for name in names:
        path = RESULTS / f"{name}.md"
        assert path.read_text() == published_page(name), (
            f"{path.relative_to(ROOT)} differs from what harness/publish/ generates from the "
            f"files in {name}/: regenerate it (`python -m harness publish "
            "--index`), never edit it")
    assert (RESULTS / "README.md").read_text() == rt.render_index(RESULTS)


def test_every_page_has_its_run_beside_it():
    for path in RESULTS.glob("*.md"):
        if path.name == "README.md":
            continue
        folder = RESULTS / path.stem
        for part in ("summary.csv", "env.json"):
            assert (folder / part).is_file(), f"{path.name} without its {part}"
        assert (folder / "runs.csv").is_file() or (folder / "load.csv").is_file(), path.name


def recomputed(folder: Path) -> questions.Questions:
    """A published run's questions, from its files as the harness reads a
    run: runs.csv's rows where it is committed, else summary.csv's values."""
    env = read_env(folder / "env.json")
    groups = (group_runs(RunDir(folder).runs().rows) if (folder / "runs.csv").is_file()
              else published.read_summary(folder / "summary.csv"))
    return questions.ask(standings.judged(groups, env.settings), env.floor_impls)


def says_verdicts(text: str, q: questions.Questions) -> list[str]:
    """What of q the page does not say: its families' settled counts, every
    claim's row and every ranking's row."""
    missing = [] if f"**{md_text(q.summary())}**" in text else [q.summary()]
    return missing + [row[1] for row in claim_rows(q) + ranking_rows(q)
                      if "| " + " | ".join(row) + " |" not in text]


def test_each_page_says_the_verdicts_its_files_give():
    """Anyone can check a page: its families' counts, claims and rankings
    are what its committed runs.csv (or summary.csv, for a run published
    before runs.csv was kept) gives."""
    for name in rt.pages(RESULTS):
        text = (RESULTS / f"{name}.md").read_text()
        assert not says_verdicts(text, recomputed(RESULTS / name)), name
        assert ("runs.csv was not kept" in text) != (RESULTS / name / "runs.csv").is_file(), name


def test_the_readme_block_is_generated_from_the_pages():
    text = (ROOT / "README.md").read_text()
    start, end = text.index(readme.HEADLINE_START), text.index(readme.HEADLINE_END)
    assert text[start + len(readme.HEADLINE_START):end].strip() == rt.readme_block(RESULTS)


def test_the_readme_places_the_headline_rankings_without_the_floor():
    """README's first table: a row per headline ranking of the headline page,
    its best set and its runtimes' joint 95% places, the floor in none."""
    name = rt.headline_page(RESULTS)
    run = rt.load_page(RESULTS, name)
    block = rt.readme_block(RESULTS)
    placed = report.headline_places(run.groups, run.env)
    table = next(part for part in block.split("\n\n") if part.startswith("| "))  # the first
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    assert run.env.floor_impls and len(rows) == len(placed) > 0
    for row, r in zip(rows, placed):
        assert row[2].startswith(f"{md_text(r.places[0].impl)} {r.places[0].text}"), row
        for floor in run.env.floor_impls:
            assert floor not in row[1] and floor not in row[2], (floor, row)


def test_the_docs_figures_are_generated_from_the_pages():
    stale = {path.relative_to(ROOT): text for path, text in figures.rewritten(ROOT).items()
             if path.read_text() != text}
    assert not stale, (f"figures differ from docs/results in {', '.join(map(str, stale))}: "
                       "run `python -m harness publish --index`")
    marked = {path.relative_to(ROOT) for path in figures.rewritten(ROOT)}
    assert {Path("README.md"), Path("docs/usage.md"), Path("docs/statistics.md")} <= marked


def test_a_figure_edited_by_hand_is_found(tmp_path):
    """The check above can fail: a doc whose marked figure was typed over
    is rewritten to the page's figure, and an unknown figure is refused."""
    (tmp_path / "docs").mkdir()
    shutil.copytree(RESULTS, tmp_path / "docs" / "results")
    (tmp_path / "README.md").write_text(
        "took <!-- figure default-elapsed -->33 min 35 s<!-- /figure -->, settled "
        "<!-- figure default-standings -->557 of 562<!-- /figure -->\n")
    text = figures.rewritten(tmp_path)[tmp_path / "README.md"]
    run = rt.load_page(RESULTS, rt.headline_page(RESULTS))
    assert "33 min 35 s" not in text and page.elapsed(run.env) in text
    assert "557 of 562" not in text
    (tmp_path / "README.md").write_text("<!-- figure no-such -->1<!-- /figure -->\n")
    with pytest.raises(ValueError, match="no such figure"):
        figures.rewritten(tmp_path)


def test_the_first_run_figure_is_each_machines_slowest_at_its_newest_commit(tmp_path):
    """README's first-run time: per machine, the newest commit measured on
    it and the slowest of its measurements there; older commits' do not
    count, nor another machine's."""
    (tmp_path / figures.FIRST_RUNS).parent.mkdir(parents=True)
    (tmp_path / figures.FIRST_RUNS).write_text(
        "date\tcommit\tmachine\tseconds\tuser_cpu_s\tsystem_cpu_s\n"
        "2026-01-01\taaa\tXeon, 2 cores\t400\t\t\n"
        "2026-01-02\tbbb\tXeon, 2 cores\t200\t\t\n"
        "2026-01-02\tbbb\tXeon, 2 cores\t210\t\t\n"
        "2026-01-03\tccc\tEPYC, 2 cores\t290\t445.3\t70.0\n")
    assert figures.values(tmp_path, {"first-run"}) == {"first-run": (
        "4 min 50 s on a new 2-core EPYC (2026-01-03, commit ccc) and "
        "3 min 30 s on a new 2-core Xeon (2026-01-02, commit bbb)")}


def test_the_next_run_figure_reads_its_own_table(tmp_path):
    """README's next-run time: the same rule on next-run.tsv, not on the
    first runs'."""
    (tmp_path / figures.NEXT_RUNS).parent.mkdir(parents=True)
    (tmp_path / figures.NEXT_RUNS).write_text(
        "date\tcommit\tmachine\tseconds\tuser_cpu_s\tsystem_cpu_s\n"
        "2026-01-02\tbbb\tXeon, 2 cores\t88\t\t\n"
        "2026-01-03\tccc\tEPYC, 2 cores\t134\t146.5\t20.0\n"
        "2026-01-03\tccc\tEPYC, 2 cores\t141\t156.0\t22.0\n")
    assert figures.values(tmp_path, {"next-run"}) == {
        "next-run": "2 min 21 s on the EPYC and 1 min 28 s on the Xeon"}


def test_the_generator_ceiling_figures_read_the_newest_ladders(tmp_path):
    """protocol.md's generator ceiling: every measured step a row (those past a
    ladder's end were not run), and the rates the generator kept in some ladders, in
    every one, and the lowest it missed; an older run is not read."""
    def step(rep: int, rate: int, status: str, lag_ms: float | None = 4.0) -> Row:
        return Row(run_id="r", impl="go", language="go", runtime="go", workload="http", rep=rep,
                   delay_ms=1, style="when-all", rate=rate, step_s=5, status=status,
                   rps=float(rate) if status != "skipped" else None, gen_busy=0.4,
                   gen_lag_p99_s=None if lag_ms is None else lag_ms / 1000)
    older = RunDir.create_new(tmp_path / figures.CEILING_RUNS)
    older.append_run(step(1, 100, "invalid", 50.0))
    newer = RunDir.create_new(tmp_path / figures.CEILING_RUNS)
    assert newer.name > older.name
    for row in (step(1, 200, "ok"), step(1, 400, "ok"), step(1, 600, "invalid", 15.0),
                step(2, 200, "ok"), step(2, 400, "invalid", 12.0),
                step(2, 600, "skipped", None)):
        newer.append_run(row)
    found = figures.values(tmp_path, {"generator-ceiling", "generator-kept"})
    assert found["generator-kept"] == ("up to 400 requests a second in some ladders, up to 200 "
                                       "in every one, and missed it from 400")
    table = found["generator-ceiling"]
    assert "| 1 | 600 | 600 | 40% | 15 ms | invalid (generator) |" in table
    assert "| 2 | 400 |" in table and "| 2 | 600 |" not in table and "| 1 | 100 |" not in table
    # the previous generator's, measured the same way: one that kept no rate says so
    previous = RunDir.create_new(tmp_path / figures.PREVIOUS_CEILING_RUNS)
    for row in (step(1, 200, "invalid", 23.0), step(1, 400, "invalid", 16.0)):
        previous.append_run(row)
    found = figures.values(tmp_path, {"generator-ceiling-previous", "generator-kept-previous"})
    assert found["generator-kept-previous"] == (
        "at no rate tried, missing it from 200 requests a second")
    assert "| 1 | 200 | 200 | 40% | 23 ms | invalid (generator) |" in found[
        "generator-ceiling-previous"]
    # the quiet study's, where every ladder kept the same top
    quiet = RunDir.create_new(tmp_path / figures.QUIET_CEILING_RUNS)
    for row in (step(1, 200, "ok"), step(1, 400, "invalid", 12.0),
                step(2, 200, "ok"), step(2, 400, "invalid", 11.0)):
        quiet.append_run(row)
    assert figures.values(tmp_path, {"generator-kept-quiet"})["generator-kept-quiet"] == (
        "up to 200 requests a second in every ladder, and missed it from 400")


def test_the_seed004_ladder_climbs_to_the_rate_the_generator_kept_quietly():
    """protocol.md: the seed004 ladder's top is the highest rate the
    generator kept in every round of the committed quiet ceiling study, and
    the next doubling is one it missed."""
    root = Path(__file__).resolve().parents[3]
    _, every, missed = figures.kept_rates(root, figures.QUIET_CEILING_RUNS)
    ladders = [p.params["rate"] for p in load_suites()["seed004"].parts if "rate" in p.params]
    assert len(ladders) == 3  # at D = 100 ms, and at 10 ms for the styles
    for rates in ladders:
        assert max(rates) == max(every) and min(missed) == 2 * max(rates)


def test_the_collection_figures_compare_each_runtime_with_itself(tmp_path):
    """protocol.md's collection study: per runtime, the medians with the
    collection against its BENCH_COLLECT=0 variant, from every run of the
    folder; a runtime without its variant is left out."""
    def run(impl: str, n: int, warm: float, rss: int, rep: int = 1) -> Row:
        return Row(run_id="r", impl=impl, language="go", runtime="go", workload="bounded", n=n,
                   buffer=1, rep=rep, status="ok", iterations=60, warm_iter_s=warm,
                   peak_rss_bytes=rss)
    small = RunDir.create_new(tmp_path / figures.COLLECTION_RUNS)
    for rep, (warm, off) in enumerate(((20e-6, 5e-6), (30e-6, 7e-6), (25e-6, 6e-6)), 1):
        small.append_run(run("go", 10, warm, 4 << 20, rep))
        small.append_run(run("go[BENCH_COLLECT=0]", 10, off, 8 << 20, rep))
        small.append_run(run("alone", 10, warm, 4 << 20, rep))
    larger = RunDir.create_new(tmp_path / figures.COLLECTION_RUNS)
    larger.append_run(run("nodejs", 1000, 3e-3, 40 << 20))
    larger.append_run(run("nodejs[BENCH_COLLECT=0]", 1000, 1e-3, 60 << 20))
    larger.append_run(run("go", 1000, 1e-3, 4 << 20))
    larger.append_run(run("go[BENCH_COLLECT=0]", 1000, 1e-3, 6 << 20))
    found = figures.values(tmp_path, {"collection-small", "collection-range", "collection-larger"})
    assert "| go | 25 µs | 6 µs | 4.2× | 4 MiB | 8 MiB |" in found["collection-small"]
    assert "alone" not in found["collection-small"] and "3 runs of 60 passes" in found[
        "collection-small"]
    assert found["collection-range"] == "4.2-4.2×"
    assert found["collection-larger"] == ("at N = 1,000, 1.0-3.0× (Node.js and Deno 3.0-3.0×), "
                                          "and the peak RSS without it 1.5-1.5× with it")


def test_the_start_growth_is_the_steepest_tenfold_step(tmp_path):
    """usage.md's start growth: each runtime's longest start at a size over
    ten times its longest at a tenth of it, the steepest of every run; a
    size with no tenth (1 -> 10,000) and a failed row are not read."""
    def run(impl: str, n: int, spawn: float, status: str = "ok") -> Row:
        return Row(run_id="r", impl=impl, language="go", runtime="go", workload="sleep", n=n,
                   rep=1, status=status, spawn_s=spawn)
    folder = RunDir.create_new(tmp_path / figures.START_RUNS)
    for row in (run("go", 1, 1e-3), run("go", 10_000, 0.03), run("go", 100_000, 0.3),
                run("go", 100_000, 0.45), run("go", 1_000_000, 6.0),
                run("rust", 10_000, 0.01), run("rust", 100_000, 0.5, "invalid"),
                run("rust", 100_000, 0.12)):
        folder.append_run(row)
    found = figures.values(tmp_path, {"start-growth"})["start-growth"]
    # go: 0.45 / 0.3 = 1.50, 6.0 / 4.5 = 1.33; rust: 0.12 / 0.1 = 1.20
    assert found.startswith("1.50 times faster than the tasks per tenfold (go's, from 10,000 to "
                            "100,000 tasks; 3 steps of 2 runtimes on ")


def test_the_first_run_studys_epyc_table_is_its_data():
    """docs/studies/first-run.md's EPYC table: its times and CPU are the
    lines of first-run.tsv it reports, in the order measured."""
    with open(ROOT / figures.FIRST_RUNS, newline="") as f:
        epyc = [r for r in csv.DictReader(f, delimiter="\t") if "EPYC" in r["machine"]]
    text = (ROOT / "docs" / "studies" / "first-run.md").read_text()
    assert "| in all | " + " | ".join(fmt_elapsed(int(r["seconds"])) for r in epyc) + " |" in text
    assert "| CPU, user + system | " + " | ".join(
        f"{float(r['user_cpu_s']):.0f} + {float(r['system_cpu_s']):.0f} s" for r in epyc) + " |" in text


def test_the_first_run_studys_next_time_is_its_data():
    """docs/studies/first-run.md's "The next time": the EPYC's times and CPU
    at each commit are next-run.tsv's lines, in the order measured."""
    with open(ROOT / figures.NEXT_RUNS, newline="") as f:
        epyc = [r for r in csv.DictReader(f, delimiter="\t") if "EPYC" in r["machine"]]
    text = " ".join((ROOT / "docs" / "studies" / "first-run.md").read_text().split())
    for commit in dict.fromkeys(r["commit"] for r in epyc):
        lines = [r for r in epyc if r["commit"] == commit]
        said = " and ".join(fmt_elapsed(int(r["seconds"])) for r in lines) + " (" + " and ".join(
            f"{float(r['user_cpu_s']):.0f} + {float(r['system_cpu_s']):.0f} s" for r in lines
        ) + " of CPU)"
        assert said in text, f"{commit}: {said}"


def test_protocols_k6_ceiling_at_2000_users_is_the_seed004_pages():
    """docs/protocol.md's figures for why seed004 runs its 2000 users at
    D = 1000 ms, recomputed from the page it cites: each server's medians of
    k6's CPU a request, and the five fastest servers' throughput and k6's
    share of both cores at 2000 users, D = 100 ms."""
    with open(RESULTS / "2026-11-29-amd-epyc-2c-seed004" / "runs.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["users"] == "2000" and r["delay_ms"] == "100"
                and r["style"] == "when-all" and r["status"] == "ok"]
    by: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by.setdefault(r["impl"], []).append(r)

    def median(impl: str, f) -> float:
        return statistics.median(f(r) for r in by[impl])

    ms = [median(i, lambda r: float(r["gen_cpu_s"]) / int(r["requests_done"]) * 1000) for i in by]
    fastest = sorted(by, key=lambda i: -median(i, lambda r: float(r["rps"])))[:5]
    rps = [median(i, lambda r: float(r["rps"])) for i in fastest]
    share = [median(i, lambda r: float(r["gen_cpu_s"]) / float(r["load_s"]) / int(r["gen_cpus"]))
             for i in fastest]
    text = " ".join((ROOT / "docs" / "protocol.md").read_text().split())
    assert f"k6 spent {min(ms):.2f}-{max(ms):.2f} ms of CPU a request" in text
    named = ["go", "rust-tokio", "bun", "deno", "nodejs"]
    assert set(fastest) == set(named) and f"({', '.join(named)})" in text
    assert f"medians of {min(rps):,.0f}-{max(rps):,.0f} a second" in text
    assert f"on {min(share) * 100:.0f}-{max(share):.0%} of both cores" in text


FIXTURE_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "run"
SUMMARY_COLUMNS = (["impl", "workload", "n", "buffer", "users", "requests", "delay_ms",
                    "pool_threads", "style", "cpus", "machine", "runs", "ok", "statuses"]
                   + [f"{m}_{p}" for m in ("wall_s", "first_iter_s", "warm_iter_s", "spawn_s",
                                           "peak_rss_bytes", "max_threads", "rps",
                                           "latency_p50_s")
                      for p in ("median", "min", "max", "count", "values")])
MIB = 1 << 20


def test_the_reader_reads_summary_csvs_own_columns():
    """SummaryRow's columns and the configuration's are summary.csv's, as
    its writer (present/exports.py) names them; and so are each metric's
    values and their count."""
    read = {f.name for f in published.SUMMARY_COLUMNS} | set(published.KEY_COLUMNS)
    assert read <= set(SUMMARY_FIELDS)
    assert {f"{m}_{p}" for m in published.METRICS
            for p in (published.VALUES, published.COUNT)} <= set(SUMMARY_FIELDS)


def test_a_summary_line_gives_back_its_runs_as_the_harness_groups_them():
    """Each committed summary.csv, rebuilt into rows (an ok Row per ok run
    carrying its values, a Row per failed run) and grouped by the harness,
    says what the file says: statuses, runs, and each metric's count, min,
    max and median (to the 10 digits csv_number writes); load.csv's lines
    key the same configurations."""
    for name in rt.pages(RESULTS):
        folder = RESULTS / name
        with (folder / "summary.csv").open(newline="") as f:
            lines = list(csv.DictReader(f))
        groups = published.read_summary(folder / "summary.csv")
        assert len(groups) == len(lines)
        by_key = {g.key: g for g in groups}
        for line in lines:
            g = by_key[published.key_of(line)]
            assert g.statuses == line["statuses"] and len(g.rows) == int(line["runs"])
            for metric in published.METRICS:
                s = g.metrics.get(metric)
                if s is None:
                    assert not line.get(f"{metric}_count"), (name, g.label, metric)
                    continue
                assert s.count == int(line[f"{metric}_count"])
                for part in ("min", "max", "median"):
                    assert getattr(s, part) == pytest.approx(float(line[f"{metric}_{part}"]),
                                                             rel=1e-9), (name, g.label, metric)
        if (folder / "load.csv").is_file():
            assert set(published.read_load(folder / "load.csv")) <= set(by_key)


def test_a_summary_line_without_its_values_is_refused(tmp_path):
    row = summary_row("go", "chain", 10, warm_iter_s=(1.0, 0.9, 1.1, 3))
    row["warm_iter_s_values"] = ""
    with pytest.raises(ValueError, match="warm_iter_s_values holds 0 values"):
        published.SummaryRow.parse(row)
    row = summary_row("go", "chain", 10, statuses="2 ok, 1 crashed",
                      warm_iter_s=(1.0, 0.9, 1.1, 2), max_threads=(8, 8, 8, 1))
    line = published.SummaryRow.parse(row)
    assert line.key == ConfigKey("go", "chain", 10, None)
    runs = line.rows()
    assert [(r.status, r.warm_iter_s, r.max_threads) for r in runs] == [
        ("ok", 0.9, 8.0), ("ok", 1.1, None), ("crashed", None, None)]


def summary_row(impl, workload, n, buffer=None, statuses="3 ok", params=None,
                **metrics):
    """A row of summary.csv as `harness report` writes it; a metric is
    (median, min, max, count), which its ok values must have (the page
    takes each figure from the values, as the harness does)."""
    row = {"impl": impl, "workload": workload, "n": n, "buffer": buffer, **(params or {}),
           "statuses": statuses}
    counts = published.parse_statuses(statuses)
    row["runs"], row["ok"] = sum(counts.values()), counts["ok"]
    for metric, values in metrics.items():
        for part, value in zip(("median", "min", "max", "count"), values):
            row[f"{metric}_{part}"] = value
        median, low, high, count = values  # the ok values: the ends, and the median between
        ok_values = ([median] if count == 1 else [low, high] if count == 2
                     else [low] + [median] * (count - 2) + [high])
        assert statistics.median(ok_values) == pytest.approx(median), (impl, workload, metric)
        row[f"{metric}_values"] = " ".join(str(v) for v in ok_values)
    return {c: "" if row.get(c) is None else str(row[c]) for c in SUMMARY_COLUMNS}


def write_run(folder: Path, env_changes: dict | None = None) -> Path:
    """A small run directory of the default suite: summary.csv and env.json."""
    rows = [
        summary_row("cpp-coroutines", "sleep", 1, statuses="2 ok", peak_rss_bytes=(3 * MIB, 3 * MIB, 3 * MIB, 2)),
        summary_row("cpp-coroutines", "sleep", 1_000_000, statuses="1 ok",
                    peak_rss_bytes=(94 * MIB, 94 * MIB, 94 * MIB, 1), spawn_s=(0.065, 0.065, 0.065, 1)),
        summary_row("go", "sleep", 1, statuses="2 ok", peak_rss_bytes=(7 * MIB, 6 * MIB, 8 * MIB, 2)),
        summary_row("go", "sleep", 1_000_000, statuses="1 ok",
                    peak_rss_bytes=(2630 * MIB, 2630 * MIB, 2630 * MIB, 1),
                    spawn_s=(4.65, 4.65, 4.65, 1), wall_s=(14.7, 14.7, 14.7, 1)),
        summary_row("nodejs", "sleep", 1, statuses="2 ok", peak_rss_bytes=(43 * MIB, 43 * MIB, 43 * MIB, 2)),
        summary_row("nodejs", "sleep", 1_000_000, statuses="1 oom"),
        summary_row("rust-tokio", "sleep", 1_000_000, statuses="1 ok",
                    peak_rss_bytes=(262 * MIB, 262 * MIB, 262 * MIB, 1)),
        summary_row("csharp-threads", "sleep", 1_000_000, statuses="1 skipped"),
        summary_row("go", "chain", 1_000_000, statuses="1 ok", first_iter_s=(2.47, 2.47, 2.47, 1),
                    warm_iter_s=(1.89, 1.89, 1.89, 1), peak_rss_bytes=(2941 * MIB,) * 3 + (1,)),
        summary_row("rust-tokio", "chain", 1_000_000, statuses="2 ok, 1 crashed",
                    first_iter_s=(3.3, 3.2, 3.4, 2), warm_iter_s=(0.99, 0.98, 1.0, 2),
                    peak_rss_bytes=(1315 * MIB, 1300 * MIB, 1330 * MIB, 2)),
        *(summary_row(impl, "bounded", 10_000, b, warm_iter_s=(t * f, t * f * 0.9, t * f * 1.1, 3))
          for b, f in ((1, 1.0), (100, 1.2)) for impl, t in (("go", 0.0072), ("rust-tokio", 0.0075))),
        summary_row("go", "bounded", 10, 1, warm_iter_s=(5.35e-6, 3.4e-6, 5.5e-6, 3)),
        summary_row("cpp-coroutines", "skynet", 1_000_000, statuses="2 ok",
                    first_iter_s=(0.078, 0.077, 0.079, 2), warm_iter_s=(0.0586, 0.0574, 0.0598, 2),
                    peak_rss_bytes=(97 * MIB, 97 * MIB, 97 * MIB, 2)),
        summary_row("go", "skynet", 1_000_000, statuses="2 ok",
                    first_iter_s=(0.807, 0.801, 0.813, 2), warm_iter_s=(0.762, 0.761, 0.763, 2),
                    peak_rss_bytes=(230 * MIB, 215 * MIB, 245 * MIB, 2)),
        *(summary_row("go", "skynet", 1_000_000, params={"cpus": c}, statuses="3 ok",
                      warm_iter_s=(t, t, t * 1.1, 3)) for c, t in ((1, 0.761), (2, 0.750))),
        summary_row("go", "http", 10, params={"users": 10, "requests": 3, "delay_ms": 50,
                                             "style": "sync"}, statuses="2 ok",
                    rps=(65.1, 64.9, 65.3, 2), latency_p50_s=(0.152, 0.151, 0.153, 2),
                    max_threads=(8, 8, 8, 2)),
        summary_row("nodejs", "http", 10, params={"users": 10, "requests": 3, "delay_ms": 50,
                                                 "style": "sync"}, statuses="2 timeout"),
    ]
    folder.mkdir(parents=True)
    with (folder / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    env = {"run_id": "20261124-105633", "started_at": "2026-11-24T10:56:33+00:00",
           "finished_at": "2026-11-24T11:24:26+00:00",
           "host": {"cpu_model": "Intel(R) Xeon(R) Processor", "cores": 2, "ram_bytes": 24 << 30,
                    "kernel": "6.18", "os": "Debian GNU/Linux 12 (bookworm)"},
           "git": {"commit": "7bc8a8a" + "0" * 33, "dirty": False},
           "settings": {"suite": "default"}, "toolchains": {"go": "go1.26.8"},
           "floor_impls": ["cpp-coroutines"], **(env_changes or {})}
    (folder / "env.json").write_text(json.dumps(env))
    return folder


def test_a_run_becomes_a_page_with_its_files(tmp_path):
    """The page is the run's report for the repository: report.md's tables,
    drawn by its code, with the questions, the goals and the files."""
    run = write_run(tmp_path / "run")
    out = tmp_path / "results"
    path = rt.publish(run, out)
    assert path.name == "2026-11-24-intel-xeon-2c.md"
    folder = out / path.stem
    assert (folder / "summary.csv").read_bytes() == (run / "summary.csv").read_bytes()
    assert (folder / "env.json").read_bytes() == (run / "env.json").read_bytes()
    assert not (folder / "runs.csv").exists()
    text = path.read_text()
    published_run = rt.load_page(out, path.stem)
    ranks = ratios(published_run.groups, published_run.env.floor_impls)
    for workload, members in workload_groups(published_run.groups).items():
        table = build_table(workload, members, ranks)
        assert "\n".join(table.markdown()) in text, workload
    assert "## Performance goals" in text and "27 min 53 s" in text
    # one run meets the goal, but a verdict never rests on one run
    assert "| rust-tokio sleep 1M ≤ 450 MiB | 262 MiB (1 run, no interval) | not settled (1 run)" in text
    assert "neighbour pairs in the rankings" in text and "runs.csv was not kept" in text
    assert "csharp-threads sleep" in text and "| csharp-threads |" not in text  # skipped: named once
    assert "A check, not a measurement" not in text
    index = (out / "README.md").read_text()
    assert f"[{path.stem}]({path.stem}.md)" in index and "measurement" in index
    assert page.render_page(rt.load_page(out, path.stem), path.stem) == text


def test_the_settled_goal_counts_each_family_on_its_own(tmp_path):
    run = rt.load_page(RESULTS, rt.headline_page(RESULTS))
    q = page.asked(run)
    rows = {row[0]: row[1:] for row in page.goals.rows(run.groups + run.skipped, run.env, q)}
    measured, verdict = next(v for k, v in rows.items() if k.startswith("the default suite settles"))
    for name, settled, total in q.families():
        if total:
            assert f"{name} {settled:,} of {total:,}" in measured
    shares = [settled / total for _, settled, total in q.families() if total]
    assert verdict == ("holds" if min(shares) >= 0.9 else "**missed**")


def test_a_published_run_keeps_its_runs_csv_and_its_page_says_its_verdicts(tmp_path):
    """The publish command copies runs.csv beside the page; the page's
    verdicts, recomputed from that runs.csv, are what it says, and a page
    edited by hand is found."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, run)
    env = json.loads((run / "env.json").read_text())
    (run / "env.json").write_text(json.dumps({**env, "settings": {**env.get("settings", {}),
                                                                 "suite": "claims"}}))
    write_report(run, draw=False)
    out = tmp_path / "results"
    path = rt.publish(run, out, name="fixture")
    folder = out / "fixture"
    assert (folder / "runs.csv").read_bytes() == (run / "runs.csv").read_bytes()
    text = path.read_text()
    assert "[runs.csv](fixture/runs.csv)" in text and "runs.csv was not kept" not in text
    q = recomputed(folder)
    assert q.rankings and not says_verdicts(text, q)
    first = ranking_rows(q)[0]
    edited = text.replace(" | ".join(first), " | ".join(first[:3] + ["1: typed by hand"] + first[4:]))
    assert edited != text and says_verdicts(edited, q)
    assert "runs.csv" in (out / "README.md").read_text()


def test_an_unfinished_or_quick_run_is_marked_a_check(tmp_path):
    run = write_run(tmp_path / "run", {"finished_at": None})
    text = rt.publish(run, tmp_path / "out").read_text()
    assert "A check, not a measurement" in text
    assert "check only" in (tmp_path / "out" / "README.md").read_text()
    run = write_run(tmp_path / "quick", {"settings": {"suite": "quick"}})
    text = rt.publish(run, tmp_path / "out2").read_text()
    assert "A check, not a measurement" in text and "**Check:" in text


def test_the_readme_block_is_rewritten_between_its_markers():
    text = f"a\n{readme.HEADLINE_START}\nold\n{readme.HEADLINE_END}\nb\n"
    assert readme.with_block(text, "new") == (
        f"a\n{readme.HEADLINE_START}\nnew\n{readme.HEADLINE_END}\nb\n")


@pytest.mark.parametrize("model, cores, slug_", [
    ("Intel(R) Xeon(R) Processor", 2, "intel-xeon-2c"),
    ("AMD EPYC 7B13", 2, "amd-epyc-7b13-2c"),
    ("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", 12, "intel-core-i7-8700-12c"),
    (None, 4, "unknown-cpu-4c"),
])
def test_machine_slug(model, cores, slug_):
    assert rt.machine_slug(Env({"host": {"cpu_model": model, "cores": cores}})) == slug_


def test_a_page_escapes_what_comes_from_env_json(tmp_path):
    """A run someone sent must not put markup into a published page or the
    README: its run id, suite, machine and toolchains are escaped."""
    mark = "<img src=x onerror=alert(1)>"
    run = write_run(tmp_path / "run", {"run_id": mark, "toolchains": {"go": mark},
                                       "host": {"cpu_model": mark, "cores": 2}})
    out = tmp_path / "out"
    text = rt.publish(run, out, name="page").read_text()
    block = readme.block((rt.load_page(out, "page"), "page"), None)
    for published_text in (text, (out / "README.md").read_text(), block):
        assert mark not in published_text and "\\<img" in published_text


def test_the_claims_command_prints_the_pages_claims(capsys):
    name = rt.claims_page(RESULTS)
    assert cli.main(["claims", str(RESULTS / name)]) == 0
    printed = capsys.readouterr().out
    assert printed.strip() and printed.strip() in (RESULTS / f"{name}.md").read_text()


def test_a_published_page_shows_the_rate_ladders_plot(tmp_path):
    """The report draws http_ladder.png from a format 9 run (a ladder ended
    at its first step, the steps above recorded skipped); publishing copies
    it beside the page, which shows it under the http table."""
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "v9", run)
    write_report(run)
    text = rt.publish(run, tmp_path / "out", name="page").read_text()
    assert (tmp_path / "out" / "page" / "http_ladder.png").is_file()
    http = text[text.index("## http"):]
    assert "(page/http_ladder.png)" in http.split("\n## ")[0]


def test_the_readme_headline_is_never_a_run_that_had_no_floor_program(tmp_path) -> None:
    """A seed004 run records the floor among its implementations (it ran
    every server), but the floor has no server: a seed004 page newer than
    the default run's is still not the README's headline (the 2026-11-29
    seed004 pages beside the 2026-11-28 default page)."""
    seed = [n for n in rt.pages(RESULTS) if n.endswith("-seed004")]
    assert seed and all(read_env(RESULTS / n / published.ENV).floor_impls for n in seed)
    for name in seed + ["2026-11-28-amd-epyc-2c"]:
        shutil.copytree(RESULTS / name, tmp_path / name)
        shutil.copyfile(RESULTS / f"{name}.md", tmp_path / f"{name}.md")
    assert rt.pages(tmp_path).index(seed[0]) < rt.pages(tmp_path).index("2026-11-28-amd-epyc-2c")
    assert rt.headline_page(tmp_path) == "2026-11-28-amd-epyc-2c"


def test_statistics_thread_spreads_are_the_seed004_reruns():
    """docs/statistics.md's (and metrics.py's) thread spreads behind the
    two-thread margin, recomputed from the page they come from: Go's async
    at 150 users, java-virtual's parallel at 50, D = 100 ms."""
    with open(RESULTS / "2026-11-29-amd-epyc-2c-seed004-rerun" / "runs.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "ok" and r["workload"] == "http"
                and r["delay_ms"] == "100" and not r["rate"]]

    def spread(impl: str, style: str, users: str) -> str:
        counts = [int(r["max_threads"]) for r in rows
                  if (r["impl"], r["style"], r["users"]) == (impl, style, users)]
        return f"{min(counts)}–{max(counts)}"

    text = " ".join((ROOT / "docs" / "statistics.md").read_text().split())
    assert (f"Go's {spread('go', 'async', '150')} and java-virtual's "
            f"{spread('java-virtual', 'parallel', '50')}") in text


def test_the_first_run_studys_vegeta_figures_are_its_data():
    """docs/studies/first-run.md's 2026-12-02 section: its time and CPU are
    first-run.tsv's line of that day."""
    with open(ROOT / figures.FIRST_RUNS, newline="") as f:
        (line,) = [r for r in csv.DictReader(f, delimiter="\t") if r["date"] == "2026-12-02"]
    text = " ".join((ROOT / "docs" / "studies" / "first-run.md").read_text().split())
    assert (f"At commit {line['commit']}," in text
            and f"**{fmt_elapsed(int(line['seconds']))}** in all, "
                f"{float(line['user_cpu_s']):.0f} + {float(line['system_cpu_s']):.0f} s of CPU"
            in text)


def test_a_machines_name_is_escaped_in_the_docs_figures(tmp_path, monkeypatch):
    """env.json's machine name is a run's data: the studies' figures that
    name it escape it for Markdown, as the pages do."""
    monkeypatch.setattr(figures, "machine", lambda env: "<b>x</b> | *y*")
    run = RunDir.create_new(tmp_path / figures.CEILING_RUNS)
    run.append_run(Row(run_id="r", impl="go", language="go", runtime="go", workload="http",
                       rep=1, delay_ms=1, style="when-all", rate=200, step_s=5, status="ok",
                       rps=200.0, gen_busy=0.1, gen_lag_p99_s=0.001))
    table = figures.values(tmp_path, {"generator-ceiling"})["generator-ceiling"]
    assert "Measured on \\<b\\>x\\</b\\> \\| \\*y\\*," in table and "<b>" not in table


def test_the_ladder_warmup_figures_are_the_studys_data():
    """docs/protocol.md's "Warmed first" figures: the p99s (whole ms) of
    docs/studies/ladder-warmup/'s generator summaries."""
    study = ROOT / "docs" / "studies" / "ladder-warmup"

    def p99(name: str) -> str:
        return f"{json.loads((study / f'{name}.json').read_text())['latency']['p99_ms']:.0f}"

    same = [p99(f"same-server-{i}") for i in (1, 2, 3, 4)]
    warm = [p99(f"warmed-{rate}") for rate in (1600, 3200, 4800)]
    text = " ".join((ROOT / "docs" / "protocol.md").read_text().split())
    assert (f"had a p99 of {same[0]} ms, then {same[1]}, {same[2]} and {same[3]} ms; a fresh "
            f"server's step after the 1 s warm-up, {warm[0]} ms at 1,600, {warm[1]} ms at 3,200 "
            f"and {warm[2]} ms at 4,800 a second") in text


def test_the_run_ceilings_figures_are_the_late_runs_replayed():
    """docs/protocol.md's and suites.toml's figures of the seed004 run whose
    generator fell behind (docs/studies/generator-late/): its rows, replayed
    in order through ladder.ceilings, as the scheduler reads them."""
    from harness.core.ladder import ceilings, generator_limited, generator_load

    folder = ROOT / "docs" / "studies" / "generator-late" / "20261203-133004"
    rows, env = RunDir(folder).rows(), read_env(folder / "env.json")
    top = [r for r in rows if r.rate == 12800 and r.status != "skipped"]
    late = [r for r in rows if generator_limited(r)]
    seen: list[Row] = []
    known, spared = None, 0.0
    for r in rows:
        found = ceilings(seen)
        if found and known is None:
            known = r.started_at
        load = generator_load(ConfigKey.of(r)) if r.rate is not None else None
        if r.status != "skipped" and load in found and r.rate >= found[load]:
            spared += r.wall_s or 0.0
        seen.append(r)
    final = {k.param("delay_ms"): v for k, v in ceilings(rows).items()}
    start = datetime.fromisoformat(env.started_at)
    minutes_in = round((datetime.fromisoformat(known) - start).total_seconds() / 60)
    late_min = round(sum(r.wall_s or 0.0 for r in late) / 60)
    protocol = " ".join((ROOT / "docs" / "protocol.md").read_text().split())
    assert (f"kept 12,800 a second in {sum(r.status == 'ok' for r in top)} of {len(top)} "
            f"attempts, and its {len(late)} late attempts, each run again, took {late_min} "
            f"of seed004's 110 minutes; read this way, the ceiling was known {minutes_in} "
            f"minutes in and ended at {final[100]:,} a second at D = 100 ms and "
            f"{final[10]:,} at D = 10, and the steps at or above it that the run went on to "
            f"try took {round(spared / 60)} minutes") in protocol
    toml = " ".join(line.lstrip("# ") for line in
                    (ROOT / "harness" / "plan" / "suites.toml").read_text().splitlines())
    assert (f"kept 12,800 a second in {sum(r.status == 'ok' for r in top)} of {len(top)} "
            f"attempts") in toml
    assert f"{len(late)} late attempts, each run again, took {late_min} of the 110" in toml
    assert f"after: {round(spared / 60)} of that run's minutes" in toml
