"""Executors: how insert handles are driven (SIMPLE built in; more in hudi-executors)."""

from __future__ import annotations

from typing import Any

from hudi_core.executor.base import Consumer, Executor, Producers, SimpleExecutor, as_config

__all__ = ["Consumer", "Executor", "Producers", "SimpleExecutor", "executor_for"]


def executor_for(config: Any = None, *, manager: Any = None) -> Executor:
    """The executor named by ``hoodie.write.executor.type`` (default SIMPLE).

    ``config`` is a HoodieConfig or a mapping of options. A name no installed plugin provides
    raises :class:`~hudi_core.errors.UnknownComponentError` naming the package to install.
    """
    from hudi_core.config.executor import ExecutorOptions
    from hudi_core.plugins.manager import get_plugin_manager

    conf = as_config(config)
    name = conf.get_str(ExecutorOptions.TYPE) or "SIMPLE"
    pm = manager if manager is not None else get_plugin_manager()
    executor: Executor = pm.create("executor", name, conf)
    return executor
