"""Executors: how insert handles are driven (SIMPLE built in; more in hudi-executors)."""

from __future__ import annotations

from typing import Any

from hudi_core.executor.base import Consumer, Executor, SimpleExecutor

__all__ = ["Consumer", "Executor", "SimpleExecutor", "executor_for"]


def executor_for(config: Any) -> Executor:
    """The executor named by ``hoodie.write.executor.type`` (default SIMPLE)."""
    from hudi_core.config.write import WriteOptions
    from hudi_core.plugins.manager import get_plugin_manager

    name = "SIMPLE"
    if config is not None and hasattr(config, "get_str"):
        name = config.get_str(WriteOptions.EXECUTOR_TYPE) or "SIMPLE"
    executor: Executor = get_plugin_manager().create("executor", name, config)
    return executor
