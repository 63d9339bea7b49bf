"""Stop signals as an exception: the code under way unwinds, so that its
finally blocks kill the commands it started and keep the rows it wrote, and
the subcommand says so in one line with exit status 128 + the signal."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Iterator

# A closed terminal (HUP) stops the harness the way Ctrl-C (INT) and kill (TERM) do.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


@contextmanager
def interruptible(signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> Iterator[None]:
    """Within the block, these signals raise Interrupted; the handlers
    before it are restored after it."""
    previous = {sig: signal.signal(sig, _raise) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
