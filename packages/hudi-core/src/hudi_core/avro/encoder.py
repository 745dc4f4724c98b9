"""Vectorised Arrow -> Avro binary encoding (no Python loop per record).

Every column becomes per-row byte segments (see :mod:`hudi_core.avro.segments`), computed with
numpy over the whole column; records are assembled by one interleaving gather.

:data:`compiled` is the record writer built from C (``_codec.c``) when the package was installed
with a compiler, else None. Where it exists, records are written by it in one pass, row after row:
primitive fields (optional or not) straight from their Arrow buffers, any other field from the
bytes its numpy segments gathered. Both give the same bytes (the tests hold them to it); C is 5-10x
faster on the flat records of log blocks, where the numpy segments make a pass over memory per
column and per varint byte.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.avro.schema_walk import Names, collect_names, resolve
from hudi_core.avro.segments import (
    Segment,
    const_segment,
    fixed_width_segment,
    gather,
    varint_segment,
    zigzag,
)
from hudi_core.errors import SchemaMismatchError
from hudi_core.schema.avro_schema import parse_avro_schema

__all__ = ["compiled", "encode_prefixed", "encode_records", "encode_value_segments", "record_segments"]

compiled: ModuleType | None
try:
    from hudi_core.avro import _codec as compiled
except ImportError:  # installed without a C compiler: the numpy segments below
    compiled = None

# The compiled codec's column kinds (``_codec.c``).
LONG = 1
INT = 2
FLOAT = 3
DOUBLE = 4
BOOLEAN = 5
BYTES = 6
RAW = 7
RECORD = 8  # a nested record, its fields the columns after it

_TS_UNITS = {
    "timestamp-millis": ("ms", True),
    "timestamp-micros": ("us", True),
    "local-timestamp-millis": ("ms", False),
    "local-timestamp-micros": ("us", False),
}


def encode_records(
    table: pa.Table | pa.RecordBatch, avro_schema: str | dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Avro binary of every row of ``table`` under the record schema ``avro_schema``:
    (all records' bytes, offsets with ``num_rows + 1`` entries)."""
    n = table.num_rows
    if compiled is None or n == 0:
        return gather(record_segments(table, avro_schema), n)
    offsets = np.empty(n + 1, dtype=np.int64)
    body = compiled.encode(record_columns(table, avro_schema), n, b"", False, offsets)
    return np.frombuffer(body, dtype=np.uint8), offsets


def encode_prefixed(
    table: pa.Table | pa.RecordBatch, avro_schema: str | dict[str, Any], header: bytes
) -> bytes:
    """``header``, then every row of ``table`` as its Avro binary's length (int32 big-endian) and
    the Avro binary: the content of a log file's Avro data block after ``header``."""
    n = table.num_rows
    if compiled is not None and n:
        return bytes(compiled.encode(record_columns(table, avro_schema), n, header, True))
    segments = record_segments(table, avro_schema)
    lengths = np.zeros(n, dtype=np.int64)
    for seg in segments:
        lengths += seg.lengths
    prefix = lengths.astype(">i4").view(np.uint8)
    length_seg = Segment(prefix, np.arange(n, dtype=np.int64) * 4, np.full(n, 4, dtype=np.int64))
    body, _ = gather([length_seg, *segments], n)
    return header + body.tobytes()


def record_columns(
    table: pa.Table | pa.RecordBatch, avro_schema: str | dict[str, Any]
) -> list[tuple[Any, ...]]:
    """The compiled writer's columns of top-level records (columns matched by field name): a
    primitive field as its values, a record of such fields as a RECORD column and theirs, any
    other as the bytes of its numpy segments."""
    schema = parse_avro_schema(avro_schema)
    names = collect_names(schema)
    n = table.num_rows
    columns: list[tuple[Any, ...]] = []
    for field in schema["fields"]:
        name = field["name"]
        if name not in table.column_names:
            columns.append(_raw_column(_missing_column(field, n, names), n))
            continue
        col = table.column(name)
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        compiled_columns = _compiled_columns(field["type"], arr, names)
        if compiled_columns is None:
            compiled_columns = [_raw_column(encode_value_segments(field["type"], arr, names, name), n)]
        columns += compiled_columns
    return columns


def _raw_column(segments: list[Segment], n: int) -> tuple[Any, ...]:
    body, offsets = gather(segments, n)
    return (RAW, 0, -1, None, offsets, body)


def _branches(node: Any, names: Names) -> tuple[int, int, Any] | None:
    """(the null branch, the value branch, -1 where ``node`` is no union; the value's type), or
    None for a union the compiled writer does not take."""
    node = resolve(node, names)
    if not isinstance(node, list):
        return 0, -1, node
    non_null = [i for i, b in enumerate(node) if b != "null"]
    if len(non_null) != 1 or len(node) > 2:
        return None
    value_branch = non_null[0]
    null_branch = node.index("null") if "null" in node else value_branch
    return null_branch, value_branch, resolve(node[value_branch], names)


def _refused_nulls(arr: pa.Array, null_branch: int, value_branch: int, hidden: np.ndarray | None) -> bool:
    """Whether ``arr`` holds nulls its type refuses where they are written (``hidden``: the rows
    of a null record, whose fields are not)."""
    if not arr.null_count or (value_branch >= 0 and null_branch != value_branch):
        return False
    return hidden is None or bool((arr.is_null().to_numpy(zero_copy_only=False) & ~hidden).any())


def _compiled_columns(
    node: Any, arr: pa.Array, names: Names, hidden: np.ndarray | None = None
) -> list[tuple[Any, ...]] | None:
    """``arr`` as the compiled writer's columns of the Avro type ``node``: a primitive's one, or
    a record's RECORD column and its fields' (``hidden``: rows of a null record around it); None
    where the numpy segments are needed."""
    branches = _branches(node, names)
    if branches is None:
        return None
    null_branch, value_branch, inner = branches
    if not (isinstance(inner, dict) and inner.get("type") in ("record", "error")):
        column = _primitive_column(node, arr, names, hidden)
        return None if column is None else [column]
    if not pa.types.is_struct(arr.type) or _refused_nulls(arr, null_branch, value_branch, hidden):
        return None
    nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    inside = nulls if hidden is None else hidden if nulls is None else nulls | hidden
    fields: list[tuple[Any, ...]] = []
    for f in inner["fields"]:
        i = arr.type.get_field_index(f["name"])
        columns = _compiled_columns(f["type"], arr.field(i), names, inside) if i >= 0 else None
        if columns is None:  # (a field missing from the data: its default or error is numpy's)
            return None
        fields += columns
    valid = np.ascontiguousarray(~nulls).view(np.uint8) if nulls is not None and value_branch >= 0 else None
    return [
        (RECORD, null_branch, value_branch, valid, np.array([len(fields)], dtype=np.int64), None),
        *fields,
    ]


def _primitive_column(
    node: Any, arr: pa.Array, names: Names, hidden: np.ndarray | None = None
) -> tuple[Any, ...] | None:
    """``arr`` as a compiled writer's column of the Avro type ``node``, or None where the numpy
    segments are needed (other types, and nulls the type refuses: their error is raised there;
    ``hidden``: rows of a null record around it, not written)."""
    branches = _branches(node, names)
    if branches is None:
        return None
    null_branch, value_branch, node = branches
    if _refused_nulls(arr, null_branch, value_branch, hidden):
        return None
    if pa.types.is_null(arr.type) or len(arr) == 0 or arr.buffers()[1] is None:
        return None  # (values without a buffer, as from_buffers allows, are left to numpy)
    kind, logical = (node, None) if isinstance(node, str) else (node.get("type"), node.get("logicalType"))
    if logical in _TS_UNITS and pa.types.is_timestamp(arr.type):
        arr = arr.cast(pa.timestamp(_TS_UNITS[logical][0], tz=arr.type.tz), safe=False)
    elif logical == "date" and pa.types.is_date(arr.type):
        arr = arr.cast(pa.int32())
    elif logical is not None and not (logical in _TS_UNITS or logical == "date"):
        return None
    valid = arr.is_valid().to_numpy(zero_copy_only=False).view(np.uint8) if arr.null_count else None
    n = len(arr)
    if kind in ("int", "long"):
        if arr.type != pa.int64():  # as _long: other integers wrap like numpy's astype
            arr = arr.cast(pa.int64(), safe=not pa.types.is_integer(arr.type))
        values = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n]
        return (LONG, null_branch, value_branch, valid, values, None)
    if kind in ("float", "double"):
        wanted, code = (pa.float32(), FLOAT) if kind == "float" else (pa.float64(), DOUBLE)
        if arr.type != wanted:
            arr = arr.cast(wanted, safe=False)
        floats = np.frombuffer(arr.buffers()[1], dtype=np.float32 if kind == "float" else np.float64)
        return (code, null_branch, value_branch, valid, floats[arr.offset : arr.offset + n], None)
    if kind == "boolean":
        flags = arr.cast(pa.bool_()).fill_null(False).to_numpy(zero_copy_only=False).view(np.uint8)
        return (BOOLEAN, null_branch, value_branch, valid, flags, None)
    if kind in ("string", "bytes"):
        offsets, data = _binary_buffers(arr, n, kind)
        return (BYTES, null_branch, value_branch, valid, offsets, data)
    return None


def record_segments(table: pa.Table | pa.RecordBatch, avro_schema: str | dict[str, Any]) -> list[Segment]:
    """The per-row segments of top-level records (columns matched by field name)."""
    schema = parse_avro_schema(avro_schema)
    names = collect_names(schema)
    n = table.num_rows
    segments: list[Segment] = []
    for field in schema["fields"]:
        name = field["name"]
        if name in table.column_names:
            col = table.column(name)
            arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            segments += encode_value_segments(field["type"], arr, names, name)
        else:
            segments += _missing_column(field, n, names)
    return segments


def _missing_column(field: dict[str, Any], n: int, names: Names) -> list[Segment]:
    t = resolve(field["type"], names)
    if isinstance(t, list) and "null" in t and field.get("default", None) is None:
        return [const_segment(bytes([zigzag(np.array([t.index("null")]))[0]]), np.zeros(n))]
    raise SchemaMismatchError(
        f"column {field['name']!r} is missing from the data and its Avro type {field['type']} "
        "is not nullable; add the column or make the field optional"
    )


def encode_value_segments(
    node: Any, arr: pa.Array, names: Names, path: str, live: np.ndarray | None = None
) -> list[Segment]:
    """Segments of ``arr`` (length n) encoded as the Avro type ``node``. ``live`` marks the rows
    that will be written (rows under a null parent are masked out later and may hold nulls)."""
    node = resolve(node, names)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    n = len(arr)
    if isinstance(node, list):
        return _union(node, arr, names, path, live)
    if arr.null_count and node != "null":
        bad = ~arr.is_valid().to_numpy(zero_copy_only=False)
        if live is not None:
            bad &= live
        if bad.any():
            raise SchemaMismatchError(
                f"column {path!r} holds a null at row {int(np.argmax(bad))} but its Avro type "
                f"{node} is not nullable; fill the nulls or declare the field as a union with null"
            )
        arr = _fill_nulls(arr)
    if isinstance(node, str):
        return _primitive(node, arr, n, path)
    logical = node.get("logicalType")
    kind = node["type"]
    if logical == "decimal":
        return _decimal(node, arr, n)
    if logical in _TS_UNITS:
        unit, _utc = _TS_UNITS[logical]
        if pa.types.is_timestamp(arr.type):
            arr = arr.cast(pa.timestamp(unit, tz=arr.type.tz), safe=False)
        return _long(arr, n)
    if logical == "date":
        return _long(arr.cast(pa.int32()) if pa.types.is_date(arr.type) else arr, n)
    if logical == "time-millis" and pa.types.is_time(arr.type):
        return _long(arr.cast(pa.time32("ms")).cast(pa.int32()), n)
    if logical == "time-micros" and pa.types.is_time(arr.type):
        return _long(arr.cast(pa.time64("us")).cast(pa.int64()), n)
    if kind == "record":
        if arr.null_count:
            valid = arr.is_valid().to_numpy(zero_copy_only=False)
            live = valid if live is None else live & valid
        return _record(node, arr, names, path, live)
    if kind == "array":
        return _array(node, arr, names, path)
    if kind == "map":
        return _map(node, arr, names, path)
    if kind == "enum":
        idx = pc.index_in(arr.cast(pa.string()), value_set=pa.array(node["symbols"]))
        if idx.null_count:
            raise SchemaMismatchError(f"column {path!r} holds values outside enum {node['symbols']}")
        return _long(idx, n)
    if kind == "fixed":
        return _fixed(arr.cast(pa.binary(int(node["size"]))), n)
    if isinstance(kind, str):
        return _primitive(kind, arr, n, path)
    return encode_value_segments(kind, arr, names, path)


def _union(
    branches: list[Any], arr: pa.Array, names: Names, path: str, live: np.ndarray | None
) -> list[Segment]:
    non_null = [i for i, b in enumerate(branches) if b != "null"]
    if len(non_null) != 1:
        raise SchemaMismatchError(
            f"column {path!r}: Avro union {branches} has several non-null branches, "
            "which the vectorised encoder does not write"
        )
    value_idx = non_null[0]
    choices = bytes([value_idx * 2])
    if "null" in branches:
        choices = bytes([branches.index("null") * 2, value_idx * 2])
    if arr.null_count == 0:
        tag = const_segment(choices, np.full(len(arr), len(choices) - 1))
        return [tag, *encode_value_segments(branches[value_idx], arr, names, path, live)]
    if "null" not in branches:
        raise SchemaMismatchError(f"column {path!r} holds nulls but its Avro union {branches} has no null")
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    tag = const_segment(choices, valid.astype(np.int64))
    inner_live = valid if live is None else valid & live
    inner = encode_value_segments(branches[value_idx], _fill_nulls(arr), names, path, inner_live)
    return [tag] + [s.masked(valid) for s in inner]


def _fill_nulls(arr: pa.Array) -> pa.Array:
    """``arr`` with its nulls replaced by any valid value (those rows are masked out later)."""
    t = arr.type
    if pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        # Nested encoders read offsets and children directly; masking drops the null rows.
        return arr
    if pa.types.is_null(t):
        return arr
    return arr.fill_null(_zero_of(t))


def _zero_of(t: pa.DataType) -> Any:
    if pa.types.is_boolean(t):
        return False
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return ""
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return b""
    if pa.types.is_fixed_size_binary(t):
        return b"\x00" * t.byte_width
    return pa.scalar(0, type=t)


def _primitive(kind: str, arr: pa.Array, n: int, path: str) -> list[Segment]:
    if kind == "null":
        return []
    if kind in ("int", "long"):
        return _long(arr, n)
    if kind == "boolean":
        vals = arr.cast(pa.bool_()).to_numpy(zero_copy_only=False).astype(np.uint8)
        return [Segment(vals, np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64))]
    if kind in ("float", "double"):
        dt, width = ("<f4", 4) if kind == "float" else ("<f8", 8)
        vals = np.ascontiguousarray(arr.to_numpy(zero_copy_only=False).astype(dt, copy=False))
        return [fixed_width_segment(vals.view(np.uint8), width, n)]
    if kind in ("string", "bytes"):
        return _binary_like(arr, n, kind)
    raise SchemaMismatchError(f"column {path!r}: unknown Avro type {kind!r}")


def _long(arr: pa.Array, n: int) -> list[Segment]:
    if not pa.types.is_integer(arr.type):
        arr = arr.cast(pa.int64())
    vals = arr.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return [varint_segment(zigzag(vals))]


def _binary_like(arr: pa.Array, n: int, kind: str) -> list[Segment]:
    offsets, data = _binary_buffers(arr, n, kind)
    lengths = np.diff(offsets)
    return [varint_segment(zigzag(lengths)), Segment(data, offsets[:-1], lengths)]


def _binary_buffers(arr: pa.Array, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """A string or bytes column's n + 1 offsets (int64) and the bytes they index."""
    t = arr.type
    if not (
        pa.types.is_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_string(t)
        or pa.types.is_large_binary(t)
    ):
        arr = arr.cast(pa.string() if kind == "string" else pa.binary())
        t = arr.type
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    bufs = arr.buffers()
    off_all = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32)
    offsets = off_all[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offsets, data


def _fixed(arr: pa.Array, n: int) -> list[Segment]:
    width = arr.type.byte_width
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * width : (arr.offset + n) * width]
    return [fixed_width_segment(raw, width, n)]


def _decimal(node: dict[str, Any], arr: pa.Array, n: int) -> list[Segment]:
    """Unscaled value as big-endian two's complement: ``size`` bytes for fixed, minimal for bytes."""
    precision, scale = int(node["precision"]), int(node.get("scale", 0))
    if not (pa.types.is_decimal128(arr.type) and arr.type.scale == scale):
        arr = arr.cast(pa.decimal128(min(max(precision, 1), 38), scale))
    le = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * 16 : (arr.offset + n) * 16]
    be = np.ascontiguousarray(le.reshape(n, 16)[:, ::-1])
    kind = node["type"]
    if kind == "fixed":
        size = int(node["size"])
        return [fixed_width_segment(be, 16, n, skip=16 - size)]
    # bytes: Java's BigInteger.toByteArray(), the shortest two's complement form.
    sign = np.where(be[:, 0] >= 0x80, np.uint8(0xFF), np.uint8(0))
    redundant = (be[:, :15] == sign[:, None]) & ((be[:, 1:] & 0x80) == (sign[:, None] & 0x80))
    lead = np.cumprod(redundant, axis=1).sum(axis=1)
    lengths = (16 - lead).astype(np.int64)
    starts = np.arange(n, dtype=np.int64) * 16 + lead
    return [varint_segment(zigzag(lengths)), Segment(be.reshape(-1), starts, lengths)]


def _record(
    node: dict[str, Any], arr: pa.Array, names: Names, path: str, live: np.ndarray | None
) -> list[Segment]:
    if not pa.types.is_struct(arr.type):
        raise SchemaMismatchError(f"column {path!r} has type {arr.type}, expected a struct for Avro record")
    present = {arr.type.field(i).name: i for i in range(arr.type.num_fields)}
    out: list[Segment] = []
    for field in node["fields"]:
        name = field["name"]
        if name in present:
            child = arr.field(present[name])
            out += encode_value_segments(field["type"], child, names, f"{path}.{name}", live)
        else:
            out += _missing_column({**field, "name": f"{path}.{name}"}, len(arr), names)
    return out


def _sequence(
    count: np.ndarray, item_starts: np.ndarray, item_lengths: np.ndarray, buf: np.ndarray
) -> list[Segment]:
    """Avro array/map framing: one block ``count, items`` (omitted when empty), then ``0``."""
    n = len(count)
    head = varint_segment(zigzag(count)).masked(count > 0)
    body = Segment(buf, item_starts, item_lengths)
    return [head, body, const_segment(b"\x00", np.zeros(n, dtype=np.int64))]


def _list_offsets(arr: pa.Array) -> np.ndarray:
    return arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)


def _array(node: dict[str, Any], arr: pa.Array, names: Names, path: str) -> list[Segment]:
    if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
        raise SchemaMismatchError(f"column {path!r} has type {arr.type}, expected a list for Avro array")
    offsets = _list_offsets(arr)
    values = arr.values
    items = encode_value_segments(node["items"], values, names, f"{path}[]")
    buf, item_off = gather(items, len(values))
    return _sequence(
        np.diff(offsets), item_off[offsets[:-1]], item_off[offsets[1:]] - item_off[offsets[:-1]], buf
    )


def _map(node: dict[str, Any], arr: pa.Array, names: Names, path: str) -> list[Segment]:
    if not pa.types.is_map(arr.type):
        raise SchemaMismatchError(f"column {path!r} has type {arr.type}, expected a map for Avro map")
    offsets = _list_offsets(arr)
    keys, items = arr.keys, arr.items
    segs = encode_value_segments("string", keys, names, f"{path}.key")
    segs += encode_value_segments(node["values"], items, names, f"{path}.value")
    buf, entry_off = gather(segs, len(keys))
    return _sequence(
        np.diff(offsets), entry_off[offsets[:-1]], entry_off[offsets[1:]] - entry_off[offsets[:-1]], buf
    )
