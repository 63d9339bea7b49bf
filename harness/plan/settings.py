"""What a run is asked to do: the command-line options and a named suite
from suites.toml, merged and checked into Settings. Bad values raise
UsageError (one line, exit status 2)."""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .. import UsageError
from ..core.envinfo import usable_cores
from ..core.variants import split_names
from ..core.workloads import (CPUS, DELAY_MS, POOL_THREADS, RATE, REQUESTS, STEP_S, USERS,
                              WORKLOADS, Dimension)
from .options import Options, dimensions

SUITES_PATH = Path(__file__).resolve().parent / "suites.toml"


@dataclass(frozen=True)
class Part:
    """One block of a suite: these workloads at these sizes, optionally with
    their own repeat count, sleep time and iteration count."""
    workloads: list[str]
    ns: list[int]
    buffers: list[int]
    repeat: int | None = None
    duration_ms: int | None = None
    iterations: int | None = None
    warmup_ms: int | None = None  # this part's own; --warmup-ms overrides it
    timeout_s: float | None = None  # this part's own; --timeout overrides it
    # --until-ci and --max-repeat, this part's own (a fraction; a run count);
    # the command line overrides them
    until_ci: float | None = None
    max_repeat: int | None = None
    # False (suites.toml `judged = false`): a check that every program of
    # these workloads works, run too few times to judge: no verdicts, and
    # --until-settled gives it no more runs (standings.judged)
    judged: bool = True
    # Values of the workloads' own dimensions (workloads.Dimension) by name;
    # a dimension absent here runs at its declared default.
    params: dict[str, list[Any]] = field(default_factory=dict)
    # suites.toml `impls`: the implementations this part runs (of those the
    # run selects); None: every one
    impls: list[str] | None = None

    def values(self, dimension: Dimension) -> list[Any]:
        return self.params.get(dimension.name) or list(dimension.default) or [None]


@dataclass(frozen=True)
class Settings:
    impls: list[str]  # implementation ids or language names, or ["all"]
    suite: str | None
    parts: list[Part]
    repeat: int
    duration_ms: int
    iterations: int | None  # None: each workload's default (workloads.py)
    warmup_ms: int | None  # None: each workload's default (workloads.py)
    timeout_s: float
    max_rss_bytes: int
    sample_interval_s: float
    build: bool = True
    registries: list[str] = field(default_factory=list)  # --registry FILE, outside the tree
    source: str | None = None  # --source DIR: the git checkout of IMPL@git:REV (absolute)
    # --until-ci PCT as a fraction: after the repeat minimum, more passes of
    # the configurations whose headline interval is unsettled or wider than
    # ±PCT of the median (plan.more_runs), up to max_repeat runs each.
    # None: exactly `repeat` runs. max_repeat None: DEFAULT_MAX_REPEAT, or
    # the part's repeat when higher (ceiling()).
    until_ci: float | None = None
    max_repeat: int | None = None
    # --until-settled: after the repeat minimum, more passes of the
    # configurations in a verdict not yet settled (sequential.more_runs), up
    # to max_repeat runs each (ceiling())
    until_settled: bool = False
    # --budget DURATION (seconds): the runs' time, the minimum included, past
    # which no more sequential passes start (sequential.Budgeted); None: none
    budget_s: float | None = None
    # --gate PCT as a fraction: an A/B run that decides (ab_gate.Gate):
    # after the minimum, more runs of the configurations whose gated figures
    # are undecided, up to max_repeat a side within budget_s (both then set
    # to the gate's defaults when not given); the exit status is the gate's
    gate: float | None = None
    # --calibration RUN_DIR (absolute): a calibrate run whose A/A noise names
    # the figures the gate cannot decide at PCT here (analyse/noise.py)
    calibration: str | None = None
    # --adaptive-sleep: each sleep run lasts twice its configuration's
    # longest start time so far plus a second (workloads.adaptive_sleep_ms), at most duration_ms
    adaptive_sleep: bool = False
    # --inherit-env NAME,...: variables the measured programs get besides the
    # allow-list (envinfo.passed_to_programs)
    inherit_env: list[str] = field(default_factory=list)
    # --counters: perf stat counts every run (perfstat.find_perf)
    counters: bool = False
    # suites.toml `overlap_builds` (a check that ranks nothing: the quick
    # suite): each language's runs start as soon as it is built, while
    # others still build (builder.Preparation), on a busy machine
    overlap_builds: bool = False

    def target(self, part: Part) -> float | None:
        """The part's --until-ci fraction, else the run's; None: no extra runs."""
        return part.until_ci if part.until_ci is not None else self.until_ci

    def ceiling(self, part: Part) -> int:
        """The most runs --until-ci may give one of the part's configurations."""
        return (part.max_repeat or self.max_repeat
                or max(DEFAULT_MAX_REPEAT, part.repeat or self.repeat))

    def record(self) -> dict[str, Any]:
        """For env.json: how the rows of this invocation were produced
        (until_ci a fraction, max_repeat the run's ceiling when until_ci is set)."""
        record = asdict(self)
        record.update(workloads=sorted({w for p in self.parts for w in p.workloads}),
                      n=sorted({n for p in self.parts for n in p.ns}),
                      buffers=sorted({b for p in self.parts for b in p.buffers}))
        if (self.until_ci is not None or self.until_settled) and self.max_repeat is None:
            record["max_repeat"] = max(DEFAULT_MAX_REPEAT, self.repeat)
        return record


# What `run` uses where neither an option nor the suite says; max_rss_of_ram:
# --max-rss as a share of the machine's RAM. cli.py's help reads them; the
# Makefile and docs/usage.md quote them, checked by tests/wiring/test_defaults.py.
DEFAULTS = {"n": [1000], "buffers": [1], "repeat": 4, "duration_ms": 10000, "timeout_s": 300.0,
            "sample_interval_ms": 10.0, "max_rss_of_ram": 0.8}
# --until-ci without --max-repeat: at most this many runs of a configuration
# (or its --repeat, when higher). 95% needs 6 (stats.runs_needed); 10 leaves
# room for a noisy configuration to narrow, and bounds the time it may take.
DEFAULT_MAX_REPEAT = 10

# The largest value every language's program parses (docs/protocol.md): Java,
# Kotlin and C# read --n, --iterations, --buffer, --duration-ms and
# --warmup-ms as a signed 32-bit int, the others as 64 bits. The one place
# these limits live: a value past them is refused here, before it could
# reach a program and come back as a `crashed` row.
PROGRAM_MAX = 2**31 - 1
# An open loop's rate (requests a second) and step (seconds): far above what
# one machine's generator sends over loopback, and a step within an hour,
# so that a recorded row is one every reader takes (docs/usage.md).
MAX_RATE = 1_000_000
MAX_STEP_S = 3600
# option: (its name in the options' dict, minimum, maximum)
LIMITS: dict[str, tuple[str, int, int]] = {
    "--n": ("n", 1, PROGRAM_MAX),
    "--buffer": ("buffer", 0, PROGRAM_MAX),
    "--iterations": ("iterations", 1, PROGRAM_MAX),
    "--duration-ms": ("duration_ms", 1, PROGRAM_MAX),
    "--warmup-ms": ("warmup_ms", 0, PROGRAM_MAX),
}
# http's integer dimensions: 2·D must fit 31 bits, and --threads the .NET
# pool's maximum (python/bench.py, csharp/README.md); users and requests go to the load generator.
LIMITS.update({d.option: (d.name, low, high) for d, low, high in (
    (USERS, 1, PROGRAM_MAX), (REQUESTS, 1, PROGRAM_MAX), (DELAY_MS, 1, 2**30 - 1),
    (POOL_THREADS, 1, 32767), (RATE, 1, MAX_RATE), (STEP_S, 1, MAX_STEP_S))})
# Runs of one configuration (--repeat, --max-repeat, a suite's repeat), and
# planned runs of one implementation (every part's configurations times its
# repeats, or --until-ci's ceiling): a plan, even a dry run's, stays bounded.
MAX_REPEAT = 1000
MAX_PLANNED_PER_IMPL = 10_000

# The launcher (harness/processes/launcher/launch.c) counts time and memory in signed
# 64-bit nanoseconds and bytes; these ranges keep every value far inside and
# refuse what can only be a slip. A timeout below 1 ms kills every program
# before it starts; past 30 days (above the longest sleep, 2^31 - 1 ms) it
# is a typo. Samples every millisecond at most (finer would spin a core)
# and every minute at least (--max-rss is checked at each sample). No
# runtime's program starts in 16 MiB (every run would be oom); 8388607T is
# the most a 64-bit byte count holds in whole TiB.
TIMEOUT_S = (0.001, 30 * 86400.0)
BUDGET_S = (60.0, 30 * 86400.0)
SAMPLE_INTERVAL_MS = (1.0, 60_000.0)
# --gate's defaults. Its ceiling: passing a figure whose runs spread by 4%
# (the sd of their logs) against a 5% gate took up to 26 runs a side in the
# A/A trials of tests/execute/test_ab_gate.py; past 30 a figure is noise a
# calibration run should name, and each pass is one more look. Its budget:
# a pull request's check, the minimum included (builds come before it);
# those trials' 14 configurations a side took at most 5.6 minutes of it.
GATE_MAX_REPEAT = 30
GATE_BUDGET_S = 30 * 60.0
MIB, TIB = 2**20, 2**40
MAX_RSS = (16 * MIB, (2**23 - 1) * TIB)


def bounded(value: int, name: str) -> int:
    """An integer option within LIMITS (what every program parses)."""
    _, minimum, maximum = LIMITS[name]
    if not minimum <= value <= maximum:
        why = "docs/usage.md" if name in ("--rate", "--step-s") else \
            "the largest every language's program parses"
        raise UsageError(f"{name}: {value} is out of range: it must be from {minimum} to "
                         f"{maximum} ({why})")
    return value


def int_list(text: str, name: str, minimum: int) -> list[int]:
    values = []
    for part in text.split(","):
        part = part.strip()
        try:
            value = int(part)
        except ValueError:
            raise UsageError(f"{name}: {part!r} is not an integer") from None
        if value < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise UsageError(f"{name}: {value} must be {kind}")
        values.append(bounded(value, name) if name in LIMITS else value)
    if len(set(values)) != len(values):
        raise UsageError(f"{name}: repeated value in {text!r}")
    return values


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_names(text: str) -> list[str]:
    """--inherit-env: a comma-separated list of environment variable names."""
    names = name_list(text, "--inherit-env")
    bad = [n for n in names if not ENV_NAME.fullmatch(n)]
    if bad:
        raise UsageError(f"--inherit-env: {bad[0]!r} is not an environment variable name")
    return names


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


SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$", re.I)


def parse_size(text: str, minimum: int = 1) -> int:
    """'8G', '512M', '64MiB', '1048576' -> bytes (powers of 1024), from
    minimum to MAX_RSS's most (--max-rss: from MAX_RSS's least)."""
    m = SIZE.match(text.strip())
    if not m:
        raise UsageError(f"--max-rss: {text!r} is not a size like 512M or 8G")
    value = float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " ")
    # compared as a float: 400 digits are inf, which int() could not take
    if not minimum <= value <= MAX_RSS[1]:
        least = f"{minimum // MIB}M" if minimum % MIB == 0 else str(minimum)
        raise UsageError(f"--max-rss {text.strip()!r} is out of range: it must be from {least} "
                         f"to 8388607T (the most a 64-bit byte count holds in whole TiB)")
    return int(value)


def percentage(text: str, name: str) -> float:
    """'5%' or '5' -> 0.05; a finite number >= 0."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise UsageError(f"{name}: {text!r} is not a percentage like 5%") from None
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"{name} must be a percentage >= 0")
    return value / 100


def until_ci(value: Any, name: str) -> float:
    """--until-ci / until_ci: a percentage above 0 ('5%', '5', or a TOML
    number), as a fraction."""
    if isinstance(value, bool):
        raise UsageError(f"{name}: {value!r} is not a percentage like 5%")
    text = str(value)
    try:
        number = float(text.strip().removesuffix("%"))
    except ValueError:
        number = None
    if number is not None and not (number > 0 and math.isfinite(number)):
        raise UsageError(f"{name} must be a percentage above 0, like 5%")
    if number is not None and number < 1 and not text.strip().endswith("%"):
        # 0.05 could be a fraction (5%) or a percentage (0.05%): said, not guessed
        raise UsageError(f"{name} {text}: write the percentage with its sign, 5% or "
                         f"{number:g}%")
    return percentage(text, name)


def _judged(part: dict[str, Any]) -> bool:
    value = part.get("judged", True)
    if not isinstance(value, bool):
        raise UsageError(f"suites.toml: judged {value!r} must be true or false")
    return value


def _max_repeat(part: dict[str, Any]) -> int | None:
    value = part.get("max_repeat")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise UsageError(f"suites.toml: max_repeat {value!r} must be a positive integer")
    return value


def _check_ceilings(s: Settings, opts: Options) -> None:
    """Every part that re-runs for width may run at least its minimum."""
    for part in s.parts:
        if s.target(part) is None and not s.until_settled and s.gate is None:
            continue
        minimum, ceiling = part.repeat or s.repeat, s.ceiling(part)
        if ceiling < minimum:
            where = ("--max-repeat" if opts.max_repeat is not None
                     else f"suites.toml: {s.suite}: max_repeat")
            raise UsageError(f"{where} {ceiling} is below the minimum of {minimum} runs "
                             f"(--repeat or the suite's repeat): it must be >= {minimum}")


def within(value: Any, name: str, bounds: tuple[float, float], unit: str, said: str) -> float:
    """A number from bounds[0] to bounds[1] (NaN and inf are not: inf would
    reach env.json as Infinity); said: the bounds in words."""
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{name}: {value!r} is not a number of {unit}")
    if not low <= value <= high:
        raise UsageError(f"{name} {value:.15g} is out of range: it must be from {low:.15g} to "
                         f"{high:.15g} {unit} ({said})")
    return float(value)


_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s?)?")


def duration(value: Any, name: str) -> float:
    """A budget: seconds, or hours, minutes and seconds ("45m", "1h30m",
    "90s", "2700"), a minute to 30 days."""
    text = str(value).strip()
    match = _DURATION.fullmatch(text) if text else None
    if match is None or not any(match.groups()):
        raise UsageError(f"{name} {value!r}: give a duration such as 45m, 1h30m or 2700 (seconds)")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return within(hours * 3600 + minutes * 60 + seconds, name, BUDGET_S, "seconds",
                  "a minute to 30 days")


def timeout(value: Any, name: str) -> float:
    return within(value, name, TIMEOUT_S, "seconds", "1 ms to 30 days")


def _params(source: Mapping[str, Any], suite: bool = False) -> dict[str, list[Any]]:
    """The dimensions' values given in the options (Options.params) or in a
    suite's part (TOML lists under the dimension's name)."""
    params: dict[str, list[Any]] = {}
    for d in dimensions().values():
        value = source.get(d.name)
        if value is None:
            continue
        if suite:
            value = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
        if d.kind is int:
            params[d.name] = int_list(value, d.option, 1)
        else:
            params[d.name] = name_list(value, d.option)
            unknown = [v for v in params[d.name] if d.choices and v not in d.choices]
            if unknown:
                raise UsageError(f"{d.option}: unknown value {unknown[0]!r} "
                                 f"(known: {', '.join(d.choices)})")
    usable = usable_cores()
    for k in params.get(CPUS.name, []):
        if k > usable:
            raise UsageError(f"--cpus {k}: this harness may use {usable} CPUs here")
    return params


def _warmup(part: dict[str, Any]) -> int | None:
    value = part.get("warmup_ms")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise UsageError(f"suites.toml: warmup_ms {value!r} must be an integer >= 0")
    return value


def _suite_impls(suite: dict[str, Any]) -> list[str]:
    """A suite's own implementations (suites.toml `impls`), else every one."""
    names = suite.get("impls", ["all"])
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise UsageError("suites.toml: impls must be a list of implementation names")
    return names


def _part_impls(part: dict[str, Any]) -> list[str] | None:
    """A part's own implementations (suites.toml `impls`), else None: all."""
    return _suite_impls(part) if "impls" in part else None


def load_suites() -> dict[str, dict[str, Any]]:
    return tomllib.loads(SUITES_PATH.read_text())


def settings_from(opts: Options, ram_bytes: int) -> Settings:
    """Settings from the options (None = not given). With a suite, the
    suite supplies the workloads, sizes, repeat count and sleep time; an
    option given on the command line overrides every part's own value."""
    suite = _suite(opts.suite)
    workloads = _workloads(opts)
    ns = int_list(opts.n, "--n", 1) if opts.n is not None else None
    buffers = int_list(opts.buffer, "--buffer", 0) if opts.buffer is not None else None
    if opts.out is not None and not str(opts.out).strip():
        raise UsageError("--out is empty: name the results folder")
    _check_counts(opts)
    target = until_ci(opts.until_ci, "--until-ci") if opts.until_ci is not None else None
    if opts.max_repeat is not None and opts.max_repeat < 1:
        raise UsageError("--max-repeat must be a positive integer")
    _check_warmup(opts.warmup_ms, workloads)
    for w in workloads or []:  # a workload named on the command line must run at every N
        for n in ns or DEFAULTS["n"]:
            if WORKLOADS[w].n_refused(n):
                raise UsageError(f"--n {n}: {WORKLOADS[w].n_refused(n)}")
    parts = _parts(opts, suite, workloads, ns, buffers, target)
    if target is None and "until_ci" in suite:
        target = until_ci(suite["until_ci"], "suites.toml: until_ci")
    passes = _passes(opts, suite, parts, target)
    adaptive = _suite_flag(suite, "adaptive_sleep", opts.adaptive_sleep)
    overlap = _suite_flag(suite, "overlap_builds")
    if (opts.max_repeat is not None and not passes.until_settled and passes.target is None
            and passes.gate is None and not any(p.until_ci is not None for p in passes.parts)):
        raise UsageError("--max-repeat is the ceiling of --until-ci, --until-settled or --gate: "
                         "give one of them too (or --repeat for a fixed count)")
    s = Settings(
        # `--impl ""` is refused, never read as "all"
        impls=impl_list(opts.impl) if opts.impl is not None else _suite_impls(suite),
        suite=opts.suite,
        parts=[p for p in passes.parts if p.workloads],
        repeat=opts.repeat if opts.repeat is not None else suite.get("repeat", DEFAULTS["repeat"]),
        duration_ms=(opts.duration_ms if opts.duration_ms is not None
                     else suite.get("duration_ms", DEFAULTS["duration_ms"])),
        iterations=opts.iterations, warmup_ms=opts.warmup_ms,
        timeout_s=(timeout(opts.timeout, "--timeout") if opts.timeout is not None
                   else timeout(suite["timeout_s"], f"suites.toml: {opts.suite}: timeout_s")
                   if "timeout_s" in suite else DEFAULTS["timeout_s"]),
        max_rss_bytes=(parse_size(opts.max_rss, MAX_RSS[0]) if opts.max_rss is not None
                       else int(ram_bytes * DEFAULTS["max_rss_of_ram"])),
        sample_interval_s=within(opts.sample_interval_ms if opts.sample_interval_ms is not None
                                 else DEFAULTS["sample_interval_ms"], "--sample-interval-ms",
                                 SAMPLE_INTERVAL_MS, "ms", "1 ms to a minute") / 1000,
        build=not opts.no_build, registries=list(opts.registry),
        source=_source(opts.source),
        until_ci=passes.target, max_repeat=passes.max_repeat, until_settled=passes.until_settled,
        budget_s=passes.budget_s, gate=passes.gate, calibration=passes.calibration,
        adaptive_sleep=adaptive,
        # `--inherit-env ""` is refused, never read as "none"
        inherit_env=env_names(opts.inherit_env) if opts.inherit_env is not None else [],
        counters=opts.counters, overlap_builds=overlap)
    _check_ceilings(s, opts)
    _check_plan_size(s)
    return s


def _workloads(opts: Options) -> list[str] | None:
    """--workload's names, checked; None for all (or not given)."""
    workloads = None
    if opts.workload is not None:
        workloads = name_list(opts.workload, "--workload")
        workloads = None if workloads == ["all"] else workloads
    for w in workloads or []:
        if w not in WORKLOADS:
            raise UsageError(f"unknown workload {w!r} (known: {', '.join(WORKLOADS)})")
    return workloads


def _suite_flag(suite: dict[str, Any], key: str, given: bool = False) -> bool:
    """A suite's true-or-false key (false when absent), true when its option
    is given."""
    value = given or suite.get(key, False)
    if not isinstance(value, bool):
        raise UsageError(f"suites.toml: {key} {value!r} must be true or false")
    return value


def _suite(name: str | None) -> dict[str, Any]:
    """The named suite's table from suites.toml; {} for none."""
    if not name:
        return {}
    suites = load_suites()
    if name not in suites:
        raise UsageError(f"unknown suite {name!r} (known: {', '.join(suites)})")
    return suites[name]


def _check_counts(opts: Options) -> None:
    """--repeat, --duration-ms, --iterations and --max-repeat within their bounds."""
    for value, name in ((opts.repeat, "--repeat"), (opts.duration_ms, "--duration-ms"),
                        (opts.iterations, "--iterations")):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be a positive integer")
        if value is not None and name in LIMITS:
            bounded(value, name)
    for value, name in ((opts.repeat, "--repeat"), (opts.max_repeat, "--max-repeat")):
        if value is not None and value > MAX_REPEAT:
            raise UsageError(f"{name} {value} is too many: at most {MAX_REPEAT} runs of a "
                             f"configuration")


def _check_warmup(warmup: int | None, workloads: list[str] | None) -> None:
    """--warmup-ms within bounds, and for a workload that takes a warm-up."""
    if warmup is None:
        return
    if warmup < 0:
        raise UsageError("--warmup-ms must be an integer >= 0")
    bounded(warmup, "--warmup-ms")
    if workloads and all(WORKLOADS[w].default_warmup_ms is None for w in workloads):
        raise UsageError(f"--warmup-ms: {', '.join(workloads)} take no warm-up")


def _parts(opts: Options, suite: dict[str, Any], workloads: list[str] | None,
           ns: list[int] | None, buffers: list[int] | None, target: float | None) -> list[Part]:
    """The suite's parts, each value given on the command line overriding
    the part's own; without a suite, one part of the options."""
    params = _params(opts.params)
    if not suite:
        return [Part(workloads or list(WORKLOADS), ns or DEFAULTS["n"],
                     buffers or DEFAULTS["buffers"], params=params)]
    return [Part(workloads=[w for w in part["workloads"] if workloads is None or w in workloads],
                 ns=ns or part.get("n", DEFAULTS["n"]), buffers=buffers or part.get("buffers", DEFAULTS["buffers"]),
                 repeat=None if opts.repeat is not None else part.get("repeat"),
                 duration_ms=None if opts.duration_ms is not None else part.get("duration_ms"),
                 iterations=None if opts.iterations is not None else part.get("iterations"),
                 warmup_ms=None if opts.warmup_ms is not None else _warmup(part),
                 timeout_s=None if opts.timeout is not None else (
                     timeout(part["timeout_s"], f"suites.toml: {opts.suite}: timeout_s")
                     if "timeout_s" in part else None),
                 until_ci=None if target is not None else (
                     until_ci(part["until_ci"], "suites.toml: until_ci")
                     if "until_ci" in part else None),
                 max_repeat=None if opts.max_repeat is not None else _max_repeat(part),
                 judged=_judged(part), impls=_part_impls(part),
                 params={**_params(part, suite=True), **params})
            for part in suite["part"]]


@dataclass(frozen=True)
class _Passes:
    """The rules for the passes after the minimum, the suite's and the
    options' merged (Settings' fields of the same names)."""
    parts: list[Part]
    target: float | None
    max_repeat: int | None
    until_settled: bool
    budget_s: float | None
    gate: float | None
    calibration: str | None


def _passes(opts: Options, suite: dict[str, Any], parts: list[Part],
            target: float | None) -> _Passes:
    """--until-ci, --until-settled, --gate, --max-repeat and --budget, each
    from the options, else the suite; a gate overrides the suite's rules."""
    max_repeat = opts.max_repeat if opts.max_repeat is not None else _max_repeat(suite)
    until_settled = opts.until_settled or suite.get("until_settled", False)
    if not isinstance(until_settled, bool):
        raise UsageError(f"suites.toml: until_settled {until_settled!r} must be true or false")
    budget_s = (duration(opts.budget, "--budget") if opts.budget is not None
                else duration(suite["budget"], f"suites.toml: {opts.suite}: budget")
                if "budget" in suite else None)
    gate, calibration = _gate(opts)
    if gate is not None:  # the gate decides the passes: the suite's own rules give way
        until_settled, target = False, None
        parts = [dataclasses.replace(p, until_ci=None, max_repeat=None) for p in parts]
        max_repeat = opts.max_repeat or max(
            [GATE_MAX_REPEAT, opts.repeat or 0, suite.get("repeat", 0)] + [p.repeat or 0 for p in parts])
        budget_s = budget_s or GATE_BUDGET_S
    if budget_s is not None and not until_settled and target is None and gate is None:
        raise UsageError("--budget bounds the passes of --until-settled, --until-ci or --gate: "
                         "give one of them too")
    return _Passes(parts, target, max_repeat, until_settled, budget_s, gate, calibration)


def _gate(opts: Options) -> tuple[float | None, str | None]:
    """--gate PCT (a fraction above 0) and --calibration RUN_DIR (absolute;
    the session reads it before anything is written); the other sequential
    rules are refused beside it."""
    calibration = opts.calibration
    if opts.gate is None:
        if calibration is not None:
            raise UsageError("--calibration names the figures a gate cannot decide: give --gate "
                             "PCT too")
        return None, None
    for name, given in (("until_settled", opts.until_settled), ("until_ci", opts.until_ci)):
        if given:
            raise UsageError(f"--gate decides which runs come after the minimum: not with "
                             f"--{name.replace('_', '-')}")
    gate = until_ci(opts.gate, "--gate")
    return gate, str(Path(calibration).expanduser().resolve()) if calibration else None


def _source(text: str | None) -> str | None:
    """--source DIR, absolute: a folder (whether it is a git checkout, the
    commits named say)."""
    if text is None:
        return None
    if not text.strip():  # never the current folder
        raise UsageError("--source is empty: give the git checkout of IMPL@git:REV")
    path = Path(text).expanduser()
    if not path.is_dir():
        raise UsageError(f"--source {text}: not a folder (give the git checkout of IMPL@git:REV)")
    return str(path.resolve())


def _check_plan_size(s: Settings) -> None:
    """At most MAX_PLANNED_PER_IMPL runs of one implementation (counted
    before any is planned: a dry run never grows without end)."""
    total = 0
    for part in s.parts:
        repeat = part.repeat or s.repeat
        if repeat > MAX_REPEAT:
            raise UsageError(f"suites.toml: {s.suite}: repeat {repeat} is too many: at most "
                             f"{MAX_REPEAT}")
        runs = (s.ceiling(part) if s.target(part) is not None or s.until_settled
                or s.gate is not None else repeat)
        for name in part.workloads:  # plan.plan's grid, counted
            w = WORKLOADS[name]
            configs = (len(part.ns) if w.uses_n else 1) * (len(part.buffers) if w.uses_buffer else 1)
            for d in w.dimensions:
                configs *= len(part.values(d))
            total += runs * configs
    if total > MAX_PLANNED_PER_IMPL:
        raise UsageError(f"the plan is too large: up to {total} runs of each implementation "
                         f"(at most {MAX_PLANNED_PER_IMPL}): fewer sizes, values or repeats")
