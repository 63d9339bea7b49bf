"""The commands' options as typed records. Options: those of `run` and
`bisect`, built once from the command line (or, on a cluster's node, from
the options.json a task is given: cluster/layout.py writes and reads it)
and read by settings.py, bisect.py and cluster/; each field's metadata
(option()) declares it, and cli.py builds run's and bisect's parsers from
them. Values stay as typed: settings.py checks them and says what is wrong
in one line. CompareOptions,
MergeOptions and ListOptions: the other commands', checked as they are
built, so that cli.py only parses and dispatches."""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .. import ROOT, UsageError
from ..core.metrics import margins
from ..core.variants import split_names
from ..core.workloads import RATE, REQUESTS, STEP_S, USERS, WORKLOADS, Dimension


def dimensions() -> dict[str, Dimension]:
    """Every dimension a run can be given (an option), by name."""
    return {d.name: d for w in WORKLOADS.values() for d in w.dimensions if d.option}


# The commands that take an option: run's own, or also bisect's (what to
# measure and how, for each of bisect's steps).
RUN: tuple[str, ...] = ("run",)
MEASURE: tuple[str, ...] = ("run", "bisect")


def option(help: str, *, commands: tuple[str, ...] = RUN, default: Any = None,
           parser_default: Any = None, kind: type | None = None, metavar: str | None = None,
           action: str | None = None) -> Any:
    """An Options field and how the parser declares it (cli.py reads the
    metadata): --NAME from the field's name; help a template whose $name is
    one of settings.py's defaults, which cli.py fills in; a bool field is a
    switch. default: the record's when not given; parser_default: argparse's
    where it differs (an appended list, a folder)."""
    return field(default=default, metadata={
        "help": help, "commands": commands, "type": kind, "metavar": metavar,
        "default": default if parser_default is None else parser_default,
        "action": "store_true" if default is False else action})


@dataclass(frozen=True)
class Options:
    """`run`'s options by argparse's names (None or False: not given), in the
    order the parser declares them (options.json keeps it): each field's
    metadata is its declaration (option())."""
    impl: str | None = option(
        "comma-separated implementation ids or language names, or 'all' (default: the suite's "
        "own list, else all)")
    suite: str | None = option(
        "a named suite from harness/plan/suites.toml (default, quick); the options below "
        "override its workloads, sizes, repeats and sleep time")
    workload: str | None = option(
        f"comma-separated workloads ({', '.join(WORKLOADS)}) or 'all' (default)", commands=MEASURE)
    n: str | None = option("comma-separated task counts (default $n)", commands=MEASURE)
    buffer: str | None = option(
        "comma-separated channel capacities for bounded, 0 = rendezvous (default $buffers)",
        commands=MEASURE)
    repeat: int | None = option(
        "process runs per configuration (default $repeat, the fewest whose ratios can settle a "
        "verdict); with --until-ci or --until-settled, the minimum", commands=MEASURE, kind=int)
    duration_ms: int | None = option(
        "sleep time of each task in the sleep workload (default $duration_ms)", commands=MEASURE,
        kind=int)
    iterations: int | None = option(
        "in-process iterations (default: per workload, " + ", ".join(
            f"{w.name} {w.default_iterations}" for w in WORKLOADS.values()
            if w.kind == "program") + ")", commands=MEASURE, kind=int)
    warmup_ms: int | None = option(
        "untimed runs of the workload, in the same process, until this many ms have passed, "
        "before the timed iterations; warm = their median (default: per workload, " + ", ".join(
            f"{w.name} {w.default_warmup_ms}" for w in WORKLOADS.values()
            if w.default_warmup_ms is not None) + "; sleep and http take none)",
        commands=MEASURE, kind=int)
    # the workloads' own dimensions (dimensions()) given, by name, as typed;
    # the parser declares each from its Dimension
    params: dict[str, str] = field(default_factory=dict, metadata={"commands": MEASURE})
    timeout: float | None = option(
        "seconds before a run is killed and recorded as timeout (default $timeout_s)",
        commands=MEASURE, kind=float)
    max_rss: str | None = option(
        "RSS above which a run is killed and recorded as oom (default $max_rss%% of RAM)",
        commands=MEASURE)
    sample_interval_ms: float | None = option(
        "RSS and thread-count sampling period (default $sample_interval_ms)", commands=MEASURE,
        kind=float)
    out: str | None = option(
        "results folder; each run writes OUT/<run-id>/ and OUT/latest (default: results/ in "
        "the repository)", commands=MEASURE, parser_default=str(ROOT / "results"))
    inherit_env: str | None = option(
        "environment variables the measured programs also get (by default only the runtime "
        "variables, PATH, HOME, TMPDIR, the user and the locale: results/README.md)",
        commands=MEASURE, metavar="NAME,...")
    no_build: bool = option("use the programs as already built", commands=MEASURE, default=False)
    counters: bool = option(
        "also count each run with perf stat (Debian's linux-perf, installed when missing): "
        "context switches, CPU migrations, page faults, task clock, and cycles and "
        "instructions where the machine exposes them", commands=MEASURE, default=False)
    # past the --repeat minimum: until an interval is narrow or a verdict
    # settled, within a budget, or an A/B gate
    until_ci: str | None = option(
        "after the --repeat minimum, run again, pass after pass, each configuration whose "
        "headline figure's 95%% interval is unsettled or wider than ±PCT of its median (e.g. "
        "5%%), up to --max-repeat runs", metavar="PCT")
    until_settled: bool = option(
        "after the --repeat minimum, more passes of the configurations in a verdict not yet "
        "settled (a neighbour pair of a ranking, an article's claim) that can still settle, the "
        "most verdicts per second first, up to --max-repeat runs; a configuration whose runs "
        "all failed is not run again", default=False)
    budget: str | None = option(
        "with --until-settled or --until-ci: the time the runs may take, the minimum included "
        "(e.g. 45m, 1h30m, 2700); passes past it do not start, and the run says what is still "
        "open (default: the suite's)", metavar="DURATION")
    gate: str | None = option(
        "an A/B run that decides: the two implementations of --impl (the baseline first, e.g. "
        "X@git:BASE,X@git:HEAD), compared as compare --baseline --fail-above PCT does; after "
        "the --repeat minimum only the configurations with an undecided figure run again, the "
        "nearest to deciding per second first, up to --max-repeat (default $gate_max_repeat) "
        "within --budget (default ${gate_budget}m); exit 0 pass, 1 fail, 3 undecided",
        metavar="PCT")
    calibration: str | None = option(
        "with --gate: a run of the calibrate suite on this machine; the figures its A/A noise "
        "cannot decide at PCT are named, not gated", metavar="RUN_DIR")
    adaptive_sleep: bool = option(
        "sleep: each run's tasks sleep twice the longest time they took to start in the "
        "configuration's earlier runs, plus 1 s, at most --duration-ms (the first run sleeps "
        "the full --duration-ms); the sleep is recorded in runs.csv (duration_ms)",
        default=False)
    max_repeat: int | None = option(
        "with --until-ci or --until-settled: the most runs of one configuration (default "
        "$max_repeat, or --repeat when higher; at least --repeat)", kind=int, metavar="M")
    # where it runs: here, or a Slurm cluster
    on: str | None = option(
        "local (default): this machine; slurm: each repeat of the plan is a replicate, one "
        "task of a Slurm job array on a whole node, merged into one run directory with each "
        "row's node (docs/usage.md, 'On a cluster')", metavar="WHERE")
    partition: str | None = option(
        "with --on slurm: the partition (one machine kind; default: the cluster's default "
        "partition)", metavar="P")
    nodes: int | None = option(
        "with --on slurm: at most K replicates at once, each on a node of its own (default 1)",
        kind=int, metavar="K")
    slurm_opt: str | None = option(
        "with --on slurm: more sbatch options for every job, as a shell would split them, "
        "given after an = (e.g. --slurm-opt='--account=A --time=2:00:00')", metavar="OPTIONS")
    registry: tuple[str, ...] = option(
        "also the implementations of this impls.toml, kept outside the repository ({dir} = "
        "its folder); repeatable", commands=MEASURE, default=(), parser_default=[],
        action="append", metavar="FILE")
    source: str | None = option(
        "the git checkout that IMPL@git:REV names a commit of (bisect: --good and --bad are "
        "then revisions of it)", commands=MEASURE, metavar="DIR")

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Options:
        """From argparse's names and values (options.json's shape: the
        dimensions among the others); an unknown name is a UsageError."""
        names = {f.name for f in dataclasses.fields(cls)} - {"params"}
        dims = dimensions()
        unknown = [k for k in record if k not in names and k not in dims]
        if unknown:
            raise UsageError(f"unknown option {unknown[0]!r}")
        given = {k: v for k, v in record.items() if k in names}
        if given.get("registry") is not None:
            given["registry"] = tuple(given["registry"])
        else:
            given.pop("registry", None)
        params = {k: v for k, v in record.items() if k in dims and v is not None}
        return cls(**given, params=params)

    @classmethod
    def from_namespace(cls, args: argparse.Namespace, own: Iterable[str] = ()) -> Options:
        """The options a command parsed, but for those that are its own
        (`own`, and whatever no Options field or dimension names)."""
        known = {f.name for f in dataclasses.fields(cls)} | set(dimensions())
        return cls.from_record({k: v for k, v in vars(args).items()
                                if k in known and k not in own})

    def refuse_unused(self) -> None:
        """An option the chosen workloads or mode would not read is refused
        in one line (docs/usage.md: "refused, never guessed"): an empty
        --suite, a dimension no named workload has, --step-s without --rate,
        --users or --requests beside --rate (an open loop has neither), --gate
        with --on slurm (its passes are decided between runs, here)."""
        if self.suite is not None and not self.suite.strip():
            raise UsageError("--suite is empty: name a suite, or leave the option out")
        dims = dimensions()
        if self.workload is not None:
            named = [w.strip() for w in self.workload.split(",")]
            if "all" not in named:
                have = {d.name for w in named if w in WORKLOADS for d in WORKLOADS[w].dimensions}
                unused = [dims[n].option for n in self.params if n not in have]
                if unused:
                    raise UsageError(f"{unused[0]}: {self.workload} does not take it "
                                     f"(only a workload with that dimension does)")
        given = {n for n, v in self.params.items() if v is not None}
        closed_loop = {USERS.name, REQUESTS.name}
        if STEP_S.name in given and RATE.name not in given:
            raise UsageError("--step-s is the length of a --rate ladder's step: give --rate too")
        if RATE.name in given and given & closed_loop:
            closed = sorted(dims[n].option for n in given & closed_loop)[0]
            raise UsageError(f"{closed} is the closed loop's, and --rate runs an open loop: "
                             f"give one or the other")
        if self.gate is not None and self.on == "slurm":
            raise UsageError("--gate runs on this machine: not with --on slurm")


def name_list(text: str, name: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError(f"{name} is empty")
    return names


def impl_list(text: str) -> list[str]:
    """--impl: names separated by commas outside a variant's brackets."""
    names = split_names(text)
    if not names:
        raise UsageError("--impl is empty")
    return names


def percentage(text: str, name: str) -> float:
    """'5%' or '5' -> 0.05; a finite number >= 0."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise UsageError(f"{name}: {text!r} is not a percentage like 5%") from None
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"{name} must be a percentage >= 0")
    return value / 100



@dataclass(frozen=True)
class CompareOptions:
    """compare's options, checked: --fail-above a fraction, --margin each
    metric's, and the run directories one with --baseline, else two."""
    old: str
    new: str | None = None
    baseline: str | None = None
    fail_above: float | None = None
    calibration: str | None = None
    allow_undecided: bool = False
    margin: dict[str, float] = field(default_factory=lambda: margins(None))
    format: str = "text"

    def __post_init__(self) -> None:
        if self.allow_undecided and self.fail_above is None:
            raise UsageError("--allow-undecided is for the gate: give --fail-above PCT too")
        if self.calibration is not None and self.fail_above is None:
            raise UsageError("--calibration names the figures the gate cannot decide: give "
                             "--fail-above PCT too")
        if self.baseline is not None and self.new is not None:
            raise UsageError("compare --baseline takes one run directory: the baseline and the "
                             "others are all in it")
        if self.baseline is None and self.new is None:
            raise UsageError("compare needs OLD and NEW run directories (or one with "
                             "--baseline IMPL)")

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> CompareOptions:
        """From compare's parsed text: the percentages read, the rest checked."""
        margin = args.margin
        if margin is not None and any(p.strip().startswith("=") for p in margin.split(",")):
            # never read as every metric's
            raise UsageError(f"--margin {margin!r}: METRIC=PCT with no metric")
        return cls(args.old, args.new, args.baseline,
                   percentage(args.fail_above, "--fail-above") if args.fail_above is not None
                   else None, args.calibration, args.allow_undecided, margins(margin),
                   args.format)


@dataclass(frozen=True)
class MergeOptions:
    """merge's options, checked: OUT named, --labels a list."""
    run_dirs: list[str]
    out: str
    labels: list[str] | None = None
    report: bool = True

    def __post_init__(self) -> None:
        if not self.out.strip():
            raise UsageError("--out is empty: name the results folder")

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> MergeOptions:
        return cls(args.run_dirs, args.out,
                   name_list(args.labels, "--labels") if args.labels is not None else None,
                   not args.no_report)


@dataclass(frozen=True)
class ListOptions:
    """list's options: the implementations named once, as IMPL or with --impl."""
    names: str | None = None
    impl: str | None = None
    versions: bool = False
    registry: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.names is not None and self.impl is not None:
            raise UsageError("list: name the implementations once, as IMPL or with --impl")

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> ListOptions:
        return cls(args.names, args.impl, args.versions, tuple(args.registry))

    def impls(self) -> list[str]:
        """The names given (default: all)."""
        named = self.names if self.names is not None else self.impl
        return impl_list(named if named is not None else "all")
