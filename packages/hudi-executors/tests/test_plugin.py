from __future__ import annotations

import importlib.metadata

from hudi_core.executor import executor_for
from hudi_core.plugins.manager import PluginManager
from hudi_executors import BoundedInMemoryExecutor, DisruptorExecutor


def test_entry_point_registers_both_executors_with_distribution() -> None:
    pm = PluginManager()
    comps = {c.name: c for c in pm.components("executor")}
    version = importlib.metadata.version("hudi-executors")
    for name in ("BOUNDED_IN_MEMORY", "DISRUPTOR"):
        assert comps[name].distribution == "hudi-executors"
        assert comps[name].version == version
    assert comps["SIMPLE"].distribution == "hudi-core"
    listed = {c["name"]: c["distribution"] for c in pm.describe()["executor"]}
    assert listed["BOUNDED_IN_MEMORY"] == "hudi-executors"


def test_executor_type_selects_executor_with_its_options() -> None:
    pm = PluginManager()
    bim = executor_for(
        {"hoodie.write.executor.type": "bounded_in_memory", "hoodie.write.buffer.limit.bytes": "65536"},
        manager=pm,
    )
    assert isinstance(bim, BoundedInMemoryExecutor)
    assert bim.limit_bytes == 65536
    dis = executor_for(
        {
            "hoodie.write.executor.type": "DISRUPTOR",
            "hoodie.write.executor.disruptor.buffer.size": "16",
            "hoodie.write.executor.disruptor.wait.strategy": "yielding_wait",
        },
        manager=pm,
    )
    assert isinstance(dis, DisruptorExecutor)
    assert (dis.buffer_size, dis.wait_strategy) == (16, "yielding_wait")
