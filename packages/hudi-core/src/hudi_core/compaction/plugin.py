"""Registers the built-in compaction triggers and plan strategies."""

from __future__ import annotations

from hudi_core.plugins.hookspecs import Register, hookimpl

__all__ = ["CoreCompaction"]


class CoreCompaction:
    @hookimpl
    def hudi_register_compaction_triggers(self, register: Register) -> None:
        from hudi_core.compaction import triggers as t

        for cls in (t.NumCommitsTrigger, t.NumCommitsAfterLastRequestTrigger, t.TimeElapsedTrigger,
                    t.NumAndTimeTrigger, t.NumOrTimeTrigger):  # fmt: skip
            register(cls.name, cls)

    @hookimpl
    def hudi_register_compaction_plan_strategies(self, register: Register) -> None:
        from hudi_core.compaction.strategies import BUILTIN_STRATEGIES, JAVA_PACKAGE

        extra_aliases = {
            # Java's partition-aware variants choose the same slices here: they only differ in
            # how they order partitions across several plans.
            "UNBOUNDED": (f"{JAVA_PACKAGE}.UnBoundedPartitionAwareCompactionStrategy",),
            "DAY_BASED": (f"{JAVA_PACKAGE}.BoundedPartitionAwareCompactionStrategy",),
        }
        for cls in BUILTIN_STRATEGIES:
            short = cls.java_class.rsplit(".", 1)[-1]
            register(cls.name, cls, aliases=(cls.java_class, short, *extra_aliases.get(cls.name, ())))
