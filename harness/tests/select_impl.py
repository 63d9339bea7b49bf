"""A pytest plugin for `make test LANG=go`: only the harness tests that
concern the selected implementations.

    python -m pytest -p harness.tests.select_impl --impl go[,rust-tokio,...]

keeps the tests parametrized by one of the selected implementations or by
their language (their parametrization id is an implementation id or a
language name: the conformance table, the smoke runs, the checklist of a
language folder) and deselects every other test. A language selects all its
implementations; an implementation selects its language's tests too (the
smoke run of its language builds it). A name the repository's registry does
not know (an implementation of a --registry file) is matched as it is. When
nothing is left, the session passes: the language's own tests follow.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--impl", default=None, metavar="NAMES",
                     help="only the tests parametrized by these implementations or languages "
                          "(comma-separated)")


def wanted(names: list[str]) -> set[str]:
    """The parametrization ids that concern these names."""
    from harness.core.registry import load_registry
    impls = load_registry()
    out: set[str] = set()
    for name in names:
        out.add(name)
        for i in impls:
            if name in (i.id, i.language.name):
                out |= {i.id, i.language.name}
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = config.getoption("--impl")
    if not names or names == "all":
        return
    ids = wanted([n.strip() for n in names.split(",") if n.strip()])
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        (keep if callspec is not None and callspec.id in ids else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.getoption("--impl") and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK  # no harness test concerns it: not a failure
