"""Seed 004's question, per server: which handler style sustains the most
load, and by how much (docs/statistics.md, "Which style sustains the
most"). Read off the rate ladders (core/ladder.py): each style's sustained
rate over its repeats, where its capacity lies (between its last sustained
step and the first above that was not), and the best style over the
runner-up: the bracket those ranges allow, which decides, and the
run-to-run interval where both have two repeats or more. Pure: reads
groups, writes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from .analysis import Group, bound_from_below
from ..core.ladder import NOT_MEASURED, generator_limited, ladder_key, measured, whole
from ..core.metrics import SUSTAINED
from ..core.schema import ConfigKey, Row, Status, StepVerdict
from ..core.stats import Interval, ratio_interval
from ..core.workloads import RATE, STYLE

AHEAD, APART, BOTH_BOUNDS = "ahead", "not settled apart", "both bounds"
# One style sustained a step (the others none); no style did.
ONLY, NONE = "only", "none"


@dataclass(frozen=True)
class StyleCapacity:
    """One style's ladder on one server: its sustained rates (a value per
    repeat), the range its capacity lies in over them (low: the least
    sustained; high: the most offered above a sustained rate that ended a
    ladder, None where a repeat's sustained rate is a bound from below)."""
    style: str
    ladder: Group
    low: float
    high: float | None

    @property
    def median(self) -> float:
        return self.ladder.median(SUSTAINED) or 0.0

    @property
    def repeats(self) -> int:
        return len(self.ladder.values(SUSTAINED))

    @property
    def bound(self) -> bool:
        """A sustained rate at the ladder's top or at the generator's limit."""
        return bound_from_below(self.ladder, SUSTAINED)


@dataclass(frozen=True)
class ServerStyles:
    """A server's styles under one load (its ladder's dimensions but the
    style), the most sustained first, and the best against the runner-up:
    the ratio's exact interval across repeats (interval: None below two a
    side, or where a side is a bound), the bracket every repeat's range
    allows (bracket: low None where the runner-up is a bound, high None
    where the best is), and the verdict (AHEAD: the bracket's low end above
    1; APART: not; BOTH_BOUNDS: both are bounds from below, which no run of
    this ladder can order; ONLY: one style sustained a step; NONE: no style
    did); unsustained: the styles whose ladders sustained no step."""
    impl: str
    key: ConfigKey
    styles: tuple[StyleCapacity, ...]
    unsustained: tuple[str, ...]
    interval: Interval | None
    bracket: tuple[float | None, float | None] | None
    verdict: str
    # BOTH_BOUNDS: the best style measured below the bounds at the top, and
    # the least those bounds sustain over its most (None where it has none)
    below: tuple[str, float | None] | None = None


def _above(steps: list[Row], sustained: float) -> float | None:
    """The least rate above sustained whose step in that repeat ended its
    ladder by the server (saturated, slow, or failed; not the generator's
    limit): the top of the range the repeat's capacity lies in."""
    ended = [r.rate for r in measured(steps) if r.rate is not None and r.rate > sustained
             and r.status not in NOT_MEASURED and not generator_limited(r)
             and (r.status != Status.OK or r.step_verdict != StepVerdict.SUSTAINED)]
    return float(min(ended)) if ended else None


def _capacity(ladder: Group, steps: list[Group]) -> StyleCapacity:
    """A style's capacity over its repeats: each ok repeat's sustained rate
    and the step above it that ended that repeat's ladder."""
    highs = []
    for whole_row in ladder.rows:
        if whole_row.status == Status.OK and whole_row.sustained_rps is not None:
            mine = [r for g in steps for r in g.rows if r.rep == whole_row.rep]
            highs.append(None if whole_row.ladder_top else _above(mine, whole_row.sustained_rps))
    high = None if not highs or None in highs else max(h for h in highs if h is not None)
    return StyleCapacity(str(ladder.key.param(STYLE.name)), ladder,
                         min(ladder.values(SUSTAINED)), high)


def _compare(best: StyleCapacity, other: StyleCapacity
             ) -> tuple[Interval | None, tuple[float | None, float | None] | None, str]:
    """The best over the runner-up: the exact interval across repeats (None
    below two a side, or where a side is a bound), the bracket of every
    repeat's range (a bound's capacity is at least its value, so it has no
    top), and the verdict, from the bracket: ahead only where every repeat
    of the best sustained more than any repeat of the runner-up could."""
    if best.bound and other.bound:
        return None, None, BOTH_BOUNDS
    interval = None if best.bound or other.bound else ratio_interval(
        other.ladder.values(SUSTAINED), best.ladder.values(SUSTAINED))
    low = best.low / other.high if other.high else None
    high = None if best.high is None else best.high / other.low
    return interval, (low, high), AHEAD if low is not None and low > 1 else APART


def by_server(groups: list[Group]) -> list[ServerStyles]:
    """Every server with rate ladders in two styles or more under one load,
    by server; the styles that sustained no step are named apart."""
    ladders: dict[ConfigKey, list[Group]] = {}
    steps: dict[ConfigKey, list[Group]] = {}
    for g in groups:
        if g.key.param(STYLE.name) is None:
            continue
        if any(whole(r) for r in g.rows):
            ladders.setdefault(_load(g.key), []).append(g)
        elif (ladder := ladder_key(g.key)) is not None:
            steps.setdefault(ladder, []).append(g)
    out = []
    for load, members in ladders.items():
        if len(members) < 2:
            continue
        found = sorted((_capacity(g, steps.get(g.key, [])) for g in members if g.values(SUSTAINED)),
                       key=lambda c: (-c.median, c.style))
        none = tuple(sorted(str(g.key.param(STYLE.name)) for g in members
                            if not g.values(SUSTAINED)))
        if len(found) < 2:
            verdict = ONLY if found else NONE
            out.append(ServerStyles(load.impl, load, tuple(found), none, None, None, verdict))
            continue
        interval, bracket, verdict = _compare(found[0], found[1])
        out.append(ServerStyles(load.impl, load, tuple(found), none, interval, bracket, verdict,
                                _below(found) if verdict == BOTH_BOUNDS else None))
    return sorted(out, key=lambda s: (s.impl, s.key.sort_key))


def _below(found: list[StyleCapacity]) -> tuple[str, float | None] | None:
    """Where the top styles are bounds: the first measured style after them,
    and the least of the bounds over its most (above 1: every bound ahead)."""
    top = [c for c in found if c.bound]
    rest = next((c for c in found if not c.bound), None)
    if rest is None:
        return None
    return rest.style, (min(c.low for c in top) / rest.high if rest.high else None)


def _load(key: ConfigKey) -> ConfigKey:
    """A ladder's key without its style: the server under one load."""
    return ConfigKey(key.impl, key.workload, key.n, key.buffer, tuple(
        (name, None if name == STYLE.name else value) for name, value in key.params))

