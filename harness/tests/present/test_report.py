"""report.md, summary.csv and results.json from the committed fixture."""

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from harness.core.schema import Env, Row
from harness.present import outline, outputs, report

FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("report") / "run"
    shutil.copytree(FIXTURE, run)
    assert outputs.write_report(run) == run / "report.md"
    return run


def test_files_exist(run):
    for name in ("report.md", "summary.csv", "results.json"):
        assert (run / name).stat().st_size > 0


def test_report_sections_and_embedded_plots(run):
    text = (run / "report.md").read_text()
    for heading in ("## Environment", "## Warnings", "## sleep", "## chain", "## bounded",
                    "## RSS over time"):
        assert heading in text
    assert "bench-box: AMD EPYC 7B13, 2 cores, 24 GiB RAM" in text
    embedded = re.findall(r"!\[[^\]]*\]\((plots/[^)]+\.png)\)", text)
    assert len(embedded) == 9 and embedded[0] == "plots/summary.png"  # at a glance, first
    for rel in embedded:
        assert (run / rel).is_file(), rel


def test_failures_and_noise_are_visible(run):
    text = (run / "report.md").read_text()
    assert "- node sleep N=1000000: 3 oom — peak RSS passed --max-rss 1.0 GiB." in text
    assert "rust-tokio chain N=1000000: 2 ok, 1 crashed" in text
    assert "csharp: skipped (dotnet: command not found)." in text
    assert "- chain: 1 outlier runs, kept: go N=20000 rep 3: cold iteration 30 ms (median 10.2 ms)." in text
    # Noise is listed for the figures a workload is read for (sleep: memory),
    # one line per workload; other noisy cells carry ⚠ in the tables.
    # cold 10, 10.2 and 30 ms: the 3 runs' interval is [10, 30] (75%), reaching 194% over the median
    assert ("- chain: 1 of 8 groups are noisy (confidence interval reaching over 10% from the "
            "median): go N=20000 (cold iteration ±194%).") in text
    assert "CPU time ±33%" not in text
    # the oom group is a table row with its status, not a missing row
    assert re.search(r"\| 1000000 \| node \| \*\*3 oom\*\* \| — \|", text)
    # the interval and the noisy mark: rust-tokio bounded N=10000 buffer=1, warm 10, 12, 15 ms;
    # three runs give [min, max] at 75%, said so, never called 95%
    assert "12 ms [10 ms, 15 ms] (75%) ⚠" in text
    assert "±" not in text.split("## sleep")[1]  # no stdev left in the tables


def test_ratios_to_best(run):
    text = (run / "report.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 5000 | go |"))
    # warm 742, 750, 758 µs against rust-tokio's 594, 600, 606 µs: the median of
    # the 9 pairwise ratios, between the smallest and the largest at 90% (3 a side)
    assert "1.25× [1.23, 1.28] (90%)" in row
    best = next(line for line in text.splitlines() if line.startswith("| 5000 | rust-tokio |"))
    assert "1.00× (no settled winner)" in best and "**1.00×**" not in text


def test_summary_csv(run):
    with (run / "summary.csv").open() as f:
        rows = {(r["impl"], r["workload"], r["n"], r["buffer"]): r for r in csv.DictReader(f)}
    go = rows[("go", "sleep", "10000", "")]
    assert (go["runs"], go["ok"], go["statuses"]) == ("3", "3", "3 ok")
    assert float(go["peak_rss_bytes_median"]) == 31e6
    assert float(go["peak_rss_bytes_stdev"]) == pytest.approx(1e6)
    assert float(go["mem_per_task_bytes"]) == pytest.approx(29e6 / 9999)
    assert go["noisy"] == "cpu_s"
    oom = rows[("node", "sleep", "1000000", "")]
    assert (oom["ok"], oom["statuses"], oom["peak_rss_bytes_median"]) == ("0", "3 oom", "")


def test_results_json_keeps_raw_rows(run):
    data = json.loads((run / "results.json").read_text())
    assert data["env"]["run_id"] == "20250101T120000Z"
    assert len(data["runs"]) == 120
    flagged = [(r["impl"], r["workload"], r["n"], r["rep"]) for r in data["runs"] if r["outliers"]]
    assert flagged == [("go", "chain", 20000, 3)]
    group = next(g for g in data["groups"]
                 if (g["impl"], g["workload"], g["n"]) == ("node", "sleep", 1000000))
    assert group["status_counts"] == {"oom": 3} and group["metrics"] == {}


def test_report_without_drawing(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    outputs.write_report(run, draw=False)
    assert not (run / "plots").exists()
    assert "![" not in (run / "report.md").read_text()


def _edited_fixture(tmp_path: Path, edit) -> Path:
    """The fixture with its rows changed by edit(rows) and env.json kept."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    with (run / "runs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0]) + ["other_cpu_frac"]
    edit(rows)
    with (run / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, header, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return run


def test_loaded_rows_are_flagged_next_to_the_figure(tmp_path):
    def edit(rows):
        for r in rows:
            if (r["impl"], r["workload"], r["n"], r["rep"]) == ("go", "chain", "5000", "2"):
                r["other_cpu_frac"] = "0.5"
    run = _edited_fixture(tmp_path, edit)
    text = outputs.write_report(run, draw=False).read_text()
    assert "1 of " in text and "ran under load" in text and "50% during go chain N=5000 rep 2" in text
    [line] = [x for x in text.splitlines() if x.startswith("| 5000 | go |")]
    assert "(1 under load)" in line


def test_one_run_is_never_a_winner_and_says_it_has_no_interval(tmp_path):
    run = _edited_fixture(tmp_path, lambda rows: rows.__setitem__(
        slice(None), [r for r in rows if r["rep"] == "1"]))
    text = outputs.write_report(run, draw=False).read_text()
    table = [x for x in text.splitlines() if x.startswith("| 5000 |")]
    assert table and all("(1 run, no interval)" in x for x in table)
    assert "1.25× (no interval)" in next(x for x in table if "| go |" in x)
    assert "**1.00×**" not in text and "1.00× (no settled winner)" in text


def test_a_quick_run_reads_as_a_check(tmp_path):
    """The quick suite's report says it is a check, leads with the check's
    result (failures with their command) and ranks nothing."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    env = json.loads((run / "env.json").read_text())
    env.setdefault("settings", {})["suite"] = "quick"
    (run / "env.json").write_text(json.dumps(env))
    text = outputs.write_report(run, draw=False).read_text()
    assert "This is a check, not a measurement" in text.split("## Environment")[0]
    first = text.split("## Verdicts")[1].split("\n## ")[0]
    assert first.lstrip().startswith("**Check: 107 ok, 1 crashed, 3 invalid, 3 oom, 3 skipped, "
                                     "3 timeout: 4 configurations failed.**"), first
    assert "- node sleep N=1000000: 3 oom, `node node/bench.mjs sleep --n 1000000`" in first
    assert "- rust-tokio chain N=1000000: 1 crashed, `" in first
    assert "Verdicts settled" not in text and "| workload | figure |" not in first
    html = (run / "report.html").read_text()
    assert "Check: 107 ok" in html and "table-verdicts" not in html
    assert "while others still compiled" not in text + html


def test_a_check_whose_runs_overlapped_its_builds_says_so(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    env = json.loads((run / "env.json").read_text())
    env.setdefault("settings", {}).update(suite="quick", overlap_builds=True)
    (run / "env.json").write_text(json.dumps(env))
    text = outputs.write_report(run, draw=False).read_text()
    banner = text.split("## Verdicts")[0]
    assert "> Its runs started as soon as their language was built, while others still " \
           "compiled: on a busy machine." in banner
    assert "while others still compiled: on a busy machine." in \
        (run / "report.html").read_text().split('id="verdicts"')[0]


def test_floor_column_reads_each_figure_as_a_multiple_of_the_floor(tmp_path):
    from harness.analyse.analysis import analyse
    from harness.record.rundir import RunDir
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    plain = (outputs.write_report(run)).read_text()
    assert "×floor" not in plain.split("## How to read")[1].split("## sleep")[1]  # no floor: no column
    env = json.loads((run / "env.json").read_text())
    env["floor_impls"] = ["go"]
    (run / "env.json").write_text(json.dumps(env))
    results = analyse(RunDir(run))
    chain = {g.impl: g for g in results.groups if g.workload == "chain" and g.n == 5000}
    assert results.ranks[chain["go"].key]["floor"] == 1.0
    other = chain["rust-tokio"]
    assert results.ranks[other.key]["floor"] == pytest.approx(
        other.median("warm_iter_s") / chain["go"].median("warm_iter_s"))
    sleep = [g for g in results.groups if g.workload == "sleep" and g.impl == "go"
             and g.mem_per_task_bytes]
    assert sleep and all(results.ranks[g.key]["floor"] == 1.0 for g in sleep)
    text = outputs.write_report(run).read_text()
    assert "| ×floor |" in text.split("## chain")[1].split("\n\n")[1]


MIB = 1 << 20


def synthetic_run(tmp_path: Path, until_ci: float | None = None) -> Path:
    """A run directory of known answers, not timings: chain N=1000 where
    "slow" takes exactly twice "fast"'s times (6 runs each, both settled),
    "lone" has one ok run at N=2000 beside "slow" (6 runs); sleep where "flat"'s memory grows under 1 MiB
    (below resolution) and "grows" by 6 MiB, both over 6 runs."""
    run = tmp_path / "synthetic"
    run.mkdir(parents=True)
    env = json.loads((FIXTURE / "env.json").read_text())
    if until_ci is not None:
        env["settings"]["until_ci"] = until_ci
    (run / "env.json").write_text(json.dumps(env))
    header = (FIXTURE / "runs.csv").read_text().splitlines()[0].split(",")
    fast = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00]
    rows = []

    def add(impl, workload, n, rep, **figures):
        rows.append({"run_id": "synthetic", "impl": impl, "language": impl, "runtime": impl,
                     "workload": workload, "n": n, "rep": rep, "status": "ok", "exit_code": 0,
                     "wall_s": 1.0, "cpu_user_s": 0.5, "cpu_sys_s": 0.0, **figures})
    for rep, t in enumerate(fast, 1):
        add("fast", "chain", 1000, rep, first_iter_s=t / 1000, warm_iter_s=t / 1000,
            peak_rss_bytes=int(10 * MIB * t))
        add("slow", "chain", 1000, rep, first_iter_s=2 * t / 1000, warm_iter_s=2 * t / 1000,
            peak_rss_bytes=int(10 * MIB * t))
        for n, grows in ((1000, 0), (101000, 6 * MIB)):
            add("flat", "sleep", n, rep, first_iter_s=1.0, peak_rss_bytes=20 * MIB + n + rep)
            add("grows", "sleep", n, rep, first_iter_s=1.0,
                peak_rss_bytes=20 * MIB + grows + 1000 * rep)
        add("slow", "chain", 2000, rep, first_iter_s=2 * t / 1000, warm_iter_s=2 * t / 1000,
            peak_rss_bytes=int(10 * MIB * t))
    add("lone", "chain", 2000, 1, first_iter_s=0.003, warm_iter_s=0.003, peak_rss_bytes=30 * MIB)
    with (run / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, header, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return run


def _row(text: str, section: str, impl: str, n: int = 1000) -> str:
    table = text.split(f"## {section}")[1]
    return next(x for x in table.splitlines() if x.startswith(f"| {n} | {impl} |"))


def test_intervals_in_the_report_cells(tmp_path):
    text = outputs.write_report(synthetic_run(tmp_path), draw=False).read_text()
    fast, slow = (_row(text, "chain", impl) for impl in ("fast", "slow"))
    lone = _row(text, "chain", "lone", 2000)
    # one ok run: its figures say so, and its ratio has no interval
    assert "3 ms (1 run, no interval)" in lone and "1.50× (no interval)" in lone
    # ... so the 6-run group it is compared with is no settled winner
    assert "1.00× (no settled winner)" in _row(text, "chain", "slow", 2000)
    # six runs: [min, max] at 96.9%, settled, so no confidence is printed after it
    assert "1 ms [980 µs, 1.02 ms] |" in fast
    # ×best: the settled best is in bold; slow's ratio is 2 exactly, settled
    assert "**1.00×**" in fast
    assert "2.00× [1.96, 2.04] |" in slow  # the pairwise ratios of 6 runs a side, 95.9%
    assert "1.00× [0.98, 1.02] |" in slow  # ×best RSS: the same memory
    # the same RSS on both: no winner is settled for ×best RSS
    assert "1.00× (no settled winner)" in fast


def test_memory_per_task_below_resolution_says_so_in_the_report(tmp_path):
    text = outputs.write_report(synthetic_run(tmp_path), draw=False).read_text()
    flat, grows = _row(text, "sleep", "flat", 101000), _row(text, "sleep", "grows", 101000)
    assert "| below resolution |" in flat
    # 6 MiB over 100,000 tasks; two medians at 96.9% each: 93.8%, shown as such
    assert "63 B [63 B, 63 B] (94%)" in grows
    assert "below resolution" in text.split("## How to read")[1].split("## Warnings")[0]


def test_how_to_read_explains_the_intervals_and_links_the_statistics_page(run):
    how = (run / "report.md").read_text().split("## How to read")[1].split("## Warnings")[0]
    assert "[docs/statistics.md](../../docs/statistics.md)" in how
    assert "95% confidence interval" in how and "not settled" in how
    assert "6\nare needed for a median" in how or "6 are needed for a median" in how.replace("\n", " ")
    assert "standard deviation" not in how


def test_until_ci_is_checked_only_when_the_run_set_it(tmp_path):
    plain = outputs.write_report(synthetic_run(tmp_path), draw=False).read_text()
    assert "--until-ci" not in plain
    text = outputs.write_report(synthetic_run(tmp_path / "ci", until_ci=0.01), draw=False).read_text()
    warnings = text.split("## Warnings")[1].split("\n## ")[0]
    # fast and slow reach 2% (over 1%); lone has one run
    assert "chain: 4 of 4 groups did not reach the run's --until-ci 1%" in warnings
    assert "lone N=2000 (cold iteration: 1 run, no interval" in warnings


# -- point 2: verdicts, legend, ×floor ------------------------------------------

def _groups(rows):
    from harness.analyse.analysis import group_runs
    return group_runs(rows)


def _rows(impl, workload, n, times=None, rss=None, status="ok", error=""):
    """One row per value: warm = cold = the time; peak RSS given or 10 MiB."""
    out = []
    for rep, t in enumerate(times or [None], 1):
        r = Row(impl=impl, workload=workload, n=n, buffer=None, rep=rep, status=status,
                error=error, language=impl, runtime=f"{impl} 1.0")
        if status == "ok":
            r.first_iter_s = r.warm_iter_s = t
            r.peak_rss_bytes = rss[rep - 1] if rss else 10 * MIB
        out.append(r)
    return out


def _headlines(rows):
    from harness.analyse import standings, verdicts
    groups = _groups(rows)
    return {h.metric: h for h in verdicts.headlines(groups, standings.standings(groups))}


def test_the_first_screen_row_of_a_settled_lead():
    fast = [1.00, 1.01, 0.99, 1.02]
    rows = _rows("fast", "chain", 1000, [t / 1000 for t in fast]) \
        + _rows("slow", "chain", 1000, [2 * t / 1000 for t in fast]) \
        + _rows("slower", "chain", 1000, [3 * t / 1000 for t in fast])
    warm = _headlines(rows)["warm_iter_s"]
    # 4 runs a side: the ratio reaches 95%, wholly above 1, within the run's family
    assert (warm.leader.impl, warm.runner.impl, warm.word) == ("fast", "slow", "leads")
    cells = report.headline_cells(warm)
    assert cells == ["chain", "warm iteration", "N = 1k",
                     "fast 1.01 ms [990 µs, 1.02 ms] (88%)", "slow",
                     "2.00× [1.94, 2.06]", "leads", "4 and 4"]
    # equal peak RSS: level within its 2%
    assert _headlines(rows)["peak_rss_bytes"].word == "level"


def test_the_first_screen_says_why_a_lead_is_not_settled():
    rows = _rows("a", "chain", 1000, [0.001, 0.00101, 0.00099]) \
        + _rows("b", "chain", 1000, [0.0011, 0.00111, 0.00109])
    warm = _headlines(rows)["warm_iter_s"]
    assert warm.word == "not settled" and warm.why.startswith("too few runs (3 and 3")
    one = _headlines(_rows("a", "chain", 1000, [0.001]) + _rows("b", "chain", 1000, [0.002]))
    assert one["warm_iter_s"].word == "not settled"
    assert report.headline_cells(one["warm_iter_s"])[5] == "2.00× (no interval)"


def test_failures_are_named_with_their_reason_and_the_row_is_at_the_largest_contested_n():
    from harness.analyse import verdicts
    rows = _rows("a", "chain", 1000, [0.001, 0.001]) + _rows("b", "chain", 1000, [0.002, 0.002]) \
        + _rows("a", "chain", 1000000, [0.5, 0.5]) \
        + _rows("b", "chain", 1000000, [1, 2], status="crashed",
                error="exit 1: error: 1000000 platform threads cannot be alive at once") \
        + _rows("c", "chain", 1000, status="skipped", error="c: command not found")
    assert verdicts.failures(_groups(rows)) == ["c: did not run (c: command not found)",
                                                "b: crashed at N = 1M (thread limit)"]
    assert _headlines(rows)["warm_iter_s"].where == "N = 1k"


def test_report_opens_with_verdicts_and_a_legend(tmp_path):
    text = outputs.write_report(synthetic_run(tmp_path), draw=False).read_text()
    assert text.index("## Verdicts") < text.index("## Environment") < text.index("## chain")
    # the first screen: a table row per headline figure, at the largest N two reached
    first = text.split("## Verdicts")[1].split("\n## ")[0]
    assert first.index("Verdicts settled, each family") < first.index("| workload | figure | at |")
    assert "| [chain](#" in first and "| N = 2k | slow " in first
    # one row per configuration, no runtime column; the legend gives it once
    header = next(x for x in text.split("## chain")[1].splitlines() if x.startswith("| N |"))
    assert "runtime" not in header
    legend = text.split("## Implementations")[1].split("\n## ")[0]
    assert "| impl | language | runtime | flags |" in legend
    assert legend.count("| fast | fast | fast | — |") == 1
    assert "e+0" not in text


def test_floor_column_hidden_where_the_floor_is_best(tmp_path):
    from harness.analyse import analysis
    from harness.record.rundir import RunDir
    run = synthetic_run(tmp_path)
    env = json.loads((run / "env.json").read_text())
    env["floor_impls"] = ["fast"]  # the fastest everywhere it ran: ×floor would repeat ×best
    (run / "env.json").write_text(json.dumps(env))
    text = outputs.write_report(run, draw=False).read_text()
    assert "×floor" not in text.split("## chain")[1].split("\n## ")[0]
    env["floor_impls"] = ["slow"]  # not the best at N=1000: shown there, empty at N=2000
    (run / "env.json").write_text(json.dumps(env))
    results = analysis.analyse(RunDir(run))
    table = report.build_table("chain", [g for g in results.groups if g.workload == "chain"],
                               results.ranks)
    col = table.header.index("×floor")
    cells = {(g.impl, g.n): row[col][0] for g, row in zip(table.groups, table.rows)}
    assert cells[("fast", 1000)].startswith("0.50×") and cells[("slow", 1000)] == "1.00×"
    assert cells[("lone", 2000)] == ""  # slow, the floor, is the best at N=2000


def test_a_skip_by_design_is_a_note_not_a_warning(tmp_path):
    from harness.analyse.analysis import group_runs
    rows = _rows("a", "chain", 1000, [0.001]) + _rows("a", "chain", 2000, status="skipped",
                                                      error="this server has no 'x' style")
    from harness.analyse.analysis import design_notes, warnings
    groups = group_runs(rows)
    notes = design_notes(groups)
    assert len(notes) == 1 and notes[0].startswith("a has no chain")
    assert not [w for w in warnings(groups, Env()) if "skipped" in w]
    # a language that never ran at all is still a warning
    lost = group_runs(_rows("b", "chain", 1000, status="skipped", error="toolchain missing"))
    assert design_notes(lost) == [] and any(w.startswith("b: skipped") for w in warnings(lost, Env()))


def test_numbers_never_read_in_exponent_form():
    from harness.core.formatting import fmt_bytes, fmt_count, fmt_seconds, fmt_value
    assert fmt_seconds(0.9996) == "1 s" and fmt_seconds(0.0009996) == "1 ms"
    assert fmt_seconds(1234.5) == "1,234 s" and fmt_seconds(812e-6) == "812 µs"
    assert fmt_bytes(1023.9 * 1024) == "1 MiB" and fmt_bytes(1023.6) == "1 KiB"
    assert fmt_value("count", 999.7) == "1,000"
    assert (fmt_count(1_000_000), fmt_count(20_000), fmt_count(12_345)) == ("1M", "20k", "12,345")


def test_report_prints_report_html_last(tmp_path) -> None:
    """./run.sh ends with `harness report`'s output: its last line is the
    self-contained page to open."""
    import shutil
    from pathlib import Path

    from ..conftest import harness
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "formats" / "v2", run)
    proc = harness("report", str(run))
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("report: ") and last.endswith("report.html")
    assert (run / "report.html").stat().st_size > 1000


# What must never act in report.md: control characters (a terminal obeys
# ESC; a newline ends a table row), line separators and bidirectional overrides.
ACTING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _cells(line: str) -> int:
    """A table row's cell count as GitHub reads it: its pipes, not counting
    one escaped by a backslash (which itself may be escaped)."""
    count, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        count += line[i] == "|"
        i += 1
    return count - 1


def test_markup_and_control_characters_in_the_data_stay_text_in_report_md(tmp_path):
    """Markup, `|`, newlines, ESC and other control characters in every text
    field of a run directory (registry names, runtime strings, variant
    values, versions, host name, toolchains, errors) leave report.md's tables
    whole, open no HTML, link or emphasis, and reach no terminal raw."""
    from ..present.test_report_html import plant_run

    def mark(field: str) -> str:
        return (f"{field}:<img src=x onerror=alert(1)> | a\nb\r\x1b[2J\x07\x85\u202e "
                f"*em* _em_ `code` [link](javascript:alert(1)) ~~s~~ $x$ &amp; \\| # end")
    run = tmp_path / "run"
    shown = plant_run(run, mark)
    text = outputs.write_report(run, draw=False).read_bytes().decode()  # a raw \r stays one
    assert not ACTING.search(text), ACTING.search(text)
    # every table (a run of lines starting with |) keeps its header's cell count
    tables = re.findall(r"(?m)(?:^\|.*\n)+", text)
    assert len(tables) >= 5
    for table in tables:
        header, *rows = table.splitlines()
        assert all(_cells(row) == _cells(header) for row in rows), table
    # no markup of the data opens: every <, [, *, _, `, ~, $, & of it is escaped
    for opened in (r"(?<!\\)<img", r"(?<!\\)\]\(javascript", r"(?<!\\)\*em", r"(?<!\\)_em",
                   r"(?<!\\)`code", r"(?<!\\)~~s", r"(?<!\\)\$x", r"(?<!\\)&amp;"):
        assert not re.search(opened, text), opened
    # and the text reads as it was, its control characters shown as pictures
    plain = re.sub(r"\\(.)", r"\1", text)
    for value in (shown["hostname"], shown["runtime"], shown["release"],
                  shown["variant value"]):
        assert value.replace("\n", "␊").replace("\r", "␍").replace("\x1b", "␛") \
            .replace("\x07", "␇").replace("\x85", "\\u0085").replace("\u202e", "\\u202e") in plain


def test_the_verdicts_are_decided_once_for_both_reports(tmp_path, monkeypatch):
    """publish decides the run's standings and questions once and hands them
    to report.md and report.html, which then show the same verdicts."""
    import html
    from harness.analyse import questions, ranks, standings
    calls = []
    decide, ask, place = standings.standings, questions.ask, ranks.all_rank_intervals
    monkeypatch.setattr(standings, "standings", lambda *a, **k: calls.append(1) or decide(*a, **k))
    monkeypatch.setattr(questions, "ask", lambda *a, **k: calls.append(2) or ask(*a, **k))
    monkeypatch.setattr(ranks, "all_rank_intervals",
                        lambda *a, **k: calls.append(3) or place(*a, **k))
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    outputs.write_report(run, draw=False)
    assert calls == [1, 2, 3]
    summary = re.search(r"\*\*(Verdicts settled, [^*]+)\*\*", (run / "report.md").read_text())
    rankings = summary.group(1).split(":")[1].split(";")[0]
    assert summary and html.escape(rankings) in (run / "report.html").read_text()


# -- issue 64: the headline rankings first ------------------------------------

def _headline_run() -> tuple[list, Env]:
    """chain at N = 1M, the articles' size: fast, mid and slow 2× apart at 5
    runs each, the floor ahead of them, 'twin' bimodal (3 runs at 4 ms, 2 at
    9 ms) and 'cut' killed at our time limit on every run."""
    base = [1.00, 1.01, 0.99, 1.02, 1.005]
    rows = _rows("fast", "chain", 1_000_000, [t / 1000 for t in base]) \
        + _rows("mid", "chain", 1_000_000, [2 * t / 1000 for t in base]) \
        + _rows("slow", "chain", 1_000_000, [8 * t / 1000 for t in base]) \
        + _rows("floor", "chain", 1_000_000, [t / 2000 for t in base]) \
        + _rows("twin", "chain", 1_000_000, [0.004, 0.00401, 0.00399, 0.009, 0.00902]) \
        + _rows("cut", "chain", 1_000_000, [None, None], status="timeout",
                error="no exit within 90 s; process tree killed")
    return _groups(rows), Env({"floor_impls": ["floor"], "settings": {"suite": "default"}})


def test_the_first_table_places_every_runtime_with_its_joint_interval():
    groups, env = _headline_run()
    placed = report.headline_places(groups, env)
    warm = next(r for r in placed if r.metric == "warm_iter_s")
    assert [p.impl for p in warm.places] == ["fast", "mid", "twin", "slow"]  # the floor beside
    rows = report.place_rows([warm])
    assert rows[0][:5] == ["chain, N = 1M: warm iteration", "fast",
                           f"{warm.places[0].text} of 4", rows[0][3], "yes"]
    assert rows[0][3].startswith("1 (1st")
    assert rows[1][6].startswith("2.00× [")  # mid over fast, with its interval
    assert rows[0][7] == "2.00×"  # ×floor stays a column
    assert all(" of 4" in row[2] for row in rows)


def test_two_modes_are_shown_and_the_verdicts_on_them_say_so():
    groups, env = _headline_run()
    warm = next(r for r in report.headline_places(groups, env) if r.metric == "warm_iter_s")
    rows = {row[1]: row for row in report.place_rows([warm])}
    assert "two modes: 3 runs at 4 ms (60%), 2 at 9.01 ms (40%)" in rows["twin"][5]
    assert "rests on two modes (twin)" in rows["twin"][6]
    assert "rests on two modes (twin)" in rows["slow"][6]  # the pair below rests on it too
    assert "two modes" not in rows["mid"][6]
    block = "\n".join(report.places_block([warm], groups=groups))
    assert ("- twin, chain N = 1M, warm iteration: two modes: 3 runs at 4 ms (60%), 2 at "
            "9.01 ms (40%)") in block
    # the rankings' tiers and the vs-leader standings say so too
    from harness.analyse import questions, standings
    tiers = {row[2]: row[3] for row in report.ranking_rows(questions.ask(groups, ["floor"]))}
    assert tiers["warm iteration"].endswith("; rests on two modes (twin)")
    assert any("rests on two modes (twin)" in row[6]
               for row in report.standings_rows(standings.standings(groups)))


def test_a_run_cut_by_our_limit_is_named_as_such():
    groups, env = _headline_run()
    placed = report.headline_places(groups, env)
    block = "\n".join(report.places_block(placed, groups=groups))
    assert ("- chain, N = 1M: warm iteration: cut has no place: 2 cut by our time limit "
            "(90 s).") in block
    cut = next(g for g in groups if g.impl == "cut")
    assert report.cut_by_limit(cut) == "2 cut by our time limit (90 s)"


def test_report_md_opens_with_the_headline_rankings(tmp_path):
    """The first table of report.md is the rankings' places, before the
    claims, the tiers and the floor's leaders table."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    text = outputs.write_report(run, draw=False).read_text()
    first = next(line for line in text.splitlines() if line.startswith("| "))
    assert first == "| " + " | ".join(report.PLACES_HEADER) + " |"
    assert (text.index(outline.PLACES.title) < text.index("### Rankings\n")
            < text.index(outline.LEADERS.title) < text.index("## Environment"))
