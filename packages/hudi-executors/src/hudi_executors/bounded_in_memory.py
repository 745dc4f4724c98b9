"""BOUNDED_IN_MEMORY: producer threads feed the consumer through a queue bounded in bytes."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from hudi_core.config.executor import ExecutorOptions
from hudi_core.errors import ConfigError
from hudi_core.executor.base import Consumer, as_config

from hudi_executors.producers import ProducerThreads, inputs_of
from hudi_executors.sizing import SizeEstimator
from hudi_executors.stats import ExecutionStats

__all__ = ["BoundedInMemoryExecutor", "BoundedInMemoryQueue"]

In = TypeVar("In")
Out = TypeVar("Out")
R = TypeVar("R")

_END = object()


class BoundedInMemoryQueue(Generic[Out]):
    """A FIFO whose estimated bytes stay within ``limit_bytes``.

    ``put`` blocks while the queue is non-empty and the item would take it past the limit, so
    one item larger than the limit still passes (alone): the queue never holds more than
    limit + one item. ``get`` returns the end marker once every producer is done and the queue
    is drained, or at once after ``halt()``.
    """

    def __init__(self, limit_bytes: int, estimator: SizeEstimator, producers: int) -> None:
        self.limit_bytes = limit_bytes
        self._estimator = estimator
        lock = threading.Lock()
        self._not_empty = threading.Condition(lock)
        self._not_full = threading.Condition(lock)
        self._items: deque[tuple[Out, int]] = deque()
        self._bytes = 0
        self._open = producers
        self._halted = False
        self.peak_bytes = 0
        self.peak_items = 0

    def put(self, item: Out) -> bool:
        """Enqueue ``item``; False if the queue was halted (the producer should stop)."""
        size = self._estimator.size_of(item)
        with self._not_full:
            while not self._halted and self._items and self._bytes + size > self.limit_bytes:
                self._not_full.wait()
            if self._halted:
                return False
            self._items.append((item, size))
            self._bytes += size
            self.peak_bytes = max(self.peak_bytes, self._bytes)
            self.peak_items = max(self.peak_items, len(self._items))
            self._not_empty.notify()
            return True

    def get(self) -> Any:
        """The next item, or the module's end marker when drained or halted."""
        with self._not_empty:
            while not self._items and self._open > 0 and not self._halted:
                self._not_empty.wait()
            if self._halted or not self._items:
                return _END
            item, size = self._items.popleft()
            self._bytes -= size
            # Producers may wait with items of different sizes: wake them all to re-check.
            self._not_full.notify_all()
            return item

    def producer_done(self) -> None:
        with self._not_empty:
            self._open -= 1
            self._not_empty.notify_all()

    def halt(self) -> None:
        """Wake and stop both sides; queued items are dropped."""
        with self._not_empty:
            self._halted = True
            self._items.clear()
            self._bytes = 0
            self._not_empty.notify_all()
            self._not_full.notify_all()


class BoundedInMemoryExecutor:
    """One producer thread per input (``transform`` runs there), the consumer on the calling
    thread, a queue bounded by ``hoodie.write.buffer.limit.bytes`` between them.

    >>> ex = BoundedInMemoryExecutor({"hoodie.write.buffer.limit.bytes": "1048576"})
    """

    name = "BOUNDED_IN_MEMORY"

    def __init__(self, config: object | None = None) -> None:
        conf = as_config(config)
        self.config = conf
        self.limit_bytes: int = conf.get(ExecutorOptions.BUFFER_LIMIT_BYTES)
        self.sampling_rate: int = conf.get(ExecutorOptions.BUFFER_SAMPLING_RATE)
        if self.limit_bytes < 1:
            raise ConfigError(
                f"{ExecutorOptions.BUFFER_LIMIT_BYTES.key}={self.limit_bytes} must be a positive "
                "number of bytes (default 4194304)"
            )
        if self.sampling_rate < 1:
            raise ConfigError(
                f"{ExecutorOptions.BUFFER_SAMPLING_RATE.key}={self.sampling_rate} must be >= 1 (default 100)"
            )
        #: figures of the last ``execute`` (not shared-safe: use one executor per task)
        self.last_stats = ExecutionStats()

    def execute(
        self,
        producer: Iterable[In],
        transform: Callable[[In], Out],
        consumer: Consumer[Out, R],
    ) -> R:
        inputs = inputs_of(producer)
        queue: BoundedInMemoryQueue[Out] = BoundedInMemoryQueue(
            self.limit_bytes, SizeEstimator(self.sampling_rate), len(inputs)
        )
        threads: ProducerThreads[In, Out] = ProducerThreads(
            inputs, transform, publish=queue.put, done=queue.producer_done, halt=queue.halt,
            name="bim",
        )  # fmt: skip
        stats = self.last_stats = ExecutionStats(producers=len(inputs))
        threads.start()
        try:
            while (item := queue.get()) is not _END:
                consumer.consume(item)
                stats.items += 1
        except BaseException:
            queue.halt()
            threads.join()
            raise
        finally:
            stats.peak_queued_bytes = queue.peak_bytes
            stats.peak_queued_items = queue.peak_items
        threads.join()
        if threads.error is not None:
            error, threads.error = threads.error, None
            raise error
        return consumer.finish()
