"""The plugin system (pluggy): hookspecs and the manager (the built-ins are registered by the
top layer: ``hudi_core.builtin_plugins``)."""

from __future__ import annotations

from hudi_core.plugins.hookspecs import hookimpl, hookspec
from hudi_core.plugins.manager import Component, PluginManager, get_plugin_manager, reset_plugin_manager

__all__ = ["Component", "PluginManager", "get_plugin_manager", "hookimpl", "hookspec", "reset_plugin_manager"]
