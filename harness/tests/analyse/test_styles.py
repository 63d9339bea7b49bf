"""Which handler style sustains the most (analyse/styles.py), on made-up
ladders with known answers: the order, each style's range, the bracket of
the best over the runner-up, bounds, and the section's text."""

from __future__ import annotations

from harness.analyse import styles
from harness.analyse.analysis import group_runs
from harness.analyse.questions import Questions
from harness.core.schema import Row
from harness.core.workloads import GEN_LAG_LIMIT_S, GENERATOR_FAULT
from harness.present.report import styles_block, styles_rows

from .test_ladder_figures import step


def climb(style: str, sustained: list[int], ended: int | None, rep: int = 1,
          impl: str = "go", how: str = "saturated") -> list[Row]:
    """A ladder sustained at each rate given, then ended at `ended` (the
    server saturated, or `how` = "late": the generator could not keep up;
    None: it reached its top)."""
    rows = [step(rate, style=style, rep=rep, impl=impl, cpus=1) for rate in sustained]
    if ended is not None and how == "late":
        rows.append(step(ended, "sustained", status="invalid", style=style, rep=rep, impl=impl,
                         cpus=1, gen_lag_p99_s=GEN_LAG_LIMIT_S * 2,
                         error=f"{GENERATOR_FAULT} ran 1% of its schedule late"))
    elif ended is not None:
        rows.append(step(ended, how, style=style, rep=rep, impl=impl, cpus=1, dropped=5))
    return rows


def found(rows: list[Row]) -> list[styles.ServerStyles]:
    return styles.by_server(group_runs(rows))


def test_a_style_bisected_apart_from_the_runner_up_is_ahead_by_its_bracket() -> None:
    """One repeat: async sustained 200 and saturated at 220, parallel 100
    and 110: async's capacity is in [200, 220), parallel's in [100, 110),
    so async is 200/110 to 220/100 times parallel's."""
    [server] = found(climb("async", [25, 50, 100, 200], 220)
                     + climb("parallel", [25, 50, 100], 110))
    assert [c.style for c in server.styles] == ["async", "parallel"]
    best, other = server.styles
    assert (best.low, best.high, other.low, other.high) == (200, 220, 100, 110)
    assert server.verdict == styles.AHEAD and server.interval is None  # one repeat a side
    low, high = server.bracket
    assert abs(low - 200 / 110) < 1e-9 and abs(high - 220 / 100) < 1e-9


def test_a_step_apart_is_not_settled() -> None:
    """async [200, 400), parallel [100, 200): async could be as little as
    parallel's best."""
    [server] = found(climb("async", [25, 50, 100, 200], 400)
                     + climb("parallel", [25, 50, 100], 200))
    assert server.verdict == styles.APART and server.bracket == (1.0, 4.0)


def test_a_bound_from_below_is_at_least_and_two_are_not_ordered() -> None:
    top = climb("when-all", [25, 50, 100, 200, 400], None)
    late = climb("async", [25, 50, 100], 200, how="late")
    sync = climb("sync", [25], 50)
    [server] = found(top + sync)
    assert server.verdict == styles.AHEAD and server.styles[0].bound
    assert server.bracket == (400 / 50, None)  # at least 8x: the top has no ceiling
    [both] = found(top + late + sync)
    assert [c.bound for c in both.styles] == [True, True, False]
    assert both.verdict == styles.BOTH_BOUNDS and both.bracket is None
    assert both.below == ("sync", 100 / 50)  # the bounds' least (async's 100) over sync's 50
    [row] = styles_rows([both])
    assert row[2] == ("not ordered: when-all and async both sustained the ladder's top or "
                      "the generator's limit; both ahead of sync")
    assert row[3] == "— (both bounds from below); every bound over sync: at least 2.00×"
    # three bounds over sync: "all 3", not "both"
    [three] = found(top + late + climb("parallel", [25, 50, 100, 200], None) + sync)
    [row] = styles_rows([three])
    assert row[2] == ("not ordered: when-all, parallel and async all 3 sustained the ladder's "
                      "top or the generator's limit; all 3 ahead of sync")


def test_the_range_spans_every_repeat_and_the_interval_needs_two_a_side() -> None:
    """Three repeats each: async sustains 200, 200 and 100 (saturating at
    the step above each), sync 50 each time: the range takes the least
    sustained and the most offered above, the interval the repeats."""
    rows = []
    for rep, (top, end) in enumerate([(200, 220), (200, 240), (100, 110)], 1):
        rates = [r for r in (25, 50, 100, 200) if r <= top]
        rows += climb("async", rates, end, rep=rep) + climb("sync", [25, 50], 55, rep=rep)
    [server] = found(rows)
    best, other = server.styles
    assert (best.low, best.high, best.median, best.repeats) == (100, 240, 200, 3)
    assert (other.low, other.high) == (50, 55)
    assert server.bracket == (100 / 55, 240 / 50) and server.verdict == styles.AHEAD
    assert server.interval is not None and server.interval.estimate == 4.0


def test_a_style_that_sustained_nothing_is_named_and_the_other_is_the_only_one() -> None:
    [server] = found(climb("async", [25, 50], 100) + climb("sync", [], 25))
    assert server.verdict == styles.ONLY and server.unsustained == ("sync",)
    [none] = found(climb("async", [], 25) + climb("sync", [], 25))
    assert none.verdict == styles.NONE and none.unsustained == ("async", "sync")


def test_each_server_is_its_own_row_and_one_style_is_no_question() -> None:
    rows = (climb("async", [25, 50], 100) + climb("sync", [25], 50)
            + climb("async", [25, 50], 100, impl="node"))
    assert [s.impl for s in found(rows)] == ["go"]


def test_the_sections_rows_say_the_best_by_how_much_and_every_style() -> None:
    rows = (climb("when-all", [25, 50, 100, 200, 400], None) + climb("sync", [25], 50)
            + climb("async", [25, 50, 100, 200], 220, impl="node")
            + climb("parallel", [25, 50, 100], 110, impl="node"))
    table = "\n".join(styles_block(Questions([], [], styles=found(rows))) or [])
    assert "Seed 004's question, per server" in table
    go, node = styles_rows(found(rows))
    assert go[2] == "when-all, ahead of sync"
    assert go[3].startswith("at least 8.00× (bracket; 1 repeat)")
    assert go[4] == "when-all at least 400; sync 25 \\[25, 50)"
    assert node[3].startswith("\\[1.82, 2.20\\]× (bracket; 1 repeat)")
    assert styles_block(Questions([], [], styles=found(climb("async", [25], 50)))) is None
    assert styles_block(None) is None  # a check's report asks nothing
