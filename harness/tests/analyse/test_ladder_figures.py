"""A rate ladder read whole (core/ladder.py) on made-up steps with known
answers: its sustained rate and knee per repeat, the group per ladder the
analysis adds, and that rankings and claims judge them across repeats."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from harness.analyse.analysis import group_runs
from harness import sequential
from harness.analyse.questions import (CLAIMS_FAMILY, DOES_NOT_HOLD, HOLDS, NOT_MEASURED, RANKINGS,
                                       ask, claims, rankings)
from harness.analyse.standings import BEHIND, BOUND
from harness.core.claims import CLAIMS, SEED004_STEP_S, Claim, Side
from harness.core.ladder import end_reason, figures, ladder_key, ladder_rows, seeded_start
from harness.core.metrics import KNEE, SUSTAINED
from harness.core.schema import PAST_END, ConfigKey, Row
from harness.core.workloads import GEN_LAG_LIMIT_S, GENERATOR_FAULT

RATES = (25, 50, 100, 200, 400)
FIRST_P99 = 0.32  # the unloaded p99 at D = 100 ms: three waits and a little


def step(rate: int, verdict: str | None = "sustained", p99: float = FIRST_P99,
         status: str = "ok", impl: str = "go", style: str = "async", rep: int = 1,
         delay_ms: int = 100, **more: object) -> Row:
    return Row(run_id="r", impl=impl, language="go", runtime="go", workload="http", rep=rep,
               delay_ms=delay_ms, style=style, rate=rate, step_s=SEED004_STEP_S, status=status,
               step_verdict=verdict, latency_p99_s=p99, **more)


def ladder(verdicts: list[str], p99s: list[float] | None = None, **kw: object) -> list[Row]:
    p99s = p99s or [FIRST_P99] * len(verdicts)
    return [step(rate, v, p, **kw) for rate, v, p in zip(RATES, verdicts, p99s)]


def test_the_sustained_rate_is_the_top_of_the_unbroken_run_of_sustained_steps() -> None:
    found = figures(ladder(["sustained", "sustained", "slow", "sustained", "saturated"]))
    assert found.sustained_rps == 50 and not found.at_top  # 200 passed above a slow step: luck


def test_a_ladder_sustained_to_its_top_says_so() -> None:
    found = figures(ladder(["sustained"] * 5))
    assert (found.sustained_rps, found.knee_rps, found.at_top) == (400, None, True)


def test_the_knee_is_where_the_p99_passes_twice_the_first_steps_or_the_step_saturates() -> None:
    bent = figures(ladder(["sustained", "sustained", "sustained", "slow", "slow"],
                          [0.30, 0.32, 0.59, 0.61, 1.2]))
    assert (bent.sustained_rps, bent.knee_rps) == (100, 200)
    saturated = figures(ladder(["sustained", "sustained", "saturated"]))
    assert (saturated.sustained_rps, saturated.knee_rps) == (50, 100)


def test_a_failed_step_before_any_bend_leaves_the_knee_unknown() -> None:
    rows = ladder(["sustained", "sustained"]) + [step(100, None, status="invalid")]
    assert (figures(rows).sustained_rps, figures(rows).knee_rps) == (50, None)


def test_what_ends_a_ladder() -> None:
    assert end_reason(step(100, "saturated", dropped=3, unanswered=0)) == (
        "was saturated (3 requests dropped, 0 unanswered)")
    assert end_reason(step(100, None, status="invalid", error="the generator too busy")) == (
        "was invalid (the generator too busy)")
    # p99 over the bound: saturated too, the climb ends (and its knee is bisected)
    assert end_reason(step(100, "slow", p99=0.32)) == (
        "was saturated (its p99, 0.320 s, over the ladder's bound)")
    assert end_reason(step(100, None, status="skipped", error="no style")) is None


def test_a_ladder_is_a_group_of_its_own_a_value_a_repeat() -> None:
    rows = (ladder(["sustained", "sustained", "saturated"], rep=1)
            + [step(200, PAST_END, status="skipped", rep=1)]
            + ladder(["sustained", "sustained", "sustained", "saturated"], rep=2))
    made = ladder_rows(rows)
    assert {(r.rep, r.sustained_rps, r.knee_rps) for r in made} == {(1, 50, 100), (2, 100, 200)}
    whole = ladder_key(ConfigKey.of(rows[0]))
    assert all(ConfigKey.of(r) == whole for r in made)
    assert whole.param("step_s") == SEED004_STEP_S and whole.param("rate") is None
    group = next(g for g in group_runs(rows) if g.key == whole)
    assert group.values(SUSTAINED) == (50, 100) and group.values(KNEE) == (100, 200)
    assert group.ok == 2 and group.values("peak_rss_bytes") == ()  # no step's own figure


def test_a_ladder_whose_first_step_failed_is_invalid_and_says_why() -> None:
    made = ladder_rows(ladder(["slow", "saturated"]))
    assert [(r.status, r.sustained_rps) for r in made] == [("invalid", None)]
    assert "no step of the ladder was sustained (its first, 25 requests a second: slow)" in (
        made[0].error)


def test_rankings_and_claims_judge_the_sustained_rate_across_repeats() -> None:
    """go sustains 400 in all of 6 repeats, node 100: a settled ranking and
    a claim that holds."""
    rows = [r for rep in range(1, 7) for r in (
        ladder(["sustained"] * 5, impl="go", rep=rep)
        + ladder(["sustained"] * 3 + ["saturated"], impl="node", rep=rep))]
    groups = group_runs(rows)
    ranked = next(r for r in rankings(groups) if r.metric == SUSTAINED)
    assert [g.impl for g in ranked.order] == ["go", "node"] and ranked.pairs[0].settled
    params = (("delay_ms", 100), ("pool_threads", None), ("style", "async"),
              ("step_s", SEED004_STEP_S))
    claim = Claim("test", "go sustains more than node", "more",
                  Side("go", "http", None, SUSTAINED, params=params),
                  Side("node", "http", None, SUSTAINED, params=params), 1.0)
    [verdict] = claims(groups, [claim])
    assert verdict.verdict == HOLDS and verdict.interval.estimate == 4.0


@pytest.mark.parametrize("impl,delay_ms", [("go", 10), ("csharp-async", 100)])
def test_a_declared_capacity_claim_names_seed004s_ladder(impl: str, delay_ms: int) -> None:
    """go's capacity claims read seed004's D = 10 ms ladder, where its
    blocking styles' knees lie under the generator's ceiling
    (claims.CAPACITY_AT_10_MS); csharp-async's its D = 100 ms one."""
    rows = [r for rep in (1, 2) for d in (10, 100) for r in (
        ladder(["sustained"] * (5 if d == delay_ms else 3), style="when-all", rep=rep, cpus=1,
               impl=impl, delay_ms=d)
        + ladder(["sustained", "saturated"], style="sync", rep=rep, cpus=1, impl=impl,
                 delay_ms=d))]
    groups = {g.key: g for g in group_runs(rows)}
    claim = next(c for c in CLAIMS if c.text == f"{impl}: when-all sustains a higher arrival "
                 "rate than sync")
    assert groups[claim.num.key()].values(SUSTAINED) == (400, 400)
    assert groups[claim.den.key()].values(SUSTAINED) == (25, 25)


def test_a_ladder_ended_by_its_generator_is_a_bound_from_below() -> None:
    """The step the load generator could not keep (late, busy, or behind its schedule, as the
    step's recorded reason says) says nothing of the server: the sustained
    rate below it is a bound. A wrong answer, or one below the style's
    floor, is the server's: no bound, even with a request or two unsent
    (within unsent_allowed, so not "behind")."""
    late = step(100, "sustained", status="invalid", gen_lag_p99_s=GEN_LAG_LIMIT_S * 2,
                error=f"{GENERATOR_FAULT} ran 1% of its schedule over 20 ms late (limit 10 ms)")
    behind = step(100, "sustained", status="invalid", offered=1000, requests_done=999,
                  error=f"{GENERATOR_FAULT} fell behind its schedule: 1 of the 1000 requests "
                        "due were neither sent nor dropped")  # an older run's rule: one behind
    wrong = step(100, "sustained", status="invalid", offered=1000, requests_done=999,
                 http_errors=1, error="1 of 999 response bodies were not 2*NUM + NUM/2")
    fast = step(100, "sustained", status="invalid", offered=1000, requests_done=999,
                error="the median answer, 12 ms, is below the async style's floor of 300 ms")
    assert [figures(ladder(["sustained"] * 2) + [last]).at_top
            for last in (late, behind, wrong, fast)] == [True, True, False, False]
    assert figures(ladder(["sustained"] * 2) + [late]).sustained_rps == 50


def test_a_bound_from_below_settles_a_lead_over_it_never_one_of_it_nor_a_tie() -> None:
    """Six repeats: go and node both sustain every step to the top (two
    bounds: no verdict, not "level", and out of the families' counts: not
    measured); deno saturates at 100. go over deno holds, deno over go can
    never."""
    rows = [r for rep in range(1, 7) for r in (
        ladder(["sustained"] * 5, impl="go", rep=rep)
        + ladder(["sustained"] * 5, impl="node", rep=rep)
        + ladder(["sustained", "sustained", "saturated"], impl="deno", rep=rep))]
    groups = group_runs(rows)
    ranked = next(r for r in rankings(groups) if r.metric == SUSTAINED)
    assert [g.impl for g in ranked.order] == ["go", "node", "deno"]
    tie, lead = ranked.pairs
    assert not tie.settled and tie.why == BOUND
    assert lead.settled and lead.verdict == BEHIND
    params = (("delay_ms", 100), ("pool_threads", None), ("style", "async"),
              ("step_s", SEED004_STEP_S))

    def side(impl: str) -> Side:
        return Side(impl, "http", None, SUSTAINED, params=params)

    more = Claim("test", "go sustains more than deno", "more", side("go"), side("deno"), 1.0)
    less = Claim("test", "deno sustains less than go", "less", side("deno"), side("go"), 1.0,
                 less=True)
    wrong = Claim("test", "deno sustains more than go", "more", side("deno"), side("go"), 1.0)
    level = Claim("test", "go sustains more than node", "more", side("go"), side("node"), 1.0)
    verdicts = {v.claim.text: v for v in claims(groups, [more, less, wrong, level])}
    assert verdicts[more.text].verdict == HOLDS and verdicts[less.text].verdict == HOLDS
    assert verdicts[wrong.text].verdict == DOES_NOT_HOLD  # deno's 50 is the server's: go is above
    assert verdicts[level.text].verdict == NOT_MEASURED and not verdicts[level.text].settled
    found = ask(groups)
    found = type(found)(found.rankings, list(verdicts.values()))
    families = dict((name, (settled, total)) for name, settled, total in found.families())
    pairs = [p for r in found.rankings for p in r.pairs]
    # the tie of two bounds counts in neither family; every other verdict does
    assert families[RANKINGS][1] == len(pairs) - 1 and families[CLAIMS_FAMILY] == (3, 3)
    assert found.unmeasured() == (1, 1)
    assert "Not counted, since not measured: 1 neighbour pair and 1 claim" in found.summary()


def test_a_verdict_held_open_by_a_bound_asks_for_no_runs() -> None:
    """Two repeats: go and node at the top (no run can settle their pair),
    deno below: only node against deno is worth more runs."""
    rows = [r for rep in (1, 2) for r in (
        ladder(["sustained"] * 5, impl="go", rep=rep)
        + ladder(["sustained"] * 5, impl="node", rep=rep)
        + ladder(["sustained", "sustained", "saturated"], impl="deno", rep=rep))]
    wanted = [o.keys for o in sequential._open(ask(group_runs(rows)))
              if any(k.param("rate") is None and k.workload == "http" for k in o.keys)]
    assert [tuple(k.impl for k in keys) for keys in wanted] == [("node", "deno")]


def test_protocols_generator_ceiling_prose_is_its_rows() -> None:
    """docs/protocol.md's comparison of vegeta and k6 (the generator before
    it), recomputed from the two studies' committed rows: their lateness,
    their CPU a request, and the ratio of their ceilings."""
    docs = Path(__file__).resolve().parents[3] / "docs"

    def newest(folder: str) -> list[dict[str, str]]:
        run = sorted((docs / "studies" / folder).glob("*/runs.csv"))[-1]
        with run.open(newline="") as f:
            return list(csv.DictReader(f))
    vegeta, k6 = newest("generator-ceiling"), newest("generator-ceiling-previous")
    text = " ".join((docs / "protocol.md").read_text().split())

    def ms(rows: list[dict[str, str]]) -> list[float]:
        return [float(r["gen_lag_p99_s"]) * 1000 for r in rows]

    def us(rows: list[dict[str, str]]) -> list[float]:
        return [float(r["gen_cpu_s"]) / int(r["requests_done"]) * 1e6 for r in rows]
    kept = [int(r["rate"]) for r in vegeta if r["status"] == "ok"]
    assert not [r for r in k6 if r["status"] == "ok"] and min(int(r["rate"]) for r in k6) == 200
    assert f"ceiling on one core is at least {max(kept):,} requests a second and k6's under " \
           f"200: at least {max(kept) // 200} times" in text
    assert f"k6's probe ran {min(ms(k6)):.0f}-{max(ms(k6)):.0f} ms late (p99)" in text
    kept_lag = max(ms([r for r in vegeta if r["status"] == "ok"]))
    [top] = [r for r in vegeta if r["status"] != "ok"]
    assert f"vegeta's at most {kept_lag:.1f} ms up to {max(kept):,}, and " \
           f"{ms([top])[0]:.0f} ms at {int(top['rate']):,}" in text
    assert f"answered {round(float(top['rps'])):,} a second" in text
    assert f"vegeta {min(us(vegeta)):.0f}-{max(us(vegeta)):.0f} µs" in text
    assert f"k6 {min(us(k6)):.0f}-{max(us(k6)):,.0f} µs" in text


def test_a_seeded_repeat_reads_its_knee_against_the_earlier_repeats_idle_p99() -> None:
    """Repeat 1 climbs from 25 (p99 0.32 s nearly idle); repeat 2 starts at
    100 (ladder.seeded_start): its p99 passes 0.64 s at 400, its knee, though
    its own first step (0.40 s) is not idle; a repeat 3 whose first step is
    already past 0.64 s has no knee, and one whose first step saturated
    sustained nothing, and says where it started."""
    first = ladder(["sustained", "sustained", "sustained", "sustained", "saturated"], rep=1)
    second = [step(rate, v, p, rep=2) for rate, v, p in
              ((100, "sustained", 0.40), (200, "sustained", 0.50), (400, "sustained", 0.66))]
    bent = [step(rate, "sustained", 0.70, rep=3) for rate in (100, 200)]
    failed = [step(100, "saturated", 0.9, rep=4, dropped=3)]
    made = {r.rep: r for r in ladder_rows(first + second + bent + failed)}
    assert (made[1].sustained_rps, made[1].knee_rps) == (200, 400)
    assert (made[2].sustained_rps, made[2].knee_rps) == (400, 400)
    assert (made[3].sustained_rps, made[3].knee_rps) == (200, None)
    assert made[4].status == "invalid" and "where this repeat started from the earlier ones" in (
        made[4].error)


def test_a_later_repeat_starts_two_rungs_below_the_least_sustained_rate_or_knee() -> None:
    rates = (25, 50, 100, 200, 400, 800)
    assert seeded_start([800.0, 400.0], rates) == 100
    assert seeded_start([800.0, 300.0], rates) == 50  # a knee at 300: 75 and below
    assert seeded_start([50.0], rates) is None and seeded_start([], rates) is None
