"""Append handle (MOR): updates and deletes of an existing file slice go to a new log version.

One append per commit per file group: a data block (Avro by default, parquet with
``hoodie.logfile.data.block.format=parquet``) followed by a delete block (spec 8.3). Records in
data blocks carry the file id as ``_hoodie_file_name`` (spec 6.1).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.write import WriteOptions
from hudi_core.log.blocks import encode_avro_data_block, encode_delete_block
from hudi_core.log.format import BlockType, HeaderKey, encode_block
from hudi_core.log.writer import LogWriter
from hudi_core.read.keys import in_other_encoding, single_complex_key_field
from hudi_core.schema.fields import field_values
from hudi_core.table.config import TableConfig
from hudi_core.table.file_names import BaseFileName, LogFileName
from hudi_core.timeline.commit_metadata import WriteStat
from hudi_core.write.handles import parquet_out
from hudi_core.write.handles.context import (
    TaskAttempt,
    WriteContext,
    WriteStatus,
    as_attempt,
    ensure_partition_metadata,
    meta_columns,
    with_meta,
)
from hudi_core.write.records import (
    DELETE_FLAG,
    IS_DELETED,
    NATURAL_DELETE,
    PARTITION_PATH,
    RECORD_KEY,
    conform_to_schema,
)

__all__ = ["NATURAL_DELETE", "append_to_file_group", "rows_per_block"]


def append_to_file_group(
    ctx: WriteContext,
    partition: str,
    file_id: str,
    base_instant: str,
    records: pa.Table,
    *,
    task_id: TaskAttempt | int,
) -> list[WriteStatus]:
    storage = ctx.storage
    attempt = as_attempt(task_id, ctx.stage_id)
    token = attempt.token
    is_delete = records.column(DELETE_FLAG)
    upserts = records.filter(pc.invert(is_delete))
    deletes = records.filter(is_delete)
    schema_json = json.dumps(ctx.avro_schema_with_meta, separators=(",", ":"))
    header = {HeaderKey.INSTANT_TIME: ctx.instant, HeaderKey.SCHEMA: schema_json}
    blocks: list[bytes] = []
    if upserts.num_rows:
        data = conform_to_schema(upserts, ctx.schema)
        metas = meta_columns(
            data.num_rows, instant=ctx.instant, task_id=attempt.partition_id, record_keys=data.column(RECORD_KEY),
            partitions=data.column(PARTITION_PATH), file_name=file_id,
        )  # fmt: skip
        table = with_meta(data, metas, ctx.schema)
        del data, metas
        fmt = str(ctx.config.get_str(WriteOptions.LOGFILE_DATA_BLOCK_FORMAT)).lower()
        # a large append is cut into several data blocks (Hudi cuts at its block size too): the
        # encoders' temporaries are many times their input, so this bounds a flush's memory
        step = rows_per_block(table)
        for start in range(0, table.num_rows, step):
            part = table.slice(start, step)
            if fmt == "parquet":
                content = parquet_out.parquet_block_content(part, ctx.config)
                blocks.append(encode_block(BlockType.PARQUET_DATA, header, content))
            else:
                content = encode_avro_data_block(part, ctx.avro_schema_with_meta)
                blocks.append(encode_block(BlockType.AVRO_DATA, header, content))
            del content
        del table
    if deletes.num_rows:
        deletes = _in_both_encodings(ctx, deletes)
        natural = deletes.column(NATURAL_DELETE).combine_chunks()
        if field_values(deletes, ctx.ordering_field) is None:
            natural = pa.array([True] * deletes.num_rows)
        for nat in (True, False):
            part = deletes.filter(natural if nat else pc.invert(natural))
            if not part.num_rows:
                continue
            ordering = None if nat else field_values(part, ctx.ordering_field).combine_chunks()  # type: ignore[union-attr]
            content = encode_delete_block(
                part.column(RECORD_KEY).combine_chunks(),
                part.column(PARTITION_PATH).combine_chunks(),
                ordering,
            )
            blocks.append(encode_block(BlockType.DELETE, header, content))
    if not blocks:
        return []
    marker_name = BaseFileName(file_id, token, base_instant).name
    ctx.markers.create(partition, marker_name, "APPEND")
    listed = ctx.listings.names(ctx.partition_uri(partition))
    ensure_partition_metadata(ctx, partition)  # (the listing tells)
    writer = LogWriter(
        storage, ctx.partition_uri(partition), file_id, base_instant, token,
        max_size=int(ctx.config.get(WriteOptions.LOGFILE_MAX_SIZE)), listed=listed,
    )  # fmt: skip
    res = writer.append(blocks)
    ctx.listings.created(ctx.partition_uri(partition), res.file_name)
    base_name, log_names = _slice_files([*listed, res.file_name], file_id, base_instant)
    n_up, n_del = upserts.num_rows, deletes.num_rows
    stat = WriteStat(
        file_id=file_id, path=ctx.relative(partition, res.file_name), partition_path=partition,
        prev_commit=base_instant, num_writes=n_up, num_deletes=n_del, num_update_writes=n_up,
        total_write_bytes=res.size_written, file_size_in_bytes=res.file_size,
        runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
        log_version=res.version, log_offset=res.offset, base_file=base_name, log_files=log_names,
    )  # fmt: skip
    return [WriteStatus(stat, "APPEND", updated=n_up, deleted=n_del)]


def _in_both_encodings(ctx: WriteContext, deletes: pa.Table) -> pa.Table:
    """``deletes``, and on a table without meta columns keyed by the complex key generator over
    one field the same deletes under the other key encoding too (``read.keys.delete_keys``): its
    readers compute the keys bare (Apache Hudi 0.14.1, 0.15.0) or as ``<field>:<value>`` (its
    other releases, ours by default), and nothing stored says which; either finds its own form
    (the other names no record, unless a bare value itself starts with ``<field>:``)."""
    field = single_complex_key_field(TableConfig(ctx.options))
    if field is None:
        return deletes
    i = deletes.column_names.index(RECORD_KEY)
    other = in_other_encoding(deletes.column(i).combine_chunks().cast(pa.string()), field)
    return pa.concat_tables(
        [deletes, deletes.set_column(i, RECORD_KEY, other.cast(deletes.schema.field(i).type))]
    )


#: Arrow bytes of records encoded into one log data block
DATA_BLOCK_ARROW_BYTES = 8 * 1024 * 1024


def rows_per_block(table: pa.Table) -> int:
    """Rows of ``table`` per log data block: :data:`DATA_BLOCK_ARROW_BYTES` of Arrow data."""
    if table.num_rows == 0 or table.nbytes <= DATA_BLOCK_ARROW_BYTES:
        return max(1, table.num_rows)
    return max(1, int(table.num_rows * DATA_BLOCK_ARROW_BYTES / table.nbytes))


def _slice_files(names: list[str], file_id: str, base_instant: str) -> tuple[str, list[str]]:
    """The base file and log files of a file slice among a partition's file ``names``."""
    base = ""
    logs: dict[str, LogFileName] = {}
    for name in names:
        b = BaseFileName.parse(name)
        if b is not None and b.file_id == file_id and b.instant_time == base_instant:
            base = name
            continue
        lf = LogFileName.parse(name)
        if lf is not None and lf.file_id == file_id and lf.base_instant == base_instant:
            logs[name] = lf
    return base, [lf.name for lf in sorted(logs.values(), key=LogFileName.sort_key)]


_ = IS_DELETED  # documented alias: rows flagged by _hoodie_is_deleted arrive as DELETE_FLAG
