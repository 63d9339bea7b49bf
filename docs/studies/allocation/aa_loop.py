"""The borrowed variance's false "ahead" rate inside the allocation loop, on
A/A: the calibration suite's rows (one build under two names, X and
X[BENCH_AA=1]), replayed through the real `--until-settled` loop
(scheduler.execute_until_settled with sequential.Budgeted), starting from
1, 2 or 3 runs a side (docs/studies/allocation.md, "False ahead inside the
loop").

    .venv/bin/python docs/studies/allocation/aa_loop.py RUN_DIR [--seeds 0,1,2,3]

Each trial pools a configuration's ok rows of both names (one build: the
names are labels) and deals them out at random, without replacement, as the
loop asks for runs of either name, up to the rows there are (the ceiling:
half of them a side). At every look (the minimum, then each pass) each A/A
pair's headline figures are asked "is one side ahead?" by the borrowed test
(core/stats.borrowed_p, the prior fitted on the look's own rows:
analyse/ranks.priors), two-sided at 5%, one test on its own (a family's
rule only calls fewer). A pair's figure counts once, as called ahead if any
of its looks called it. Prints, per runs a side, the calls of every seed
together.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from harness import sequential  # noqa: E402
from harness.analyse import ranks  # noqa: E402
from harness.analyse.analysis import group_runs, headline  # noqa: E402
from harness.analyse.questions import ask  # noqa: E402
from harness.analyse.standings import BEHIND  # noqa: E402
from harness.core.registry import resolve  # noqa: E402
from harness.core.schema import ConfigKey, Row, Status  # noqa: E402
from harness.core.stats import borrowed_p  # noqa: E402
from harness.execute import scheduler  # noqa: E402
from harness.execute.builder import Readiness  # noqa: E402
from harness.execute.executor import Executed  # noqa: E402
from harness.execute.progress import Progress  # noqa: E402
from harness.plan.options import Options  # noqa: E402
from harness.plan.plan import Planned, plan  # noqa: E402
from harness.plan.settings import settings_from  # noqa: E402
from harness.record.rundir import RunDir, read_runs  # noqa: E402

MARK = "[BENCH_AA=1]"  # the calibration suite's second name of one build
RATE = 0.05  # two-sided
SIDES = (1, 2, 3)


def _base(key: ConfigKey) -> ConfigKey:
    return dataclasses.replace(key, impl=key.impl.removesuffix(MARK))


class Dealt:
    """The executor: each run of either name dealt from its build's pool."""

    def __init__(self, run_id: str, rows: list[Row], seed: int) -> None:
        rng = random.Random(seed)
        self.run_id = run_id
        self.pools: dict[ConfigKey, list[Row]] = defaultdict(list)
        self.names: dict[ConfigKey, Row] = {}
        for r in rows:
            if r.status == Status.OK:
                self.pools[_base(ConfigKey.of(r))].append(r)
                self.names.setdefault(ConfigKey.of(r), r)
        for pool in self.pools.values():
            rng.shuffle(pool)

    def run(self, p: Planned) -> Executed:
        name = self.names[p.key]
        drawn = self.pools[_base(p.key)].pop()
        return Executed(dataclasses.replace(drawn, rep=p.rep, run_id=self.run_id,
                                            impl=name.impl, variant=name.variant))


class Looking(sequential.Budgeted):
    """The default suite's rules, with a look at the A/A pairs before each pass."""

    def __init__(self) -> None:
        super().__init__(1e9, clock=lambda: 0.0)
        self.called: dict[tuple[ConfigKey, str], bool] = {}
        # the rankings' own verdicts: an A/A pair that is a neighbour pair
        # of a ranking, settled apart at some look
        self.ranked: dict[tuple[ConfigKey, str], bool] = {}

    def look(self, rows: list[Row]) -> None:
        groups = {g.key: g for g in group_runs(rows)}
        borrowed = ranks.priors(groups.values())
        for key, g in groups.items():
            twin = groups.get(dataclasses.replace(key, impl=key.impl + MARK))
            if twin is None or key.impl.endswith(MARK):
                continue
            for metric in headline(key.workload):
                prior = ranks.prior_for(borrowed, key.workload, key.n, metric)
                a, b = g.values(metric), twin.values(metric)
                p = borrowed_p(a, b, prior, 1.0, True) if prior is not None else None
                ahead = p is not None and min(p, 1 - p) <= RATE / 2
                self.called[key, metric] = self.called.get((key, metric), False) or ahead
        for r in ask(list(groups.values())).rankings:
            for pair in r.pairs:
                one = {_base(pair.leader.key), _base(pair.other.key)}
                if len(one) == 1 and pair.leader.key != pair.other.key:
                    key = (one.pop(), r.metric)
                    self.ranked[key] = self.ranked.get(key, False) or pair.verdict == BEHIND

    def more_runs(self, rows, runs):  # type: ignore[no-untyped-def]
        table = list(rows)
        self.look(table)
        return super().more_runs(table, runs)


def trial(rows: list[Row], sides: int, seed: int) -> Looking:
    """One replay of the loop from `sides` runs a side: each A/A pair's
    figure, called ahead at any look or not (Looking.called, .ranked)."""
    per_name = defaultdict(int)
    for r in rows:
        if r.status == Status.OK:
            per_name[ConfigKey.of(r)] += 1
    ceiling = min(per_name.values())
    s = settings_from(Options(suite="calibrate", repeat=sides, until_settled=True,
                              max_repeat=ceiling), ram_bytes=24 << 30)
    runs = [p for p in plan(resolve(s.impls), s) if per_name.get(p.key, 0) >= ceiling]
    run = RunDir.create_new(Path(tempfile.mkdtemp()) / "aa")
    rules = Looking()
    scheduler.execute_until_settled(run, runs, runs, rules, lambda p: Readiness("ready"),
                                    Dealt(run.name, rows, seed),
                                    Progress(len(runs), [1.0] * len(runs), io.StringIO()),
                                    lambda p: 1.0)
    rules.look(run.runs().rows)  # the last pass's runs
    return rules


def false_ahead(source: Path, sides: int, seeds: list[int]) -> tuple[int, int, int, int]:
    """Over the seeds: (called ahead by the borrowed test, A/A figures
    asked, settled apart by the rankings' verdicts, A/A figures that were
    neighbours in a ranking)."""
    rows = read_runs(source / "runs.csv").rows
    looks = [trial(rows, sides, seed) for seed in seeds]
    called = [ahead for t in looks for ahead in t.called.values()]
    ranked = [apart for t in looks for apart in t.ranked.values()]
    return sum(called), len(called), sum(ranked), len(ranked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--seeds", default="0,1,2,3")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    for sides in SIDES:
        ahead, asked, apart, neighbours = false_ahead(args.run_dir, sides, seeds)
        print(f"from {sides} run{'s' if sides > 1 else ''} a side: {ahead} of {asked} "
              f"A/A figures called ahead at some look ({ahead / asked:.1%}); the rankings "
              f"settled {apart} of {neighbours} A/A neighbour pairs apart")


if __name__ == "__main__":
    main()
