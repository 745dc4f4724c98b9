"""DISRUPTOR: producer threads publish into a pre-allocated ring buffer read by the consumer."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from hudi_core.config.executor import ExecutorOptions
from hudi_core.errors import ConfigError
from hudi_core.executor.base import Consumer, as_config

from hudi_executors.producers import ProducerThreads, inputs_of
from hudi_executors.ring_buffer import INITIAL, RingBuffer, SequenceBarrier
from hudi_executors.stats import ExecutionStats
from hudi_executors.wait_strategy import wait_strategy_for

__all__ = ["DisruptorExecutor"]

In = TypeVar("In")
Out = TypeVar("Out")
R = TypeVar("R")


class DisruptorExecutor:
    """One producer thread per input (``transform`` runs there), the consumer on the calling
    thread reading a ring of ``hoodie.write.executor.disruptor.buffer.limit.bytes`` slots
    (alias ``...disruptor.buffer.size``) and waiting per ``...disruptor.wait.strategy``.

    >>> ex = DisruptorExecutor({"hoodie.write.executor.disruptor.buffer.size": "64"})
    >>> ex.buffer_size
    64
    """

    name = "DISRUPTOR"

    def __init__(self, config: object | None = None) -> None:
        conf = as_config(config)
        self.config = conf
        size: int = conf.get(ExecutorOptions.DISRUPTOR_BUFFER_SIZE)
        if size < 1 or size & (size - 1):
            lower = 1 << max(size.bit_length() - 1, 0)
            raise ConfigError(
                f"{ExecutorOptions.DISRUPTOR_BUFFER_SIZE.key}={size} must be a power of two "
                f"(the ring is indexed by masking); use {lower} or {lower * 2}"
            )
        self.buffer_size = size
        self.wait_strategy: str = conf.get(ExecutorOptions.DISRUPTOR_WAIT_STRATEGY)
        wait_strategy_for(self.wait_strategy)  # fail on a bad name now, not at the first write
        #: figures of the last ``execute`` (not shared-safe: use one executor per task)
        self.last_stats = ExecutionStats()

    def execute(
        self,
        producer: Iterable[In],
        transform: Callable[[In], Out],
        consumer: Consumer[Out, R],
    ) -> R:
        inputs = inputs_of(producer)
        ring = RingBuffer(self.buffer_size, wait_strategy_for(self.wait_strategy), len(inputs))
        barrier = SequenceBarrier(ring)
        threads: ProducerThreads[In, Out] = ProducerThreads(
            inputs, transform, publish=ring.publish, done=ring.producer_done, halt=ring.halt,
            name="disruptor",
        )  # fmt: skip
        stats = self.last_stats = ExecutionStats(producers=len(inputs))
        threads.start()
        try:
            next_seq = INITIAL + 1
            while (high := barrier.wait_for(next_seq)) is not None:
                # Batch: every contiguous published slot, released one by one so that
                # producers can refill the ring while the consumer works.
                for seq in range(next_seq, high + 1):
                    consumer.consume(ring.take(seq))
                    ring.release(seq)
                    stats.items += 1
                next_seq = high + 1
        except BaseException:
            ring.halt()
            threads.join()
            raise
        finally:
            stats.peak_queued_items = ring.peak_in_use
        threads.join()
        if threads.error is not None:
            error, threads.error = threads.error, None
            raise error
        return consumer.finish()
