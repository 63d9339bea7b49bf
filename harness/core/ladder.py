"""A rate ladder read whole (docs/protocol.md, "The rate ladder"): its steps
are configurations of their own (the rate a dimension), and a ladder is
one server, style and step length at every rate, in one repeat. What ends
a ladder (the scheduler runs no step past it), and its two headline
figures, the sustained rate and the knee (docs/statistics.md, "The
ladder's figures")."""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass
from typing import Iterable

from .formatting import fmt_fixed
from .schema import DIMENSIONS, PAST_END, ConfigKey, Row, Status, StepVerdict
from .workloads import GENERATOR_FAULT, RATE, STYLE

# Statuses that say nothing of the server under load (no style, no
# build): they end no ladder.
NOT_MEASURED = (Status.SKIPPED, Status.BUILD_FAILED)
# The knee is where the p99 has grown past this multiple of the ladder's
# first step's (the server nearly idle): where the curve bends.
KNEE_FACTOR = 2.0
# A knee is refined until its last sustained rate and its first saturated
# one are within this ratio (10%): bisected between them (refinement).
REFINE_RATIO = 1.1
# A step the load generator could not keep (generator_limited) measured the
# generator, not the server, and is often another process's burst rather
# than the generator's ceiling: it is run again, at most this many times in
# its repeat, before it ends its ladder. Every attempt keeps its row.
GENERATOR_RETRIES = 2
# Where the generator could not keep a step in any attempt in the ladders
# of this many servers under one load (whichever style: run_ceiling),
# the run has measured its ceiling on this machine, and later ladders under
# that load run nothing there or above: their retries there measured the
# generator again (docs/studies/generator-late/: a quarter of seed004's
# budget on a 2-core Xeon). One server's miss may be another process's
# burst, or that server's, so it takes two.
CEILING_SERVERS = 2
# A later repeat of a ladder (a pass of --until-settled) starts at its
# highest step at or below its earlier repeats' least sustained rate (or
# knee, if lower) over this: two rungs of the doubling ladder below, so a
# repeat that sustains a quarter of the earlier ones still shows it, and
# its knee is found from below. Its steps below, sustained in every earlier
# repeat, are not run again (seeded_start).
SEED_BELOW = 4.0
# What a ladder's row takes of its first step: who ran, where, which ladder.
_IDENTITY = ("run_id", "impl", "variant", "version", "language", "runtime", "workload", "n",
             "buffer", "rep", "node", "started_at", *(c.name for c in DIMENSIONS))


def ladder_key(key: ConfigKey) -> ConfigKey | None:
    """The ladder a step belongs to: its key without the rate; None for a
    configuration that is no step."""
    if key.param(RATE.name) is None:
        return None
    return dataclasses.replace(key, params=tuple(
        (name, None if name == RATE.name else value) for name, value in key.params))


def end_reason(row: Row) -> str | None:
    """Why this step ends its ladder, or None where the next step is worth
    running: a saturated step (the server could not keep up), or one that
    measured nothing of the server (invalid: the generator's limit or a
    wrong answer; crashed, timeout, oom)."""
    if row.status in NOT_MEASURED:
        return None
    if row.status != Status.OK:
        return f"was {row.status}" + (f" ({row.error})" if row.error else "")
    if row.step_verdict == StepVerdict.SATURATED:
        return (f"was saturated ({row.dropped or 0} requests dropped, {row.unanswered or 0} "
                f"unanswered)")
    if row.step_verdict == StepVerdict.SLOW:
        return (f"was saturated (its p99, {fmt_fixed(row.latency_p99_s or 0, 3)} s, over the "
                f"ladder's bound)")
    return None


def with_rate(key: ConfigKey, rate: int) -> ConfigKey:
    """A ladder step's key at another rate."""
    return dataclasses.replace(key, params=tuple(
        (name, rate if name == RATE.name else value) for name, value in key.params))


def refinement(steps: list[Row], ceiling: int | None = None) -> int | None:
    """The next rate to run of one ladder in one repeat, from its steps run
    so far: the geometric middle of its last sustained step (every one below
    it sustained) and the first above that saturated (p99 over the bound, or
    requests dropped or unanswered) or that the generator could not keep
    (every attempt generator_limited: the rates between, which it may keep,
    can still find the knee, or narrow the bound), until the two are within
    REFINE_RATIO. None where there is nothing to refine: no step sustained,
    none saturated yet, or the first not sustained was no measurement of
    the server nor of the generator's limit (a wrong answer; a crash).
    ceiling: a ladder whose next step was not run at or above the run's
    ceiling (run_ceiling) is refined up to it, as up to a rate the
    generator could not keep."""
    order = sorted((r for r in measured(steps) if not past_end(r)
                    and r.status not in NOT_MEASURED), key=lambda r: r.rate)
    low = None
    for r in order:
        if r.status == Status.OK and r.step_verdict == StepVerdict.SUSTAINED:
            low = r.rate
            continue
        if low is None or (r.status != Status.OK and not generator_limited(r)):
            return None
        return _middle(low, r.rate)
    return None if ceiling is None or low is None else _middle(low, ceiling)


def _middle(low: int, high: int) -> int | None:
    """The geometric middle of two rates not yet within REFINE_RATIO."""
    if high <= low * REFINE_RATIO:
        return None
    middle = round(math.sqrt(low * high))
    return middle if low < middle < high else None


def generator_load(key: ConfigKey) -> ConfigKey | None:
    """What a ladder's step asks of the load generator, whichever server and
    style answer it: its ladder key without them (the wait, so the requests
    in flight; the step's length; the cores). None for no step."""
    ladder = ladder_key(key)
    if ladder is None:
        return None
    return dataclasses.replace(ladder, impl="", params=tuple(
        (name, None if name == STYLE.name else value) for name, value in ladder.params))


def ceilings(rows: Iterable[Row]) -> dict[ConfigKey, int]:
    """The generator's ceilings a run's rows have measured, by generator
    load (generator_load): run_ceiling of the lowest rate each server's
    ladders could not keep in any attempt (its retries spent)."""
    attempts: dict[tuple[ConfigKey, int], list[Row]] = {}
    for r in rows:
        if r.rate is not None and r.status not in NOT_MEASURED:
            attempts.setdefault((ConfigKey.of(r), r.rep), []).append(r)
    lowest: dict[tuple[ConfigKey, int], tuple[ConfigKey, int]] = {}
    for (key, rep), tried in attempts.items():
        if len(tried) > GENERATOR_RETRIES and all(generator_limited(r) for r in tried):
            ladder, rate = (ladder_key(key), rep), key.param(RATE.name)
            known = lowest.get(ladder)
            lowest[ladder] = (key, rate) if known is None or rate < known[1] else known
    # a server's own ladders count once: a slow server holds the generator's
    # workers longer, so its misses may be its own
    missed: dict[ConfigKey, dict[str, int]] = {}
    for key, rate in lowest.values():
        servers = missed.setdefault(generator_load(key), {})
        servers[key.impl] = min(servers.get(key.impl, rate), rate)
    return {load: ceiling for load, rates in missed.items()
            if (ceiling := run_ceiling(rates.values())) is not None}


def run_ceiling(missed: Iterable[int]) -> int | None:
    """The generator's ceiling a run has measured under one load, from the
    lowest rate each server's ladders could not keep in any attempt: the
    CEILING_SERVERS-th lowest, so at least that many servers' ladders
    missed it or a rate below; None before that many have."""
    found = sorted(missed)
    return found[CEILING_SERVERS - 1] if len(found) >= CEILING_SERVERS else None


def ceiling_error(ceiling: int) -> str:
    """A step's error where it was not run at or above the run's ceiling."""
    return (f"not run: at or above {ceiling} requests a second, which the load generator "
            f"could not keep in any attempt in the ladders of {CEILING_SERVERS} of this run's "
            f"servers under this load (its ceiling on this machine); no higher step is measured")


def seeded_start(earlier: Iterable[float], rates: Iterable[int]) -> int | None:
    """The first step a later repeat of a ladder runs: its highest planned
    rate at or below SEED_BELOW under the least of the earlier repeats'
    sustained rates and knees (each of them sustained a step); None where
    there is no such step, or no earlier value: the repeat runs every step."""
    least = min(earlier, default=None)
    below = [r for r in rates if least is not None and r <= least / SEED_BELOW]
    return max(below) if below else None


def past_end(row: Row) -> bool:
    """A step not run: its ladder ended below it in its repeat."""
    return row.step_verdict == PAST_END


def whole(row: Row) -> bool:
    """A ladder's own row (ladder_rows), not a run."""
    return row.ladder_top is not None


def past_end_error(row: Row) -> str:
    """A skipped step's error: the step that ended its ladder, and why."""
    return (f"not run: this ladder's step at {row.rate} requests a second {end_reason(row)} "
            f"in repeat {row.rep}; no higher step is measured")


def not_repeated_error(rate: int, rep: int, statuses: list[str]) -> str:
    """A skipped step's error where a step below it was not run again in its
    repeat (--until-settled: its earlier runs failed, and would again):
    the ladder ends there, as it would have had that step run and failed."""
    return (f"not run: this ladder's step at {rate} requests a second was not run again in "
            f"repeat {rep} (its earlier runs: {', '.join(statuses)}); no higher step is measured")


def generator_limited(row: Row) -> bool:
    """A step invalid because the load generator could not keep its schedule (busy, late, or
    behind it: loadtest._judge_step, which says so in the row's reason): it
    measured the generator, not the server, so a ladder ending there says nothing of
    the server's capacity."""
    return row.status == Status.INVALID and (row.error or "").startswith(GENERATOR_FAULT)


def measured(steps: list[Row]) -> list[Row]:
    """One ladder's steps in one repeat without the attempts a retry
    replaced: a generator_limited step where another attempt at its rate
    measured the server (GENERATOR_RETRIES). Where every attempt was
    generator_limited, they all stay, and the ladder ends there."""
    kept = {r.rate for r in steps if not generator_limited(r)}
    return [r for r in steps if not (generator_limited(r) and r.rate in kept)]


def retried(row: Row, attempts: int) -> bool:
    """Whether a step just recorded is run again in its repeat: it measured
    the generator, not the server, in the attempts-th of its attempts there
    (GENERATOR_RETRIES)."""
    return row.rate is not None and generator_limited(row) and attempts <= GENERATOR_RETRIES


@dataclass(frozen=True)
class Figures:
    """One ladder in one repeat: the sustained rate (None: not even its
    first step was sustained), the knee (None: not reached, or a step
    before it measured nothing), and whether the sustained rate is a bound
    from below of the server's: the ladder's top step, or the last below a
    step where the generator could not keep up (at_top)."""
    sustained_rps: float | None
    knee_rps: float | None
    at_top: bool


def figures(steps: list[Row], idle_p99_s: float | None = None) -> Figures:
    """The steps of one ladder in one repeat, in any order. Sustained: the
    highest rate whose step, and every step below it, was sustained (ok,
    nothing dropped or unanswered, p99 within the bound: a capacity is a
    range from no load up, so a step that passed above one that failed is
    luck, not capacity). Knee: the lowest rate whose step saturated or had
    its p99 past KNEE_FACTOR times the first step's, or idle_p99_s's where
    given (a seeded repeat: the earlier repeats' first steps'), unknown
    where its first step is already past it."""
    order = sorted(measured(steps), key=lambda r: r.rate)
    sustained, ended = None, None
    for r in order:
        if r.status != Status.OK or r.step_verdict != StepVerdict.SUSTAINED:
            ended = r
            break
        sustained = float(r.rate)
    knee = None
    first = order[0].latency_p99_s if order and order[0].status == Status.OK else None
    if first and idle_p99_s:
        first = None if first > KNEE_FACTOR * idle_p99_s else idle_p99_s
    if first:
        for r in order:
            if r.status != Status.OK:
                break
            if r.step_verdict == StepVerdict.SATURATED or r.latency_p99_s > KNEE_FACTOR * first:
                knee = float(r.rate)
                break
    return Figures(sustained, knee, sustained is not None and (
        ended is None or generator_limited(ended)))


def ladder_rows(rows: list[Row]) -> list[Row]:
    """A row per ladder and repeat, keyed as its ladder (ladder_key): the
    figures of its steps, `ok` where one was sustained, `invalid` (why in
    its error) where none was. Made by the analysis, never written."""
    ladders: dict[tuple[ConfigKey, int], list[Row]] = {}
    for r in rows:
        key = ladder_key(ConfigKey.of(r))
        if key is not None and r.status not in NOT_MEASURED:
            ladders.setdefault((key, r.rep), []).append(r)
    # summary.csv's steps carry no verdict, and their ladder has its own line
    summarised = {ConfigKey.of(r) for r in rows}
    idle = _idle_p99s(ladders)
    out = []
    for (key, _), steps in ladders.items():
        if key in summarised:
            continue
        first = min(measured(steps), key=lambda r: r.rate)
        # a seeded repeat (seeded_start) bends from its earlier repeats' idle p99
        seeded = first.rate > idle[key][0]
        found = figures(steps, idle[key][1] if seeded else None)
        if seeded and idle[key][1] is None:
            found = dataclasses.replace(found, knee_rps=None)
        error = None if found.sustained_rps is not None else (
            f"no step of the ladder was sustained (its first, {first.rate} requests a second"
            + (", where this repeat started from the earlier ones" if seeded else "")
            + f": {first.step_verdict or first.status})")
        out.append(Row(**{name: getattr(first, name) for name in _IDENTITY} | {RATE.name: None},
                       status="ok" if error is None else "invalid", error=error,
                       sustained_rps=found.sustained_rps, knee_rps=found.knee_rps,
                       ladder_top=found.at_top))
    return out


def _idle_p99s(ladders: dict[tuple[ConfigKey, int], list[Row]]
               ) -> dict[ConfigKey, tuple[int, float | None]]:
    """Each ladder's lowest rate in any repeat, and the median p99 of its ok
    steps there (the server nearly idle; None where none was ok): what a
    seeded repeat, which starts higher, reads its knee from."""
    lowest: dict[ConfigKey, int] = {}
    for (key, _), steps in ladders.items():
        lowest[key] = min([lowest.get(key, steps[0].rate)] + [r.rate for r in steps])
    p99s: dict[ConfigKey, list[float]] = {}
    for (key, _), steps in ladders.items():
        p99s.setdefault(key, []).extend(
            r.latency_p99_s for r in measured(steps) if r.rate == lowest[key]
            and r.status == Status.OK and r.latency_p99_s is not None)
    return {key: (rate, statistics.median(p99s[key]) if p99s[key] else None)
            for key, rate in lowest.items()}
