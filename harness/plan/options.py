"""The commands' options as typed records. Options: those of `run` and
`bisect`, built once from the command line (or, on a cluster's node, from
the options.json a task is given: cluster/layout.py writes and reads it)
and read by settings.py, bisect.py and cluster/; values stay as typed,
settings.py checks them and says what is wrong in one line. CompareOptions,
MergeOptions and ListOptions: the other commands', checked as they are
built, so that cli.py only parses and dispatches."""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .. import UsageError
from ..core.metrics import margins
from ..core.variants import split_names
from ..core.workloads import RATE, REQUESTS, STEP_S, USERS, WORKLOADS, Dimension


def dimensions() -> dict[str, Dimension]:
    """Every dimension a run can be given (an option), by name."""
    return {d.name: d for w in WORKLOADS.values() for d in w.dimensions if d.option}


@dataclass(frozen=True)
class Options:
    """`run`'s options by argparse's names (None or False: not given), in the
    order the parser declares them (options.json keeps it)."""
    impl: str | None = None
    suite: str | None = None
    workload: str | None = None
    n: str | None = None
    buffer: str | None = None
    repeat: int | None = None
    duration_ms: int | None = None
    iterations: int | None = None
    warmup_ms: int | None = None
    # the workloads' own dimensions (dimensions()) given, by name, as typed
    params: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    max_rss: str | None = None
    sample_interval_ms: float | None = None
    out: str | None = None
    inherit_env: str | None = None
    no_build: bool = False
    counters: bool = False
    until_ci: str | None = None
    until_settled: bool = False
    budget: str | None = None
    gate: str | None = None
    calibration: str | None = None
    adaptive_sleep: bool = False
    max_repeat: int | None = None
    on: str | None = None
    partition: str | None = None
    nodes: int | None = None
    slurm_opt: str | None = None
    registry: tuple[str, ...] = ()
    source: str | None = None

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
        --users or --requests beside --rate (an open loop has neither)."""
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
        if self.gate is not None and self.on == "slurm":  # its passes are decided between runs, here
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
    margin: dict[str, float] = field(default_factory=margins)
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
            raise UsageError("compare needs OLD and NEW run directories (or one with --baseline IMPL)")

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> CompareOptions:
        """From compare's parsed text: the percentages read, the rest checked."""
        if args.margin is not None and any(p.strip().startswith("=") for p in args.margin.split(",")):
            raise UsageError(f"--margin {args.margin!r}: METRIC=PCT with no metric")  # never all of them
        return cls(args.old, args.new, args.baseline,
                   percentage(args.fail_above, "--fail-above") if args.fail_above is not None
                   else None, args.calibration, args.allow_undecided, margins(args.margin),
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
