"""Block contents (spec 5.3 to 5.6): Avro and parquet data blocks, delete blocks, command blocks."""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.avro import encoder
from hudi_core.avro.decoder import cast_column, decode_flat_records, decode_records
from hudi_core.avro.encoder import encode_prefixed, encode_value_segments
from hudi_core.avro.flat_decoder import NotFlat
from hudi_core.avro.segments import const_segment, gather, varint_segment, zigzag
from hudi_core.errors import CorruptedLogBlockError, SchemaMismatchError
from hudi_core.io.hfile import HFileError, cells
from hudi_core.log.delete_records import branch_for, decode_delete_payload
from hudi_core.schema.avro_schema import META_FIELDS, OPERATION_FIELD, avro_to_arrow, parse_avro_schema

__all__ = [
    "AVRO_BLOCK_VERSION",
    "DELETE_BLOCK_VERSION",
    "ROLLBACK_COMMAND",
    "decode_avro_data_block",
    "decode_delete_block",
    "decode_hfile_data_block",
    "decode_parquet_data_block",
    "encode_avro_data_block",
    "encode_command_block",
    "encode_delete_block",
    "encode_parquet_data_block",
    "split_avro_records",
]

AVRO_BLOCK_VERSION = 3
DELETE_BLOCK_VERSION = 3
#: ``COMMAND_BLOCK_TYPE`` header value of a rollback command block.
ROLLBACK_COMMAND = "0"

_I32 = struct.Struct(">i")


# -- Avro data blocks (5.4) -----------------------------------------------------------------------


def encode_avro_data_block(table: pa.Table, avro_schema_with_meta: str | dict[str, Any]) -> bytes:
    """Content of an Avro data block: version 3, record count, then each record as int32
    big-endian length + Avro binary. Vectorised over the whole table."""
    header = _I32.pack(AVRO_BLOCK_VERSION) + _I32.pack(table.num_rows)
    return encode_prefixed(table, avro_schema_with_meta, header)


def record_bounds(content: bytes | memoryview) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) byte positions (int64 arrays) of each record of an Avro data block's content
    (versions 1, 2, 3), excluding the int32 length prefixes."""
    view = memoryview(content)
    size = len(view)
    if size < 4:
        raise CorruptedLogBlockError(f"Avro data block content of {size} bytes is truncated")
    (version,) = _I32.unpack_from(view, 0)
    if version not in (1, 2, 3):
        raise CorruptedLogBlockError(f"Avro data block content version {version} is unknown (1, 2 or 3)")
    if version == 1:
        ends = _chain_until_end(view, 4)
    else:
        if size < 8:
            raise CorruptedLogBlockError(f"Avro data block content of {size} bytes is truncated")
        (count,) = _I32.unpack_from(view, 4)
        if count < 0 or 8 + 4 * count > size:
            raise CorruptedLogBlockError(f"Avro data block record count {count} does not fit the block")
        if encoder.compiled is not None:
            starts, ends = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
            try:
                encoder.compiled.bounds(view, 8, starts, ends)
            except ValueError as e:
                raise CorruptedLogBlockError(str(e)) from None
            return starts, ends
        ends = _chain(view, 8, count)
    return _check_bounds(np.frombuffer(view, dtype=np.uint8), ends, 8 if version >= 2 else 4)


def _chain(view: memoryview, pos: int, count: int) -> np.ndarray:
    """End of each of ``count`` length-prefixed records from ``pos``.

    Each position depends on the previous length, so this is a scalar loop; it keeps only the
    one unpack and one add per record, and every check is done vectorised afterwards.
    """
    unpack = _I32.unpack_from
    ends = [0] * count
    size = len(view)
    try:
        for i in range(count):
            pos += unpack(view, pos)[0] + 4
            ends[i] = pos
    except struct.error as e:
        raise CorruptedLogBlockError(f"Avro data block content is truncated: {e}") from e
    if count and not 0 <= pos <= size:
        raise CorruptedLogBlockError(f"Avro records run past the block: end {pos} of {size} bytes")
    return np.array(ends, dtype=np.int64)


def _chain_until_end(view: memoryview, pos: int) -> np.ndarray:
    """Version 1 blocks carry no count: follow the chain to the end of the content."""
    unpack = _I32.unpack_from
    size = len(view)
    ends: list[int] = []
    try:
        while pos < size:
            (length,) = unpack(view, pos)
            if length < 0:
                raise CorruptedLogBlockError(f"Avro record length {length} at byte {pos} is negative")
            pos += length + 4
            ends.append(pos)
    except struct.error as e:
        raise CorruptedLogBlockError(f"Avro data block content is truncated: {e}") from e
    return np.array(ends, dtype=np.int64)


def _check_bounds(data: np.ndarray, ends: np.ndarray, first: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts from the ends, with the length prefixes re-read to reject negative lengths (which
    would have sent the scalar chain backwards) and records past the block."""
    if len(ends) == 0:
        return ends, ends
    prefix_at = np.empty(len(ends), dtype=np.int64)
    prefix_at[0] = first
    prefix_at[1:] = ends[:-1]
    if (prefix_at < first).any() or (prefix_at + 4 > len(data)).any():
        raise CorruptedLogBlockError("Avro record lengths do not chain inside the block")
    raw = data[prefix_at[:, None] + np.arange(4)]
    lengths = np.ascontiguousarray(raw).view(">i4").reshape(-1).astype(np.int64)
    starts = prefix_at + 4
    if (lengths < 0).any():
        bad = int(np.flatnonzero(lengths < 0)[0])
        raise CorruptedLogBlockError(
            f"Avro record length {int(lengths[bad])} at byte {int(prefix_at[bad])} is negative"
        )
    if int(ends[-1]) > len(data) or (starts + lengths != ends).any():
        raise CorruptedLogBlockError(f"Avro record runs past the block of {len(data)} bytes")
    return starts, ends


def split_avro_records(content: bytes | memoryview) -> list[memoryview]:
    """The Avro binary of each record of an Avro data block's content."""
    view = memoryview(content)
    starts, ends = record_bounds(view)
    return [view[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


def decode_avro_data_block(
    content: bytes | memoryview, writer_schema: str, reader_schema: str | dict[str, Any] | None = None
) -> pa.Table:
    starts, ends = record_bounds(content)
    try:
        data = np.frombuffer(content, dtype=np.uint8)
        return decode_flat_records(data, starts, ends, writer_schema, reader_schema)
    except NotFlat:
        view = memoryview(content)
        records = [view[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        return decode_records(records, writer_schema, reader_schema)


# -- HFile data blocks ---------------------------------------------------------------------------


def decode_hfile_data_block(
    content: bytes | memoryview, writer_schema: str, reader_schema: str | dict[str, Any] | None = None
) -> pa.Table:
    """Content of an HFile data block (``hoodie.logfile.data.block.format=hfile``, the format of
    Hudi's metadata table): an HFile whose cells are the records, sorted by record key, each value
    a record's Avro binary; a record whose key field Hudi's writer left empty (it does so to not
    store the key twice) takes its cell's key."""
    try:
        found = list(cells(bytes(content)))
    except HFileError as e:
        raise CorruptedLogBlockError(f"HFILE_DATA block does not parse: {e}") from e
    table = decode_records([value for _, value in found], writer_schema, reader_schema)
    i = table.schema.get_field_index(META_FIELDS[2])
    if i >= 0 and found:
        stored = table.column(i)
        keys = pa.array([row.decode("utf-8") for row, _ in found], stored.type)
        empty = pc.fill_null(pc.equal(stored, ""), True)
        table = table.set_column(i, table.schema.field(i), pc.if_else(empty, keys, stored))
    return table


# -- Parquet data blocks (5.6) --------------------------------------------------------------------


def encode_parquet_data_block(table: pa.Table, compression: str = "gzip") -> bytes:
    """Content of a parquet data block: a whole parquet file (meta columns first, as given)."""
    sink = io.BytesIO()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue()


def decode_parquet_data_block(
    content: bytes | memoryview, writer_schema: str | None, reader_schema: str | dict[str, Any] | None = None
) -> pa.Table:
    try:
        table = pq.read_table(pa.BufferReader(bytes(content)))
    except (pa.ArrowInvalid, OSError) as e:
        raise CorruptedLogBlockError(f"parquet data block does not parse: {e}") from e
    if reader_schema is not None:
        return conform(table, avro_to_arrow(parse_avro_schema(reader_schema)))
    if writer_schema is not None:
        return conform(table, avro_to_arrow(writer_schema))
    return table


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns (meta first): missing ones null, others cast."""
    meta = [n for n in (*META_FIELDS, OPERATION_FIELD) if n in schema.names]
    fields = [schema.field(n) for n in meta] + [f for f in schema if f.name not in meta]
    cols = []
    for f in fields:
        if f.name in table.column_names:
            cols.append(cast_column(table.column(f.name), f))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


# -- Delete blocks (5.5) ---------------------------------------------------------------------------


def encode_delete_block(
    keys: Sequence[str] | pa.Array,
    partitions: Sequence[str] | pa.Array,
    ordering_vals: Sequence[Any] | pa.Array | None = None,
) -> bytes:
    """Content of a delete block: version 3, payload length, one ``HoodieDeleteRecordList``.

    Without ``ordering_vals`` every record gets ``orderingVal`` = int 0 (``IntWrapper``), Java's
    "natural order" delete that always wins. Otherwise the union branch is the one Java picks for
    the value's class (int32 -> int, int64 and timestamps -> long, string -> string, date ->
    date, decimal -> decimal(30,15), ...); nulls -> null.
    """
    key_arr = pa.array(keys, pa.string()) if not isinstance(keys, pa.Array) else keys
    part_arr = pa.array(partitions, pa.string()) if not isinstance(partitions, pa.Array) else partitions
    n = len(key_arr)
    if len(part_arr) != n:
        raise SchemaMismatchError(
            f"delete block needs one partition path per key: {n} keys, {len(part_arr)} partitions"
        )
    if ordering_vals is None:
        ordering = pa.array(np.zeros(n, dtype=np.int32))
    else:
        ordering = ordering_vals if isinstance(ordering_vals, pa.Array) else pa.array(ordering_vals)
        if isinstance(ordering, pa.ChunkedArray):
            ordering = ordering.combine_chunks()
        if len(ordering) != n:
            raise SchemaMismatchError(
                f"delete block needs one ordering value per key: {n} keys, {len(ordering)} values"
            )
    branch, node, ordering = branch_for(ordering)
    names: dict[str, Any] = {}
    item_segs = encode_value_segments(["null", "string"], key_arr, names, "recordKey")
    item_segs += encode_value_segments(["null", "string"], part_arr, names, "partitionPath")
    valid = ordering.is_valid().to_numpy(zero_copy_only=False)
    item_segs.append(const_segment(bytes([0, 2 * branch]), valid.astype(np.int64)))
    if node is not None:
        value_segs = encode_value_segments(node, ordering, names, "orderingVal", valid)
        item_segs += [s.masked(valid) for s in value_segs]
    items, _ = gather(item_segs, n)
    # Java writes the whole list as one Avro array block: count, items, 0.
    head = b""
    if n:
        count, _count_off = gather([varint_segment(zigzag(np.array([n], dtype=np.int64)))], 1)
        head = count.tobytes()
    payload = head + items.tobytes() + b"\x00"
    return _I32.pack(DELETE_BLOCK_VERSION) + _I32.pack(len(payload)) + payload


def decode_delete_block(content: bytes | memoryview) -> pa.Table:
    """Columns ``_hoodie_record_key``, ``_hoodie_partition_path``, ``_ordering_val``,
    ``_ordering_natural`` (see docs/architecture.md, "Log files")."""
    view = memoryview(content)
    if len(view) < 8:
        raise CorruptedLogBlockError(f"delete block content of {len(view)} bytes is too short")
    version, length = struct.unpack_from(">ii", view, 0)
    if version != DELETE_BLOCK_VERSION:
        raise CorruptedLogBlockError(
            f"delete block content version {version} is not supported (only 3; version 2 holds "
            "Kryo-serialised Java objects); compact the file group with Java Hudi first"
        )
    if length < 0 or 8 + length > len(view):
        raise CorruptedLogBlockError(f"delete block payload length {length} runs past the block")
    return decode_delete_payload(view[8 : 8 + length])


# -- Command blocks (5.3) --------------------------------------------------------------------------


def encode_command_block() -> bytes:
    """Content of a rollback command block: empty (the header says what to roll back)."""
    return b""
