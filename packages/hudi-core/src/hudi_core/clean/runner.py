"""Running a clean (spec 11.2): ``T.clean.requested`` (plan) -> ``T.clean.inflight`` (same bytes)
-> delete the files -> ``T.clean`` (``HoodieCleanMetadata``). A clean left pending by a crash is
finished first, with its own plan."""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hudi_core.clean.metadata import CleanerPlan, CleanMetadata, PartitionCleanStat
from hudi_core.clean.planner import plan_clean
from hudi_core.config.concurrency import ConcurrencySettings
from hudi_core.lock.heartbeat import older_than
from hudi_core.lock.providers import table_lock
from hudi_core.timeline.instant import Action, Instant, State

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.timeline.timeline import ActiveTimeline

__all__ = ["clean", "execute_clean"]


def execute_clean(
    table: MetaClient,
    instant: Instant,
    plan: CleanerPlan,
    *,
    on_file_deleted: Callable[[], None] | None = None,
    timeline: ActiveTimeline | None = None,
) -> CleanMetadata:
    """Move a requested/inflight clean through inflight to completed, deleting its files.

    ``on_file_deleted`` is called after each file (the CLI advances its progress bar with it).
    ``timeline``: one that already holds ``instant`` (the one that created it), instead of a
    fresh load; only this clean's own instant is read from it."""
    start = time.monotonic()
    tl = timeline if timeline is not None else table.timeline
    current = tl.current(instant)
    plan_bytes = plan.to_bytes()
    if current is not None and current.is_requested:
        current = tl.transition_to_inflight(current, plan_bytes)
    stats: dict[str, PartitionCleanStat] = {}
    for part, paths in plan.files_per_partition.items():
        st = stats.setdefault(part, PartitionCleanStat(part, plan.policy))
        local = {_local(table, part, p): p.rstrip("/").rsplit("/", 1)[-1] for p in paths}
        # one multi-object delete a partition on S3; gone already (a retried clean) counts as deleted
        failed = table.storage.delete_files(local)
        for path, name in local.items():
            st.delete_path_patterns.append(name)
            (st.failed_delete_files if path in failed else st.success_delete_files).append(name)
            if on_file_deleted is not None:
                on_file_deleted()
    ectr = plan.earliest_instant_to_retain[0] if plan.earliest_instant_to_retain else ""
    meta = CleanMetadata(instant.timestamp, int((time.monotonic() - start) * 1000), ectr,
                         plan.last_completed_commit, stats)  # fmt: skip
    inflight = current if current is not None else instant.with_state(State.INFLIGHT)
    tl.complete(inflight, meta.to_bytes())
    return meta


def _local(table: MetaClient, partition: str, path: str) -> str:
    # Plans written by Java hold ``file:/...`` or ``s3a://...`` paths; ours hold storage paths.
    name = path.rstrip("/").rsplit("/", 1)[-1]
    uri = table.partition_uri(partition) if partition else table.base_uri
    return f"{uri}/{name}"


def clean(
    table: MetaClient,
    *,
    config: dict[str, Any] | None = None,
    now: _dt.datetime | None = None,
    progress: Callable[[int], Callable[[], None]] | None = None,
    timeline: ActiveTimeline | None = None,
) -> CleanMetadata | None:
    """Clean the table now; returns the clean's metadata, or None when nothing was due.

    ``timeline``: the caller's recent load, to look for pending cleans in (a write's services
    looked at it already); the plan is always made on a fresh load under the table lock.

    >>> clean(MetaClient.open("/tmp/t"), config={"hoodie.cleaner.commits.retained": "2"})  # doctest: +SKIP
    """
    cfg = table.write_config(dict(config or {}))
    concurrency = ConcurrencySettings.of(cfg)
    tl = timeline if timeline is not None else table.timeline
    for pending in tl.filter(actions=[Action.CLEAN]).pending():
        req = pending.with_state(State.REQUESTED)
        # (a file gone meanwhile: that clean moved on, so it is alive)
        if concurrency.lazy and not older_than(table.storage, tl.path_of(pending), concurrency.expiry_s):
            continue  # another writer's clean, running now (Hudi plans cleans under the lock too)
        old = CleanerPlan.from_bytes(table.storage.read_bytes(tl.path_of(req)), what=tl.path_of(req))
        execute_clean(table, pending, old, on_file_deleted=_tick(progress, old))
    # (optimistic concurrency control: plan and instant under the lock, on one load of the
    # timeline that the plan's every look and the clean's transitions share)
    with table_lock(table, cfg), table.pinned_timeline() as tl:
        if tl.filter(actions=[Action.CLEAN]).pending():
            return None  # one clean at a time
        plan = plan_clean(table, config=cfg, timeline=tl, now=now)
        if not plan.files_per_partition:
            return None
        t = tl.new_instant_time()
        inst = tl.create_requested(t, Action.CLEAN, plan.to_bytes())
    return execute_clean(table, inst, plan, on_file_deleted=_tick(progress, plan), timeline=tl)


def _tick(
    progress: Callable[[int], Callable[[], None]] | None, plan: CleanerPlan
) -> Callable[[], None] | None:
    """``progress(total_files)`` returns the per-file callback (None: no progress shown)."""
    if progress is None:
        return None
    return progress(sum(len(paths) for paths in plan.files_per_partition.values()))
