"""Item size estimates for the memory-bounded queue (seed 5.1: sampled, not per item)."""

from __future__ import annotations

import random
import sys
from typing import Any

__all__ = ["SizeEstimator", "deep_size"]

_MAX_DEPTH = 4


def deep_size(obj: Any, _depth: int = 0) -> int:
    """Approximate bytes held by ``obj``: ``nbytes`` for Arrow/numpy objects, else
    ``sys.getsizeof`` summed over containers (a few levels deep; cycles are not followed)."""
    nbytes = getattr(obj, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    size = sys.getsizeof(obj)
    if _depth >= _MAX_DEPTH:
        return size
    if isinstance(obj, dict):
        size += sum(deep_size(k, _depth + 1) + deep_size(v, _depth + 1) for k, v in obj.items())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        size += sum(deep_size(v, _depth + 1) for v in obj)
    return size


class SizeEstimator:
    """Sizes queued items cheaply.

    Objects exposing ``nbytes`` (``pa.RecordBatch``, ``pa.Table``, numpy arrays) are sized
    exactly every time: that only sums buffer lengths. Anything else is measured with
    :func:`deep_size` on the first item and then at random about once every ``sampling_rate``
    items (the seed's write buffer draws from [0, rate) and measures on a hit); the last
    measurement stands in for the items in between.
    """

    def __init__(self, sampling_rate: int = 100, *, seed: int | None = None) -> None:
        if sampling_rate < 1:
            raise ValueError(f"sampling_rate must be >= 1, got {sampling_rate}")
        self.sampling_rate = sampling_rate
        self._rng = random.Random(seed)
        self._last: int | None = None
        self.measurements = 0

    def size_of(self, item: Any) -> int:
        nbytes = getattr(item, "nbytes", None)
        if isinstance(nbytes, int):
            return nbytes
        last = self._last
        if last is None or self._rng.randrange(self.sampling_rate) == 0:
            last = self._last = deep_size(item)
            self.measurements += 1
        return last
