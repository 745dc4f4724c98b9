"""The Disruptor's data structures: a pre-allocated ring, sequences and a sequence barrier.

Sequences only grow; slot ``s`` lives at index ``s & (size - 1)``. Producers claim sequences
(under a lock: Python has no compare-and-swap), wait until the slot is free (the consumer's
sequence is at least ``s - size``), fill it and mark it published. The consumer's barrier
waits until its next sequence is published, then takes every contiguous published slot.
"""

from __future__ import annotations

import threading
from typing import Any

from hudi_executors.wait_strategy import WaitStrategy

__all__ = ["RingBuffer", "Sequence", "SequenceBarrier"]

INITIAL = -1


class Sequence:
    """A monotonically increasing counter; reads and writes of one int are atomic in CPython."""

    __slots__ = ("value",)

    def __init__(self, value: int = INITIAL) -> None:
        self.value = value


class RingBuffer:
    """``size`` pre-allocated slots (a power of two) shared by producers and one consumer."""

    def __init__(self, size: int, wait: WaitStrategy, producers: int) -> None:
        if size < 1 or size & (size - 1):
            raise ValueError(f"ring buffer size must be a power of two, got {size}")
        self.size = size
        self._mask = size - 1
        self._slots: list[Any] = [None] * size
        # _published[i] holds the sequence last published into slot i (per-slot, so several
        # producers may publish out of claim order without a shared cursor).
        self._published: list[int] = [INITIAL] * size
        self._claimed = Sequence()
        self._claim_lock = threading.Lock()
        self.consumed = Sequence()  # the gating sequence: highest slot the consumer released
        self.wait = wait
        self._open_producers = producers
        self._open_lock = threading.Lock()
        self.halted = False
        self.peak_in_use = 0

    # -- producers -------------------------------------------------------------------------------

    def publish(self, item: Any) -> bool:
        """Claim the next sequence, wait for its slot, store ``item``; False when halted."""
        with self._claim_lock:
            seq = self._claimed.value = self._claimed.value + 1
        wrap = seq - self.size
        consumed = self.consumed
        self.wait.wait_until(lambda: consumed.value >= wrap or self.halted)
        if self.halted:
            return False
        idx = seq & self._mask
        self._slots[idx] = item
        self._published[idx] = seq
        in_use = seq - consumed.value
        if in_use > self.peak_in_use:
            self.peak_in_use = in_use
        self.wait.signal_all()
        return True

    def producer_done(self) -> None:
        with self._open_lock:
            self._open_producers -= 1
        self.wait.signal_all()

    def halt(self) -> None:
        self.halted = True
        self.wait.signal_all()

    # -- consumer --------------------------------------------------------------------------------

    def is_published(self, seq: int) -> bool:
        return self._published[seq & self._mask] == seq

    def producers_done(self) -> bool:
        return self._open_producers == 0

    def take(self, seq: int) -> Any:
        """The item at ``seq``; the slot is cleared so the ring holds no reference to it."""
        idx = seq & self._mask
        item = self._slots[idx]
        self._slots[idx] = None
        return item

    def release(self, seq: int) -> None:
        """The consumer is done with every slot up to ``seq``: producers may reuse them."""
        self.consumed.value = seq
        self.wait.signal_all()


class SequenceBarrier:
    """Where the consumer waits: ``wait_for(seq)`` is the highest contiguous published sequence
    >= ``seq``, or None when the producers are done and nothing more will come, or halted."""

    def __init__(self, ring: RingBuffer) -> None:
        self._ring = ring

    def wait_for(self, seq: int) -> int | None:
        ring = self._ring

        def ready() -> bool:
            return ring.halted or ring.is_published(seq) or ring.producers_done()

        ring.wait.wait_until(ready)
        if ring.halted or not ring.is_published(seq):
            # All producers ended: everything they claimed was published (they publish before
            # ending unless halted), so an unpublished slot means the input is exhausted.
            return None
        high = seq
        while ring.is_published(high + 1):
            high += 1
        return high
