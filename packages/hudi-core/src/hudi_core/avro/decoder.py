"""Avro binary -> Arrow, with Avro schema resolution (writer schema -> reader schema).

Records are handed to fastavro's C reader as one in-memory container block (no Python call per
record) and the resulting rows become Arrow columns typed by :func:`avro_to_arrow`.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa

from hudi_core.avro.flat_decoder import NotFlat, decode_flat
from hudi_core.errors import CorruptedLogBlockError, SchemaMismatchError
from hudi_core.schema.avro_schema import META_FIELDS, OPERATION_FIELD, avro_to_arrow, parse_avro_schema

__all__ = ["NotFlat", "decode_flat_records", "decode_records"]

_CONTAINER_MAGIC = b"Obj\x01"


def _zz_varint(value: int) -> bytes:
    v = (value << 1) ^ (value >> 63)
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _container(writer_schema_json: str, records: Sequence[bytes | memoryview]) -> bytes:
    """An Avro object container holding ``records`` (already Avro binary) in one block."""
    sync = os.urandom(16)
    schema_raw = writer_schema_json.encode("utf-8")
    meta_key = b"avro.schema"
    body = b"".join(records)
    return b"".join(
        (
            _CONTAINER_MAGIC,
            _zz_varint(1),
            _zz_varint(len(meta_key)),
            meta_key,
            _zz_varint(len(schema_raw)),
            schema_raw,
            b"\x00",
            sync,
            _zz_varint(len(records)),
            _zz_varint(len(body)),
            body,
            sync,
        )
    )


def _named_like(reader: dict[str, Any], writer: dict[str, Any]) -> dict[str, Any]:
    """``reader`` renamed to ``writer``'s full name: Hudi's table record names vary between
    writers (``<table>_record`` in ``hoodie.<table>``) while only the fields matter."""
    out = dict(reader)
    out["name"] = writer.get("name", out.get("name"))
    if "namespace" in writer:
        out["namespace"] = writer["namespace"]
    else:
        out.pop("namespace", None)
    return out


def decode_records(
    records: Sequence[bytes | memoryview],
    writer_schema: str | dict[str, Any],
    reader_schema: str | dict[str, Any] | None = None,
) -> pa.Table:
    """Decode Avro binary records into a table with the reader schema's columns (meta first)."""
    writer = parse_avro_schema(writer_schema)
    writer_json = writer_schema if isinstance(writer_schema, str) else json.dumps(writer_schema)
    reader = _named_like(parse_avro_schema(reader_schema), writer) if reader_schema is not None else None
    target = reader if reader is not None else writer
    arrow_schema = _meta_first(avro_to_arrow(target))
    if not records:
        return arrow_schema.empty_table()
    try:
        rows = list(fastavro.reader(io.BytesIO(_container(writer_json, records)), reader_schema=reader))
    except (ValueError, EOFError, IndexError, StopIteration) as e:
        raise CorruptedLogBlockError(f"Avro records do not decode with the block's schema: {e}") from e
    except fastavro.read.SchemaResolutionError as e:
        raise SchemaMismatchError(
            f"reader schema does not resolve against the block's writer schema: {e}"
        ) from e
    return pa.Table.from_pylist(rows, schema=arrow_schema)


def decode_flat_records(
    data: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    writer_schema: str | dict[str, Any],
    reader_schema: str | dict[str, Any] | None = None,
) -> pa.Table:
    """Vectorised decoding of records ``data[starts[i]:ends[i]]`` for flat schemas; raises
    :class:`NotFlat` when the general :func:`decode_records` is needed."""
    writer = parse_avro_schema(writer_schema)
    table = decode_flat(data, starts, ends, writer)
    if reader_schema is None:
        return table.select(_meta_first(table.schema).names)
    return _project(table, parse_avro_schema(reader_schema))


def _project(table: pa.Table, reader: dict[str, Any]) -> pa.Table:
    """Avro schema resolution of flat records already decoded with the writer schema."""
    target = avro_to_arrow(reader)
    cols = []
    for field in reader["fields"]:
        arrow_field = target.field(field["name"])
        if "aliases" in field:
            raise NotFlat("field aliases")
        if field["name"] in table.column_names:
            col = table.column(field["name"])
            try:
                cols.append(col if col.type == arrow_field.type else col.cast(arrow_field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaMismatchError(
                    f"field {field['name']!r} of type {col.type} cannot be read as {arrow_field.type}: {e}"
                ) from e
        elif field.get("default") is None:
            if "default" not in field and not arrow_field.nullable:
                raise SchemaMismatchError(
                    f"reader field {field['name']!r} is not in the data and has no default"
                )
            cols.append(pa.nulls(table.num_rows, arrow_field.type))
        else:
            default = field["default"]
            if isinstance(default, (dict, list, str)) and not pa.types.is_string(arrow_field.type):
                raise NotFlat("complex default")
            cols.append(pa.array([default] * table.num_rows, arrow_field.type))
    out = pa.Table.from_arrays(cols, schema=target)
    return out.select(_meta_first(out.schema).names)


def _meta_first(schema: pa.Schema) -> pa.Schema:
    meta = [n for n in (*META_FIELDS, OPERATION_FIELD) if n in schema.names]
    rest = [f for f in schema if f.name not in meta]
    return pa.schema([schema.field(n) for n in meta] + rest)
