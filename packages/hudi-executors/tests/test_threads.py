from __future__ import annotations

import threading
from typing import Any

import pytest
from hudi_core.executor import Producers
from hudi_core.executor.base import Executor
from hudi_executors import BoundedInMemoryExecutor, DisruptorExecutor


class ThreadsSeen:
    def __init__(self) -> None:
        self.consumer_threads: set[str] = set()

    def consume(self, item: Any) -> None:
        self.consumer_threads.add(threading.current_thread().name)

    def finish(self) -> set[str]:
        return self.consumer_threads


@pytest.mark.parametrize("executor", [BoundedInMemoryExecutor(), DisruptorExecutor()], ids=lambda e: e.name)
def test_one_producer_thread_per_input_and_consumer_on_caller(executor: Executor) -> None:
    producer_threads: set[str] = set()
    lock = threading.Lock()

    def transform(x: int) -> int:
        with lock:
            producer_threads.add(threading.current_thread().name)
        return x

    seen = executor.execute(Producers([range(200), range(200), range(200)]), transform, ThreadsSeen())
    assert seen == {threading.current_thread().name}
    assert len(producer_threads) == 3
    assert threading.current_thread().name not in producer_threads
