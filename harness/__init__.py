"""Benchmark harness for concurrency runtimes: see README.md and docs/."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class UsageError(Exception):
    """Bad input from the user: reported as one line with exit status 2."""
