"""The run loop: the planned runs in order, one at a time, each row handed
to the record as it finishes (a run that cannot start gets its skipped or
build-failed row, and so does a rate ladder's step above the one that
ended the ladder in its repeat, or above one not run again for its earlier
failures, or at or above the load generator's ceiling the run has measured
under its load: core/ladder.py; a step the load generator could not keep runs
again at once, up to ladder.GENERATOR_RETRIES times; and a configuration whose smaller size failed
by a limit that grows with size: rules.outgrown); a run whose build is
still going on (a check's builds overlap its runs: builder.Preparation)
waits, and the next run whose build is done goes first; then, under
--until-ci or --until-settled, pass after pass while the sequential rules
ask for more. The rules (sequential.py)
and the record (a run directory) are handed in: this module runs what they
say and decides nothing itself (hyperfine's scheduler, our executor)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Protocol

from ..core.formatting import fmt_duration, fmt_elapsed, fmt_percent
from ..core.ladder import (ceiling_error, ceilings, end_reason, generator_limited,
                           generator_load, ladder_key, not_repeated_error, past_end,
                           past_end_error, refinement, retried, with_rate)
from ..core.schema import PAST_END, ConfigKey, Row, RowKey, Status
from ..core.workloads import RATE
from ..plan.plan import Planned, held, start_times
from ..plan.timeouts import least_expected_s, timed, walls
from .builder import Readiness
from .executor import Executed, Executor, make_row, unready_row
from .progress import Progress


class Record(Protocol):
    """Where rows go as they finish (record.rundir.RunDir)."""
    name: str

    def rows(self) -> list[Row]: ...

    def append_run(self, row: Row) -> None: ...

    def append_samples(self, row: Row, samples: Iterable[object]) -> None: ...


class Rules(Protocol):
    """When to run a configuration again (sequential.py)."""

    def repeated(self, p: Planned, statuses: list[Status]) -> bool: ...

    def outgrown(self, p: Planned, statuses: Mapping[ConfigKey, list[Status]]
                 ) -> ConfigKey | None: ...

    def too_dear(self, p: Planned, expected_s: float | None) -> float | None: ...

    def more_runs(self, rows: Iterable[Row], runs: list[Planned]) -> list[Planned]: ...


Ready = Callable[[Planned], Readiness | None]


# By ladder and repeat, the lowest step that ended it and the error of the
# steps above it, recorded skipped.
Ends = dict[tuple[ConfigKey, int], tuple[int, str]]
# By step and repeat, its attempts the load generator could not keep.
Limited = dict[RowKey, int]


@dataclass
class Ladders:
    """What a run's ladder steps so far say of the steps after them: where
    each ladder ended in each repeat (ended), each step's attempts the
    generator could not keep (limited), and the ladders whose steps the
    run's ceiling stopped, at what rate (capped: refined up to it)."""
    ended: Ends = field(default_factory=dict)
    limited: Limited = field(default_factory=dict)
    capped: dict[tuple[ConfigKey, int], int] = field(default_factory=dict)


def _end(ended: Ends, ladder: ConfigKey, rep: int, rate: int, error: str) -> None:
    known = ended.get((ladder, rep))
    if known is None or rate < known[0]:
        ended[(ladder, rep)] = (rate, error)


def no_wait() -> None:
    """What a run loop whose every build is done before it starts waits for:
    nothing (ready never answers None)."""
    raise AssertionError("a run's build was still going on, and nothing to wait for it")


def _next(pending: list[Planned], ready: Ready, wait: Callable[[], None]
          ) -> tuple[int, Readiness]:
    """The first pending run whose build is done, and its readiness; until
    there is one, wait."""
    while True:
        for j, p in enumerate(pending):
            if (readiness := ready(p)) is not None:
                return j, readiness
        wait()


def _too_dear(p: Planned, rules: Rules, statuses: Mapping[ConfigKey, list[Status]],
              took: dict[ConfigKey, float]) -> tuple[float, float] | None:
    """A configuration's first run the budget's rule does not start
    (Rules.too_dear): the seconds it was expected to take at least, and the
    limit they pass; None: it runs."""
    if p.key in statuses:
        return None
    expected = least_expected_s(p, took)
    limit = rules.too_dear(p, expected)
    return None if limit is None or expected is None else (expected, limit)


# A run too dear for the budget is started anyway, for at most this long: a
# program that refuses its size at once (java-platform's million threads
# against kernel.pid_max, in 0.1 s) shows that failure, not a forecast.
PROBE_S = 10.0


def dear_row(run_id: str, p: Planned, expected_s: float, limit_s: float,
             probed: bool = False) -> Row:
    """The row of a run too dear for the budget: skipped, its expected
    seconds recorded (runs.csv's expected_s); probed: started, and stopped
    at PROBE_S."""
    return make_row(run_id, p, Status.SKIPPED, expected_s=expected_s,
                    error=f"not run: expected to take at least {fmt_duration(expected_s)} a run "
                          f"(its smaller size's runs grown with its size), more than "
                          f"{fmt_duration(limit_s)}, its share of the budget (--budget; "
                          f"--until-settled)" + (f"; started, it was still running at "
                                                 f"{fmt_elapsed(PROBE_S)} and was stopped"
                                                 if probed else ""))


def _probed(run_id: str, p: Planned, dear: tuple[float, float], readiness: Readiness,
            executor: Executor) -> Executed:
    """A run too dear for the budget, started for at most PROBE_S: its own
    row where it ended by then (a failure at start, or a run its forecast
    overrated), else its dear row."""
    if not readiness.ready:
        return Executed(dear_row(run_id, p, *dear))
    tried = executor.run(dataclasses.replace(p, timeout_s=min(p.timeout_s, PROBE_S)))
    if tried.row.status != Status.TIMEOUT:
        return tried
    return Executed(dear_row(run_id, p, *dear, probed=True))


def execute(record: Record, runs: list[Planned], rules: Rules, ready: Ready,
            executor: Executor, progress: Progress, first: int = 0, past: Iterable[Row] = (),
            wait: Callable[[], None] = no_wait) -> dict[Status, int]:
    """Run the runs in order, recording each row as it finishes; a run whose
    build is still going on (ready answers None) waits, the next ready one
    first (wait: until another build ends). Returns the count of rows per
    status. first: the progress line's index of runs[0]. past: the rows of
    OUT's earlier runs, for --adaptive-sleep, which takes the longest start
    time of those and this run's."""
    counts: dict[Status, int] = {}
    statuses: dict[ConfigKey, list[Status]] = {}
    recorded = record.rows()
    ladders = Ladders()
    for r in recorded:
        _note(statuses, ladders, r)
    past = list(past)
    spawns = start_times(recorded)
    past_spawns = start_times(past)
    took = walls(past) | walls(recorded)  # this run's runs over OUT's, for timed()
    # runs too dear to start: a larger size grows from their forecast
    foreseen = {ConfigKey.of(r): r.expected_s for r in recorded if r.expected_s is not None}
    pending = list(runs)
    again: Planned | None = None  # a step run again at once (ladder.retried)
    i = first - 1
    while pending:
        i += 1
        j, readiness = _next(pending, ready, wait)
        p = pending.pop(j)
        if j:  # taken out of order: its estimate moves with it
            progress.estimates.insert(i, progress.estimates.pop(i + j))
        if p is not again and not rules.repeated(p, statuses.get(p.key, [])):
            _not_repeated(p, i, statuses, ladders.ended, progress)
            continue
        p = _prepared(p, p.key in statuses, spawns, past_spawns, took)
        progress.start(i, p.label)
        below = ladders.ended.get((ladder, p.rep)) if (ladder := ladder_key(p.key)) else None
        smaller = rules.outgrown(p, statuses)
        dear = _too_dear(p, rules, statuses, took | foreseen)
        if (ended := _past(p, below, record, ladders)) is not None:
            done = Executed(make_row(record.name, p, Status.SKIPPED, error=ended,
                                     step_verdict=PAST_END))
        elif smaller is not None:
            progress.estimates[i] = 0.0
            done = Executed(_outgrown_row(record.name, p, smaller, statuses[smaller]))
        elif dear is not None:
            progress.estimates[i] = 0.0
            done = _probed(record.name, p, dear, readiness, executor)
            if done.row.status == Status.SKIPPED:
                foreseen[p.key] = dear[0]
        else:
            done = executor.run(p) if readiness.ready else unready_row(record.name, p, readiness)
        _keep(record, done, statuses, ladders, spawns, took, counts)
        progress.finish(done.row)
        again = p if retried(done.row, ladders.limited.get(p.row_key, 0)) else None
        if (following := _following(p, again, done.row, record, progress, ladders)) is not None:
            pending.insert(0, following)
            progress.total += 1
            progress.estimates.insert(i + 1, progress.estimates[i])
    return counts


def _outgrown_row(run_id: str, p: Planned, smaller: ConfigKey, failed: list[Status]) -> Row:
    """The row of a run not made for its smaller size's failures (rules.outgrown)."""
    return make_row(run_id, p, Status.SKIPPED, outgrown_at=smaller.settings,
                    error=f"not run: at {smaller.settings} its runs failed "
                          f"({', '.join(failed)}), none ok, and that failure grows with "
                          f"size (--until-settled; their rows are kept)")


def _past(p: Planned, below: tuple[int, str] | None, record: Record, ladders: Ladders
          ) -> str | None:
    """Why a ladder's step is not run: its ladder ended below it in its
    repeat, or it is at or above the run's ceiling under its load
    (ladder.ceilings; the ladder is then refined up to it: Ladders.capped);
    None: it runs."""
    rate = p.key.param(RATE.name)
    if below is not None and below[0] < rate:
        return below[1]
    if (load := generator_load(p.key)) is None:
        return None
    ceiling = ceilings(record.rows()).get(load)
    if ceiling is None or rate < ceiling:
        return None
    ladders.capped[(ladder_key(p.key), p.rep)] = ceiling
    return ceiling_error(ceiling)


def _following(p: Planned, again: Planned | None, row: Row, record: Record,
               progress: Progress, ladders: Ladders) -> Planned | None:
    """What runs next, at once: the step again (ladder.retried, said on the
    progress line), else its ladder's refinement, else nothing."""
    if again is not None:
        progress.message(f"{p.label}: run again: {row.error}")
        return again
    return _refined(p, row, record, ladders)


def _not_repeated(p: Planned, i: int, statuses: dict[ConfigKey, list[Status]], ended: Ends,
                  progress: Progress) -> None:
    """Say that p is not run (its configuration's earlier runs failed, and
    rules.repeated runs it no more); a ladder's step ends its ladder."""
    progress.estimates[i] = 0.0
    progress.message(f"{p.label}: not run: its earlier runs failed "
                     f"({', '.join(statuses[p.key])}; --until-settled; their rows are kept)")
    if (ladder := ladder_key(p.key)) is not None:  # it would end its ladder again
        rate = p.key.param(RATE.name)
        _end(ended, ladder, p.rep, rate, not_repeated_error(rate, p.rep, statuses[p.key]))


def _prepared(p: Planned, seen: bool, spawns: dict[ConfigKey, list[float]],
              past_spawns: dict[ConfigKey, list[float]], took: dict[ConfigKey, float]) -> Planned:
    """p with its sleep held as long as its tasks took to start (held) and
    its timeout from the walls so far (timed); for a configuration not seen
    yet, from the smaller sizes' starts."""
    known = [] if seen else [  # a first run: the smaller sizes' starts
        (k, max(v)) for spawned in (spawns, past_spawns) for k, v in spawned.items()]
    p = held(p, spawns.get(p.key, []) + past_spawns.get(p.key, []), known)
    return timed(p, took)


def _keep(record: Record, done: Executed, statuses: dict[ConfigKey, list[Status]],
          ladders: Ladders, spawns: dict[ConfigKey, list[float]], took: dict[ConfigKey, float],
          counts: dict[Status, int]) -> None:
    """Record a finished run's row (and its samples), and note what it says
    for the runs after it: its status, a ladder it ends, its tasks' start
    times, its wall time, the count of its status."""
    if done.samples:
        record.append_samples(done.row, done.samples)
    record.append_run(done.row)
    _note(statuses, ladders, done.row)
    for key, starts in start_times([done.row]).items():
        spawns.setdefault(key, []).extend(starts)
    for key, wall in walls([done.row]).items():
        took[key] = max(took.get(key, 0.0), wall)
    counts[done.row.status] = counts.get(done.row.status, 0) + 1


def _refined(p: Planned, row: Row, record: Record, ladders: Ladders) -> Planned | None:
    """A ladder's next step between its last sustained rate and its first
    saturated one, or the run's ceiling that stopped it, where they are not
    yet within 10% (ladder.refinement)."""
    ladder = ladder_key(p.key)
    capped = ladders.capped.get((ladder, p.rep))
    if ladder is None or (past_end(row) and capped is None):
        return None
    rate = refinement([r for r in record.rows()
                       if r.rep == p.rep and ladder_key(ConfigKey.of(r)) == ladder], capped)
    return None if rate is None else dataclasses.replace(p, key=with_rate(p.key, rate))


def _note(statuses: dict[ConfigKey, list[str]], ladders: Ladders, row: Row) -> None:
    """Note a row's status for rules.repeated (a step not run past its
    ladder's end says nothing of how its runs end), and a step that ends its
    ladder in its repeat (ladder.end_reason): the scheduler runs none of
    that ladder's higher steps in that repeat; a step the generator could
    not keep ends it only once it is not run again (ladder.retried)."""
    key = ConfigKey.of(row)
    if not past_end(row):
        statuses.setdefault(key, []).append(row.status)
    if generator_limited(row):
        limited = ladders.limited
        limited[(key, row.rep)] = attempts = limited.get((key, row.rep), 0) + 1
        if retried(row, attempts):
            return
    ladder = ladder_key(key)
    if ladder is not None and end_reason(row) is not None:
        _end(ladders.ended, ladder, row.rep, row.rate, past_end_error(row))


def execute_until_settled(record: Record, runs: list[Planned], planned: list[Planned],
                          rules: Rules, ready: Ready, executor: Executor, progress: Progress,
                          estimate: Callable[[Planned], float], past: Iterable[Row] = (),
                          wait: Callable[[], None] = no_wait) -> dict[Status, int]:
    """execute() the runs still to do of the plan, then (run --until-ci,
    --until-settled) pass after pass, each decided by rules.more_runs from
    the rows recorded so far, until no configuration of the plan needs
    another run. The progress line's total grows by each pass, announced
    before it runs."""
    past = list(past)
    counts = execute(record, runs, rules, ready, executor, progress, past=past, wait=wait)
    done, pass_no = len(runs), max((p.rep for p in planned), default=0)
    while extra := rules.more_runs(record.rows(), planned):
        pass_no += 1
        names, wording = [], []
        targets = sorted({p.until_ci for p in extra if p.until_ci is not None})
        if targets:
            names.append("until-ci")
            wording.append("wider than ±" + "/".join(map(fmt_percent, targets)) + " or unsettled")
        if any(p.until_settled for p in extra):
            names.append("until-settled")
            wording.append("in a verdict not settled")
        if not names:  # run --gate: its rule's own passes (ab_gate.Gate)
            names.append("gate")
            wording.append("with a gated figure undecided")
        configs = len({p.key for p in extra})
        progress.message(f"{'/'.join(names)}: pass {pass_no}: "
                         + (f"{len(extra)} runs of " if len(extra) != configs else "")
                         + f"{configs} configuration{'s' if configs != 1 else ''} still "
                         + " or ".join(wording))
        progress.total += len(extra)  # the total is known one pass at a time
        progress.estimates.extend(estimate(p) for p in extra)
        for status, n in execute(record, extra, rules, ready, executor, progress, first=done,
                                 past=past, wait=wait).items():
            counts[status] = counts.get(status, 0) + n
        done += len(extra)
    return counts
