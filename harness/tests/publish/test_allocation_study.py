"""docs/studies/allocation.md's figures are recomputed here, so that they
cannot drift from the data: its table of the default runs of 2026-11-28 and
2026-11-29 from the rows committed beside it (and beside the published
pages), its table of what the targets would cost from replays of those rows
(replay.py, seeded: about 80 s), with the allocation of those runs
(sequential.BEFORE); its table of the headline-first allocation beside it."""

from __future__ import annotations

import functools
import math
import re
import statistics
from pathlib import Path

from scipy.stats import binomtest

from harness.analyse.analysis import group_runs
from harness.core.schema import ConfigKey
from harness.present.report import ask_run
from harness.record.rundir import read_env, read_runs
from harness.sequential import BEFORE, Allocation, spent_before

from ..conftest import ROOT

STUDY = ROOT / "docs" / "studies" / "allocation.md"
RUNS = {"morning": ROOT / "docs" / "results" / "2026-11-28-intel-xeon-2c",
        "evening": ROOT / "docs" / "studies" / "allocation" / "20261128-190332",
        "night": ROOT / "docs" / "studies" / "allocation" / "20261128-221945",
        "next day": ROOT / "docs" / "results" / "2026-11-29-amd-epyc-2c",
        "next afternoon": ROOT / "docs" / "results" / "2026-11-29-amd-epyc-2c-afternoon"}


def _row(label: str) -> list[str]:
    found = re.search(rf"^\| {re.escape(label)} \|(.+)\|$", STUDY.read_text(), re.M)
    assert found, f"allocation.md has no row {label!r}: reword this test with it"
    return [cell.strip() for cell in found[1].split("|")]


def test_the_runs_table_is_the_committed_rows() -> None:
    minimum, runs, pairs, top, claims, goals, shares = [], [], [], [], [], [], []
    for folder in RUNS.values():
        rows = read_runs(folder / "runs.csv").rows
        minimum.append(f"{spent_before(r for r in rows if r.rep == 1):,.0f} s")
        runs.append(f"{len(rows):,}")
        families = {name: f"{settled} of {total}" for name, settled, total in
                    ask_run(group_runs(rows), read_env(folder / "env.json")).families()}
        pairs.append(families["rankings"])
        top.append(families["headline rankings"])
        settled, total = (int(n) for n in families["rankings"].split(" of "))
        shares.append(round(100 * settled / total))
        claims.append(families["claims"])
        goals.append(families["goals"])
    assert _row("runs in the 45 minutes") == runs
    # the pages' own counts, from the verdicts of their day, are history:
    # the rows are read again with today's
    assert _row("neighbour pairs settled, read today (10%/5% margins, a variance borrowed "
                "below 5 runs a side)") == pairs
    assert _row("of them in the headline rankings, read today") == top
    assert _row("claims settled") == claims
    assert _row("goals settled") == goals
    statistics_md = " ".join((ROOT / "docs" / "statistics.md").read_text().split())
    words = {5: "five", 6: "six", 7: "seven"}  # reword statistics.md as runs are added
    assert (f"Measured on {words[len(RUNS)]} real default runs, read with today's "
            f"verdicts, the allocation before this one settled {min(shares)}–{max(shares)}% "
            "of the neighbour pairs") in statistics_md
    assert [cell.removesuffix(" of runs") for cell in
            _row("the minimum, one run of each configuration (248; from the night on, 252)")
            ] == minimum


def test_the_javascript_runs_at_10_producers_are_the_rows() -> None:
    """The last section: bounded at 10 producers on a JavaScript runtime took
    5-9 s a run the night before, under a second without the collection."""
    def walls(label: str) -> list[float]:
        return [r.wall_s for r in read_runs(RUNS[label] / "runs.csv").rows
                if r.workload == "bounded" and r.n == 10 and r.status == "ok"
                and r.impl in ("nodejs", "bun", "deno") and r.wall_s is not None]
    night, next_day = walls("night"), walls("next day")
    assert 5 <= min(night) and max(night) <= 9, (min(night), max(night))
    assert max(next_day) < 1, max(next_day)
    assert "JavaScript runtime had taken 5–9 s" in " ".join(STUDY.read_text().split())


def test_the_afternoon_sections_figures_are_the_rows() -> None:
    """The last section's figures: the start growth, the minimum's sleeps,
    what the rule saves on the morning's starts, the sleeps at 1M, the
    machine's speed against the morning's and the goals on their bounds."""
    import statistics

    from harness.core.workloads import adaptive_sleep_ms
    from harness.plan.plan import first_start_s
    from harness.publish import figures

    text = " ".join(STUDY.read_text().split())
    growth = figures.start_growth(ROOT)
    assert f"growing up to {growth.split(' times')[0]} times faster" in text
    study = read_runs(ROOT / figures.START_RUNS / "20261129-153100" / "runs.csv").rows
    assert len(study) == 72 and {r.status for r in study} == {"ok"}
    assert "72 runs, all ok" in text

    morning = read_runs(RUNS["next day"] / "runs.csv").rows
    afternoon = read_runs(RUNS["next afternoon"] / "runs.csv").rows

    def walls(rows, **match) -> float:
        return sum(r.wall_s or 0 for r in rows if r.workload == "sleep"
                   and all(getattr(r, k) == v for k, v in match.items()))
    assert (f"its sleeps {walls(afternoon, rep=1):.0f} s against "
            f"{walls(morning, rep=1):.0f} s") in text
    assert (f"({walls(afternoon, n=1_000_000):.0f} s of runs against "
            f"{walls(morning, n=1_000_000):.0f} s)") in text

    # the first-sleep rule on the morning's start times: the sleep it saves
    known = {}
    for r in morning:
        if r.workload == "sleep" and r.status == "ok" and r.spawn_s:
            key = ConfigKey.of(r)
            known[key] = max(known.get(key, 0.0), r.spawn_s)
    ceiling = {10_000: 5000, 100_000: 5000, 1_000_000: 10_000}
    saved = sum(ceiling[k.n] - adaptive_sleep_ms(ceiling[k.n], first_start_s(k, known.items()))
                for k in known if k.n in ceiling) / 1000
    assert f"{saved:.0f} s off its minimum of 1,577 s" in text

    def fastest(rows):
        out = {}
        for r in rows:
            if r.status == "ok" and r.workload not in ("sleep", "http") and r.first_iter_s:
                out[ConfigKey.of(r)] = min(out.get(ConfigKey.of(r), r.first_iter_s), r.first_iter_s)
        return out
    early, late = fastest(morning), fastest(afternoon)
    ratios = [late[k] / early[k] for k in early if k in late]
    q1, median, q3 = statistics.quantiles(ratios, n=4)
    assert (f"over the {len(ratios)} configurations both ran (the sleeps and http aside), "
            f"the fastest cold iteration took a median {median:.2f} times the morning's "
            f"(quartiles {q1:.2f} and {q3:.2f})") in text

    jv = [round(r.peak_rss_bytes / 2**20) for r in afternoon if (r.impl, r.workload, r.n, r.status)
          == ("java-virtual", "sleep", 1_000_000, "ok")]
    assert f"spread {min(jv):,}-{max(jv):,} MiB over its {len(jv)} runs" in text


@functools.cache
def _replay_module():
    """docs/studies/allocation/replay.py, a script beside the study, loaded by path."""
    import importlib.util
    import sys

    path = ROOT / "docs" / "studies" / "allocation" / "replay.py"
    spec = importlib.util.spec_from_file_location("allocation_replay", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@functools.cache
def _replay(source: Path, budget_s: float, repeat: int, max_repeat: int | None, seed: int,
            allocation: Allocation):
    """replay.replay, once per arguments: a replay is seeded (the same
    arguments draw the same runs), and two tables quote the 90-minute run's
    replay at 45 minutes with the allocation before."""
    return _replay_module().replay(source, budget_s, repeat, max_repeat, seed, allocation)


def _hours(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def test_the_targets_cost_table_is_replayed() -> None:
    """The last section's table: each row replayed on the afternoon run's
    rows (seeds 0 and 1), every cell recomputed; the replay is a fake
    executor with seeded draws, so its figures are exact, not noisy."""
    from harness.plan.settings import duration

    section = STUDY.read_text().split("## What the targets would cost here")[1]
    rows = re.findall(r"^\| (\d+ (?:min|h))[^|]* \| (\d+) \|(.+)\|$", section, re.M)
    assert len(rows) == 6, rows
    settled: dict[tuple[str, int], list[int]] = {}
    for budget, ceiling, cells in rows:
        pairs, claims, used = [], [], []
        for seed in (0, 1):
            seconds = duration(budget.replace(" min", "m").replace(" h", "h"), "--budget")
            got = _replay(RUNS["next afternoon"], seconds, 1, int(ceiling), seed, BEFORE)
            pairs.append(str(got.families["rankings"][0]))
            claims.append(str(got.families["claims"][0]))
            used.append(_hours(got.seconds))
            assert got.families["rankings"][1] == 459 and got.families["claims"][1] == 12
        assert [c.strip() for c in cells.split("|")] == [
            ", ".join(pairs), ", ".join(claims), ", ".join(used)], (budget, ceiling)
        settled[budget, int(ceiling)] = [int(n) for n in pairs]
    # the bullets read from the table
    target = math.ceil(0.8 * 459)
    text = " ".join(section.split())
    assert f"80% of the pairs ({target} of 459)" in text
    assert max(settled["90 min", 12]) < target  # "the 90-minute replays stop at"
    assert min(settled["3 h", 30]) >= target  # "the 3-hour ones pass it"
    assert (f"the 90-minute replays stop at {min(settled['90 min', 12])}-"
            f"{max(settled['90 min', 12])}, the 3-hour ones pass it ("
            f"{min(settled['3 h', 30])}-{max(settled['3 h', 30])})") in text
    assert f"(at most {max(settled['4 h', 30] + settled['6 h', 30])}:" in text
    # README's "four ranked pairs in five settle in `--budget 6h --max-repeat 30`"
    assert "`--budget 6h --max-repeat 30`" in (ROOT / "README.md").read_text()
    low, high = (round(100 * n / 459) for n in sorted(settled["24 h", 12]))
    assert f"out of reach whatever the time ({low}%)" in text if low == high else \
        f"out of reach whatever the time ({low}-{high}%)" in text


def test_the_90_minute_run_is_its_rows() -> None:
    """The real run of 90 minutes: its families from its committed rows,
    its minimum, and the replays of its rows at 90 and 45 minutes."""
    from harness.publish.page import elapsed

    folder = ROOT / "docs" / "studies" / "allocation" / "20261129-190906"
    rows = read_runs(folder / "runs.csv").rows
    families = {name: (settled, total) for name, settled, total in
                ask_run(group_runs(rows), read_env(folder / "env.json")).families()}
    section = STUDY.read_text().split("### A real run of 90 minutes")[1]
    text = " ".join(section.split())
    assert (f"{len(rows):,} runs in its 90 minutes of runs, "
            f"{elapsed(read_env(folder / 'env.json'))} in all") in text
    assert f"the minimum took {spent_before(r for r in rows if r.rep == 1):,.0f} s" in text
    replays = {budget: [_replay(folder, minutes * 60.0, 1, None, seed, BEFORE).families
                        for seed in (0, 1)] for budget, minutes in (("90", 90), ("45", 45))}
    for family, label in (("rankings", "neighbour pairs"), ("claims", "claims"),
                          ("goals", "goals")):
        settled, total = families[family]
        cells = [f"{settled} of {total}"]
        for budget in ("90", "45"):
            got = [str(f[family][0]) for f in replays[budget]]
            cells.append(", ".join(got) + (" of 12" if family == "claims" else ""))
        assert f"| {label} | {' | '.join(cells)} |" in section, (family, cells)
    settled, total = families["rankings"]
    assert f"({settled} pairs against {replays['90'][0]['rankings'][0]})" in text
    assert f"90 minutes still fall short of 80% ({round(100 * settled / total)}%)" in text
    settled, total = families["claims"]
    assert f"of 90% of the claims ({round(100 * settled / total)}%" in text


ALLOCATED = {"afternoon, 2026-11-29": RUNS["next afternoon"],
             "90-minute run, 20261129-190906":
                 ROOT / "docs" / "studies" / "allocation" / "20261129-190906",
             "default run, 2026-12-02": ROOT / "docs" / "results" / "2026-12-02-amd-epyc-2c",
             "default run, 2026-12-03": ROOT / "docs" / "results" / "2026-12-03-intel-xeon-2c"}


def _cells(got: list, tiers: bool = False) -> list[str]:
    """A replay table's cells, its seeds' in each; tiers: with the count of
    headline rankings that are one tier."""
    def both(cell) -> str:
        return ", ".join(cell(g) for g in got)
    return [both(lambda g: str(g.headline[0])),
            both(lambda g: str(g.headline_short)),
            both(lambda g: f"{g.width:g}"),
            both(lambda g: f"{g.within_one:.0%}"),
            both(lambda g: str(sum(n <= 3 for n in g.best_sets)))] + (
        [both(lambda g: str(len(g.single_tier)))] if tiers else []) + [
            both(lambda g: str(g.families["claims"][0])),
            both(lambda g: str(g.families["goals"][0])),
            both(lambda g: str(g.families["rankings"][0]))]


def _replayed_rows(section: str, count: int, seeds: tuple[int, ...] = (0, 1),
                   pairs: int = 160, tiers: bool = False) -> None:
    """Each `| rows | allocation | cells |` row of a section replayed at 45
    minutes (seeds as given) with its allocation."""
    from harness.sequential import BEFORE, HEADLINE_FIRST, NOW, UNCUT

    allocations = {"before": BEFORE, "headline first": HEADLINE_FIRST, "uncut": UNCUT,
                   "now": NOW}
    rows = re.findall(r"^\| ([^|]+) \| (before|headline first|uncut|now) \|(.+)\|$", section,
                      re.M)
    assert len(rows) == count, rows
    for label, allocation, cells in rows:
        got = [_replay(ALLOCATED[label], 45 * 60.0, 1, None, seed, allocations[allocation])
               for seed in seeds]
        assert got[0].headline[1] == pairs
        assert [c.strip() for c in cells.split("|")] == _cells(got, tiers), (label, allocation)


def test_the_headline_first_table_is_replayed() -> None:
    """"The headline first": each cell replayed on its rows (seeds 0 and 1,
    45 minutes), with the allocation before (sequential.BEFORE) and as the
    2026-12-02 run ran (sequential.HEADLINE_FIRST)."""
    _replayed_rows(STUDY.read_text().split("## The headline first")[1].split("\n### ")[0], 4)


TOO_DEAR = "## Too dear to start, and the floor's second run"
ONE_TIER = "## A ranking that is one tier"


def test_the_too_dear_table_is_replayed() -> None:
    """"Too dear to start": the 2026-12-02 run's rows replayed as it ran
    and with the allocation that came of it (sequential.UNCUT)."""
    _replayed_rows(STUDY.read_text().split(TOO_DEAR)[1].split("And what a longer")[0], 2)


def test_what_a_longer_budget_reaches_is_replayed() -> None:
    """The budgets' table of "Too dear to start", and its bullets' figures."""
    from harness.sequential import UNCUT

    section = STUDY.read_text().split(TOO_DEAR)[1].split(ONE_TIER)[0]
    text = " ".join(section.split())
    rows = re.findall(r"^\| (\d+) min \|(.+)\|$", section, re.M)
    assert [int(m) for m, _ in rows] == [60, 90]
    got = {}
    for minutes, cells in rows:
        got[int(minutes)] = [_replay(ALLOCATED["default run, 2026-12-02"], int(minutes) * 60.0,
                                     1, None, seed, UNCUT) for seed in (0, 1)]
        assert [c.strip() for c in cells.split("|")] == _cells(got[int(minutes)]), minutes

    def shares(reps: list) -> str:
        low, high = sorted(round(100 * g.headline[0] / g.headline[1]) for g in reps)
        return f"{low}–{high}%"
    now45 = re.search(r"^\| default run, 2026-12-02 \| uncut \| (\d+), (\d+) \|", section,
                      re.M)
    assert now45
    low, high = sorted(round(100 * int(n) / 160) for n in now45.groups())
    assert f"The headline pairs settle {low}–{high}% (65% asked)" in text
    assert f"every rank and pair target holds in both seeds** ({shares(got[60])} of the " \
        "pairs)" in text
    assert f"90 minutes reach {shares(got[90])}" in text


def test_the_too_dear_sections_figures_are_the_rows() -> None:
    """Its minimum and the forecasts it quotes, from the run's rows."""
    from harness.core.workloads import WORKLOADS
    from harness.plan.timeouts import expected_s, walls

    folder = ALLOCATED["default run, 2026-12-02"]
    rows = read_runs(folder / "runs.csv").rows
    first = [r for r in rows if r.rep == 1]
    text = " ".join(STUDY.read_text().split(TOO_DEAR)[1].split())
    headline_sizes = [r for r in first
                      if r.n is not None and r.n == WORKLOADS[r.workload].headline_n]
    assert (f"Its minimum took {spent_before(first):,.0f} s of the 2,700, "
            f"{spent_before(headline_sizes):,.0f} s of it at the headline sizes") in text
    dear = next(r for r in first if r.impl == "java-platform" and r.workload == "chain-await"
                and r.n == 1_000_000)
    assert dear.status == "timeout" and f"{dear.wall_s:.0f} s of those" in text
    known = walls(rows)
    at_20k = known[ConfigKey("java-platform", "chain-await", 20_000, None)]
    grown = expected_s(ConfigKey.of(dear), {k: v for k, v in known.items() if k.n != 1_000_000})
    assert f"(expected at {grown:.0f} s from its {at_20k:.1f} s at 20k" in text
    # statistics.md's forecast of it, as the budget's rule makes it
    from harness.core.registry import resolve
    from harness.plan.options import Options
    from harness.plan.plan import plan
    from harness.plan.settings import settings_from
    from harness.plan.timeouts import least_expected_s

    s = settings_from(Options(suite="default"), ram_bytes=24 << 30)
    planned = next(p for p in plan(resolve(s.impls), s) if p.key == ConfigKey.of(dear))
    least = least_expected_s(planned, {k: v for k, v in known.items() if k.n != 1_000_000})
    statistics_md = " ".join((ROOT / "docs" / "statistics.md").read_text().split())
    assert (f"is at least {round(least, -1):.0f} s from its {at_20k:.1f} s at 20k"
            in statistics_md), least
    walls_1m = [r.wall_s for page in (ROOT / "docs" / "results").glob("*/runs.csv")
                for r in read_runs(page).rows if r.impl == "python-asyncio"
                and r.workload == "chain" and r.n == 1_000_000 and r.status == "ok"]
    assert (f"python-asyncio's chain at 1M, took {min(walls_1m):.0f}–{max(walls_1m):.0f} s a "
            f"run on the published pages") in statistics_md
    for workload, impl, words in (("bounded", "java-platform", "bounded at 10k producers at"),
                                  ("sleep", "bun", "sleep at 10k tasks at")):
        smaller = {k: v for k, v in known.items() if k.n is not None and k.n < 10_000}
        worst = max(expected_s(ConfigKey.of(r), smaller) or 0.0 for r in rows
                    if r.workload == workload and r.n == 10_000)
        mine = max(expected_s(ConfigKey.of(r), smaller) or 0.0 for r in rows
                   if r.workload == workload and r.n == 10_000 and r.impl == impl)
        assert worst == mine and f"{impl}'s {words} {worst:,.0f} s" in text, (workload, worst)


def test_where_the_minimum_goes_is_the_rows() -> None:
    """"Where the minimum's time goes": each cell from the committed rows."""
    from harness.analyse import ranks

    section = STUDY.read_text().split("### Where the minimum's time goes")[1]
    folders = [RUNS["next afternoon"],
               ROOT / "docs" / "studies" / "allocation" / "20261129-190906"]
    cells: dict[str, list[str]] = {}
    for folder in folders:
        first = [r for r in read_runs(folder / "runs.csv").rows if r.rep == 1]

        def slept(r) -> float:
            return (r.iterations or 1) * r.duration_ms / 1000 if r.workload == "sleep" \
                and r.duration_ms else 0.0
        top = [r for r in first if r.n is not None and ranks.HEADLINE_N.get(r.workload) == r.n]
        small = [r for r in first if r.workload == "sleep" and r not in top]
        cells.setdefault("the minimum", []).append(f"{spent_before(first):,.0f} s")
        cells.setdefault("at the headline sizes", []).append(f"{spent_before(top):,.0f} s")
        cells.setdefault("of which asleep (sleep at 1M)", []).append(
            f"{sum(slept(r) for r in top):,.0f} s")
        cells.setdefault("sleeps at 1, 10k and 100k tasks", []).append(
            f"{spent_before(small):,.0f} s, {sum(slept(r) for r in small):,.0f} s")
        cells.setdefault("runs our limit cut (timeouts)", []).append(
            f"{sum(r.wall_s or 0 for r in first if r.status == 'timeout'):,.0f} s")
    for label, want in cells.items():
        found = re.search(rf"^\| {re.escape(label)} \| (.+) \| (.+) \|$", section, re.M)
        assert found, label
        assert [c.replace(" asleep", "") for c in found.groups()] == want, label


def _aa_module():
    """docs/studies/allocation/aa_loop.py, loaded by path."""
    import importlib.util
    import sys

    path = ROOT / "docs" / "studies" / "allocation" / "aa_loop.py"
    spec = importlib.util.spec_from_file_location("allocation_aa_loop", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_false_ahead_rate_inside_the_loop_is_replayed() -> None:
    """"False ahead inside the loop": the calibration suite's A/A rows
    through the allocation loop from 1, 2 and 3 runs a side (seeds 0-3),
    every cell recomputed, and every rate at most 5%."""
    aa = _aa_module()
    section = STUDY.read_text().split("### False \"ahead\" inside the loop")[1].split("\n## ")[0]
    xeon, epyc = section.split("| from runs a side (EPYC) |")
    for text, name, within in ((xeon, "2026-11-28-intel-xeon-2c-calibration", True),
                               (epyc, "2026-12-02-amd-epyc-2c-calibration", False)):
        rows = re.findall(r"^\| (\d) \| (.+) \| (.+) \|$", text, re.M)
        assert [int(sides) for sides, _, _ in rows] == list(aa.SIDES)
        for sides, called, ranked in rows:
            ahead, asked, apart, neighbours = aa.false_ahead(ROOT / "docs" / "results" / name,
                                                             int(sides), [0, 1, 2, 3])
            assert called.strip() == f"{ahead} of {asked} ({ahead / asked:.1%})"
            assert ranked.strip() == f"{apart} of {neighbours}"
            # what a run reports stays within 5%; the test alone at every look, on the Xeon,
            # is consistent with at most 5%: a one-sided binomial test of its count at 512
            # figures (26 of 512 is 5.1%, as likely as not from a true 5%)
            assert apart <= 0.05 * neighbours
            assert binomtest(ahead, asked, 0.05, alternative="greater").pvalue > 0.05 or not within


def _marked(text: str, name: str) -> str:
    found = re.search(rf"<!-- {name} -->(.+?)<!-- /{name} -->", text, re.S)
    assert found, f"allocation.md has no <!-- {name} --> figure"
    return " ".join(found[1].split())


def test_the_one_tier_sections_figures_are_the_rows() -> None:
    """"A ranking that is one tier": the 2026-12-03 run's one-tier ranking,
    its nearest cut and the pair it waited on, what the allocation of now
    asks on those rows (_open_cuts, _aim), and the tiers with those runs."""
    import dataclasses

    from harness.analyse.questions import LEVEL_WORD
    from harness.analyse.ranks import all_rank_intervals
    from harness.core.formatting import fmt_ordinal
    from harness.sequential import _aim, _open_cuts

    section = STUDY.read_text().split(ONE_TIER)[1]
    rows = read_runs(ALLOCATED["default run, 2026-12-03"] / "runs.csv").rows
    floors = {"cpp-coroutines"}
    ranked = all_rank_intervals(group_runs(rows), floors, headline_only=True)
    one = [r for r in ranked if len(r.tiers()) == 1]
    assert _marked(section, "rankings") == str(len(ranked))
    assert [f"{r.workload} N = 1M, peak RSS" for r in one] == [_marked(section, "one-tier")]
    (r,) = one
    cut = r.nearest_cut()
    (better, worse), = cut.pairs
    assert _marked(section, "cut") == (
        f"after {fmt_ordinal(cut.after)}, waiting on one pair alone: {better.impl} "
        f"({better.runs} runs) not yet settled ahead of {worse.impl} ({worse.runs} runs)")
    between = [p.impl for p in r.places][[p.impl for p in r.places].index(better.impl) + 1:
                                         [p.impl for p in r.places].index(worse.impl)]
    assert f"({', '.join(between[:-1])} and {between[-1]} sit between them)" in \
        " ".join(section.split())
    spreads = {p.impl: statistics.stdev(math.log(v) for v in p.group.values(r.metric))
               for p in r.places if p.runs > 1}
    assert max(spreads, key=spreads.get) == better.impl  # "the widest of the ranking"
    asked = ask_run(group_runs(rows), read_env(ALLOCATED["default run, 2026-12-03"] / "env.json"))
    pair = next(p for q in asked.rankings if q.headline and q.workload == "sleep"
                and q.metric == r.metric for p in q.pairs if {p.leader.impl, p.other.impl}
                == {worse.impl, between[-1]})
    assert pair.verdict == LEVEL_WORD and _marked(section, "erlang") == "settled level"
    # what the allocation of now asks on these rows: each side to its aim
    (o,) = _open_cuts(ranked, 2)
    aim = _aim(o, dict.fromkeys(o.keys, 12), dict.fromkeys(o.keys, 9.0))
    more = {g.impl: max(0, aim - n) for g, n in ((better.group, better.runs),
                                                   (worse.group, worse.runs))}
    assert _marked(section, "asks") == (f"{more[worse.impl]} more runs of {worse.impl}, none of "
                                        f"{better.impl}") and more[better.impl] == 0
    mine = [x for x in rows if x.impl == worse.impl and x.workload == r.workload and x.n == r.n]
    extra = [dataclasses.replace(mine[i % len(mine)], rep=len(mine) + 1 + i)
             for i in range(more[worse.impl])]
    again = next(x for x in all_rank_intervals(group_runs(rows + extra), floors,
                                               headline_only=True)
                 if x.key == r.key and x.metric == r.metric)
    assert _marked(section, "tiers") == f"{len(again.tiers())} tiers" and len(again.tiers()) > 1


def test_the_one_tier_table_is_replayed() -> None:
    """"A ranking that is one tier": the 2026-12-03 run's rows replayed at 45
    minutes, seeds 3 and 4, as it ran (sequential.UNCUT) and as now."""
    section = STUDY.read_text().split(ONE_TIER)[1]
    _replayed_rows(section, 2, seeds=(3, 4), pairs=162, tiers=True)
