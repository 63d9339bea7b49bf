"""suites.toml read into typed suites: a suite's own keys and its parts,
each key's TOML type checked and a key no suite or part takes refused, in
one line naming the file. settings.py merges a suite with the options and
checks the values' ranges where it checks the options' (a percentage, a
duration, a timeout)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, TypeVar

from .. import UsageError
from ..core.workloads import WORKLOADS
from .options import dimensions

SUITES_PATH = Path(__file__).resolve().parent / "suites.toml"

# A key's TOML type: (what it must be, in words; the test)
Check = tuple[str, Callable[[Any], bool]]
# A dimension's values as a part writes them
Written = list[int | str] | int | str
T = TypeVar("T")


def _integer(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


FLAG: Check = ("true or false", lambda v: isinstance(v, bool))
COUNT: Check = ("a positive integer", lambda v: _integer(v, 1))
AT_LEAST_0: Check = ("an integer >= 0", lambda v: _integer(v, 0))
NUMBER: Check = ("a number", _number)
# a percentage ("5%") or a duration ("45m"), as text or a number: settings.py reads it
TEXT_OR_NUMBER: Check = ("a text or a number", lambda v: isinstance(v, str) or _number(v))
TEXT: Check = ("a text", lambda v: isinstance(v, str))
NAMES: Check = ("a list of implementation names", lambda v: isinstance(v, list) and bool(v)
                and all(isinstance(n, str) and n for n in v))
WORKLOAD_NAMES: Check = ("a list of workloads (" + ", ".join(WORKLOADS) + ")",
                         lambda v: isinstance(v, list) and bool(v) and all(
                             isinstance(w, str) and w in WORKLOADS for w in v))
SIZES: Check = ("a list of positive integers",
                lambda v: isinstance(v, list) and bool(v) and all(_integer(n, 1) for n in v))
BUFFERS: Check = ("a list of integers >= 0",
                  lambda v: isinstance(v, list) and bool(v) and all(_integer(n, 0) for n in v))


def _key(check: Check, default: Any = None, factory: Callable[[], Any] | None = None) -> Any:
    """A key of suites.toml: its type (Check) beside the field."""
    if factory is not None:
        return field(default_factory=factory, metadata={"toml": check})
    return field(default=default, metadata={"toml": check})


@dataclass(frozen=True)
class SuitePart:
    """A suite's [[NAME.part]] as written (None: not given): these workloads
    at these sizes, optionally with their own counts, limits and rules."""
    workloads: list[str] = _key(WORKLOAD_NAMES, factory=list)
    n: list[int] | None = _key(SIZES)
    buffers: list[int] | None = _key(BUFFERS)
    repeat: int | None = _key(COUNT)
    duration_ms: int | None = _key(COUNT)
    iterations: int | None = _key(COUNT)
    warmup_ms: int | None = _key(AT_LEAST_0)
    timeout_s: float | None = _key(NUMBER)
    until_ci: str | float | None = _key(TEXT_OR_NUMBER)
    max_repeat: int | None = _key(COUNT)
    judged: bool = _key(FLAG, True)
    impls: list[str] | None = _key(NAMES)
    # the workloads' own dimensions (workloads.Dimension) by name, as written:
    # a list of values, or one (settings.py checks them as it does the options')
    params: dict[str, Written] = field(default_factory=dict)


@dataclass(frozen=True)
class Suite:
    """A suite of suites.toml (`[NAME]`): its parts and the run's own keys."""
    name: str = ""  # "": no suite (the options alone)
    parts: list[SuitePart] = field(default_factory=list)
    description: str | None = _key(TEXT)
    impls: list[str] = _key(NAMES, factory=lambda: ["all"])
    repeat: int | None = _key(COUNT)
    duration_ms: int | None = _key(COUNT)
    timeout_s: float | None = _key(NUMBER)
    until_ci: str | float | None = _key(TEXT_OR_NUMBER)
    max_repeat: int | None = _key(COUNT)
    until_settled: bool = _key(FLAG, False)
    budget: str | float | None = _key(TEXT_OR_NUMBER)
    adaptive_sleep: bool = _key(FLAG, False)
    overlap_builds: bool = _key(FLAG, False)


def _checked(cls: type[T], table: Any, where: str, extra: tuple[str, ...], **more: Any) -> T:
    """A TOML table as cls (its keys' values, each of its type, and more);
    a key neither cls nor extra names is refused."""
    name = SUITES_PATH.name
    if not isinstance(table, dict):
        raise UsageError(f"{name}: {where} must be a table")
    known = {f.name: f.metadata["toml"] for f in fields(cls) if "toml" in f.metadata}
    for key, value in table.items():
        if key not in known and key not in extra:
            raise UsageError(f"{name}: {where}: unknown key {key!r} "
                             f"(known: {', '.join([*known, *extra])})")
        what, test = known.get(key, ("", lambda _: True))
        if not test(value):
            raise UsageError(f"{name}: {where}: {key} {value!r} must be {what}")
    return cls(**{k: v for k, v in table.items() if k in known}, **more)


def _part(table: Any, where: str) -> SuitePart:
    dims = tuple(dimensions())
    part = _checked(SuitePart, table, where, dims,
                    params={k: v for k, v in table.items() if k in dims})
    if not part.workloads:
        raise UsageError(f"{SUITES_PATH.name}: {where}: name its workloads (workloads = [...])")
    return part


def suite_of(name: str, table: Any) -> Suite:
    """One suite of suites.toml, typed; a wrong key or type a UsageError."""
    parts = table.get("part") if isinstance(table, dict) else None
    if not isinstance(parts, list) or not parts:
        raise UsageError(f"{SUITES_PATH.name}: {name}: give it at least one [[{name}.part]]")
    return _checked(Suite, table, name, ("part",), name=name,
                    parts=[_part(p, f"{name}.part[{i}]") for i, p in enumerate(parts)])


def load_suites() -> dict[str, Suite]:
    """Every suite of suites.toml (SUITES_PATH), by name."""
    try:
        tables = tomllib.loads(SUITES_PATH.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{SUITES_PATH.name}: {exc}") from None
    return {name: suite_of(name, table) for name, table in tables.items()}
