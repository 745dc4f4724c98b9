"""The five ``_hoodie_*`` meta columns (spec 6.1), filled vectorised."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.schema.avro_schema import META_FIELDS, OPERATION_FIELD

__all__ = ["add_meta_columns", "commit_seqnos"]


def commit_seqnos(seqno_prefix: str, count: int, *, start: int = 0) -> pa.Array:
    """``<prefix>_<n>`` for n = start, start+1, ... (``prefix`` = ``<instant>_<taskPartitionId>``)."""
    counters = pa.array(np.arange(start, start + count, dtype=np.int64)).cast(pa.string())
    return pc.binary_join_element_wise(f"{seqno_prefix}_", counters, "")


def _string_column(values: pa.Array | pa.ChunkedArray | str | None, n: int) -> pa.Array:
    if values is None:
        return pa.nulls(n, pa.string())
    if isinstance(values, str):
        return pa.array(np.full(n, values, dtype=object), pa.string()) if n else pa.array([], pa.string())
    arr: pa.Array = (
        (values.combine_chunks() if values.num_chunks else pa.array([], values.type))
        if isinstance(values, pa.ChunkedArray)
        else values
    )
    if len(arr) != n:
        raise ValueError(f"meta column has {len(arr)} values for {n} rows")
    return arr if arr.type == pa.string() else arr.cast(pa.string())


def add_meta_columns(
    data: pa.Table,
    *,
    commit_time: str | None,
    seqno_prefix: str | None,
    record_keys: pa.Array | pa.ChunkedArray | None,
    partition_paths: pa.Array | pa.ChunkedArray | str | None,
    file_name: str,
    seqno_start: int = 0,
) -> pa.Table:
    """``data`` with the five meta columns first (replacing any it had).

    ``seqno_prefix`` None (with ``commit_time`` None) leaves commit time/seqno null, as files of a
    table without meta fields have them. ``_hoodie_file_name`` is always set.
    """
    n = data.num_rows
    keep = [name for name in data.schema.names if name not in META_FIELDS and name != OPERATION_FIELD]
    rest = data.select(keep)
    seqnos = commit_seqnos(seqno_prefix, n, start=seqno_start) if seqno_prefix is not None else None
    columns = [
        _string_column(commit_time, n),
        _string_column(seqnos, n),
        _string_column(record_keys, n),
        _string_column(partition_paths, n),
        _string_column(file_name, n),
    ]
    fields = [pa.field(name, pa.string()) for name in META_FIELDS]
    out = pa.Table.from_arrays(columns, schema=pa.schema(fields))
    for i, name in enumerate(rest.schema.names):
        out = out.append_column(rest.schema.field(i), rest.column(name))
    return out.replace_schema_metadata(data.schema.metadata)
