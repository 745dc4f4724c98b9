"""Vectorised Avro binary -> Arrow for flat record schemas (primitives, logical types, optional
fields): all records are decoded field by field in lockstep with numpy, no Python loop per record.

Nested types (records, arrays, maps) and multi-type unions raise :class:`NotFlat`; the caller
then falls back to the general decoder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hudi_core.avro.schema_walk import Names, collect_names, resolve
from hudi_core.errors import CorruptedLogBlockError
from hudi_core.schema.avro_schema import avro_to_arrow

__all__ = ["NotFlat", "decode_flat"]

_PAD = 16


class NotFlat(Exception):
    """The schema (or a default) needs the general decoder."""


def _varint(buf: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zig-zag varints at positions ``p``: (int64 values, positions after them)."""
    acc = np.zeros(len(p), dtype=np.uint64)
    active = np.ones(len(p), dtype=bool)
    length = np.zeros(len(p), dtype=np.int64)
    for k in range(10):
        b = buf[p + k].astype(np.uint64)
        acc |= np.where(active, (b & np.uint64(0x7F)) << np.uint64(7 * k), np.uint64(0))
        length += active
        active &= b >= 0x80
        if not active.any():
            break
    else:
        raise CorruptedLogBlockError("Avro varint longer than 10 bytes")
    values = (acc >> np.uint64(1)).view(np.int64) ^ -(acc & np.uint64(1)).view(np.int64)
    return values, p + length


def _take_bytes(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(concatenated bytes of the slices, int64 offsets)."""
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    idx = np.repeat(starts - offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
    return buf[idx], offsets


def _fixed_bytes(buf: np.ndarray, p: np.ndarray, size: int) -> np.ndarray:
    return buf[p[:, None] + np.arange(size, dtype=np.int64)]


def _decode(node: Any, buf: np.ndarray, p: np.ndarray, names: Names) -> tuple[pa.Array, np.ndarray]:
    """Values of type ``node`` at positions ``p`` (all present): (Arrow array, new positions)."""
    node = resolve(node, names)
    if isinstance(node, list):
        non_null = [i for i, b in enumerate(node) if b != "null"]
        if len(non_null) != 1 or len(node) > 2:
            raise NotFlat(f"union {node}")
        branch, p = _varint(buf, p)
        valid = branch == non_null[0]
        if ((branch < 0) | (branch >= len(node))).any():
            raise CorruptedLogBlockError(f"union branch out of range for {node}")
        inner, p_valid = _decode(node[non_null[0]], buf, p[valid], names)
        p = p.copy()
        p[valid] = p_valid
        if valid.all():
            return inner, p
        if len(inner) == 0:
            return pa.nulls(len(p), inner.type), p
        idx = np.cumsum(valid) - 1
        return inner.take(pa.array(np.where(valid, idx, 0), mask=~valid)), p
    kind = node if isinstance(node, str) else node["type"]
    logical = None if isinstance(node, str) else node.get("logicalType")
    if not isinstance(kind, str):
        return _decode(kind, buf, p, names)
    n = len(p)
    if kind in ("int", "long"):
        values, p = _varint(buf, p)
        target = (
            avro_to_arrow({"type": "record", "name": "x", "fields": [{"name": "v", "type": node}]})
            .field(0)
            .type
        )
        storage = pa.int32() if kind == "int" else pa.int64()
        arr = pa.array(values.astype(np.int32 if kind == "int" else np.int64), storage)
        return (arr.view(target) if target != storage else arr), p
    if kind in ("float", "double"):
        size, dt = (4, "<f4") if kind == "float" else (8, "<f8")
        raw = np.ascontiguousarray(_fixed_bytes(buf, p, size)).view(dt).reshape(n)
        return pa.array(raw), p + size
    if kind == "boolean":
        return pa.array(buf[p] != 0), p + 1
    if kind in ("string", "bytes"):
        if logical == "decimal":
            raise NotFlat("bytes decimal")
        lengths, p = _varint(buf, p)
        if (lengths < 0).any():
            raise CorruptedLogBlockError("negative Avro string length")
        data, offsets = _take_bytes(buf, p, lengths)
        t = pa.large_string() if kind == "string" else pa.large_binary()
        arr = pa.Array.from_buffers(t, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        return arr.cast(pa.string() if kind == "string" else pa.binary()), p + lengths
    if kind == "fixed":
        size = int(node["size"])
        raw = np.ascontiguousarray(_fixed_bytes(buf, p, size))
        if logical == "decimal":
            if size > 16:
                raise NotFlat("decimal wider than 16 bytes")
            sign = np.where(raw[:, :1] >= 0x80, np.uint8(0xFF), np.uint8(0))
            be = np.concatenate([np.repeat(sign, 16 - size, axis=1), raw], axis=1)
            le = np.ascontiguousarray(be[:, ::-1])
            t = pa.decimal128(int(node["precision"]), int(node.get("scale", 0)))
            return pa.Array.from_buffers(t, n, [None, pa.py_buffer(le)]), p + size
        return pa.Array.from_buffers(pa.binary(size), n, [None, pa.py_buffer(raw)]), p + size
    if kind == "enum":
        idx, p = _varint(buf, p)
        return pa.array(node["symbols"], pa.string()).take(pa.array(idx)), p
    raise NotFlat(kind)


def decode_flat(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, writer: dict[str, Any]) -> pa.Table:
    """Records ``data[starts[i]:ends[i]]`` of the flat record schema ``writer``."""
    names = collect_names(writer)
    buf = np.concatenate([data, np.zeros(_PAD, dtype=np.uint8)])
    p = starts.astype(np.int64)
    cols: list[pa.Array] = []
    fields: list[pa.Field] = []
    arrow = avro_to_arrow(writer)
    for field in writer["fields"]:
        if len(p) and (p > ends).any():
            raise CorruptedLogBlockError("Avro record runs past its length")
        arr, p = _decode(field["type"], buf, p, names)
        target = arrow.field(field["name"])
        if arr.type != target.type:
            arr = arr.cast(target.type)
        cols.append(arr)
        fields.append(target)
    if len(p) and (p != ends).any():
        raise CorruptedLogBlockError("Avro record length does not match its decoded fields")
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))
