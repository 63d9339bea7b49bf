"""The plan of a suite: which runs, in which order, and how long they
should take. Pure: no process is started here."""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .. import relative
from ..core.registry import Impl
from ..core.schema import ConfigKey, Part, Row, RowKey, Status
from .settings import Settings
from ..core.workloads import (FIRST_START_GROWTH, WORKLOADS, Request, Workload,
                              adaptive_sleep_ms)


@dataclass(frozen=True)
class Planned:
    impl: Impl
    key: ConfigKey
    rep: int
    duration_ms: int
    iterations: int
    timeout_s: float = math.inf  # the part's own (suites.toml), else the run's
    warmup_ms: int = 0
    until_ci: float | None = None  # the part's own --until-ci (a fraction), else the run's
    until_settled: bool = False  # run --until-settled (sequential.more_runs)
    max_repeat: int | None = None  # the most runs --until-ci or --until-settled may give it
    # run --adaptive-sleep: duration_ms is the ceiling; the scheduler sets each run's
    adaptive_sleep: bool = False
    judged: bool = True  # its part's (settings.Part.judged)

    @property
    def workload(self) -> Workload:
        return WORKLOADS[self.key.workload]

    @property
    def row_key(self) -> RowKey:
        return self.key, self.rep

    @property
    def label(self) -> str:
        return f"{self.key.label} rep {self.rep}"

    @property
    def request(self) -> Request:
        return Request(self.key.workload, self.key.n, self.key.buffer, self.iterations,
                       self.duration_ms, self.impl.tasks_start, self.key.params, self.warmup_ms)

    def argv(self) -> list[str]:
        return [*self.impl.argv(), *self.workload.argv(self.request)]

    def command(self, variant: bool = False) -> list[str]:
        """The run as a shell line runs it: the environment its workload
        sets (Workload.env), then argv. A variant's own environment wins
        over the workload's; runs.csv has it in the variant's name, and
        variant=True puts it in front too (the dry run's line, run as
        printed)."""
        own = dict(self.impl.settings_env)
        env = [*(own.items() if variant else ()),
               *((k, v) for k, v in self.workload.env(self.request).items() if k not in own)]
        return [f"{k}={v}" for k, v in env] + self.argv()


def plan(impls: list[Impl], s: Settings) -> list[Planned]:
    """Repeats are the outer loop, so that a drift in the machine's state
    spreads over all implementations instead of hitting one, and an
    interrupted suite already holds a complete first pass. A configuration
    named by two parts runs once, as the first part says."""
    runs: list[Planned] = []
    seen: set[RowKey] = set()
    for rep in range(1, max((p.repeat or s.repeat for p in s.parts), default=0) + 1):
        for impl in impls:
            for part in s.parts:
                if rep > (part.repeat or s.repeat) or (
                        part.impls is not None and impl.base not in part.impls):
                    continue
                for name in part.workloads:
                    if name not in impl.workloads:
                        continue
                    workload = WORKLOADS[name]
                    ns = list(part.ns) if workload.uses_n else [None]
                    buffers = list(part.buffers) if workload.uses_buffer else [None]
                    grid = itertools.product(*([(d.name, v) for v in part.values(d)]
                                               for d in workload.dimensions))
                    for n, buffer, params in itertools.product(ns, buffers, grid):
                        if workload.n_refused(n):
                            continue  # named by omitted(), below
                        key = ConfigKey(impl.id, name, n, buffer, tuple(params))
                        if (key, rep) in seen:
                            continue
                        seen.add((key, rep))
                        runs.append(Planned(
                            impl, key, rep, duration_ms=part.duration_ms or s.duration_ms,
                            iterations=(part.iterations or s.iterations
                                        or workload.default_iterations),
                            timeout_s=part.timeout_s or s.timeout_s,
                            warmup_ms=warmup_ms(workload, part, s),
                            until_ci=s.target(part), until_settled=s.until_settled,
                            judged=part.judged,
                            adaptive_sleep=(s.adaptive_sleep
                                            and workload.adaptive_column is not None),
                            max_repeat=(s.ceiling(part) if s.target(part) is not None
                                        or (s.until_settled and part.judged) else None)))
    return runs


def configurations(runs: list[Planned]) -> dict[ConfigKey, Planned]:
    """Each configuration of a plan once, in plan order, as its last planned run."""
    out: dict[ConfigKey, Planned] = {}
    for p in runs:
        if p.key not in out or p.rep > out[p.key].rep:
            out[p.key] = p  # a key keeps its first place in the dict
    return out


def warmup_ms(workload: Workload, part: Part, s: Settings) -> int:
    """The part's warm-up, else the run's (--warmup-ms), else the
    workload's; always 0 for a workload that takes none."""
    if workload.default_warmup_ms is None:
        return 0
    for value in (part.warmup_ms, s.warmup_ms, workload.default_warmup_ms):
        if value is not None:
            return value
    return 0


# A configuration, its iteration count and its warm-up (ms).
HistoryKey = tuple[ConfigKey, int, int]
History = dict[HistoryKey, float]


def history_from(rows: Iterable[Row]) -> History:
    """Median of each configuration's declared history column (wall time;
    spawn time for sleep, whose sleep is known) over earlier ok rows."""
    seen: dict[HistoryKey, list[float]] = {}
    for r in rows:
        workload = WORKLOADS.get(r.workload)
        if workload is None or r.status != Status.OK or r.iterations is None:
            continue
        value = r.figure(workload.history_column)
        if value is not None:
            key = (ConfigKey.of(r), r.iterations, r.warmup_ms or 0)
            seen.setdefault(key, []).append(value)
    return {k: statistics.median(v) for k, v in seen.items()}


def _past(p: Planned, history: History) -> float | None:
    """This machine's earlier times of a planned run's configuration; for a
    variant or release timed never before, its implementation's as declared."""
    past = history.get((p.key, p.iterations, p.warmup_ms))
    if past is None and p.impl.id != p.impl.base:
        stock = dataclasses.replace(p.key, impl=p.impl.base)
        past = history.get((stock, p.iterations, p.warmup_ms))
    return past


def estimate_s(p: Planned, history: History | None = None) -> float:
    """How long one run should take: from this machine's earlier runs when
    there are any (_past), else the workload's rough guess."""
    history = history or {}
    past = _past(p, history)
    req = p.request
    if p.adaptive_sleep and past is not None and p.workload.history_column == \
            p.workload.adaptive_column:
        # the sleep held() will give it: a first run has only the smaller
        # sizes' start times to go by
        known = [(k, t) for (k, _, _), t in history.items()]
        req = held(p, [past] if p.rep > 1 else [], known).request
    # no run outlasts its timeout
    return min(p.workload.estimate_s(req, past), p.timeout_s)


def held(p: Planned, starts: Iterable[float], known: Iterable[tuple[ConfigKey, float]] = ()
         ) -> Planned:
    """A planned run with its sleep as --adaptive-sleep sets it, decided as
    the runs go from what they measured: from the longest start time of its
    configuration's earlier runs (starts, start_times); a first run with
    none, from the configurations' start times known (known: this run's
    and OUT's earlier runs'), its family's largest smaller size's grown
    with the tasks (first_start_s); else the whole duration. A first run
    whose tasks did not all overlap is invalid, and the next one, no longer
    a first, is given no known: it sleeps the whole duration."""
    if not p.adaptive_sleep:
        return p
    longest = max(starts, default=None)
    spawn = longest if longest is not None else first_start_s(p.key, known)
    return dataclasses.replace(p, duration_ms=adaptive_sleep_ms(p.duration_ms, spawn))


def first_start_s(key: ConfigKey, known: Iterable[tuple[ConfigKey, float]]) -> float | None:
    """The start time a configuration's first run is guessed to take: its
    family's largest smaller size's longest known start, grown with the
    tasks and by FIRST_START_GROWTH; None where none is known."""
    size = key.size
    smaller = [(k.size, t) for k, t in known
               if size and k.family == key.family and k.size and k.size < size]
    if not smaller:
        return None
    below, start = max(smaller)
    return FIRST_START_GROWTH * start * size / below


def start_times(rows: Iterable[Row]) -> dict[ConfigKey, list[float]]:
    """The tasks' start times of ok rows, by configuration, for the
    workloads that adapt their sleep to it (Workload.adaptive_column)."""
    out: dict[ConfigKey, list[float]] = {}
    for r in rows:
        workload = WORKLOADS.get(r.workload)
        column = workload.adaptive_column if workload is not None else None
        if column and r.status == Status.OK and r.figure(column) is not None:
            out.setdefault(ConfigKey.of(r), []).append(r.figure(column))
    return out


def estimate_basis(runs: list[Planned], history: History, out: Path) -> str:
    """What an estimate rests on, in words."""
    known = sum(1 for p in runs if _past(p, history) is not None)
    if known == len(runs):
        return f"every run timed before on this machine ({relative(out)})"
    if not known:
        return "a rough guess: no earlier run of these configurations in " + relative(out)
    return f"{known} of {len(runs)} runs timed before in {relative(out)}, the rest guessed"


def omitted(s: Settings) -> list[str]:
    """The sizes a workload cannot run at, left out of a plan that did not
    name that workload itself (a suite, or every workload): one line each."""
    lines = []
    for part in s.parts:
        for name in part.workloads:
            refused = [n for n in part.ns if WORKLOADS[name].n_refused(n)]
            if refused:
                lines.append(f"{name} left out at N = {', '.join(map(str, refused))}: "
                             f"{WORKLOADS[name].n_refused(refused[0])}")
    return list(dict.fromkeys(lines))
