from __future__ import annotations

import pytest
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import UnknownComponentError
from hudi_core.executor import Producers, SimpleExecutor, executor_for
from hudi_core.plugins.manager import PluginManager


def test_default_is_simple() -> None:
    pm = PluginManager(load_entry_points=False)
    assert isinstance(executor_for(None, manager=pm), SimpleExecutor)
    assert isinstance(executor_for({"hoodie.write.executor.type": "simple"}, manager=pm), SimpleExecutor)


@pytest.mark.parametrize("name", ["BOUNDED_IN_MEMORY", "DISRUPTOR", "disruptor"])
def test_missing_plugin_executor_names_the_package(name: str) -> None:
    pm = PluginManager(load_entry_points=False)  # core alone: hudi-executors is not loaded
    with pytest.raises(UnknownComponentError) as info:
        executor_for(HoodieConfig({"hoodie.write.executor.type": name}), manager=pm)
    message = str(info.value)
    assert repr(name) in message
    assert "pip install hudi-executors" in message
    assert "SIMPLE" in message  # lists what is installed


def test_unknown_executor_lists_installed() -> None:
    pm = PluginManager(load_entry_points=False)
    with pytest.raises(UnknownComponentError, match=r"'QUEUE'.*installed: SIMPLE"):
        executor_for({"hoodie.write.executor.type": "QUEUE"}, manager=pm)


def test_producers_chain_inputs_for_simple() -> None:
    class Collect:
        def __init__(self) -> None:
            self.items: list[int] = []

        def consume(self, item: int) -> None:
            self.items.append(item)

        def finish(self) -> list[int]:
            return self.items

    out = SimpleExecutor().execute(Producers([range(3), range(10, 12)]), lambda x: x + 1, Collect())
    assert out == [1, 2, 3, 11, 12]
