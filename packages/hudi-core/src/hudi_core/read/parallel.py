"""Reading splits on a few threads, in plan order: with a bounded number in memory
(:func:`ordered_map`), or all of them, the costliest started first (:func:`costliest_first`)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from hudi_core.config.property import HoodieConfig
from hudi_core.config.read import ReaderOptions
from hudi_core.errors import ConfigError

__all__ = ["SERIAL_BELOW_BYTES", "batch_rows", "costliest_first", "ordered_map", "read_parallelism"]

#: below this many bytes of files a query reads serially: starting threads would cost more
SERIAL_BELOW_BYTES = 8 * 1024 * 1024

T = TypeVar("T")
R = TypeVar("R")


def read_parallelism(
    config: HoodieConfig, override: int | None = None, *, total_bytes: int | None = None
) -> int:
    """``hoodie.read.parallelism`` (or ``override``); 0 means min(4, CPUs), and 1 when the
    query reads less than :data:`SERIAL_BELOW_BYTES` (``total_bytes``)."""
    value = override if override is not None else config.get(ReaderOptions.PARALLELISM)
    if value < 0:
        raise ConfigError(f"{ReaderOptions.PARALLELISM.key}={value} must be >= 0 (0: automatic)")
    if value == 0 and total_bytes is not None and total_bytes < SERIAL_BELOW_BYTES:
        return 1
    return value or min(4, os.cpu_count() or 1)


def batch_rows(config: HoodieConfig) -> int:
    """``hoodie.read.batch.rows``: rows of a base file read at a time while its slice is merged."""
    rows = int(config.get(ReaderOptions.BATCH_ROWS))
    if rows < 1:
        raise ConfigError(f"{ReaderOptions.BATCH_ROWS.key}={rows} must be >= 1")
    return rows


def ordered_map(fn: Callable[[T], R], items: Iterable[T], parallelism: int) -> Iterator[R]:
    """``map(fn, items)`` on ``parallelism`` threads, results in input order; at most
    ``parallelism`` results are computed ahead of the consumer (bounded memory)."""
    if parallelism <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(max_workers=parallelism, thread_name_prefix="hudi-read") as pool:
        window: deque[Future[R]] = deque()
        try:
            for item in items:
                if len(window) >= parallelism:
                    yield window.popleft().result()
                window.append(pool.submit(fn, item))
            while window:
                yield window.popleft().result()
        finally:
            for f in window:  # the consumer stopped early or a read failed: drop queued work
                f.cancel()


def costliest_first(
    fn: Callable[[T], R], items: Sequence[T], parallelism: int, cost: Callable[[T], float]
) -> list[R]:
    """``[fn(item) for item in items]`` on ``parallelism`` threads, results in input order, for
    a caller that holds every result anyway. Every item is queued at once, in order of
    decreasing ``cost``: a thread that finishes takes the costliest item left, where
    :func:`ordered_map`'s window waits for its oldest item first (a thread that read a short
    slice idles beside a long one), and the long items no longer come last to leave one thread
    working alone. On the 1M-row trips table after 5 upserts (ten slices, five with log files,
    two threads, 41 rounds alternating): 0.431 s against 0.455 s."""
    if parallelism <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    order = sorted(range(len(items)), key=lambda i: -cost(items[i]))
    with ThreadPoolExecutor(max_workers=parallelism, thread_name_prefix="hudi-read") as pool:
        futures = {i: pool.submit(fn, items[i]) for i in order}
        try:
            return [futures[i].result() for i in range(len(items))]
        finally:
            for f in futures.values():  # a read failed: drop the queued ones
                f.cancel()
