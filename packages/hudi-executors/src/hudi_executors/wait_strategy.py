"""Disruptor wait strategies: how one side waits for the other to move a sequence.

Both sides use the strategy (the consumer waiting for a published slot, producers waiting for
a free one). Under CPython's GIL a spinning thread keeps the interpreter until the switch
interval (5 ms) forces a hand-off, so the spinning strategies cost far more here than on a JVM.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from hudi_core.config.executor import WAIT_STRATEGIES, ExecutorOptions
from hudi_core.errors import ConfigError

__all__ = [
    "BlockingWait",
    "BusySpinWait",
    "SleepingWait",
    "WaitStrategy",
    "YieldingWait",
    "wait_strategy_for",
]

Ready = Callable[[], bool]


class WaitStrategy:
    """``wait_until(ready)`` returns once ``ready()`` is true; ``signal_all()`` is called after
    every sequence move (publish, consume, end, halt)."""

    name = ""

    def wait_until(self, ready: Ready) -> None:
        raise NotImplementedError

    def signal_all(self) -> None:
        """Nothing to wake for the polling strategies."""


class BlockingWait(WaitStrategy):
    """A lock and condition: waiting threads sleep until signalled (no CPU while idle)."""

    name = "BLOCKING_WAIT"

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())

    def wait_until(self, ready: Ready) -> None:
        if ready():
            return
        with self._cond:
            # ready() is re-checked under the lock that signal_all takes, so no wake-up is lost.
            while not ready():
                self._cond.wait()

    def signal_all(self) -> None:
        with self._cond:
            self._cond.notify_all()


class SleepingWait(WaitStrategy):
    """Spin, then yield, then sleep briefly between checks (Disruptor's SleepingWaitStrategy)."""

    name = "SLEEPING_WAIT"

    def __init__(self, spins: int = 100, yields: int = 100, sleep_s: float = 100e-6) -> None:
        self._spins, self._yields, self._sleep_s = spins, yields, sleep_s

    def wait_until(self, ready: Ready) -> None:
        tries = 0
        while not ready():
            tries += 1
            if tries <= self._spins:
                continue
            time.sleep(0 if tries <= self._spins + self._yields else self._sleep_s)


class YieldingWait(WaitStrategy):
    """Spin a little, then give up the GIL (``sleep(0)``) between checks."""

    name = "YIELDING_WAIT"

    def __init__(self, spins: int = 100) -> None:
        self._spins = spins

    def wait_until(self, ready: Ready) -> None:
        tries = 0
        while not ready():
            tries += 1
            if tries > self._spins:
                time.sleep(0)


class BusySpinWait(WaitStrategy):
    """Check in a tight loop; only sensible with a core per thread and no GIL."""

    name = "BUSY_SPIN_WAIT"

    def wait_until(self, ready: Ready) -> None:
        while not ready():
            pass


_STRATEGIES: dict[str, type[WaitStrategy]] = {
    s.name: s for s in (BlockingWait, SleepingWait, YieldingWait, BusySpinWait)
}
assert tuple(_STRATEGIES) == WAIT_STRATEGIES


def wait_strategy_for(name: str) -> WaitStrategy:
    """A new strategy by its Hudi name (case-insensitive)."""
    cls = _STRATEGIES.get(name.strip().upper())
    if cls is None:
        raise ConfigError(
            f"{ExecutorOptions.DISRUPTOR_WAIT_STRATEGY.key}={name!r} is not a wait strategy; "
            f"use one of {', '.join(WAIT_STRATEGIES)}"
        )
    return cls()
