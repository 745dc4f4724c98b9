"""Engines: ``local`` (threads in this process) built in; ``spark`` from hudi-spark."""

from __future__ import annotations

from typing import Any

from hudi_core.engine.base import Engine, LocalEngine

__all__ = ["Engine", "LocalEngine", "engine_for"]


def engine_for(config: Any = None) -> Engine:
    """The engine named by ``hoodie.engine`` (default ``local``)."""
    from hudi_core.config.write import WriteOptions
    from hudi_core.plugins.manager import get_plugin_manager

    name = "local"
    if config is not None and hasattr(config, "get_str"):
        name = config.get_str(WriteOptions.ENGINE) or "local"
    engine: Engine = get_plugin_manager().create("engine", name, config)
    return engine
