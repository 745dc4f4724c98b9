"""Merge handle: rewrite a file group's base file with updates, deletes and packed inserts.

Records copied unchanged keep their ``_hoodie_commit_time`` / ``_hoodie_commit_seqno``; only
``_hoodie_file_name`` changes. Existing rows keep their order; new records follow them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.table.file_names import BaseFileName
from hudi_core.timeline.commit_metadata import WriteStat
from hudi_core.write.handles import parquet_out
from hudi_core.write.handles.context import (
    TaskAttempt,
    WriteContext,
    WriteStatus,
    as_attempt,
    ensure_partition_metadata,
    meta_columns,
)
from hudi_core.write.payload import Payload, incoming_wins
from hudi_core.write.records import DELETE_FLAG, PARTITION_PATH, RECORD_KEY, conform_to_schema

__all__ = ["merge_file_group"]

def _base_file_path(ctx: WriteContext, partition: str, file_id: str, base_instant: str) -> str | None:
    prefix = f"{file_id}_"
    suffix = f"_{base_instant}.parquet"
    best = None
    for info in ctx.storage.list(ctx.partition_uri(partition)):
        if info.name.startswith(prefix) and info.name.endswith(suffix):
            best = info.path if best is None or info.path > best else best
    return best


def merge_file_group(
    ctx: WriteContext, partition: str, file_id: str, base_instant: str, records: pa.Table, *, task_id: TaskAttempt | int,
    base_path: str | None = None,
) -> list[WriteStatus]:
    """Rewrite the group's base file at ``base_instant`` (or the file at ``base_path``: a file this
    instant wrote earlier, when a streamed write merges the same group again) with ``records``."""
    from hudi_core.io.base_file import read_base_file

    storage = ctx.storage
    base_path = base_path or _base_file_path(ctx, partition, file_id, base_instant)
    if base_path is None:
        raise FileNotFoundError(f"no base file of file group {file_id} at instant {base_instant} in {partition!r}")
    old = read_base_file(storage, base_path)
    old_data = conform_to_schema(old, ctx.schema)
    old_meta = [old.column(m) for m in META_FIELDS]
    attempt = as_attempt(task_id, ctx.stage_id)
    token = attempt.token
    name = BaseFileName(file_id, token, ctx.instant).name

    # incoming keys are unique (deduplicated): a hash lookup of every old key finds its update
    in_row = pc.index_in(_old_record_keys(ctx, old), value_set=records.column(RECORD_KEY).combine_chunks())
    has_match = pc.is_valid(in_row).to_numpy(zero_copy_only=False)
    in_idx = pc.fill_null(in_row, 0).to_numpy(zero_copy_only=False).astype(np.int64)

    payload = Payload(ctx.payload) if ctx.payload in {p.value for p in Payload} else Payload.OVERWRITE_WITH_LATEST
    order = ctx.ordering_field
    wins = np.ones(old.num_rows, dtype=bool)
    if payload.honours_ordering_on_update and order and order in old_data.column_names and order in records.column_names:
        stored = old_data.column(order).combine_chunks()
        inc = records.column(order).combine_chunks().take(pa.array(in_idx)) if records.num_rows else stored
        wins = incoming_wins(payload, stored, inc).to_numpy(zero_copy_only=False)
    is_delete = records.column(DELETE_FLAG).combine_chunks().to_numpy(zero_copy_only=False)
    replace = has_match & wins
    drop = replace & is_delete[in_idx] if records.num_rows else np.zeros(old.num_rows, bool)
    update = replace & ~drop
    keep_old = ~replace

    # Incoming rows that did not match an existing key are inserts (deletes of them vanish).
    matched_in = np.zeros(records.num_rows, dtype=bool)
    matched_in[in_idx[has_match]] = True
    insert_rows = np.nonzero(~matched_in & ~is_delete)[0]

    # Assemble: old rows in order (kept or replaced), then inserts.
    out_old_rows = np.nonzero(keep_old | update)[0]
    from_incoming = update[out_old_rows]
    new_rows_in = np.concatenate([in_idx[out_old_rows][from_incoming], insert_rows]).astype(np.int64)
    n_new = len(new_rows_in)
    new_data = conform_to_schema(records.take(pa.array(new_rows_in)), ctx.schema)
    new_meta = meta_columns(
        n_new, instant=ctx.instant, task_id=attempt.partition_id,
        record_keys=new_data.column(RECORD_KEY), partitions=new_data.column(PARTITION_PATH), file_name=name,
    )  # fmt: skip
    kept_old_rows = out_old_rows[~from_incoming]
    # Interleave: position of each output row in the final order
    total = len(out_old_rows) + len(insert_rows)

    # Build old-order section by concatenating kept-old and updated rows, then re-sort by position.
    pos_kept = np.nonzero(~from_incoming)[0]
    pos_upd = np.nonzero(from_incoming)[0]
    kept_table = _assemble(
        [c.take(pa.array(kept_old_rows)) for c in old_meta[:2]], old_data.take(pa.array(kept_old_rows)), ctx,
        keys=old_meta[2].take(pa.array(kept_old_rows)), parts=old_meta[3].take(pa.array(kept_old_rows)), name=name,
    )  # fmt: skip
    new_table = _assemble(new_meta[:2], new_data, ctx, keys=new_meta[2], parts=new_meta[3], name=name)
    pieces_data = [kept_table, new_table]
    merged = pa.concat_tables(pieces_data)
    position = np.concatenate([pos_kept, pos_upd, np.arange(len(out_old_rows), total)]).astype(np.int64)
    merged = merged.take(pa.array(np.argsort(position, kind="stable")))

    ctx.markers.create(partition, name, "MERGE")
    ensure_partition_metadata(ctx, partition)
    path = f"{ctx.partition_uri(partition)}/{name}"
    res = parquet_out.write_parquet(ctx, path, merged)
    n_upd, n_ins, n_del = int(update.sum()), len(insert_rows), int(drop.sum())
    stat = WriteStat(
        file_id=file_id, path=ctx.relative(partition, name), partition_path=partition, prev_commit=base_instant,
        num_writes=merged.num_rows, num_deletes=n_del, num_update_writes=n_upd, num_inserts=n_ins,
        total_write_bytes=res.size, file_size_in_bytes=res.size,
        runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
    )  # fmt: skip
    return [WriteStatus(stat, "MERGE", inserted=n_ins, updated=n_upd, deleted=n_del)]


def _old_record_keys(ctx: WriteContext, old: pa.Table) -> pa.Array:
    """Keys of the rows of a base file: its meta column, or (virtual keys,
    ``hoodie.populate.meta.fields=false``) the key generator applied to its data columns."""
    if ctx.populate_meta_fields:
        return old.column(RECORD_KEY).cast(pa.string()).combine_chunks()
    from hudi_core.keygen import key_generator_for

    keys = key_generator_for(ctx.config).record_keys(old)
    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    return keys.cast(pa.string())


def _assemble(
    meta2: list[pa.Array], data: pa.Table, ctx: WriteContext, *, keys: pa.Array, parts: pa.Array, name: str
) -> pa.Table:
    n = data.num_rows
    arrays = [
        meta2[0].cast(pa.string()), meta2[1].cast(pa.string()), keys.cast(pa.string()), parts.cast(pa.string()),
        pa.array([name] * n, pa.string()), *(data.column(f.name) for f in ctx.schema),
    ]  # fmt: skip
    return pa.Table.from_arrays(arrays, names=[*META_FIELDS, *ctx.schema.names])
