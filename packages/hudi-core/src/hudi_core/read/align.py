"""Aligning what a file holds with the table's schema (schema evolution on read)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import SchemaMismatchError
from hudi_core.schema.promotion import promoted

__all__ = ["align_table", "decoded", "encoded_like", "identity", "target_schema"]


def target_schema(data_schema: pa.Schema, *, with_meta: bool, meta_fields: list[pa.Field]) -> pa.Schema:
    """Meta fields first (when wanted), then the table's data columns."""
    names = {f.name for f in meta_fields}
    data = [f for f in data_schema if f.name not in names]
    return pa.schema((list(meta_fields) if with_meta else []) + data)


def align_table(table: pa.Table, schema: pa.Schema, *, encoded: bool = False) -> pa.Table:
    """``table`` with exactly ``schema``'s columns: cast where types differ (int widening,
    nested fields added), nulls for columns the file does not have (older schema). With
    ``encoded``, a dictionary column of ``schema``'s type stays a dictionary (its field's type
    says so): :func:`decoded` gives the table ``schema`` after the rows are filtered."""
    cols, fields = [], []
    for f in schema:
        idx = table.schema.get_field_index(f.name)
        if idx < 0:
            cols.append(pa.nulls(table.num_rows, f.type))
        else:
            column = table.column(idx)
            if encoded and pa.types.is_dictionary(column.type) and column.type.value_type.equals(f.type):
                f = f.with_type(column.type)
            cols.append(_align_array(column, f.type, f.name))
        fields.append(f)
    if not fields:  # no column, the rows kept (a count's read): from_arrays would make none
        return table.select([])
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=schema.metadata))


def identity(column: pa.ChunkedArray) -> tuple[Any, ...]:
    """What two columns holding the same arrays have in common: their type and each chunk's
    buffers (by address), offset and length."""
    return (column.type, *((c.offset, len(c), *(b.address if b is not None else 0 for b in c.buffers()))
                           for c in column.chunks))  # fmt: skip


def decoded(table: pa.Table) -> pa.Table:
    """``table`` with its dictionary columns as their values (an array two columns share is
    decoded once and stays shared)."""
    if not any(pa.types.is_dictionary(t) for t in table.schema.types):
        return table
    done: dict[tuple[Any, ...], pa.ChunkedArray] = {}
    cols, fields = [], []
    for f, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_dictionary(f.type):
            f = f.with_type(f.type.value_type)
            same = identity(column)
            if same not in done:
                done[same] = column.cast(f.type)
            column = done[same]
        cols.append(column)
        fields.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=table.schema.metadata))


def encoded_like(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """``rows`` (``schema``'s columns, dictionaries aside) with the columns that ``schema`` types
    as dictionaries dictionary-encoded: rows to put beside rows of ``schema``."""
    if not any(pa.types.is_dictionary(t) for t in schema.types):
        return rows
    cols = [
        pc.dictionary_encode(c)
        if pa.types.is_dictionary(f.type) and not pa.types.is_dictionary(c.type)
        else c
        for f, c in zip(schema, rows.columns, strict=True)
    ]
    return pa.Table.from_arrays(cols, schema=schema)


def _align_array(arr: pa.ChunkedArray | pa.Array, dt: pa.DataType, name: str) -> pa.ChunkedArray | pa.Array:
    if arr.type.equals(dt):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        chunks = [_align_array(c, dt, name) for c in arr.chunks]
        return pa.chunked_array(chunks, type=dt)
    if pa.types.is_dictionary(arr.type) and not pa.types.is_dictionary(dt):
        arr = arr.cast(arr.type.value_type)
    converted = promoted(arr, dt)  # a number to text, a float to a double: as Hudi converts them
    if converted is not None:
        return converted
    try:
        return pc.cast(arr, dt, safe=False) if _same_family(arr.type, dt) else pc.cast(arr, dt)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        pass
    if pa.types.is_struct(dt) and pa.types.is_struct(arr.type):
        children = []
        for i in range(dt.num_fields):
            child = dt.field(i)
            j = arr.type.get_field_index(child.name)
            if j < 0:
                children.append(pa.nulls(len(arr), child.type))
            else:
                children.append(_align_array(arr.field(j), child.type, f"{name}.{child.name}"))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(dt), mask=mask)
    if pa.types.is_list(dt) and (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
        values = _align_array(arr.flatten(), dt.value_type, f"{name}[]")
        offsets = pc.cast(pc.subtract(arr.offsets, arr.offsets[0]), pa.int32())
        mask = arr.is_null() if arr.null_count else None
        return pa.ListArray.from_arrays(offsets, values, type=dt, mask=mask)
    raise SchemaMismatchError(
        f"column {name!r} holds {arr.type} in a file but the table schema says {dt}; "
        "only type promotions Hudi allows (int->long->float->double, numbers to text, added fields) can be read"
    )


def _same_family(a: pa.DataType, b: pa.DataType) -> bool:
    # Timestamps with another unit or zone convert without a value check (Hudi stores micros).
    return pa.types.is_timestamp(a) and pa.types.is_timestamp(b)
