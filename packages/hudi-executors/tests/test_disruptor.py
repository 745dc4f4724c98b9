from __future__ import annotations

from typing import Any

import pytest
from hudi_core.errors import ConfigError
from hudi_executors import DisruptorExecutor
from hudi_executors.ring_buffer import RingBuffer
from hudi_executors.wait_strategy import BlockingWait


class Collect:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def consume(self, item: Any) -> None:
        self.items.append(item)

    def finish(self) -> list[Any]:
        return self.items


def test_ring_wraps_many_times_and_never_holds_more_than_its_slots() -> None:
    ex = DisruptorExecutor({"hoodie.write.executor.disruptor.buffer.limit.bytes": 4})
    assert ex.execute(range(3000), str, Collect()) == [str(i) for i in range(3000)]
    assert 1 <= ex.last_stats.peak_queued_items <= 4


def test_hudi_key_and_alias_both_set_the_ring_size() -> None:
    assert DisruptorExecutor({"hoodie.write.executor.disruptor.buffer.limit.bytes": "64"}).buffer_size == 64
    assert DisruptorExecutor({"hoodie.write.executor.disruptor.buffer.size": "32"}).buffer_size == 32
    assert DisruptorExecutor().buffer_size == 1024
    assert DisruptorExecutor().wait_strategy == "BLOCKING_WAIT"


def test_size_not_power_of_two_is_refused_with_neighbours() -> None:
    with pytest.raises(ConfigError, match=r"buffer.size|buffer.limit.bytes") as info:
        DisruptorExecutor({"hoodie.write.executor.disruptor.buffer.size": "1000"})
    assert "=1000" in str(info.value) and "512 or 1024" in str(info.value)


def test_unknown_wait_strategy_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="SPIN_FOREVER") as info:
        DisruptorExecutor({"hoodie.write.executor.disruptor.wait.strategy": "SPIN_FOREVER"})
    assert "BUSY_SPIN_WAIT" in str(info.value)


def test_ring_slots_are_cleared_after_consumption() -> None:
    ring = RingBuffer(4, BlockingWait(), producers=1)
    assert ring.publish("a") and ring.publish("b")
    assert ring.take(0) == "a"
    ring.release(0)
    assert ring._slots.count(None) == 3  # the consumed slot holds no reference
