"""Merge handle: rewrite a file group's base file with updates, deletes and packed inserts.

Records copied unchanged keep their ``_hoodie_commit_time`` / ``_hoodie_commit_seqno``; only
``_hoodie_file_name`` changes. Existing rows keep their order; new records follow them.

The old file's columns that the merge only carries and that the file holds as dictionary
indices (its commit times, partition path, low-cardinality data columns) are read as Arrow
dictionaries and written as they are, the new rows' values encoded alike: the strings are never
spelled out and the writer hashes only the dictionaries. The old file names are not read.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from hudi_core import keymatch
from hudi_core.config.payload import untoasted
from hudi_core.config.write import WriteOptions
from hudi_core.io.bootstrap_index import METADATA_BOOTSTRAP_INSTANT
from hudi_core.read.align import encoded_like
from hudi_core.read.files import iter_parquet, open_parquet, parquet_batches
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.schema.fields import field_type, field_values
from hudi_core.table.file_names import BaseFileName
from hudi_core.timeline.commit_metadata import WriteStat
from hudi_core.write.handles import parquet_out
from hudi_core.write.handles.cdc import ChangeLog, combine_changes
from hudi_core.write.handles.context import (
    TaskAttempt,
    WriteContext,
    WriteStatus,
    as_attempt,
    constant_strings,
    ensure_partition_metadata,
    meta_columns,
)
from hudi_core.write.payload import Payload, coalesce_by_winner, incoming_wins
from hudi_core.write.records import (
    DELETE_FLAG,
    NATURAL_DELETE,
    PARTITION_PATH,
    RECORD_KEY,
    conform_to_schema,
)

__all__ = ["merge_file_group"]


def _skeleton_batches(
    ctx: WriteContext, path: str, source: str, growing: parquet_out.GrowingFooter
) -> Iterator[pa.Table]:
    """A METADATA_ONLY bootstrap's skeleton file with its source's data columns, a batch at a
    time, without the old file names; ``growing`` starts from the skeleton's footer."""
    footer: list[pq.FileMetaData] = []
    for i, old in enumerate(
        iter_parquet(ctx.storage, path, None, MERGE_BATCH_ROWS, footer=footer, source=source)
    ):
        if i == 0:
            growing.start_from(footer[0].metadata, ctx.config)
        yield old.drop_columns([META_FIELDS[4]])


def _base_file_path(ctx: WriteContext, partition: str, file_id: str, base_instant: str) -> str | None:
    """The group's base file at ``base_instant``, found in the write's listing of the partition
    (one listing per partition and write, shared with the append handles, where each merged
    group listed the partition again: on S3 a LIST request per group)."""
    prefix, suffix = f"{file_id}_", f"_{base_instant}.parquet"
    uri = ctx.partition_uri(partition)
    names = [n for n in ctx.listings.names(uri) if n.startswith(prefix) and n.endswith(suffix)]
    return f"{uri}/{max(names)}" if names else None


#: rows of the old base file merged at a time (memory: one batch, not the whole file)
MERGE_BATCH_ROWS = 65536


def merge_file_group(
    ctx: WriteContext,
    partition: str,
    file_id: str,
    base_instant: str,
    records: pa.Table,
    *,
    task_id: TaskAttempt | int,
    base_path: str | None = None,
    prior_changes: pa.Table | None = None,
    keep_changes: bool = False,
) -> list[WriteStatus]:
    """Rewrite the group's base file at ``base_instant`` (or the file at ``base_path``: a file this
    instant wrote earlier, when a streamed write merges the same group again) with ``records``.

    The old file is read batch by batch and each merged batch written as it is made, so memory
    holds one batch of the old file (plus ``records`` and the output's keys for the bloom filter).

    On a table with ``hoodie.table.cdc.enabled`` the merge's changes go into a CDC log file
    beside the new base file (:mod:`~hudi_core.write.handles.cdc`); ``prior_changes``: those of
    the merge that wrote ``base_path`` (they combine), ``keep_changes``: the status keeps them."""
    storage = ctx.storage
    base_path = base_path or _base_file_path(ctx, partition, file_id, base_instant)
    if base_path is None:
        raise FileNotFoundError(
            f"no base file of file group {file_id} at instant {base_instant} in {partition!r}"
        )
    attempt = as_attempt(task_id, ctx.stage_id)
    name = BaseFileName(file_id, attempt.token, ctx.instant).name
    growing = parquet_out.GrowingFooter()
    state = _MergeState(ctx, records, name, attempt.partition_id, growing)

    parsed = BaseFileName.parse(base_path.rsplit("/", 1)[-1])
    written = parsed.instant_time if parsed is not None else None  # the old file's instant
    skeleton = written == METADATA_BOOTSTRAP_INSTANT and file_id in ctx.bootstrap_sources

    def pieces() -> Iterator[pa.Table]:
        if skeleton:  # a bootstrap's skeleton file: its data columns are in the source table's file
            for old in _skeleton_batches(ctx, base_path, ctx.bootstrap_sources[file_id], growing):
                yield state.merge_batch(old)
            yield state.inserts()
            return
        # (the footer the index read, when it read this file in this process)
        listed = ctx.listings.size(ctx.partition_uri(partition), base_path.rsplit("/", 1)[-1])
        with open_parquet(storage, base_path, listed, state.carried) as (pf, f):
            growing.start_from(pf.metadata.metadata, ctx.config)
            local = isinstance(storage.arrow_filesystem(), pafs.LocalFileSystem)
            # every column but the old file names, which this file's name replaces
            columns = [n for n in pf.schema_arrow.names if n != META_FIELDS[4]]
            by_id = ctx.history.file_columns(written) if ctx.history is not None else None
            for old in parquet_batches(pf, f, columns, MERGE_BATCH_ROWS, local=local, use_threads=False):
                yield state.merge_batch(by_id.to_query(old) if by_id is not None else old)
        yield state.inserts()

    ctx.markers.create(partition, name, "MERGE")
    ctx.listings.created(ctx.partition_uri(partition), name)
    ensure_partition_metadata(ctx, partition)
    path = f"{ctx.partition_uri(partition)}/{name}"
    res = parquet_out.write_parquet(ctx, path, pieces(), growing=growing)
    stat = WriteStat(
        file_id=file_id, path=ctx.relative(partition, name), partition_path=partition, prev_commit=base_instant,
        num_writes=res.num_records, num_deletes=state.deleted, num_update_writes=state.updated,
        num_inserts=state.inserted, total_write_bytes=res.size, file_size_in_bytes=res.size,
        runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
    )  # fmt: skip
    status = WriteStatus(stat, "MERGE", inserted=state.inserted, updated=state.updated, deleted=state.deleted)
    if state.changes is not None:
        changes = state.changes.records()
        if prior_changes is not None:
            changes = combine_changes(prior_changes, changes)
        stat.cdc_stats = state.changes.write(partition, file_id, attempt, changes)
        status.changes = changes if keep_changes else None
    return [status]


class _MergeState:
    """The incoming records of one merge and what the old file's batches have used of them."""

    def __init__(
        self,
        ctx: WriteContext,
        records: pa.Table,
        name: str,
        task_id: int,
        growing: parquet_out.GrowingFooter,
    ) -> None:
        # an insert that keeps the stored records (Java's concat handle) matches no old key;
        # otherwise one incoming record per key meets the old rows (Java's merge handle keeps
        # its new records in a map by key: the last one of a key wins)
        concat = ctx.operation == "insert" and bool(
            ctx.config.get(WriteOptions.MERGE_ALLOW_DUPLICATE_ON_INSERTS)
        )
        keys = records.column(RECORD_KEY).combine_chunks().cast(pa.string())
        if not concat and not keymatch.distinct(keys):
            records = _last_of_each_key(records, keys)
            keys = records.column(RECORD_KEY).combine_chunks().cast(pa.string())
        self.ctx, self.records, self.name, self.task_id = ctx, records, name, task_id
        #: the output's footer from the old file's, while every old key stays in place
        self.growing = growing
        # incoming keys are unique: a hash lookup of every old key finds its update
        self.keys = pa.array([], pa.string()) if concat else keys
        self.is_delete = records.column(DELETE_FLAG).combine_chunks().to_numpy(zero_copy_only=False)
        self.matched = np.zeros(records.num_rows, dtype=bool)
        payload = (
            Payload(ctx.payload)
            if ctx.payload in {p.value for p in Payload}
            else Payload.OVERWRITE_WITH_LATEST
        )
        order = ctx.ordering_field
        self.payload = payload
        # a delete without ordering value (the delete operation, a key moved away) always wins,
        # as Java's EmptyHoodieRecordPayload does; so does any delete of EventTimeAvroPayload,
        # which checks for a delete before it compares ordering values
        natural = records.column(NATURAL_DELETE) if NATURAL_DELETE in records.column_names else None
        if payload is Payload.EVENT_TIME:
            self.always_wins = self.is_delete
        elif natural is not None:
            self.always_wins = self.is_delete & natural.combine_chunks().to_numpy(zero_copy_only=False)
        else:
            self.always_wins = np.zeros(records.num_rows, dtype=bool)
        # the field that decides against the stored record: the ordering field, or Debezium's
        # source position; none where the stored rows lack it (the incoming record wins)
        field = payload.update_field(order)
        incoming = field_values(records, field)
        known = field_type(ctx.schema, field) is not None
        self.order = field if incoming is not None and known and not concat else None
        self.incoming_order = incoming.combine_chunks() if self.order and incoming is not None else None
        self.seqno = 0
        self.updated = self.deleted = self.inserted = 0
        #: the old file's columns read as dictionaries where it encodes them: not the ordering
        #: field, which is compared, nor any for a payload that fills nulls (it coalesces old and
        #: new values field by field) or a table without meta fields (its keys come from the data
        #: columns)
        plain = payload.fills_nulls or not ctx.populate_meta_fields
        carried = (META_FIELDS[0], META_FIELDS[3], *ctx.schema.names)
        top = self.order.split(".")[0] if self.order else None
        self.carried = frozenset(() if plain else (n for n in carried if n != top))
        #: the types of the rows written so far (the old rows'): the new rows are encoded alike
        self.written: pa.Schema | None = None
        #: what the merge changes, where the table keeps a change log
        self.changes = ChangeLog.kept_by(ctx)

    def _new_rows(self, rows: np.ndarray) -> pa.Table:
        """Incoming ``rows`` as written: new commit time and seqnos, this file's name."""
        ctx = self.ctx
        data = conform_to_schema(self.records.take(pa.array(rows, pa.int64())), ctx.schema)
        meta = meta_columns(
            data.num_rows, instant=ctx.instant, task_id=self.task_id, record_keys=data.column(RECORD_KEY),
            partitions=data.column(PARTITION_PATH), file_name=self.name, seqno_start=self.seqno,
        )  # fmt: skip
        self.seqno += data.num_rows
        return _assemble(meta[:2], data, ctx, keys=meta[2], parts=meta[3], name=self.name)

    def merge_batch(self, old: pa.Table) -> pa.Table:
        """One batch of the old file merged: kept rows and updates in the old order, deletes gone."""
        ctx = self.ctx
        old_data = conform_to_schema(old, ctx.schema, keep_dictionaries=True)
        old_keys = _old_record_keys(ctx, old)
        in_row = keymatch.index_in(old_keys, self.keys)
        has_match = in_row >= 0
        in_idx = np.maximum(in_row, 0)
        wins = np.ones(old.num_rows, dtype=bool)
        if self.order is not None and self.records.num_rows:
            stored = field_values(old_data, self.order).combine_chunks()  # type: ignore[union-attr]
            inc = self.incoming_order.take(pa.array(in_idx))  # type: ignore[union-attr]
            wins = incoming_wins(self.payload, stored, inc).to_numpy(zero_copy_only=False)
            wins |= self.always_wins[in_idx]
        partial = self.payload is Payload.PARTIAL_UPDATE
        # a partial update merges with the stored row whichever wins (and takes the new meta fields)
        replace = has_match if partial else has_match & wins
        drop = replace & self.is_delete[in_idx] if self.records.num_rows else np.zeros(old.num_rows, bool)
        update = replace & ~drop
        # an incoming row that met its key is never an insert, whether it won or not
        self.matched[in_idx[has_match]] = True
        self.updated += int(update.sum())
        self.deleted += int(drop.sum())
        if drop.any():
            self.growing.invalidate()
            if self.changes is not None:
                self.changes.add("d", old_keys.filter(pa.array(drop)), old_data.filter(pa.array(drop)), None)
        meta = [old.column(m) for m in META_FIELDS[:4]]
        batch = _assemble(meta[:2], old_data, ctx, keys=meta[2], parts=meta[3], name=self.name)
        self.written = batch.schema
        if not replace.any():  # the whole batch stays as it is (no copy)
            return batch
        if not update.any():
            return batch.filter(pa.array(~replace))
        upd = np.flatnonzero(update)
        new_rows = self._new_rows(in_idx[upd])
        if self.payload.keeps_toasted:  # TOASTed placeholders keep the stored values
            everyone = pa.array(np.ones(len(upd), dtype=bool))
            new_rows = untoasted(new_rows, old_data.take(pa.array(upd)), everyone, ctx.schema.names)
        new_rows = encoded_like(new_rows, batch.schema)
        if self.payload.fills_nulls:  # the winner's null fields filled from the other version
            new_rows = coalesce_by_winner(
                new_rows, old_data.take(pa.array(upd)), pa.array(wins[upd]), ctx.schema.names
            )
        if self.changes is not None:
            self.changes.add("u", old_keys.take(pa.array(upd)), old_data.take(pa.array(upd)), new_rows)
        # one take of the old rows and the new: each update in its old row's place, deletes gone
        n = old.num_rows
        rows = np.arange(n, dtype=np.int64)
        rows[upd] = n + np.arange(len(upd), dtype=np.int64)
        return pa.concat_tables([batch, new_rows]).take(pa.array(rows[~drop]))

    def inserts(self) -> pa.Table:
        """Incoming rows that met no existing key (deletes of them vanish), after the old rows."""
        rows = np.flatnonzero(~self.matched & ~self.is_delete)
        self.inserted = len(rows)
        table = self._new_rows(rows)
        if self.written is not None:
            table = encoded_like(table, self.written)
        self.growing.add(table.column(META_FIELDS[2]).combine_chunks())
        if self.changes is not None:
            self.changes.add("i", table.column(META_FIELDS[2]).combine_chunks(), None, table)
        return table


def _last_of_each_key(records: pa.Table, keys: pa.Array) -> pa.Table:
    """``records`` with one row per key, the last of it, in input order."""
    rows = pa.table({"key": keys, "row": pa.array(np.arange(records.num_rows, dtype=np.int64))})
    last = rows.group_by("key", use_threads=False).aggregate([("row", "max")]).column("row_max")
    return records.take(pa.array(np.sort(last.to_numpy())))


def _old_record_keys(ctx: WriteContext, old: pa.Table) -> pa.Array:
    """Keys of the rows of a base file: its meta column, or (virtual keys,
    ``hoodie.populate.meta.fields=false``) the key generator applied to its data columns."""
    if ctx.populate_meta_fields:
        return old.column(RECORD_KEY).cast(pa.string()).combine_chunks()
    from hudi_core.keygen import key_generator_for

    keys = key_generator_for(ctx.config).record_keys(old)
    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    return keys.cast(pa.string())


def _strings(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A meta column as strings, or as a dictionary of strings where it is one."""
    if pa.types.is_dictionary(column.type) and pa.types.is_string(column.type.value_type):
        return column
    return column.cast(pa.string())


def _assemble(
    meta2: list[pa.Array], data: pa.Table, ctx: WriteContext, *, keys: pa.Array, parts: pa.Array, name: str
) -> pa.Table:
    n = data.num_rows
    arrays = [
        _strings(meta2[0]), meta2[1].cast(pa.string()), keys.cast(pa.string()), _strings(parts),
        constant_strings(name, n), *(data.column(f.name) for f in ctx.schema),
    ]  # fmt: skip
    return pa.Table.from_arrays(arrays, names=[*META_FIELDS, *ctx.schema.names])
