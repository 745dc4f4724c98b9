"""Executing and committing a compaction (spec 9.2 steps 2-4, seed 6.3-6.4).

requested -> inflight; every operation merges its slice (``read.merge.compact_file_slice``, the
snapshot reader's merge bounded by the compaction instant, a batch of the base file at a time)
into a new base file ``<fileId>_<token>_<Tc>.parquet`` behind a MERGE marker, written as the
batches come; the engine runs operations in parallel.
The commit happens only when every operation's result arrived and none failed; otherwise the new
base files are deleted by their markers and the inflight file is removed, so the plan is back to
requested and can be retried with the same instant.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_core.compaction.errors import CompactionError
from hudi_core.compaction.plan import CompactionOperation, CompactionPlan, read_plan
from hudi_core.config.concurrency import ConcurrencySettings
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import CommitConflictError
from hudi_core.lock.heartbeat import Heartbeat, heartbeat_path, inflight_abandoned
from hudi_core.schema.internal import SchemaHistory
from hudi_core.table.file_names import BaseFileName, write_token
from hudi_core.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_core.timeline.instant import Action, Instant, State
from hudi_core.timeline.timeline import Timeline
from hudi_core.write.commit import carry_internal_schema
from hudi_core.write.handles.context import constant_strings
from hudi_core.write.handles.parquet_out import GrowingFooter
from hudi_core.write.markers import MarkerFiles, delete_marked_files

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "CompactionResult",
    "OperationResult",
    "OperationTask",
    "execute_operation",
    "pending_compactions",
    "rollback_inflight_compaction",
    "run_compaction",
    "run_compaction_async",
    "run_pending_compactions",
]

log = logging.getLogger(__name__)

_FILE_NAME_COL = "_hoodie_file_name"
_COMMIT_TIME_COL = "_hoodie_commit_time"


@dataclass(frozen=True)
class OperationTask:
    """Everything a worker needs for one operation; picklable (no storage or table objects)."""

    base_uri: str
    options: dict[str, str]
    instant_time: str
    index: int
    operation: CompactionOperation
    timeline: Timeline
    schema: pa.Schema
    avro_schema: dict[str, Any]
    #: the files' columns by id, where Hudi's schema on read renamed one
    history: SchemaHistory | None = None


@dataclass(frozen=True)
class OperationResult:
    partition_path: str
    file_id: str
    prev_base_instant: str
    path: str | None
    records_written: int
    bytes_written: int
    log_files: int
    log_size: int
    log_blocks: int
    rollback_blocks: int
    corrupt_blocks: int
    records_from_logs: int
    scan_ms: int
    write_ms: int
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass(frozen=True)
class CompactionResult:
    instant_time: str
    operations: list[OperationResult]
    metadata: CommitMetadata

    @property
    def records_written(self) -> int:
        return sum(r.records_written for r in self.operations)


def pending_compactions(table: MetaClient) -> list[Instant]:
    """Requested or inflight compactions, oldest first."""
    return list(table.timeline.pending_compactions())


# -- one operation (runs on a worker) --------------------------------------------------------------


#: base rows merged at a time: memory holds the slice's log rows and a batch of its base file.
#: Small batches cost per batch (each filtered, its dictionaries unified again; past the first,
#: the key column is read twice): in 64k-row batches the 10M-row benchmark's compaction took
#: 4.6-5.0 s against 4.1-4.3 s whole. Large ones hold more fresh memory at once, which costs page
#: faults on every operation: the same compaction (15 base files of 516-982k rows, fresh
#: processes, alternating) took 4.5-5.0 s (median 4.9) whole, 4.5-4.7 s (4.66) in 256k-row
#: batches, 4.7-4.8 s in 128k, with 15% less peak memory (1.4 GB against 1.6 GB)
COMPACT_BATCH_ROWS = 1 << 18


def _write_base(
    table: MetaClient, path: str, pieces: Iterable[pa.Table], avro_schema: dict[str, Any], cfg: HoodieConfig,
    growing: GrowingFooter | None = None,
) -> tuple[int, int]:  # fmt: skip
    """Write one base file of ``pieces`` (written as they come); returns its size and rows."""
    from hudi_core.write.handles.parquet_out import write_pieces

    out = write_pieces(table.storage, path, pieces, config=cfg, avro_schema=avro_schema,
                       populate_meta_fields=table.config.populate_meta_fields, growing=growing)  # fmt: skip
    return int(out.size), int(out.num_records)


def _count_after(times: pa.ChunkedArray, instant: str, *, inclusive: bool) -> int:
    """Rows whose commit time is after ``instant`` (or at it), compared value by value once per
    dictionary where the column is dictionary-encoded."""
    import pyarrow.compute as pc

    compare = pc.greater_equal if inclusive else pc.greater
    total = 0
    for chunk in times.chunks:
        if pa.types.is_dictionary(chunk.type):
            newer = pc.take(compare(chunk.dictionary, instant), chunk.indices)
        else:
            newer = compare(chunk, instant)
        total += int(pc.sum(pc.cast(pc.fill_null(newer, False), pa.int64())).as_py() or 0)
    return total


def execute_operation(task: OperationTask) -> OperationResult:
    """Merge one file slice into a new base file at the compaction instant. Never raises: a
    failure comes back as a result with ``error`` set, so the coordinator sees every outcome."""
    from hudi_core.read.merge import compact_file_slice
    from hudi_core.table.meta_client import MetaClient

    op = task.operation
    log_size = int(op.metrics.get("TOTAL_LOG_FILES_SIZE", 0.0))
    try:
        table = MetaClient.open(task.base_uri, options=task.options)
        cfg = table.write_config()
        t0 = time.monotonic()
        file_slice = op.file_slice(table)
        rows = compact_file_slice(table, file_slice, batch_rows=COMPACT_BATCH_ROWS, as_of=task.instant_time,
                                  timeline=task.timeline, schema=task.schema, history=task.history)  # fmt: skip
        # the base file's bloom filter and min/max keys, continued with the keys the merge adds
        # (read.merge.CompactedSlice.added), from the footer the merge read
        keyed = file_slice.base_file is not None and table.config.populate_meta_fields
        growing = GrowingFooter() if keyed else None
        name = BaseFileName(op.file_id, write_token(task.index, 0, task.index), task.instant_time).name
        from_logs = 0
        scan_s = 0.0

        def pieces() -> Iterator[pa.Table]:
            # the merge's time is the scan's, the rest the write's
            nonlocal from_logs, scan_s
            merged = iter(rows)
            while True:
                t = time.monotonic()
                piece = next(merged, None)
                scan_s += time.monotonic() - t
                if piece is None:
                    break
                n = piece.num_rows
                idx = piece.schema.get_field_index(_FILE_NAME_COL)
                if idx >= 0:
                    piece = piece.set_column(idx, _FILE_NAME_COL, constant_strings(name, n))
                if _COMMIT_TIME_COL in piece.column_names and n:
                    from_logs += _count_after(
                        piece.column(_COMMIT_TIME_COL), op.base_instant, inclusive=not op.data_file_name
                    )
                yield piece
            if growing is not None:
                growing.start_from(rows.base_footer(), cfg)
                added = rows.added()
                if added is None:
                    growing.invalidate()
                else:
                    growing.add(added)

        part_uri = table.partition_uri(op.partition_path) if op.partition_path else table.base_uri
        MarkerFiles(table.storage, table.meta_path, task.instant_time).create(
            op.partition_path, name, "MERGE"
        )
        t1 = time.monotonic()
        size, n = _write_base(table, f"{part_uri}/{name}", pieces(), task.avro_schema, cfg, growing)
        counts = rows.block_counts()
        write_s = time.monotonic() - t1 - scan_s
        scan_ms, write_ms = int((t1 - t0 + scan_s) * 1000), int(write_s * 1000)
        rel = f"{op.partition_path}/{name}" if op.partition_path else name
        return OperationResult(
            op.partition_path, op.file_id, op.base_instant, rel, n, size, len(op.delta_file_names),
            log_size, counts.blocks, counts.rollbacks, counts.corrupt, from_logs, scan_ms, write_ms,
        )  # fmt: skip
    except Exception as e:  # the coordinator decides; report rather than raise
        log.warning("compaction %s of file group %s failed: %s", task.instant_time, op.file_id, e)
        return OperationResult(
            op.partition_path, op.file_id, op.base_instant, None, 0, 0, len(op.delta_file_names),
            log_size, 0, 0, 0, 0, 0, 0,
            error=f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}",
        )  # fmt: skip


# -- the coordinator -------------------------------------------------------------------------------


def _write_stat(r: OperationResult) -> WriteStat:
    return WriteStat(
        file_id=r.file_id,
        path=r.path,
        partition_path=r.partition_path,
        prev_commit=r.prev_base_instant,
        num_writes=r.records_written,
        num_update_writes=r.records_from_logs,
        total_write_bytes=r.bytes_written,
        file_size_in_bytes=r.bytes_written,
        total_log_records=r.records_from_logs,
        total_log_files_compacted=r.log_files,
        total_log_size_compacted=r.log_size,
        total_updated_records_compacted=r.records_from_logs,
        total_log_blocks=r.log_blocks,
        total_corrupt_log_block=r.corrupt_blocks,
        total_rollback_blocks=r.rollback_blocks,
        runtime_stats={"totalScanTime": r.scan_ms, "totalUpsertTime": r.write_ms, "totalCreateTime": 0},
    )


def _delete_markers(markers: MarkerFiles) -> None:
    if markers.exists():
        markers.delete_all()


def rollback_inflight_compaction(table: MetaClient, instant_time: str) -> list[str]:
    """Undo a failed attempt: delete its new base files (by markers), then its inflight file,
    so the plan is requested again. Returns the deleted files."""
    deleted = delete_marked_files(table, instant_time)
    tl = table.timeline
    inst = tl.pending_compactions().find(instant_time)
    if inst is not None and inst.is_inflight:
        tl.revert_to_requested(inst)
    return deleted


def run_compaction(
    table: MetaClient,
    instant: str | None = None,
    *,
    config: HoodieConfig | dict[str, Any] | None = None,
    progress: Callable[[OperationResult], None] | None = None,
) -> CompactionResult:
    """Execute and commit one pending compaction (the oldest when ``instant`` is None)."""
    from hudi_core.read.merge import slice_schema
    from hudi_core.schema.avro_schema import without_fields

    table.config.check_writable()
    cfg = table.write_config(dict(config or {}))
    tl = table.timeline
    pending = list(tl.pending_compactions())
    if instant is None:
        if not pending:
            raise CompactionError(f"no pending compaction in {table.base_uri}: schedule one first")
        target = pending[0]
    else:
        found = [i for i in pending if i.timestamp == instant]
        if not found:
            done = tl.completed().filter(actions=[Action.COMPACTION]).find(instant)
            why = "it is already completed" if done is not None else "there is no such compaction"
            raise CompactionError(
                f"cannot run compaction {instant} in {table.base_uri}: {why}; "
                f"pending: {[i.timestamp for i in pending] or 'none'}"
            )
        target = found[0]
    t = target.timestamp
    concurrency = ConcurrencySettings.of(cfg)
    if target.is_inflight:
        if concurrency.lazy and not inflight_abandoned(
            table.storage, table.meta_path, t, tl.path_of(target), concurrency.expiry_s
        ):
            raise CompactionError(
                f"compaction {t} of {table.base_uri} is being run by another writer (its heartbeat "
                f"{heartbeat_path(table.meta_path, t)} is fresh); leave it to that writer"
            )
        # A previous attempt died: retry with the same instant after undoing its files.
        rollback_inflight_compaction(table, t)
        tl = table.timeline
    plan: CompactionPlan = read_plan(table, t)
    avro = table.avro_schema(as_of=t)
    if avro is None:
        raise CompactionError(f"table {table.base_uri} has no schema to compact with")
    avro = without_fields(avro, table.config.dropped_columns)
    schema = slice_schema(table, as_of=t, stored=True)
    # the exclusive create of the inflight file claims the plan: among concurrent writers
    # exactly one runs it (the others get CommitConflictError); a heartbeat tells them it lives
    inflight = tl.transition_to_inflight(Instant(t, Action.COMPACTION, State.REQUESTED))
    heartbeat = None
    if concurrency.lazy:
        heartbeat = Heartbeat(table.storage, table.meta_path, t, concurrency.heartbeat_interval_s).start()
    try:
        return _execute(table, cfg, tl, inflight, plan, schema, avro, config, progress)
    finally:
        if heartbeat is not None:
            heartbeat.stop()


def _execute(
    table: MetaClient, cfg: HoodieConfig, tl: Any, inflight: Instant, plan: CompactionPlan, schema: Any,
    avro: Any, config: HoodieConfig | dict[str, Any] | None, progress: Callable[[OperationResult], None] | None,
) -> CompactionResult:  # fmt: skip
    from hudi_core.engine import engine_for

    t = inflight.timestamp
    snapshot = Timeline(list(tl))
    options = table.options.to_dict()
    options.update({k: v for k, v in dict(config or {}).items() if v is not None})
    strings, history = {k: str(v) for k, v in options.items()}, table.schema_history(timeline=tl)
    tasks = [
        OperationTask(table.base_uri, strings, t, i, op, snapshot, schema, avro, history)
        for i, op in enumerate(plan.operations)
    ]
    engine = engine_for(cfg)

    def run_one(task: OperationTask) -> OperationResult:
        r = execute_operation(task)
        if progress is not None:
            progress(r)
        return r

    results = engine.map(run_one if progress is not None else execute_operation, tasks)
    failed = [r for r in results if r.failed]
    if len(results) != len(tasks) or failed:
        deleted = rollback_inflight_compaction(table, t)
        first = failed[0].error.splitlines()[0] if failed and failed[0].error else "missing results"
        raise CompactionError(
            f"compaction {t} failed for {len(failed)} of {len(tasks)} file groups "
            f"(first: {failed[0].file_id if failed else '?'}: {first}); rolled back "
            f"({len(deleted)} new base files deleted), the plan is requested again: retry it with "
            f"`hudi-py compact {table.base_uri} --run {t}`"
        )
    meta = CommitMetadata(compacted=True, operation_type="COMPACT",
                          extra_metadata={"schema": json.dumps(avro)})  # fmt: skip
    carry_internal_schema(table, meta, tl)
    for r in results:
        meta.add_write_stat(_write_stat(r))
    if not results:
        meta.partition_to_write_stats = {}
    tl.complete(inflight, meta.to_bytes())
    _delete_markers(MarkerFiles(table.storage, table.meta_path, t))
    return CompactionResult(t, list(results), meta)


def run_pending_compactions(
    table: MetaClient,
    *,
    config: HoodieConfig | dict[str, Any] | None = None,
    progress: Callable[[OperationResult], None] | None = None,
) -> list[CompactionResult]:
    """Run every pending compaction, oldest first; one that another writer (or an async
    compaction of this process) claimed meanwhile is left to it."""
    out = []
    for inst in pending_compactions(table):
        try:
            out.append(run_compaction(table, inst.timestamp, config=config, progress=progress))
        except (CommitConflictError, CompactionError) as e:
            # claimed meanwhile: by another writer, or this process's async compaction
            if not _claimed_elsewhere(table, inst.timestamp):
                raise
            log.info("compaction %s is run by another writer: %s", inst.timestamp, e)
    return out


def _claimed_elsewhere(table: MetaClient, instant: str) -> bool:
    # (fresh, even where the timeline is pinned; a clean of the same time is not the compaction)
    found = table.reload().timeline.filter(actions=[Action.COMPACTION]).find(instant)
    return found is not None and (found.is_inflight or found.is_completed)


_ASYNC = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hudi-compaction")


def run_compaction_async(
    table: MetaClient, instant: str | None = None, *, config: HoodieConfig | dict[str, Any] | None = None
) -> Future[CompactionResult]:
    """Run a compaction in a background thread (one at a time per process) while writes go on.

    The table is re-opened for the worker, so the caller may keep using ``table``.
    """
    from hudi_core.table.meta_client import MetaClient

    own = MetaClient.open(table.base_uri, options=table.options.to_dict())
    return _ASYNC.submit(run_compaction, own, instant, config=config)


def compact(
    table: MetaClient, *, config: HoodieConfig | dict[str, Any] | None = None
) -> list[CompactionResult]:
    """Schedule a plan over every slice with log files (whatever the trigger says), then run
    every pending plan oldest first."""
    from hudi_core.compaction.scheduler import schedule_compaction

    schedule_compaction(table, config=config, force=True)
    return run_pending_compactions(table, config=config)


def maybe_compact_inline(
    table: MetaClient, config: HoodieConfig | dict[str, Any] | None = None
) -> str | None:
    """For the write client, after a delta commit: with ``hoodie.compact.inline`` schedule (when
    the trigger fires) and run pending compactions; with ``hoodie.compact.schedule.inline`` only
    schedule. Returns the instant scheduled, or None."""
    from hudi_core.compaction.scheduler import schedule_compaction
    from hudi_core.config.compaction import CompactionOptions

    cfg = table.write_config(dict(config or {}))
    inline = bool(cfg.get(CompactionOptions.INLINE))
    schedule_only = bool(cfg.get(CompactionOptions.SCHEDULE_INLINE))
    if not table.config.is_mor or not (inline or schedule_only):
        return None
    scheduled = schedule_compaction(table, config=config)
    if inline:
        run_pending_compactions(table, config=config)
    return scheduled
