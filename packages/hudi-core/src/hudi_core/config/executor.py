"""Executor options (seed 5.2.2): which executor drives insert handles and how it buffers.

Keys are Hudi's own (``HoodieWriteConfig``); the ``hoodie.write.executor.*`` spellings are
accepted as aliases so that every executor option can be found under one prefix.
"""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty
from hudi_core.config.write import WriteOptions

__all__ = ["WAIT_STRATEGIES", "ExecutorOptions"]

#: Disruptor wait strategies (Hudi's ``DisruptorWaitStrategyType``)
WAIT_STRATEGIES: tuple[str, ...] = ("BLOCKING_WAIT", "SLEEPING_WAIT", "YIELDING_WAIT", "BUSY_SPIN_WAIT")


def _e(key: str, default: object, doc: str, *aliases: str) -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, aliases=aliases, group="executor")


class ExecutorOptions:
    #: SIMPLE (built in), BOUNDED_IN_MEMORY or DISRUPTOR (package hudi-executors)
    TYPE = WriteOptions.EXECUTOR_TYPE
    BUFFER_LIMIT_BYTES = _e(
        "hoodie.write.buffer.limit.bytes",
        4 * 1024 * 1024,
        "BOUNDED_IN_MEMORY: bytes of transformed items held between producers and the consumer "
        "(4 MiB, as in Hudi). Producers block above it; an item larger than the limit still "
        "passes alone, so the queue never holds more than limit + one item.",
        "hoodie.write.executor.buffer.limit.bytes",
    )
    BUFFER_SAMPLING_RATE = _e(
        "hoodie.write.buffer.record.sampling.rate",
        100,
        "BOUNDED_IN_MEMORY: an item without ``nbytes`` is sized about once per this many items "
        "(random, as the seed's write buffer does); others reuse the last measured size. Arrow "
        "batches and tables are sized exactly from ``nbytes``, which is cheap.",
    )
    DISRUPTOR_BUFFER_SIZE = _e(
        "hoodie.write.executor.disruptor.buffer.limit.bytes",
        1024,
        "DISRUPTOR: slots of the ring buffer (a power of two; Hudi's key name says bytes but it "
        "is a slot count). Memory held is at most this many items.",
        "hoodie.write.executor.disruptor.buffer.size",
    )
    DISRUPTOR_WAIT_STRATEGY = _e(
        "hoodie.write.executor.disruptor.wait.strategy",
        "BLOCKING_WAIT",
        "DISRUPTOR: how a side waits for the other: " + ", ".join(WAIT_STRATEGIES) + ".",
    )
