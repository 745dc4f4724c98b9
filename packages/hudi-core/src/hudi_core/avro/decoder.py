"""Avro binary -> Arrow, with Avro schema resolution (writer schema -> reader schema).

Records are handed to fastavro's C reader as one in-memory container block (no Python call per
record) and the resulting rows become Arrow columns typed by :func:`avro_to_arrow`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa

from hudi_core.avro.container import container_bytes
from hudi_core.avro.flat_decoder import NotFlat, decode_flat
from hudi_core.errors import CorruptedLogBlockError, SchemaMismatchError
from hudi_core.schema.avro_schema import META_FIELDS, OPERATION_FIELD, avro_to_arrow, parse_avro_schema

__all__ = ["NotFlat", "cast_column", "decode_flat_records", "decode_records"]


def _container(writer_schema_json: str, records: Sequence[bytes | memoryview]) -> bytes:
    """An Avro object container holding ``records`` (already Avro binary) in one block."""
    return container_bytes(writer_schema_json, len(records), b"".join(records))


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
            cols.append(cast_column(table.column(field["name"]), arrow_field))
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


def cast_column(col: pa.ChunkedArray | pa.Array, field: pa.Field) -> pa.ChunkedArray | pa.Array:
    """``col`` as ``field``'s type (Avro's type promotions and Arrow casts), or a
    :class:`SchemaMismatchError` naming the column."""
    if col.type == field.type:
        return col
    try:
        return col.cast(field.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SchemaMismatchError(
            f"column {field.name!r} of type {col.type} cannot be read as {field.type}: {e}"
        ) from e


def _meta_first(schema: pa.Schema) -> pa.Schema:
    meta = [n for n in (*META_FIELDS, OPERATION_FIELD) if n in schema.names]
    rest = [f for f in schema if f.name not in meta]
    return pa.schema([schema.field(n) for n in meta] + rest)
