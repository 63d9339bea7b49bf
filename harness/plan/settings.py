"""What a run is asked to do: the command-line options and a named suite
from suites.toml, merged and checked into Settings. Bad values raise
UsageError (one line, exit status 2)."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from .. import UsageError
from ..core.formatting import fmt_number, fmt_sig
from ..core.envinfo import usable_cores
from ..core.schema import Part, RecordedSettings
from ..core.local_builds import is_git
from ..core.variants import parse
from ..core.workloads import CPUS, DELAY_MS, POOL_THREADS, RATE, REQUESTS, STEP_S, USERS, WORKLOADS
from . import suites
from .options import Options, dimensions, impl_list, name_list, percentage
from .suites import Suite, SuitePart

@dataclass(frozen=True)
class Settings(RecordedSettings):
    """The run's settings: the record env.json keeps (every field of
    RecordedSettings, checked and merged here) and the plan's rules read
    off it. max_repeat None: DEFAULT_MAX_REPEAT, or the part's repeat when
    higher (ceiling()); record() writes the run's ceiling."""

    def target(self, part: Part) -> float | None:
        """The part's --until-ci fraction, else the run's; None: no extra runs."""
        return part.until_ci if part.until_ci is not None else self.until_ci

    def ceiling(self, part: Part) -> int:
        """The most runs --until-ci may give one of the part's configurations."""
        return (part.max_repeat or self.max_repeat
                or max(DEFAULT_MAX_REPEAT, part.repeat or self.repeat or 0))

    def record(self) -> RecordedSettings:
        """For env.json: how the rows of this invocation were produced
        (until_ci a fraction, max_repeat the run's ceiling when until_ci is set)."""
        recorded = {f.name: getattr(self, f.name) for f in fields(RecordedSettings)}
        if (self.until_ci is not None or self.until_settled) and self.max_repeat is None:
            recorded["max_repeat"] = max(DEFAULT_MAX_REPEAT, self.repeat or 0)
        return RecordedSettings(**recorded)

    def refuse_unused(self) -> None:
        """What `run` would not read is refused in one line: --source, with
        no --impl naming a commit to check out of it (bisect's steps are
        commits of it, named as it goes)."""
        if self.source is not None and not any(is_git(parse(i).version) for i in self.impls):
            raise UsageError("--source names the checkout of IMPL@git:REV, and no --impl names a "
                             "commit (python-asyncio@git:REV)")


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
                         f"{fmt_number(number)}%")
    return percentage(text, name)


def _check_ceilings(s: Settings, given: Options) -> None:
    """Every part that re-runs for width may run at least its minimum."""
    for part in s.parts:
        if s.target(part) is None and not s.until_settled and s.gate is None:
            continue
        minimum, ceiling = part.repeat or s.repeat, s.ceiling(part)
        if ceiling < minimum:
            where = ("--max-repeat" if given.max_repeat is not None
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
        raise UsageError(f"{name} {fmt_sig(value, 15)} is out of range: it must be from "
                         f"{fmt_sig(low, 15)} to {fmt_sig(high, 15)} {unit} ({said})")
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


def settings_from(given: Options, ram_bytes: int) -> Settings:
    """Settings from the options (None = not given). With a suite, the
    suite supplies the workloads, sizes, repeat count and sleep time; an
    option given on the command line overrides every part's own value."""
    suite = _suite(given.suite)
    workloads = _workloads(given)
    ns = int_list(given.n, "--n", 1) if given.n is not None else None
    buffers = int_list(given.buffer, "--buffer", 0) if given.buffer is not None else None
    if given.out is not None and not str(given.out).strip():
        raise UsageError("--out is empty: name the results folder")
    _check_counts(given)
    target = until_ci(given.until_ci, "--until-ci") if given.until_ci is not None else None
    if given.max_repeat is not None and given.max_repeat < 1:
        raise UsageError("--max-repeat must be a positive integer")
    _check_warmup(given.warmup_ms, workloads)
    for w in workloads or []:  # a workload named on the command line must run at every N
        for n in ns or DEFAULTS["n"]:
            if WORKLOADS[w].n_refused(n):
                raise UsageError(f"--n {n}: {WORKLOADS[w].n_refused(n)}")
    parts = _parts(given, suite, workloads, ns, buffers, target)
    if target is None and suite.until_ci is not None:
        target = until_ci(suite.until_ci, "suites.toml: until_ci")
    passes = _passes(given, suite, parts, target)
    parts = [p for p in passes.parts if p.workloads]
    if (given.max_repeat is not None and not passes.until_settled and passes.target is None
            and passes.gate is None and not any(p.until_ci is not None for p in passes.parts)):
        raise UsageError("--max-repeat is the ceiling of --until-ci, --until-settled or --gate: "
                         "give one of them too (or --repeat for a fixed count)")
    s = Settings(
        # `--impl ""` is refused, never read as "all"
        impls=impl_list(given.impl) if given.impl is not None else suite.impls,
        suite=given.suite, parts=parts, **spanned(parts),
        repeat=_first(given.repeat, suite.repeat, DEFAULTS["repeat"]),
        duration_ms=_first(given.duration_ms, suite.duration_ms, DEFAULTS["duration_ms"]),
        iterations=given.iterations, warmup_ms=given.warmup_ms,
        timeout_s=(timeout(given.timeout, "--timeout") if given.timeout is not None
                   else timeout(suite.timeout_s, f"suites.toml: {given.suite}: timeout_s")
                   if suite.timeout_s is not None else DEFAULTS["timeout_s"]),
        max_rss_bytes=(parse_size(given.max_rss, MAX_RSS[0]) if given.max_rss is not None
                       else int(ram_bytes * DEFAULTS["max_rss_of_ram"])),
        sample_interval_s=within(given.sample_interval_ms if given.sample_interval_ms is not None
                                 else DEFAULTS["sample_interval_ms"], "--sample-interval-ms",
                                 SAMPLE_INTERVAL_MS, "ms", "1 ms to a minute") / 1000,
        build=not given.no_build, registries=list(given.registry),
        source=_source(given.source),
        until_ci=passes.target, max_repeat=passes.max_repeat, until_settled=passes.until_settled,
        budget_s=passes.budget_s, gate=passes.gate, calibration=passes.calibration,
        adaptive_sleep=given.adaptive_sleep or suite.adaptive_sleep,
        # `--inherit-env ""` is refused, never read as "none"
        inherit_env=env_names(given.inherit_env) if given.inherit_env is not None else [],
        counters=given.counters, overlap_builds=suite.overlap_builds)
    _check_ceilings(s, given)
    _check_plan_size(s)
    return s


def _workloads(given: Options) -> list[str] | None:
    """--workload's names, checked; None for all (or not given)."""
    workloads = None
    if given.workload is not None:
        workloads = name_list(given.workload, "--workload")
        workloads = None if workloads == ["all"] else workloads
    for w in workloads or []:
        if w not in WORKLOADS:
            raise UsageError(f"unknown workload {w!r} (known: {', '.join(WORKLOADS)})")
    return workloads


def _suite(name: str | None) -> Suite:
    """The named suite of suites.toml; an empty one for none."""
    if not name:
        return Suite()
    known = suites.load_suites()
    if name not in known:
        raise UsageError(f"unknown suite {name!r} (known: {', '.join(known)})")
    return known[name]


def _first(*values: Any) -> Any:
    """The first value given (not None): an option's, a suite's, the default."""
    return next((v for v in values if v is not None), None)


def spanned(parts: list[Part]) -> dict[str, list[Any]]:
    """Every part's workloads, sizes and buffers, sorted (the record's
    workloads, n and buffers)."""
    return {"workloads": sorted({w for p in parts for w in p.workloads}),
            "n": sorted({n for p in parts for n in p.ns}),
            "buffers": sorted({b for p in parts for b in p.buffers})}


def _check_counts(given: Options) -> None:
    """--repeat, --duration-ms, --iterations and --max-repeat within their bounds."""
    for value, name in ((given.repeat, "--repeat"), (given.duration_ms, "--duration-ms"),
                        (given.iterations, "--iterations")):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be a positive integer")
        if value is not None and name in LIMITS:
            bounded(value, name)
    for value, name in ((given.repeat, "--repeat"), (given.max_repeat, "--max-repeat")):
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


def _parts(given: Options, suite: Suite, workloads: list[str] | None,
           ns: list[int] | None, buffers: list[int] | None, target: float | None) -> list[Part]:
    """The suite's parts, each value given on the command line overriding
    the part's own; without a suite, one part of the options."""
    params = _params(given.params)
    if not suite.parts:
        return [Part(workloads or list(WORKLOADS), ns or DEFAULTS["n"],
                     buffers or DEFAULTS["buffers"], params=params)]
    return [dataclasses.replace(_part(given, part, workloads, ns, buffers, target),
                                params={**_params(part.params, suite=True), **params})
            for part in suite.parts]


def _part(given: Options, part: SuitePart, workloads: list[str] | None, ns: list[int] | None,
          buffers: list[int] | None, target: float | None) -> Part:
    """A suite's part, each value given on the command line overriding its own."""
    def own(option: Any, value: Any) -> Any:
        return None if option is not None else value

    return Part(workloads=[w for w in part.workloads if workloads is None or w in workloads],
                ns=ns or part.n or DEFAULTS["n"],
                buffers=buffers or part.buffers or DEFAULTS["buffers"],
                repeat=own(given.repeat, part.repeat),
                duration_ms=own(given.duration_ms, part.duration_ms),
                iterations=own(given.iterations, part.iterations),
                warmup_ms=own(given.warmup_ms, part.warmup_ms),
                timeout_s=None if given.timeout is not None or part.timeout_s is None else
                timeout(part.timeout_s, f"suites.toml: {given.suite}: timeout_s"),
                until_ci=None if target is not None or part.until_ci is None else
                until_ci(part.until_ci, "suites.toml: until_ci"),
                max_repeat=own(given.max_repeat, part.max_repeat),
                judged=part.judged, impls=part.impls)


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


def _passes(given: Options, suite: Suite, parts: list[Part],
            target: float | None) -> _Passes:
    """--until-ci, --until-settled, --gate, --max-repeat and --budget, each
    from the options, else the suite; a gate overrides the suite's rules."""
    max_repeat = _first(given.max_repeat, suite.max_repeat, None)
    until_settled = given.until_settled or suite.until_settled
    budget_s = (duration(given.budget, "--budget") if given.budget is not None
                else duration(suite.budget, f"suites.toml: {given.suite}: budget")
                if suite.budget is not None else None)
    gate, calibration = _gate(given)
    if gate is not None:  # the gate decides the passes: the suite's own rules give way
        until_settled, target = False, None
        parts = [dataclasses.replace(p, until_ci=None, max_repeat=None) for p in parts]
        max_repeat = given.max_repeat or max(
            [GATE_MAX_REPEAT, given.repeat or 0, suite.repeat or 0] + [p.repeat or 0 for p in parts])
        budget_s = budget_s or GATE_BUDGET_S
    if budget_s is not None and not until_settled and target is None and gate is None:
        raise UsageError("--budget bounds the passes of --until-settled, --until-ci or --gate: "
                         "give one of them too")
    return _Passes(parts, target, max_repeat, until_settled, budget_s, gate, calibration)


def _gate(given: Options) -> tuple[float | None, str | None]:
    """--gate PCT (a fraction above 0) and --calibration RUN_DIR (absolute;
    the session reads it before anything is written); the other sequential
    rules are refused beside it."""
    calibration = given.calibration
    if given.gate is None:
        if calibration is not None:
            raise UsageError("--calibration names the figures a gate cannot decide: give --gate "
                             "PCT too")
        return None, None
    for name, option in (("until_settled", given.until_settled), ("until_ci", given.until_ci)):
        if option:
            raise UsageError(f"--gate decides which runs come after the minimum: not with "
                             f"--{name.replace('_', '-')}")
    gate = until_ci(given.gate, "--gate")
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
