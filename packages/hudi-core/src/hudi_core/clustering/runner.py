"""Executing and committing a clustering, as Apache Hudi 0.15's sort-and-size strategy does.

requested -> inflight (an empty file); each group's slices are read merged (the snapshot's merge
as of the clustering instant: base file and logs) and written as new file groups
``<uuid>-0_<token>_<Tc>.parquet`` behind CREATE markers: sorted by the plan's sort columns when
it has some (then cut into ``numOutputFileGroups`` runs of rows), else slice by slice as read
(the slices dealt to the outputs, largest first). The rows keep their meta columns but the file
name (Hudi's ``preserveHoodieMetadata``, on in every plan Hudi 0.15 writes). The replacecommit
names the new files and, per partition, the file groups they replace; readers, writers and the
cleaner then treat those as gone.

A failed attempt is undone (its files by their markers, the inflight file) and the plan is
requested again; the next run of it, in this process or another, starts over with the same
instant. Groups run in parallel on the engine.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.clustering.errors import ClusteringError
from hudi_core.clustering.plan import (
    ClusteringGroup,
    ClusteringPlan,
    build_plan,
    check_supported,
    commits_since_last_clustering,
    pending_clusterings,
    plan_bytes,
    read_plan,
)
from hudi_core.config.clustering import ClusteringOptions
from hudi_core.config.concurrency import ConcurrencySettings
from hudi_core.config.property import HoodieConfig
from hudi_core.lock.heartbeat import Heartbeat, heartbeat_path, inflight_abandoned
from hudi_core.lock.providers import table_lock
from hudi_core.schema.internal import SchemaHistory
from hudi_core.table.file_names import BaseFileName, new_file_id, write_token
from hudi_core.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_core.timeline.instant import Action, Instant, State
from hudi_core.timeline.timeline import Timeline
from hudi_core.write.commit import carry_internal_schema, remove_stale_metadata_table
from hudi_core.write.handles.context import constant_strings
from hudi_core.write.markers import MarkerFiles, delete_marked_files

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "ClusteringError",
    "ClusteringResult",
    "cluster",
    "maybe_cluster_inline",
    "rollback_inflight_clustering",
    "run_clustering",
    "schedule_clustering",
]

log = logging.getLogger(__name__)

_FILE_NAME = "_hoodie_file_name"
_COMMIT_TIME = "_hoodie_commit_time"
_SEQNO = "_hoodie_commit_seqno"
#: base rows merged at a time (compaction's batch)
_BATCH_ROWS = 1 << 20


@dataclass(frozen=True)
class _GroupTask:
    """Everything a worker needs for one group; picklable (no storage or table objects)."""

    base_uri: str
    options: dict[str, str]
    instant_time: str
    index: int
    group: ClusteringGroup
    sort_columns: tuple[str, ...]
    preserve_meta: bool
    timeline: Timeline
    schema: pa.Schema
    avro_schema: dict[str, Any]
    #: the files' columns by id, where Hudi's schema on read renamed one
    history: SchemaHistory | None = None


@dataclass(frozen=True)
class _Written:
    partition_path: str
    file_id: str
    path: str
    records: int
    size: int
    create_ms: int


@dataclass(frozen=True)
class _GroupResult:
    written: tuple[_Written, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class ClusteringResult:
    instant_time: str
    metadata: CommitMetadata

    @property
    def records_written(self) -> int:
        return sum(s.num_writes for s in self.metadata.all_write_stats())

    @property
    def replaced_file_ids(self) -> dict[str, list[str]]:
        return dict(self.metadata.partition_to_replace_file_ids or {})


# -- scheduling ------------------------------------------------------------------------------------


def schedule_clustering(
    table: MetaClient, *, config: HoodieConfig | dict[str, Any] | None = None, instant_time: str | None = None
) -> str | None:
    """Write a clustering plan over the table's small file slices (:mod:`hudi_core.clustering.plan`);
    returns its instant, or None when no slice is due."""
    table.config.check_writable()
    cfg = table.write_config(dict(config or {}))
    check_supported(table, cfg)
    with table_lock(table, cfg):
        tl = table.timeline
        plan = build_plan(table, cfg, tl)
        if plan is None:
            return None
        t = instant_time or tl.new_instant_time()
        tl.create_requested(t, Action.REPLACE_COMMIT, plan_bytes(plan))
    return t


# -- one group (runs on a worker) ------------------------------------------------------------------


def _pieces(table: MetaClient, task: _GroupTask, slices: Any) -> Iterator[pa.Table]:
    """The merged rows of ``slices`` as the snapshot sees them at the clustering instant."""
    from hudi_core.read.merge import compact_file_slice

    for info in slices:
        yield from compact_file_slice(table, info.file_slice(table), batch_rows=_BATCH_ROWS,
                                      as_of=task.instant_time, timeline=task.timeline, schema=task.schema,
                                      history=task.history)  # fmt: skip


def _sorted_runs(pieces: Iterator[pa.Table], columns: tuple[str, ...], n: int) -> list[list[pa.Table]]:
    """The rows sorted by ``columns`` (ascending, nulls first, as Spark's sort), cut into ``n``
    runs of about equal rows."""
    from hudi_core.read.align import decoded

    rows = pa.concat_tables([decoded(p) for p in pieces])
    missing = [c for c in columns if c not in rows.column_names]
    if missing:
        raise ClusteringError(f"sort columns {missing} are not columns of the table")
    if rows.num_rows:
        if int(pa.__version__.split(".")[0]) >= 25:  # null placement per key since pyarrow 25
            rows = rows.sort_by([(c, "ascending", "at_start") for c in columns])
        else:
            rows = rows.sort_by([(c, "ascending") for c in columns], null_placement="at_start")
    step = -(-rows.num_rows // n) if rows.num_rows else 0
    return [[rows.slice(i * step, step)] for i in range(n)] if step else [[rows]]


def _dealt(group: ClusteringGroup, n: int) -> list[list[Any]]:
    """The group's slices dealt to ``n`` outputs in turn, in the plan's order (largest base file
    first), as Spark's ``coalesce`` deals its input splits."""
    return [o for o in (list(group.slices[i::n]) for i in range(n)) if o]


def _with_meta(piece: pa.Table, name: str, task: _GroupTask, seq: int) -> pa.Table:
    n = piece.num_rows
    idx = piece.schema.get_field_index(_FILE_NAME)
    if idx >= 0:
        piece = piece.set_column(idx, _FILE_NAME, constant_strings(name, n))
    if not task.preserve_meta and _COMMIT_TIME in piece.column_names:
        t = task.instant_time
        piece = piece.set_column(
            piece.schema.get_field_index(_COMMIT_TIME), _COMMIT_TIME, constant_strings(t, n)
        )
        numbers = pc.cast(pa.array(np.arange(seq, seq + n, dtype=np.int64)), pa.string())
        seqno = pc.binary_join_element_wise(f"{t}_{task.index}", numbers, "_")
        piece = piece.set_column(piece.schema.get_field_index(_SEQNO), _SEQNO, seqno)
    return piece


def _write_output(
    table: MetaClient, task: _GroupTask, k: int, pieces: Iterator[pa.Table], cfg: HoodieConfig
) -> _Written | None:
    """One new file group of the group's rows; None when they are none (all deleted)."""
    from hudi_core.read.align import decoded, encoded_like
    from hudi_core.write.handles.parquet_out import write_pieces

    first = next((p for p in pieces if p.num_rows), None)
    if first is None:
        return None
    partition = task.group.partition_path
    file_id = new_file_id()
    name = BaseFileName(file_id, write_token(task.index, k, task.index), task.instant_time).name
    seq = 0

    def stamped() -> Iterator[pa.Table]:
        # one file, one schema: a slice whose file dictionary-encodes other columns than the
        # first slice's comes encoded as the first
        nonlocal seq
        for p in _chain(first, pieces):
            if not p.schema.equals(first.schema):
                p = encoded_like(decoded(p), first.schema)
            yield _with_meta(p, name, task, seq)
            seq += p.num_rows

    part_uri = table.partition_uri(partition) if partition else table.base_uri
    MarkerFiles(table.storage, table.meta_path, task.instant_time).create(partition, name, "CREATE")
    t0 = time.monotonic()
    out = write_pieces(table.storage, f"{part_uri}/{name}", stamped(), config=cfg, avro_schema=task.avro_schema,
                       populate_meta_fields=table.config.populate_meta_fields)  # fmt: skip
    rel = f"{partition}/{name}" if partition else name
    return _Written(
        partition, file_id, rel, int(out.num_records), int(out.size), int((time.monotonic() - t0) * 1000)
    )


def _chain(first: pa.Table, rest: Iterator[pa.Table]) -> Iterator[pa.Table]:
    yield first
    yield from rest


def execute_group(task: _GroupTask) -> _GroupResult:
    """Rewrite one group. Never raises: a failure comes back as a result with ``error`` set."""
    from hudi_core.table.meta_client import MetaClient

    try:
        table = MetaClient.open(task.base_uri, options=task.options)
        cfg = table.write_config()
        n = max(1, task.group.num_output_file_groups)
        if task.sort_columns:
            runs: list[Iterator[pa.Table]] = [
                iter(r) for r in _sorted_runs(_pieces(table, task, task.group.slices), task.sort_columns, n)
            ]
        else:
            runs = [_pieces(table, task, dealt) for dealt in _dealt(task.group, n)]
        written = [
            w for k, run in enumerate(runs) if (w := _write_output(table, task, k, run, cfg)) is not None
        ]
        return _GroupResult(tuple(written))
    except Exception as e:  # the coordinator decides; report rather than raise
        log.warning("clustering %s of group %d failed: %s", task.instant_time, task.index, e)
        return _GroupResult(error=f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}")


# -- the coordinator -------------------------------------------------------------------------------


def rollback_inflight_clustering(table: MetaClient, instant_time: str) -> list[str]:
    """Undo a failed attempt: delete its new files (by markers), then its inflight file, so the
    plan is requested again. Returns the deleted files."""
    deleted = delete_marked_files(table, instant_time)
    found = [i for i in pending_clusterings(table) if i.timestamp == instant_time]
    if found and found[0].is_inflight:
        table.timeline.revert_to_requested(found[0])
    return deleted


def run_clustering(
    table: MetaClient, instant: str | None = None, *, config: HoodieConfig | dict[str, Any] | None = None
) -> ClusteringResult:
    """Execute and commit one pending clustering (the oldest when ``instant`` is None)."""
    from hudi_core.read.merge import slice_schema
    from hudi_core.schema.avro_schema import without_fields

    table.config.check_writable()
    cfg = table.write_config(dict(config or {}))
    tl = table.timeline
    pending = pending_clusterings(table, tl)
    target = next((i for i in pending if instant is None or i.timestamp == instant), None)
    if target is None:
        if instant is None:
            raise ClusteringError(f"no pending clustering in {table.base_uri}: schedule one first")
        done = tl.completed().filter(actions=[Action.REPLACE_COMMIT]).find(instant)
        why = "it is already completed" if done is not None else "there is no such clustering"
        raise ClusteringError(f"cannot run clustering {instant} in {table.base_uri}: {why}; "
                              f"pending: {[i.timestamp for i in pending] or 'none'}")  # fmt: skip
    t = target.timestamp
    concurrency = ConcurrencySettings.of(cfg)
    if target.is_inflight:
        if concurrency.lazy and not inflight_abandoned(table.storage, table.meta_path, t, tl.path_of(target),
                                                       concurrency.expiry_s):  # fmt: skip
            raise ClusteringError(
                f"clustering {t} of {table.base_uri} is being run by another writer (its heartbeat "
                f"{heartbeat_path(table.meta_path, t)} is fresh); leave it to that writer"
            )
        rollback_inflight_clustering(table, t)  # a previous attempt died: start it over
        tl = table.timeline
    plan = read_plan(table, t)
    if not plan.strategy_class.endswith(".SparkSortAndSizeExecutionStrategy"):
        raise ClusteringError(f"clustering {t} asks for {plan.strategy_class}: only "
                              "SparkSortAndSizeExecutionStrategy is implemented")  # fmt: skip
    avro = table.avro_schema(as_of=t)
    if avro is None:
        raise ClusteringError(f"table {table.base_uri} has no schema to cluster with")
    avro = without_fields(avro, table.config.dropped_columns)
    schema = slice_schema(table, as_of=t, stored=True)
    remove_stale_metadata_table(table)
    # the exclusive create of the inflight file claims the plan: among concurrent writers
    # exactly one runs it (the others get CommitConflictError); a heartbeat tells them it lives
    inflight = tl.transition_to_inflight(Instant(t, Action.REPLACE_COMMIT, State.REQUESTED))
    heartbeat = None
    if concurrency.lazy:
        heartbeat = Heartbeat(table.storage, table.meta_path, t, concurrency.heartbeat_interval_s).start()
    try:
        return _execute(table, cfg, tl, inflight, plan, schema, avro, config)
    finally:
        if heartbeat is not None:
            heartbeat.stop()


def _execute(
    table: MetaClient, cfg: HoodieConfig, tl: Any, inflight: Instant, plan: ClusteringPlan, schema: pa.Schema,
    avro: dict[str, Any], config: HoodieConfig | dict[str, Any] | None,
) -> ClusteringResult:  # fmt: skip
    from hudi_core.engine import engine_for

    t = inflight.timestamp
    options = table.options.to_dict()
    options.update({k: v for k, v in dict(config or {}).items() if v is not None})
    snapshot = Timeline(list(tl))
    strings = {k: str(v) for k, v in options.items()}
    dropped = table.config.dropped_columns  # a group is one partition's: its path value sorts nothing
    sort = tuple(c for c in plan.sort_columns if c not in dropped)
    history = table.schema_history(timeline=tl)
    tasks = [
        _GroupTask(
            table.base_uri, strings, t, i, g, sort, plan.preserve_meta, snapshot, schema, avro, history
        )
        for i, g in enumerate(plan.groups)
    ]
    results = engine_for(cfg).map(execute_group, tasks)
    failed = [r for r in results if r.error is not None]
    if len(results) != len(tasks) or failed:
        deleted = rollback_inflight_clustering(table, t)
        first = failed[0].error.splitlines()[0] if failed and failed[0].error else "missing results"
        raise ClusteringError(
            f"clustering {t} failed for {len(failed)} of {len(tasks)} groups (first: {first}); rolled back "
            f"({len(deleted)} new files deleted), the plan is requested again: retry it with "
            f"`hudi-py cluster {table.base_uri} --run {t}`"
        )
    meta = CommitMetadata(operation_type="CLUSTER", partition_to_replace_file_ids=plan.replaced_file_ids(),
                          extra_metadata={"schema": json.dumps(avro, separators=(",", ":"))})  # fmt: skip
    carry_internal_schema(table, meta, tl)
    for r in results:
        for w in r.written:
            meta.add_write_stat(WriteStat(
                file_id=w.file_id, path=w.path, partition_path=w.partition_path, num_writes=w.records,
                num_inserts=w.records, total_write_bytes=w.size, file_size_in_bytes=w.size,
                runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": w.create_ms},
            ))  # fmt: skip
    tl.complete(inflight, meta.to_bytes())
    MarkerFiles(table.storage, table.meta_path, t).delete_all()
    return ClusteringResult(t, meta)


def cluster(
    table: MetaClient, *, config: HoodieConfig | dict[str, Any] | None = None
) -> list[ClusteringResult]:
    """Run every pending clustering, oldest first, then schedule one over the small file slices
    now and run it (Hudi's ``run_clustering(op => 'scheduleAndExecute')``)."""
    done = [run_clustering(table, i.timestamp, config=config) for i in pending_clusterings(table)]
    t = schedule_clustering(table, config=config)
    if t is not None:
        done.append(run_clustering(table, t, config=config))
    return done


def maybe_cluster_inline(
    table: MetaClient, config: HoodieConfig | dict[str, Any] | None = None
) -> str | None:
    """For the write client, after a commit: with ``hoodie.clustering.inline`` run pending
    clusterings, then schedule and run one once ``inline.max.commits`` commits completed since
    the last; with ``hoodie.clustering.schedule.inline`` only schedule. Returns the instant
    scheduled, or None."""
    cfg = table.write_config(dict(config or {}))
    inline = bool(cfg.get(ClusteringOptions.INLINE))
    if not inline and not bool(cfg.get(ClusteringOptions.SCHEDULE_INLINE)):
        return None
    if inline:
        for inst in pending_clusterings(table):
            run_clustering(table, inst.timestamp, config=config)
    if commits_since_last_clustering(table.reload().timeline) < int(
        cfg.get(ClusteringOptions.INLINE_MAX_COMMITS)
    ):
        return None
    t = schedule_clustering(table, config=config)
    if t is not None and inline:
        run_clustering(table, t, config=config)
    return t
