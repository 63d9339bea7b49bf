"""Replay the default suite's --until-settled allocation on a recorded run:
the plan of `run --suite default`, executed by a fake executor that draws
each configuration's runs from that run's own rows (docs/studies/allocation.md).

    .venv/bin/python docs/studies/allocation/replay.py RUN_DIR [--budget 45m]
        [--repeat 1] [--max-repeat 12] [--seeds 0,1,2] [--allocation now|uncut|headline-first|before]

A drawn run keeps the recorded row's shape and costs its recorded wall time
(plus the harness's overhead; a sleeping run, its time awake plus the sleep
--adaptive-sleep gives it); each figure is the configuration's median
times a log-normal draw of the spread its recorded runs show (at least 1%),
so verdicts settle as they would on that machine's noise. A configuration
with no ok row repeats its first row's failure. Prints, per seed, the
families' settled counts, what the budget left open, and the runs per
configuration.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import math
import os
import random
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from harness import sequential  # noqa: E402
from harness.analyse import ranks  # noqa: E402
from harness.analyse.analysis import group_runs  # noqa: E402
from harness.analyse.questions import ask  # noqa: E402
from harness.core.registry import resolve  # noqa: E402
from harness.core.schema import ConfigKey, Row  # noqa: E402
from harness.execute import scheduler  # noqa: E402
from harness.execute.builder import Readiness  # noqa: E402
from harness.execute.executor import Executed  # noqa: E402
from harness.execute.progress import Progress  # noqa: E402
from harness.plan.options import Options  # noqa: E402
from harness.plan.plan import Planned, plan  # noqa: E402
from harness.plan.settings import duration, settings_from  # noqa: E402
from harness.record.rundir import RunDir, read_runs  # noqa: E402

# The figures a drawn run varies: the headline ones and the run's cost.
DRAWN = ("wall_s", "first_iter_s", "warm_iter_s", "spawn_s", "peak_rss_bytes", "rps",
         "sleep_wait_s")
FLOOR_SD = 0.01
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None  # tempfile's own otherwise
ALLOCATIONS = {"now": sequential.NOW, "uncut": sequential.UNCUT,
               "headline-first": sequential.HEADLINE_FIRST,
               "before": sequential.BEFORE}


def _log_sd(values: list[float]) -> float:
    logs = [math.log(v) for v in values if v and v > 0]
    return max(FLOOR_SD, statistics.stdev(logs)) if len(logs) > 1 else 3 * FLOOR_SD


class Replay:
    """The executor: each run drawn from its configuration's recorded rows."""

    def __init__(self, run_id: str, recorded: dict[ConfigKey, list[Row]], seed: int) -> None:
        self.run_id, self.recorded, self.rng = run_id, recorded, random.Random(seed)

    def run(self, p: Planned) -> Executed:
        rows = self.recorded[p.key]
        ok = [r for r in rows if r.status == "ok"]
        if not ok:
            return Executed(dataclasses.replace(rows[0], rep=p.rep, run_id=self.run_id))
        drawn = {}
        for name in DRAWN:
            values = [_awake(r, name) for r in ok if getattr(r, name)]
            if values:
                value = statistics.median(values) * math.exp(self.rng.gauss(0, _log_sd(values)))
                drawn[name] = int(value) if isinstance(values[0], int) else value
        row = self.rng.choice(ok)
        if row.duration_ms is not None and p.duration_ms is not None:
            # --adaptive-sleep: the run sleeps what the scheduler gave it (p)
            drawn["wall_s"] = drawn["wall_s"] + (row.iterations or 1) * p.duration_ms / 1000
            drawn["duration_ms"] = p.duration_ms
        if drawn.get("wall_s", 0.0) > p.timeout_s:  # stopped at its limit (a dear run's probe)
            return Executed(dataclasses.replace(row, rep=p.rep, run_id=self.run_id,
                                                status="timeout", wall_s=p.timeout_s))
        return Executed(dataclasses.replace(row, rep=p.rep, run_id=self.run_id, **drawn))


def _spent(rows: list[Row]) -> float:
    """The runs' time as the budget counts it: each run's wall and the harness's overhead."""
    return sum(sequential.OVERHEAD_S + (r.wall_s or 0) for r in rows)


def _awake(r: Row, name: str) -> float:
    """A recorded figure; a sleeping run's wall time without its sleep."""
    value = getattr(r, name)
    if name == "wall_s" and r.duration_ms is not None:
        return value - (r.iterations or 1) * r.duration_ms / 1000
    return value


@dataclasses.dataclass(frozen=True)
class Replayed:
    """One replay's outcome: what the run spent and what it settled."""
    seed: int
    seconds: float  # the runs' time, the minimum included
    runs: int
    families: dict[str, tuple[int, int]]  # family: (settled, total)
    open_claims: tuple[str, ...]
    forecast: str  # sequential.forecast: what is still open at the end
    per_config: dict[int, int]  # runs: configurations with that many
    # the headline rankings' (sequential.headline) neighbour pairs settled,
    # of; their configurations with fewer than 2 ok runs
    headline: tuple[int, int] = (0, 0)
    headline_short: int = 0
    # the headline rankings' joint 95% rank intervals (analyse/ranks.py,
    # the variance borrowed): their median width in places, the share of
    # runtimes placed within ±1 (an interval of at most 3 places), and each
    # ranking's 95% best set's size
    width: float = 0.0
    within_one: float = 0.0
    best_sets: tuple[int, ...] = ()
    single_tier: tuple[str, ...] = ()  # the headline rankings that are one tier

    def text(self) -> str:
        families = "; ".join(f"{name} {settled} of {total}"
                             for name, (settled, total) in self.families.items())
        return (f"seed {self.seed}: {self.seconds:.0f} s of runs, {self.runs} runs; "
                f"settled: {families}; headline pairs {self.headline[0]} of "
                f"{self.headline[1]}, headline configurations under 2 runs "
                f"{self.headline_short}; rank intervals: median width {self.width:g}, "
                f"{self.within_one:.0%} within ±1, best sets "
                f"{', '.join(map(str, self.best_sets))}; one tier: "
                f"{', '.join(self.single_tier) or 'none'}; claims open: {'; '.join(self.open_claims) or 'none'}; "
                f"{self.forecast}; configurations by runs: "
                + ", ".join(f"{n} runs: {c}" for n, c in sorted(self.per_config.items())))


def replay(source: Path, budget_s: float, repeat: int, max_repeat: int | None,
           seed: int, allocation: sequential.Allocation = sequential.NOW) -> Replayed:
    recorded: dict[ConfigKey, list[Row]] = defaultdict(list)
    for r in read_runs(source / "runs.csv").rows:
        recorded[ConfigKey.of(r)].append(r)
    s = settings_from(Options(suite="default", repeat=repeat, max_repeat=max_repeat),
                      ram_bytes=24 << 30)
    runs = [p for p in plan(resolve(s.impls), s) if p.key in recorded]
    # the run directory is scratch: in memory where there is one (a flush to
    # disk per drawn run took a tenth of a replay), removed at the end
    with tempfile.TemporaryDirectory(dir=SCRATCH) as scratch:
        run = RunDir.create_new(Path(scratch) / "replay")

        def clock() -> float:
            return _spent(run.runs().rows)

        budget = sequential.Budgeted(budget_s, clock=clock, allocation=allocation)
        scheduler.execute_until_settled(run, runs, runs, budget, lambda p: Readiness("ready"),
                                        Replay(run.name, recorded, seed),
                                        Progress(len(runs), [1.0] * len(runs), io.StringIO()),
                                        lambda p: 1.0)
        rows = run.runs().rows
    floors = {p.impl.id for p in runs if p.impl.floor}
    judged = [g for g in group_runs(rows) if not g.rows[0].workload == "http"]
    q = ask(judged, floors)
    top = [r for r in q.rankings if sequential.headline(r)]
    places = ranks.all_rank_intervals(judged, floors, headline_only=True)
    widths = [p.width for r in places for p in r.places]
    return Replayed(
        seed, _spent(rows), len(rows),
        {name: (settled, total) for name, settled, total in q.families()},
        tuple(f"{c.claim.text} ({c.runs[0]} and {c.runs[1]} runs)"
              for c in q.claims if not c.settled),
        sequential.forecast(rows, runs),
        dict(Counter(len(g.rows) for g in group_runs(rows))),
        (sum(p.settled for r in top for p in r.pairs), sum(len(r.pairs) for r in top)),
        len({g.key for r in top for g in r.order if len(g.values(r.metric)) < 2}),
        statistics.median(widths) if widths else 0.0,
        sum(w <= 2 for w in widths) / len(widths) if widths else 0.0,
        tuple(len(r.best_set) for r in places),
        tuple(f"{r.workload} {r.n} {r.metric}" for r in places if len(r.tiers()) == 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--budget", default="45m")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--max-repeat", type=int, default=None,
                        help="the most runs of a configuration (default: the suite's, part by part)")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--allocation", choices=ALLOCATIONS, default="now",
                        help="now: the headline rankings first, a one-tier ranking's nearest cut "
                             "asked (sequential.NOW); uncut: without that, as on 2026-12-03; before: "
                             "every verdict of a family alike, as before 2026-12-02")
    args = parser.parse_args()
    for seed in (int(s) for s in args.seeds.split(",")):
        print(replay(args.run_dir, duration(args.budget, "--budget"), args.repeat,
                     args.max_repeat, seed, ALLOCATIONS[args.allocation]).text())


if __name__ == "__main__":
    main()
