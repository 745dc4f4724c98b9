"""Engines parallelise work: map a function over items (file groups, partitions, plan operations)
and collect the results on the coordinator."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

__all__ = ["Engine", "LocalEngine"]

T = TypeVar("T")
R = TypeVar("R")


class Engine(Protocol):
    name: str

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[fn(x) for x in items]``, in order, possibly in parallel; the first error is raised."""
        ...

    @property
    def parallelism(self) -> int: ...


class LocalEngine:
    """In-process engine: a thread pool (pyarrow and file I/O release the GIL)."""

    name = "local"

    def __init__(self, options: Any = None, *, max_workers: int | None = None) -> None:
        import os

        workers = max_workers
        if workers is None and options is not None and hasattr(options, "get"):
            raw = options.get("hoodie.local.engine.parallelism")
            workers = int(raw) if raw else None
        self._workers = workers or min(8, (os.cpu_count() or 2))

    @property
    def parallelism(self) -> int:
        return self._workers

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        items = list(items)
        if len(items) <= 1 or self._workers <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=min(self._workers, len(items))) as pool:
            return list(pool.map(fn, items))
