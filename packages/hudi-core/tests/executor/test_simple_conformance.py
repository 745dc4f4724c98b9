from __future__ import annotations

import pytest
from hudi_core.executor.base import Executor, SimpleExecutor
from hudi_core.testing.executors import ExecutorConformance, ExecutorFactory


class TestSimpleExecutorConformance(ExecutorConformance):
    @pytest.fixture
    def executor_factory(self) -> ExecutorFactory:
        def make(bound_bytes: int) -> Executor:
            return SimpleExecutor({})  # buffers nothing: always within any bound

        return make
