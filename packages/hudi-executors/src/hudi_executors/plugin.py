"""Entry point of the hudi-executors plugin (group ``hudi_py``): the hooks it implements."""

from __future__ import annotations

from hudi_core.plugins.hookspecs import Register, hookimpl

__all__ = ["hudi_register_executors"]


@hookimpl
def hudi_register_executors(register: Register) -> None:
    """BOUNDED_IN_MEMORY and DISRUPTOR, selected by ``hoodie.write.executor.type``."""
    from hudi_executors.bounded_in_memory import BoundedInMemoryExecutor
    from hudi_executors.disruptor import DisruptorExecutor

    register("BOUNDED_IN_MEMORY", BoundedInMemoryExecutor)
    register("DISRUPTOR", DisruptorExecutor)
