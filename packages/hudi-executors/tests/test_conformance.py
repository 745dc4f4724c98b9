from __future__ import annotations

import pytest
from hudi_core.config.executor import WAIT_STRATEGIES, ExecutorOptions
from hudi_core.executor.base import Executor
from hudi_core.testing.executors import ExecutorConformance, ExecutorFactory
from hudi_executors import BoundedInMemoryExecutor, DisruptorExecutor


class TestBoundedInMemoryConformance(ExecutorConformance):
    @pytest.fixture
    def executor_factory(self) -> ExecutorFactory:
        def make(bound_bytes: int) -> Executor:
            return BoundedInMemoryExecutor({ExecutorOptions.BUFFER_LIMIT_BYTES.key: bound_bytes})

        return make


class TestDisruptorConformance(ExecutorConformance):
    @pytest.fixture(params=WAIT_STRATEGIES)
    def executor_factory(self, request: pytest.FixtureRequest) -> ExecutorFactory:
        def make(bound_bytes: int) -> Executor:
            slots = max(bound_bytes // self.ITEM_BYTES, 1)
            slots = 1 << (slots.bit_length() - 1)  # largest power of two within the bound
            return DisruptorExecutor(
                {
                    ExecutorOptions.DISRUPTOR_BUFFER_SIZE.key: min(slots, 1024),
                    ExecutorOptions.DISRUPTOR_WAIT_STRATEGY.key: request.param,
                }
            )

        return make
