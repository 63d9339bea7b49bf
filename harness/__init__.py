"""Benchmark harness for concurrency runtimes: see README.md and docs/."""

import os
from pathlib import Path

__version__ = "0.5.0"


def _find_root() -> Path:
    """The repository the harness works on: the folder above this package
    when it runs from the tree; for an installed package, BENCH_ROOT, else
    the nearest folder up from the current one that holds docs/protocol.md
    and harness/ (else the current folder, where nothing is registered)."""
    here = Path(__file__).resolve().parent.parent
    if (here / "docs" / "protocol.md").is_file():
        return here
    if os.environ.get("BENCH_ROOT"):
        return Path(os.environ["BENCH_ROOT"]).resolve()
    cwd = Path.cwd()
    return next((d for d in (cwd, *cwd.parents)
                 if (d / "docs" / "protocol.md").is_file() and (d / "harness").is_dir()), cwd)


ROOT = _find_root()


def relative(path: Path) -> str:
    """A path as the user would type it from the repository."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


class UsageError(Exception):
    """Bad input from the user: reported as one line with exit status 2."""


class HarnessError(Exception):
    """The harness cannot do its job here (no C compiler for the launcher,
    say): one line, exit status 1. Not the user's input."""
