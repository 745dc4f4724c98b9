"""What a process keeps of files it read, bounded by bytes (:class:`Kept`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Kept"]

V = TypeVar("V")


class Kept(Generic[V]):
    """Values by key, least recently used first out past ``max_bytes`` (as ``weigh`` counts
    them; a weight of 1 a value bounds their number); a value heavier than the whole budget is
    not kept. For what never changes under its key: a base file under its name and size, a
    completed instant's file under its name and modification time."""

    def __init__(self, max_bytes: int, weigh: Callable[[V], int]) -> None:
        self.max_bytes = max_bytes
        self._weigh = weigh
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return None
            self._kept.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: V) -> None:
        size = self._weigh(value)
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                self._bytes -= self._kept.popitem(last=False)[1][1]
