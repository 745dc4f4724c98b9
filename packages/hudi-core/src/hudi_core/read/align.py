"""Aligning what a file holds with the table's schema (schema evolution on read)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import SchemaMismatchError
from hudi_core.schema.promotion import promoted, unchecked_cast

__all__ = [
    "align_array",
    "align_table",
    "decode",
    "decoded",
    "encoded_like",
    "identity",
    "shared_runs",
    "target_schema",
]


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
            cols.append(align_array(column, f.type, f.name))
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
    decoded once and stays shared; long runs of one value share its bytes, :func:`decode`)."""
    if not any(pa.types.is_dictionary(t) for t in table.schema.types):
        return table
    done: dict[tuple[Any, ...], pa.ChunkedArray] = {}
    cols, fields = [], []
    for f, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_dictionary(f.type):
            f = f.with_type(f.type.value_type)
            same = identity(column)
            if same not in done:
                done[same] = decode(column)
            column = done[same]
        cols.append(column)
        fields.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=table.schema.metadata))


#: a chunk whose runs of one value are this long on average holds each value once, its runs
#: slices of one array of it (:func:`decode`, :func:`shared_runs`)
SHARED_RUN_ROWS = 4096
#: the longest slice of such an array (and so the array's length)
SHARED_RUN_CHUNK = 1 << 16

Runs = list[tuple[pa.Scalar, int]]  # (value, rows)


def decode(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary column as its values. A chunk made of long runs of one value (a base
    file's commit time, file name and partition path: one value per row group) becomes slices
    of one array holding that value, shared by every run of it: the same values, without a
    copy of the string per row (a 10M-row snapshot's ``_hoodie_file_name`` alone is 0.86 GB
    of them). Other chunks are cast."""
    value_type = column.type.value_type
    runs = [_index_runs(chunk) for chunk in column.chunks]
    return _with_shared_runs(column, runs, lambda chunk: chunk.cast(value_type), value_type)


def shared_runs(table: pa.Table, names: Collection[str]) -> pa.Table:
    """``table`` with each string or binary column of ``names`` whose chunks are long runs of
    one value held as :func:`decode` holds them (a merge's rows taken from the logs: one commit
    time per block, one file name and partition path per file slice). The values are compared
    once; a column with short runs stays as it is."""
    for name in names:
        i = table.schema.get_field_index(name)
        if i < 0 or not _is_text(table.schema.field(i).type):
            continue
        column = table.column(i)
        runs = [_value_runs(chunk) for chunk in column.chunks]
        if any(r is not None for r in runs):
            shared = _with_shared_runs(column, runs, lambda chunk: chunk, column.type)
            table = table.set_column(i, table.schema.field(i), shared)
    return table


def _with_shared_runs(
    column: pa.ChunkedArray,
    runs: list[Runs | None],
    plain: Callable[[Any], pa.Array],
    value_type: pa.DataType,
) -> pa.ChunkedArray:
    """``column`` with each chunk that has ``runs`` as slices of one array per value (as long as
    the value's longest run, at most :data:`SHARED_RUN_CHUNK`), the others as ``plain`` makes them."""
    scalars: dict[Any, pa.Scalar] = {}
    longest: dict[Any, int] = {}
    for value, rows in itertools.chain.from_iterable(r for r in runs if r):
        key = value.as_py()
        scalars.setdefault(key, value)
        longest[key] = max(longest.get(key, 0), min(rows, SHARED_RUN_CHUNK))
    repeated = {key: pa.repeat(scalars[key], rows) for key, rows in longest.items()}
    chunks: list[pa.Array] = []
    for chunk, chunk_runs in zip(column.chunks, runs, strict=True):
        if chunk_runs is None:
            chunks.append(plain(chunk))
            continue
        for value, rows in chunk_runs:
            same = repeated[value.as_py()]
            for at in range(0, rows, SHARED_RUN_CHUNK):
                chunks.append(same.slice(0, min(SHARED_RUN_CHUNK, rows - at)))
    return pa.chunked_array(chunks, type=value_type)


def _index_runs(chunk: pa.DictionaryArray) -> Runs | None:
    """:func:`_runs` of a dictionary chunk's indices."""
    if not _may_run(chunk):
        return None
    indices = chunk.indices.to_numpy()
    return _runs(indices[1:] != indices[:-1], lambda at: chunk.dictionary[int(indices[at])])


def _value_runs(chunk: pa.Array) -> Runs | None:
    """:func:`_runs` of a chunk of values."""
    if not _may_run(chunk):
        return None
    changes = pc.not_equal(chunk.slice(1), chunk.slice(0, len(chunk) - 1))
    return _runs(changes.to_numpy(zero_copy_only=False), lambda at: chunk[at])


def _may_run(chunk: pa.Array) -> bool:
    return len(chunk) >= SHARED_RUN_ROWS and not chunk.null_count


def _runs(changes: np.ndarray, value_at: Callable[[int], pa.Scalar]) -> Runs | None:
    """(value, rows) of each run of one value, from whether each row after the first differs
    from the one before it; None when the runs are shorter than :data:`SHARED_RUN_ROWS` on
    average."""
    starts = np.flatnonzero(changes) + 1
    n = len(changes) + 1
    if (len(starts) + 1) * SHARED_RUN_ROWS > n:
        return None
    bounds = [0, *starts.tolist(), n]
    return [(value_at(start), end - start) for start, end in itertools.pairwise(bounds)]


def _is_text(dt: pa.DataType) -> bool:
    types = pa.types
    return (
        types.is_string(dt) or types.is_large_string(dt) or types.is_binary(dt) or types.is_large_binary(dt)
    )


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


def align_array(arr: pa.ChunkedArray | pa.Array, dt: pa.DataType, name: str) -> pa.ChunkedArray | pa.Array:
    """``arr`` as type ``dt`` by Hudi's promotions; a struct's fields by name (those it lacks
    null), recursively (``name`` is the column's, for the error)."""
    if arr.type.equals(dt):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        chunks = [align_array(c, dt, name) for c in arr.chunks]
        return pa.chunked_array(chunks, type=dt)
    if pa.types.is_dictionary(arr.type) and not pa.types.is_dictionary(dt):
        arr = arr.cast(arr.type.value_type)
    converted = promoted(arr, dt)  # a number to text, a float to a double: as Hudi converts them
    if converted is not None:
        return converted
    try:
        return pc.cast(arr, dt, safe=False) if unchecked_cast(arr.type, dt) else pc.cast(arr, dt)
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
                children.append(align_array(arr.field(j), child.type, f"{name}.{child.name}"))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(dt), mask=mask)
    if pa.types.is_list(dt) and (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
        values = align_array(arr.flatten(), dt.value_type, f"{name}[]")
        offsets = pc.cast(pc.subtract(arr.offsets, arr.offsets[0]), pa.int32())
        mask = arr.is_null() if arr.null_count else None
        return pa.ListArray.from_arrays(offsets, values, type=dt, mask=mask)
    raise SchemaMismatchError(
        f"column {name!r} holds {arr.type} in a file but the table schema says {dt}; "
        "only type promotions Hudi allows (int->long->float->double, numbers to text, added fields) can be read"
    )
