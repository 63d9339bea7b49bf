"""Benchmark harness for concurrency runtimes: see README.md and docs/."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class UsageError(Exception):
    """Bad input from the user: reported as one line with exit status 2."""


class HarnessError(Exception):
    """The harness cannot do its job here (no C compiler for the launcher,
    say): one line, exit status 1. Not the user's input."""
