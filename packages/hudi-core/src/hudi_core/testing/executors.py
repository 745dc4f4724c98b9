"""Conformance suite for executors (seed 5.2.2): every executor plugin runs it.

Subclass :class:`ExecutorConformance` in a test module (name it ``Test...``) and provide an
``executor_factory`` fixture: ``factory(bound_bytes) -> Executor`` returning an executor that
buffers at most ``bound_bytes`` of items (a slot-based executor sizes itself from
:attr:`ExecutorConformance.ITEM_BYTES`, the size of every item of the memory test)::

    class TestMyExecutor(ExecutorConformance):
        @pytest.fixture
        def executor_factory(self):
            return lambda bound_bytes: MyExecutor({"hoodie.write.buffer.limit.bytes": bound_bytes})

The fixture may be parametrised (e.g. over wait strategies); every test then runs per value.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core.executor.base import Executor, Producers

__all__ = ["ExecutorConformance", "ExecutorFactory", "RecordingConsumer"]

ExecutorFactory = Callable[[int], Executor]

#: generous default bound for the tests that are not about memory
_DEFAULT_BOUND = 1 << 20


class RecordingConsumer:
    """Keeps what it consumed; ``finish`` returns it and counts its calls."""

    def __init__(self, *, fail_at: int | None = None, delay_s: float = 0.0) -> None:
        self.items: list[Any] = []
        self.finished = 0
        self.fail_at = fail_at
        self.delay_s = delay_s
        self.error: Exception | None = None

    def consume(self, item: Any) -> None:
        if self.fail_at is not None and len(self.items) == self.fail_at:
            self.error = RuntimeError(f"consumer failed at item {self.fail_at}")
            raise self.error
        if self.delay_s:
            time.sleep(self.delay_s)
        self.items.append(item)

    def finish(self) -> list[Any]:
        self.finished += 1
        return self.items


class _Source:
    """An input generator that records how far it got and whether it was closed."""

    def __init__(self, values: range, *, fail_at: int | None = None) -> None:
        self.values = values
        self.fail_at = fail_at
        self.produced = 0
        self.closed = False
        self.error: Exception | None = None

    def __iter__(self) -> Iterator[int]:
        return self.generate()

    def generate(self) -> Iterator[int]:
        try:
            for v in self.values:
                if self.fail_at is not None and self.produced == self.fail_at:
                    self.error = ValueError(f"producer failed at item {self.fail_at}")
                    raise self.error
                self.produced += 1
                yield v
        finally:
            self.closed = True


def _double(x: int) -> int:
    return 2 * x


def _new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t not in before and t.is_alive()]


class ExecutorConformance:
    """Order, exactly-once delivery, error propagation both ways, clean shutdown, bounded memory."""

    #: bytes of each item in the memory test (512 int64 values)
    ITEM_BYTES = 4096

    @pytest.fixture
    def executor_factory(self) -> ExecutorFactory:
        raise NotImplementedError("subclasses provide the executor_factory fixture")

    @pytest.fixture
    def executor(self, executor_factory: ExecutorFactory) -> Executor:
        return executor_factory(_DEFAULT_BOUND)

    # -- delivery --------------------------------------------------------------------------------

    def test_order_preserved_and_transform_applied(self, executor: Executor) -> None:
        consumer = RecordingConsumer()
        result = executor.execute(range(5000), _double, consumer)
        assert result is consumer.items
        assert result == [2 * x for x in range(5000)]
        assert consumer.finished == 1

    def test_empty_input_still_finishes(self, executor: Executor) -> None:
        consumer = RecordingConsumer()
        assert executor.execute([], _double, consumer) == []
        assert consumer.finished == 1

    def test_several_producers_deliver_each_item_once_in_input_order(self, executor: Executor) -> None:
        inputs = [range(0, 1500), range(10_000, 10_700), range(20_000, 20_001), range(30_000, 30_000)]
        consumer = RecordingConsumer()
        result = executor.execute(Producers(inputs), lambda x: x, consumer)
        assert sorted(result) == sorted(v for r in inputs for v in r)
        assert len(result) == len(set(result))
        for r in inputs:  # order within each input is kept
            mine = [v for v in result if v in r]
            assert mine == list(r)

    def test_arrow_batches_arrive_intact(self, executor: Executor) -> None:
        def batch(i: int) -> pa.RecordBatch:
            ids = np.arange(i * 100, (i + 1) * 100, dtype=np.int64)
            return pa.record_batch({"id": ids, "v": pc.multiply(pa.array(ids), 3)})

        consumer = RecordingConsumer()
        executor.execute(range(50), batch, consumer)
        table = pa.Table.from_batches(consumer.items)
        assert table.column("id").to_pylist() == list(range(5000))
        assert table.column("v").to_pylist() == [3 * i for i in range(5000)]

    # -- errors ----------------------------------------------------------------------------------

    def test_producer_error_reaches_caller_with_its_traceback(self, executor: Executor) -> None:
        source = _Source(range(100_000), fail_at=50)
        consumer = RecordingConsumer()
        with pytest.raises(ValueError) as info:
            executor.execute(source, _double, consumer)
        assert info.value is source.error  # the original object, not a wrapper
        frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
        assert "generate" in frames  # raised where the producer failed
        assert consumer.finished == 0
        assert consumer.items == [2 * x for x in range(len(consumer.items))]
        assert len(consumer.items) <= 50
        assert source.closed

    def test_transform_error_reaches_caller(self, executor: Executor) -> None:
        error = KeyError("bad record 7")

        def transform(x: int) -> int:
            if x == 7:
                raise error
            return x

        with pytest.raises(KeyError) as info:
            executor.execute(range(100_000), transform, RecordingConsumer())
        assert info.value is error
        assert "transform" in [f.name for f in traceback.extract_tb(info.value.__traceback__)]

    def test_producer_error_stops_other_producers(self, executor: Executor) -> None:
        failing = _Source(range(100), fail_at=20)
        endless = _Source(range(10**9))
        with pytest.raises(ValueError) as info:
            executor.execute(Producers([failing, endless]), _double, RecordingConsumer())
        assert info.value is failing.error
        # The other input either never started (SIMPLE runs inputs in turn) or was stopped.
        assert endless.produced == 0 or endless.closed
        produced = endless.produced
        time.sleep(0.05)
        assert endless.produced == produced

    def test_consumer_error_reaches_caller_and_stops_producers(self, executor: Executor) -> None:
        source = _Source(range(10**9))
        consumer = RecordingConsumer(fail_at=30)
        with pytest.raises(RuntimeError) as info:
            executor.execute(source, _double, consumer)
        assert info.value is consumer.error
        assert "consume" in [f.name for f in traceback.extract_tb(info.value.__traceback__)]
        assert consumer.finished == 0
        assert source.closed  # the producer ended (its generator was closed)
        produced = source.produced
        time.sleep(0.05)
        assert source.produced == produced  # and does not go on in the background

    # -- shutdown --------------------------------------------------------------------------------

    @pytest.mark.parametrize("outcome", ["success", "producer_error", "consumer_error", "several"])
    def test_no_thread_left_running(self, executor: Executor, outcome: str) -> None:
        before = set(threading.enumerate())
        consumer = RecordingConsumer(fail_at=10 if outcome == "consumer_error" else None)
        producer: Any = _Source(range(2000), fail_at=100 if outcome == "producer_error" else None)
        if outcome == "several":
            producer = Producers([range(300), range(400), range(500)])
        try:
            executor.execute(producer, _double, consumer)
        except (ValueError, RuntimeError):
            assert outcome in ("producer_error", "consumer_error")
        else:
            assert outcome in ("success", "several")
        assert _new_threads(before) == []

    # -- memory ----------------------------------------------------------------------------------

    def test_back_pressure_bounds_buffered_bytes(self, executor_factory: ExecutorFactory) -> None:
        """With a slow consumer, bytes transformed but not yet consumed stay within the bound
        plus the one item a producer holds while it waits and the one the consumer has taken
        off the queue but not yet counted as consumed (the test's own bookkeeping lags there)."""
        bound = 8 * self.ITEM_BYTES
        executor = executor_factory(bound)
        lock = threading.Lock()
        live = {"bytes": 0, "peak": 0}

        def transform(i: int) -> pa.Array:
            arr = pa.array(np.full(self.ITEM_BYTES // 8, i, dtype=np.int64))
            with lock:
                live["bytes"] += arr.nbytes
                live["peak"] = max(live["peak"], live["bytes"])
            return arr

        class SlowConsumer(RecordingConsumer):
            def consume(self, item: Any) -> None:
                with lock:
                    live["bytes"] -= item.nbytes
                time.sleep(0.002)
                self.items.append(item[0].as_py())

        consumer = SlowConsumer()
        executor.execute(range(64), transform, consumer)
        assert consumer.items == list(range(64))
        assert live["peak"] <= bound + 2 * self.ITEM_BYTES
