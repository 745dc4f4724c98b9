"""Scheduling a compaction (spec 9.2 step 1, seed 6.1): validate, pick slices, write the plan."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from hudi_core.compaction.errors import CompactionValidationError
from hudi_core.compaction.plan import CompactionPlan, operation_for_slice, write_plan
from hudi_core.compaction.strategies import CompactionPlanStrategy, UnboundedStrategy
from hudi_core.compaction.triggers import CompactionTrigger
from hudi_core.config.compaction import CompactionOptions
from hudi_core.config.concurrency import ConcurrencySettings
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteOptions
from hudi_core.fs_view.view import FileSystemView
from hudi_core.lock.providers import table_lock
from hudi_core.timeline.instant import Action
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "build_plan",
    "plan_strategy_for",
    "schedule_compaction",
    "trigger_for",
    "validate_compaction_instant",
]


def trigger_for(config: HoodieConfig) -> CompactionTrigger:
    """The trigger named by ``hoodie.compact.inline.trigger.strategy``."""
    from hudi_core.plugins.manager import get_plugin_manager

    name = config.get_str(CompactionOptions.TRIGGER_STRATEGY) or "NUM_COMMITS"
    trigger: CompactionTrigger = get_plugin_manager().create("compaction_trigger", name, config)
    return trigger


def plan_strategy_for(config: HoodieConfig) -> CompactionPlanStrategy:
    """The plan strategy named by ``hoodie.compaction.strategy`` (short or Java class name)."""
    from hudi_core.plugins.manager import get_plugin_manager

    name = config.get_str(CompactionOptions.PLAN_STRATEGY) or "LOG_FILE_SIZE"
    strategy: CompactionPlanStrategy = get_plugin_manager().create("compaction_plan_strategy", name, config)
    return strategy


def validate_compaction_instant(
    table: MetaClient, instant_time: str, timeline: Timeline, *, concurrent_writers: bool = False
) -> None:
    """Java's checks: a MOR table; every pending write is newer than the compaction instant
    (not among concurrent writers, where a pending write that touched a planned file group
    fails its conflict check instead); no completed write and no compaction (any state) at or
    after it."""
    if not table.config.is_mor:
        raise CompactionValidationError(
            f"cannot compact {table.base_uri}: it is a {table.table_type} table; "
            "only MERGE_ON_READ tables have log files to compact"
        )
    writes = timeline.commits()
    pending = sorted(i.timestamp for i in writes.pending() if i.action != Action.COMPACTION
                     and i.action != Action.LOG_COMPACTION)  # fmt: skip
    if pending and pending[0] <= instant_time and not concurrent_writers:
        raise CompactionValidationError(
            f"cannot schedule a compaction at {instant_time}: write {pending[0]} is still pending "
            "and the earliest pending write must be later than the compaction; finish or roll it back first"
        )
    conflicting = sorted(
        i.timestamp for i in writes
        if i.timestamp >= instant_time and (i.is_completed or i.action == Action.COMPACTION)
    )  # fmt: skip
    if conflicting:
        raise CompactionValidationError(
            f"cannot schedule a compaction at {instant_time}: instants {conflicting} are at or after it; "
            "use a newer instant time"
        )


def build_plan(
    table: MetaClient,
    *,
    strategy: CompactionPlanStrategy,
    timeline: Timeline,
    config: HoodieConfig,
) -> CompactionPlan:
    """One operation per latest file slice with log files that no pending compaction or clustering holds,
    filtered and ordered by the strategy."""
    view = FileSystemView(table, timeline=timeline)
    busy = {(op.partition_path, op.file_id) for op in view.pending_compaction_operations()}
    busy |= set(view.pending_clustering_file_groups())  # Hudi's plan generator leaves them out too
    default_size = int(config.get(WriteOptions.PARQUET_MAX_FILE_SIZE))
    candidates = []
    for group in view.all_file_groups(partitions=strategy.filter_partitions(view.partitions())):
        if (group.partition_path, group.file_id) in busy:
            continue
        s = group.latest_slice()
        if s is None or not s.log_files:
            continue
        candidates.append(operation_for_slice(s, default_base_size=default_size))
    return CompactionPlan(operations=strategy.select(candidates))


def schedule_compaction(
    table: MetaClient,
    *,
    config: HoodieConfig | dict[str, Any] | None = None,
    instant_time: str | None = None,
    force: bool = False,
    now: _dt.datetime | None = None,
) -> str | None:
    """Schedule a compaction; returns its instant, or None when there is nothing to do.

    Without ``force`` the trigger (``hoodie.compact.inline.trigger.strategy``) decides whether
    it is time and the plan strategy picks the slices; with ``force`` every latest slice with
    log files is planned (what ``hudi-py compact`` does).
    """
    cfg = table.write_config(dict(config or {}))
    concurrent = ConcurrencySettings.of(cfg).lazy
    with table_lock(table, cfg):  # (optimistic concurrency control: instant and plan under the lock)
        timeline: ActiveTimeline = table.timeline
        if not table.config.is_mor:
            validate_compaction_instant(table, instant_time or "0", timeline)
        if not force and not trigger_for(cfg).should_schedule(timeline, now=now):
            return None
        t = instant_time or timeline.new_instant_time()
        validate_compaction_instant(table, t, timeline, concurrent_writers=concurrent)
        strategy: CompactionPlanStrategy = UnboundedStrategy(cfg) if force else plan_strategy_for(cfg)
        plan = build_plan(table, strategy=strategy, timeline=timeline, config=cfg)
        if not plan.operations:
            return None
        write_plan(table, t, plan, timeline=timeline)
    return t
