"""Every hook a hudi-py plugin can implement, grouped by the phase in which it is called.

Plugins are discovered through the ``hudi_py`` entry-point group. Each ``hudi_register_*`` hook
is called once per plugin, when a :class:`~hudi_core.plugins.manager.PluginManager` loads, with a
``register`` callable bound to that plugin; components registered there are then chosen by name
(case-insensitive). Built-in components register through these same hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pluggy

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "hudi_py"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Register = Callable[..., None]


# --- Phase 1: opening a table (storage, locking) -------------------------------------------------


@hookspec(firstresult=True)
def hudi_storage_for_uri(uri: str, options: Mapping[str, str]) -> Any:
    """Called whenever a table path is opened, with the URI (``file:///t``, ``/t``, ``s3://b/t``,
    ``memory://t``, ``hdfs://nn/t``) and the table's string options.

    Return a :class:`hudi_core.storage.Storage` if this plugin serves the URI's scheme, else None.
    firstresult: stops at the first non-None result. The generic fsspec storage is ``trylast``,
    so a scheme-specific plugin (e.g. S3) wins without configuration.
    """


@hookspec
def hudi_register_lock_providers(register: Register) -> None:
    """Called once at load. ``register(name, factory, aliases=())`` where
    ``factory(storage, base_path, options) -> LockProvider`` (``acquire``/``release``, context
    manager). Chosen by ``hoodie.write.lock.provider``. Returns nothing.
    """


# --- Phase 2: preparing records (keys) -----------------------------------------------------------


@hookspec
def hudi_register_key_generators(register: Register) -> None:
    """Called once at load. ``register(name, factory, aliases=())`` where
    ``factory(config: HoodieConfig) -> KeyGenerator``. Names are short names (``SIMPLE``) and
    aliases are Hudi's Java class names (``org.apache.hudi.keygen.SimpleKeyGenerator``), so either
    form selects it. Returns nothing.
    """


# --- Phase 3: running the write ------------------------------------------------------------------


@hookspec
def hudi_register_engines(register: Register) -> None:
    """Called once at load. ``register(name, factory)`` where ``factory(options) -> Engine``
    (parallelise work: map over file groups or partitions, collect to the coordinator). ``local``
    is built in; ``spark`` comes from hudi-spark. Chosen by ``hoodie.engine``. Returns nothing.
    """


@hookspec
def hudi_register_executors(register: Register) -> None:
    """Called once at load. ``register(name, factory)`` where ``factory(config) -> Executor``:
    an executor drives producer -> transform -> consumer for insert handles (seed 5.2.2).
    ``SIMPLE`` is built in. Chosen by ``hoodie.write.executor.type``. Returns nothing.
    """


# --- Phase 4: table services ---------------------------------------------------------------------


@hookspec
def hudi_register_compaction_triggers(register: Register) -> None:
    """Called once at load. ``register(name, factory)`` where ``factory(config) ->
    CompactionTrigger`` decides whether a compaction is scheduled now (NUM_COMMITS,
    TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME). Chosen by
    ``hoodie.compact.inline.trigger.strategy``. Returns nothing.
    """


@hookspec
def hudi_register_compaction_plan_strategies(register: Register) -> None:
    """Called once at load. ``register(name, factory, aliases=())`` where ``factory(config) ->
    CompactionPlanStrategy`` picks the file slices of a plan (unbounded, log-file-size,
    log-file-count, bounded IO, day based); aliases are Hudi's Java class names. Chosen by
    ``hoodie.compaction.strategy``. Returns nothing.
    """
