"""`harness list`: the workloads, then each implementation with its
language, the workloads it runs and its toolchain here; `list --versions`:
each implementation's releases. Lines, yielded as they are found (a
registry may take a while to answer)."""

from __future__ import annotations

from typing import Iterator

from .. import relative
from ..core.presentation import PRESENTATIONS
from ..core.registry import Impl
from ..core.variants import parse, stable
from ..core.workloads import WORKLOADS
from ..execute.toolchains import detect_runtime, detect_toolchain
from ..releases.versions import Unreachable, available, check, where


def listing_lines(impls: list[Impl]) -> Iterator[str]:
    """The workloads, then a row per implementation."""
    names = list(WORKLOADS)
    width = max(len("implementation"), *(len(i.id) for i in impls)) + 2
    yield "workloads:"
    for w in WORKLOADS.values():
        yield f"  {w.name:<12} {PRESENTATIONS[w.name].summary}"
    yield ""
    yield f"{'implementation':<{width}}{'language':<10}" + "".join(f"{w:<13}" for w in names) + "toolchain"
    for i in impls:
        tool = detect_toolchain(i.language)
        status = detect_runtime(i) if tool.present else f"MISSING: {tool.reason}"
        cells = "".join(f"{('yes' if w in i.workloads else '-'):<13}" for w in names)
        yield f"{i.id:<{width}}{i.language.name:<10}{cells}{status}"
        if i.description:
            yield f"{'':<{width}}{i.description}"
        if i.source is not None:
            yield f"{'':<{width}}from {relative(i.source)}"


def versions_lines(impls: list[Impl]) -> Iterator[str]:
    """list --versions: each implementation's releases, newest first; for
    IMPL@VERSION, whether its registry lists that release."""
    check(impls)  # a release the registry does not list: one line, before any output
    for impl in impls:
        if impl.versions is None:
            yield f"{impl.id}: no other releases (its impls.toml has no [impl.versions])"
            continue
        try:
            found = available(impl)
        except Unreachable as exc:
            yield f"{impl.id}: cannot list its releases: {exc}"
            continue
        releases = [v for v in found if stable(v)]
        if impl.release:
            yield f"{impl.id}: a release of {where(impl)} (newest: {releases[0] if releases else '-'})"
            continue
        stock = f"; the stock build: {impl.versions.stock}" if impl.versions.stock else ""
        yield (f"{impl.id}: {len(releases)} releases of {where(impl)} (newest first{stock}; "
               f"run one as {parse(impl.id).at('VERSION').label})")
        yield "  " + " ".join(releases)
