"""The documentation: README.md's size, every relative link in README.md,
docs/**/*.md and results/README.md (anchors included), and docs/results,
whose pages must be what harness/publish/readme_tables.py generates from the
summary.csv and env.json committed beside them."""

from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "docs" / "results"
README_LIMIT = 12_000


from harness.analyse.analysis import group_runs
from harness.core.schema import ConfigKey, Env, Row
from harness.present.exports import SUMMARY_FIELDS
from harness.publish import claims, published
from harness.publish import readme_tables as rt


def test_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes, more than {README_LIMIT}"


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

def test_committed_pages_are_what_the_generator_writes():
    names = rt.pages(RESULTS)
    assert names, "docs/results has no page"
    for name in names:
        page = RESULTS / f"{name}.md"
        assert page.read_text() == rt.render_page(rt.load_page(RESULTS, name), name), (
            f"{page.relative_to(ROOT)} differs from what harness/publish/readme_tables.py generates "
            f"from {name}/summary.csv and env.json: regenerate it, never edit it")
    assert (RESULTS / "README.md").read_text() == rt.render_index(RESULTS)


def test_every_page_has_its_run_beside_it():
    for page in RESULTS.glob("*.md"):
        if page.name == "README.md":
            continue
        for part in ("summary.csv", "env.json", "load.csv"):
            assert (RESULTS / page.stem / part).is_file(), f"{page.name} without its {part}"


def test_the_readme_headline_comes_from_the_newest_page_with_the_floor():
    newest = rt.headline_page(RESULTS)
    text = (ROOT / "README.md").read_text()
    start, end = text.index(rt.HEADLINE_START), text.index(rt.HEADLINE_END)
    block = rt.readme_block(rt.load_page(RESULTS, newest), newest)
    assert text[start + len(rt.HEADLINE_START):end].strip() == block


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
    assert {published.COLD, published.WARM, published.RSS, published.SPAWN, published.WALL,
            published.THREADS, published.RPS, published.MEDIAN_RESPONSE} <= set(published.METRICS)


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
    run = write_run(tmp_path / "run")
    out = tmp_path / "results"
    page = rt.publish(run, out)
    assert page.name == "2026-11-24-intel-xeon-2c.md"
    folder = out / page.stem
    assert (folder / "summary.csv").read_bytes() == (run / "summary.csv").read_bytes()
    assert (folder / "env.json").read_bytes() == (run / "env.json").read_bytes()
    text = page.read_text()
    for heading in ("## sleep: peak RSS", "## chain and chain-await at N = 1,000,000",
                    "## bounded: warm iteration, 10,000 producers", "## skynet: 1,000,000 leaves",
                    "## Core scaling", "## http", "## What the articles claimed",
                    "## Performance goals"):
        assert heading in text
    assert ("| go | 7 MiB ([6–8 MiB], 2 runs, 50%) | 2,630 MiB (1 run, no interval) | 4.65 s (1 run, "
            "no interval) | 2.69 KiB | 28.82× |") in text
    assert "| nodejs | 43 MiB ([43 MiB], 2 runs, 50%) | 1 oom |" in text
    assert "csharp-threads sleep" in text and "| csharp-threads |" not in text  # skipped: named once
    assert ("3.3 s [3.2–3.4 s] / 990 ms [980 ms–1 s], 1,315 MiB [1,300–1,330 MiB] (2 runs, 50%, "
            "also 1 crashed)") in text
    assert "1.04× go" in text  # rust-tokio's bounded at B = 1
    assert ("| cpp-coroutines | 78 ms ([77–79 ms], 2 runs, 50%) | 58.6 ms ([57.4–59.8 ms], 2 runs, "
            "50%) | 97 MiB ([97 MiB], 2 runs, 50%) | 1.00× |") in text
    assert ("| go | 761 ms ([761–837 ms], 3 runs, 75%) | 750 ms ([750–825 ms], 3 runs, 75%) | "
            "1.01× |") in text
    assert "65.1 req/s ([64.9–65.3], 2 runs, 50%), median response 152 ms, 8 threads" in text
    assert "**2 timeout**" in text
    assert "| 1M tasks 2024 | Go needs far more memory than C# for 1M sleeping tasks |" not in text
    # one run meets the goal, but a verdict never rests on one run
    assert ("| rust-tokio sleep 1M ≤ 450 MiB | 262 MiB (1 run, no interval) | not settled (1 run): "
            "the median meets it |") in text
    assert "27 min 53 s" in text
    assert "A check, not a measurement" not in text
    index = (out / "README.md").read_text()
    assert f"[{page.stem}]({page.stem}.md)" in index and "measurement" in index
    assert rt.render_page(rt.load_page(out, page.stem), page.stem) == text
    sentence = rt.headline(rt.load_page(out, page.stem), page.stem)
    assert sentence.startswith("Peak memory of 1,000,000 sleeping tasks: the floor, "
                               "cpp-coroutines 94 MiB (1 run, no interval); the runtimes from "
                               "rust-tokio 262 MiB (1 run, no interval) to go 2,630 MiB (1 run, "
                               "no interval); Intel(R) Xeon(R) "
                               "Processor, 2 cores ([2026-11-24-intel-xeon-2c](docs/results/")


def test_every_figure_says_how_many_runs(tmp_path):
    text = rt.publish(write_run(tmp_path / "run"), tmp_path / "out").read_text()
    checked = 0
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| ---") or "implementation" in line:
            continue
        for value in line.strip("|").split("|")[1:]:
            value = value.strip()
            if re.match(r"[\d.,]+ (MiB|ms|µs|ns|s|req/s)\b", value):
                checked += 1
                assert re.search(r"\d+ runs?\b", value), f"a figure without its runs: {value!r}"
    assert checked > 10


def test_an_unfinished_or_quick_run_is_marked_a_check(tmp_path):
    run = write_run(tmp_path / "run", {"finished_at": None})
    text = rt.publish(run, tmp_path / "out").read_text()
    assert "A check, not a measurement" in text
    assert "check only" in (tmp_path / "out" / "README.md").read_text()
    run = write_run(tmp_path / "quick", {"settings": {"suite": "quick"}})
    assert "A check, not a measurement" in rt.publish(run, tmp_path / "out2").read_text()


def test_load_comes_from_runs_csv_into_load_csv(tmp_path):
    run = write_run(tmp_path / "run")
    columns = ["run_id", "impl", "workload", "n", "buffer", "rep", "cpus", "status",
               "other_cpu_frac"]
    rows = [["r", "go", "sleep", "1", "", "1", "", "ok", "0.5"],
            ["r", "go", "sleep", "1", "", "2", "", "ok", "0.01"],
            ["r", "go", "bounded", "10000", "1", "1", "", "ok", "0.2"],
            ["r", "go", "skynet", "1000000", "", "1", "2", "ok", "0.3"],
            ["r", "nodejs", "sleep", "1000000", "", "1", "", "oom", "0.9"]]
    with (run / "runs.csv").open("w", newline="") as f:
        csv.writer(f).writerows([columns] + rows)
    page = rt.publish(run, tmp_path / "out")
    text = page.read_text()
    assert (page.parent / page.stem / "load.csv").is_file()
    assert "| go | 7 MiB ([6–8 MiB], 2 runs, 50%, 1 under load) |" in text
    assert "18.0 ms" not in text and "2 under load" not in text
    assert "3 of " in text and "ran **under load**" in text
    assert "761 ms ([761–837 ms], 3 runs, 75%) | 750 ms ([750–825 ms], 3 runs, 75%, 1 under load)" in text
    assert rt.render_page(rt.load_page(page.parent, page.stem), page.stem) == text


def test_the_readme_headline_is_rewritten_between_its_markers():
    text = f"a\n{rt.HEADLINE_START}\nold\n{rt.HEADLINE_END}\nb\n"
    assert rt.readme_with_headline(text, "new") == (
        f"a\n{rt.HEADLINE_START}\nnew\n{rt.HEADLINE_END}\nb\n")


@pytest.mark.parametrize("model, cores, slug_", [
    ("Intel(R) Xeon(R) Processor", 2, "intel-xeon-2c"),
    ("AMD EPYC 7B13", 2, "amd-epyc-7b13-2c"),
    ("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", 12, "intel-core-i7-8700-12c"),
    (None, 4, "unknown-cpu-4c"),
])
def test_machine_slug(model, cores, slug_):
    assert rt.machine_slug(Env({"host": {"cpu_model": model, "cores": cores}})) == slug_


def _claim_groups(num_values, den_values):
    """summary.csv groups for the claim 'tokio slower than Go (10k producers, B = 1)'."""
    claim = next(c for c in claims.CLAIMS if c.text.startswith("tokio slower than Go")
                 and "B = 1)" in c.text)
    rows = [Row(impl=side.impl, workload=side.workload, n=side.n, buffer=side.buffer, rep=rep,
                status="ok", **{side.metric: value})
            for side, values in ((claim.num, num_values), (claim.den, den_values))
            for rep, value in enumerate(values, 1)]
    return claim, {g.key: g for g in group_runs(rows)}


@pytest.mark.parametrize("num,den,verdict", [
    ([2.0, 2.02, 1.98, 2.01], [1.0, 1.01, 0.99, 1.005], "holds"),  # 2x, tight, 4 a side: 97%
    ([0.5, 0.51, 0.49, 0.505], [1.0, 1.01, 0.99, 1.005], "does not hold"),
    ([1.2, 0.8, 1.5, 0.7], [1.0, 1.3, 0.75, 1.1],
     "not settled: the interval holds 1× and reaches past ±5%"),
    ([2.0, 2.02, 1.98], [1.0, 1.01, 0.99], "not settled: too few runs for 95% (the interval is 90%)"),
    ([2.0], [1.0, 1.01], "not settled: one run has no interval"),
])
def test_a_claim_is_judged_by_its_ratio_interval(num, den, verdict) -> None:
    claim, groups = _claim_groups(num, den)
    text, said = claims.judge(claim, groups)
    assert said == verdict, text
    assert ("[" in text) == (len(num) > 1)


def test_the_settled_line_escapes_names_from_env_json():
    """The unjudged workloads the line names come from env.json's settings:
    a run someone sent must not put markup into a published page."""
    run = rt.load_page(RESULTS, rt.headline_page(RESULTS))
    run.env.settings = dict(run.env.settings, parts=[
        {"workloads": ["<img src=x onerror=alert(1)>"], "ns": [1], "judged": False}])
    line = rt.settled_line(run)
    assert "<img" not in line.replace("\\<img", "") and "\\<img" in line
