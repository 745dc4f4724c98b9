"""Reading base files (parquet) of a file slice.

A base file holds the record key twice: ``_hoodie_record_key`` and the key field itself (for a
simple string key, the same strings). Where two columns' chunks are the same bytes in every row
group (same type and levels too), they hold the same values: a local file's copy is not decoded
again but shares the other column's arrays (a sixth of the decoding of a trips-like file, and
its memory). Whether the bytes are the same is checked, never assumed.

A merge that drops some base rows may read a file's dictionary-encoded string columns (every
base file's ``_hoodie_commit_time``, ``_hoodie_partition_path`` and ``_hoodie_file_name``) as
Arrow dictionary arrays (``as_dictionary``): the file's indices, not one string per row, until
the rows are filtered (:func:`indexed_columns` says which columns of a file qualify). A
snapshot reads so the columns whose indices run long (:data:`RUNS_BYTES_PER_VALUE`): each value
is then held once (``align.decode``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_core.errors import StorageError
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.schema.internal import FileColumns
from hudi_core.storage import storage_for
from hudi_core.storage.base import Storage
from hudi_core.storage.kept import Kept

__all__ = [
    "FOOTER_CACHE_BYTES",
    "RUNS_BYTES_PER_VALUE",
    "indexed_columns",
    "iter_parquet",
    "open_parquet",
    "parquet_batches",
    "parquet_file",
    "parquet_metadata",
    "read_parquet",
    "same_columns",
]


def read_parquet(
    storage: Storage, path: str, columns: Sequence[str] | None = None, *, as_dictionary: Collection[str] = (),
    bytes_per_value: float = 4, by_id: FileColumns | None = None, source: str | None = None,
) -> pa.Table:  # fmt: skip
    """A parquet file, restricted to the ``columns`` it has (others are added by alignment);
    those of ``as_dictionary`` that :func:`indexed_columns` picks (at ``bytes_per_value``) come
    as dictionary arrays. ``by_id``: the file holds the query's columns under other names
    (Hudi's schema on read), the result has the query's. ``source``: the file is a bootstrap's
    skeleton (:func:`read_skeleton`)."""
    if source is not None:
        return read_skeleton(storage, path, source, columns)
    if by_id is not None:
        table = read_parquet(storage, path, by_id.names(columns), as_dictionary=by_id.names(list(as_dictionary)) or (),
                             bytes_per_value=bytes_per_value)  # fmt: skip
        return by_id.to_query(table)
    fs = storage.arrow_filesystem()
    with fs.open_input_file(storage.arrow_path(path)) as f:
        pf = parquet_file(f, as_dictionary, bytes_per_value=bytes_per_value)
        wanted = _present(pf, columns)
        copies = same_columns(pf, f, wanted) if isinstance(fs, pafs.LocalFileSystem) else {}
        if not copies:
            return pf.read(columns=wanted)
        return _with_copies(
            pf, pf.read(columns=[c for c in _names(pf, wanted) if c not in copies]), wanted, copies
        )


#: dictionary indices in runs of one value: RLE runs cost a few bytes each, so data pages of at
#: most a byte per 32 values (page headers included) hold runs long enough for
#: ``align.decode`` to share each value's bytes (base files: 0.003-0.015; a column that changes
#: every few rows, 0.13 and more)
RUNS_BYTES_PER_VALUE = 1 / 32


def indexed_columns(
    meta: pq.FileMetaData, arrow: pa.Schema, candidates: Collection[str], *, bytes_per_value: float = 4
) -> list[str]:
    """The ``candidates`` that are top-level string or binary columns of the file whose every
    column chunk holds dictionary indices: a dictionary page, and data pages of at most
    ``bytes_per_value`` bytes a value (a chunk that fell back to plain values has longer pages,
    and reading it as a dictionary would hash every value; :data:`RUNS_BYTES_PER_VALUE` picks
    indices in long runs). Reading them as dictionary arrays costs the indices, and filtering
    them moves indices instead of strings. (What a file holds; ``io.base_file.dictionary_columns``
    is the writer's choice of columns to encode.)"""
    if not candidates or meta.num_row_groups == 0:
        return []
    picked = []
    for i in range(meta.num_columns):
        name = meta.schema.column(i).path
        if name not in candidates or arrow.get_field_index(name) < 0:
            continue
        dt = arrow.field(name).type
        if not (pa.types.is_string(dt) or pa.types.is_large_string(dt) or pa.types.is_binary(dt)):
            continue
        if all(
            _indices_only(meta.row_group(g).column(i), bytes_per_value) for g in range(meta.num_row_groups)
        ):
            picked.append(name)
    return picked


def _indices_only(chunk: pq.ColumnChunkMetaData, bytes_per_value: float) -> bool:
    if not chunk.has_dictionary_page or chunk.dictionary_page_offset is None:
        return False
    data_pages = chunk.total_compressed_size - (chunk.data_page_offset - chunk.dictionary_page_offset)
    return 0 <= data_pages <= bytes_per_value * max(1, chunk.num_values)


def parquet_file(
    f: pa.NativeFile, as_dictionary: Collection[str] = (), *, bytes_per_value: float = 4,
    metadata: pq.FileMetaData | None = None,
) -> pq.ParquetFile:  # fmt: skip
    """``f`` opened as a parquet file (on its footer ``metadata`` when the caller holds it) whose
    columns of ``as_dictionary`` that :func:`indexed_columns` picks are read as dictionary arrays."""
    pf = pq.ParquetFile(f, metadata=metadata)
    encoded = indexed_columns(pf.metadata, pf.schema_arrow, as_dictionary, bytes_per_value=bytes_per_value)
    return pq.ParquetFile(f, metadata=pf.metadata, read_dictionary=encoded) if encoded else pf


def read_skeleton(storage: Storage, path: str, source: str, columns: Sequence[str] | None = None) -> pa.Table:
    """A METADATA_ONLY bootstrap's base file: the meta columns of its skeleton file ``path``
    beside the data columns of the source table's file ``source`` (row for row, as Apache Hudi's
    bootstrap wrote them), restricted to the ``columns`` they have."""
    meta = [c for c in (META_FIELDS if columns is None else columns) if c in META_FIELDS]
    skeleton = read_parquet(storage, path, meta)
    same = "://" not in source or source.startswith(f"{storage.scheme}://")
    source_storage = storage if same else storage_for(source)
    data = read_parquet(
        source_storage, source, None if columns is None else [c for c in columns if c not in META_FIELDS]
    )
    data = data.drop_columns([c for c in data.column_names if c in META_FIELDS])
    if skeleton.num_rows != data.num_rows:
        raise StorageError(
            f"bootstrap skeleton {path} holds {skeleton.num_rows} rows and its source {source} {data.num_rows}"
        )
    if not skeleton.num_columns and not data.num_columns:  # no column asked: the rows, counted
        return skeleton
    return pa.Table.from_arrays(
        [*skeleton.columns, *data.columns], schema=pa.schema([*skeleton.schema, *data.schema])
    )


#: the serialized bytes of remote base files' footers a process keeps (:func:`open_parquet`)
FOOTER_CACHE_BYTES = 64 * 1024 * 1024
#: remote base files up to this size are fetched whole, in one request (:func:`open_parquet`)
WHOLE_FILE_MAX_BYTES = 4 * 1024 * 1024
#: the bytes of such files a process keeps
WHOLE_FILE_CACHE_BYTES = 64 * 1024 * 1024

#: by (storage, path, size)
_FOOTERS: Kept[pq.FileMetaData] = Kept(FOOTER_CACHE_BYTES, lambda meta: int(meta.serialized_size))
_WHOLE_FILES: Kept[bytes] = Kept(WHOLE_FILE_CACHE_BYTES, len)


@contextmanager
def open_parquet(
    storage: Storage, path: str, size: int = 0, as_dictionary: Collection[str] = ()
) -> Iterator[tuple[pq.ParquetFile, pa.NativeFile]]:
    """``path`` opened as a parquet file, with the file it reads (``as_dictionary``: as
    :func:`parquet_file`). A base file never changes under its name, so what a process read of
    a remote one whose ``size`` a listing gave is kept: on S3 opening a file costs a request
    for its size, one for the footer's length and one for the footer (with Hudi's bloom filter,
    60,000 entries by default, ~430 kB), then one per column range read, each time a SIMPLE
    index reads the file's keys and again when an upsert merges the file. A file up to
    :data:`WHOLE_FILE_MAX_BYTES` (a small file, which upserts' inserts fill and merge) is fetched
    whole in one request and its bytes kept; of a larger one the footer is kept. Local files are
    read as they are."""
    fs = storage.arrow_filesystem()
    where = storage.arrow_path(path)
    key = None if size <= 0 or isinstance(fs, pafs.LocalFileSystem) else (repr(storage), where, size)
    source: pa.NativeFile
    if key is not None and size <= WHOLE_FILE_MAX_BYTES:
        data = _WHOLE_FILES.get(key)
        if data is None:
            data = storage.read_bytes(path)
            if len(data) == size:
                _WHOLE_FILES.put(key, data)
        source = pa.BufferReader(data)
    else:
        source = fs.open_input_file(where)
    with source as f:
        meta = _FOOTERS.get(key) if key is not None else None
        pf = parquet_file(f, as_dictionary, metadata=meta)
        if key is not None and meta is None:
            _FOOTERS.put(key, pf.metadata)
        yield pf, f


def parquet_metadata(storage: Storage, path: str) -> pq.FileMetaData:
    """The footer of a parquet file (row groups, their column statistics)."""
    with open_parquet(storage, path) as (pf, _):
        return pf.metadata


def iter_parquet(
    storage: Storage, path: str, columns: Sequence[str] | None, batch_rows: int,
    *, as_dictionary: Collection[str] = (), footer: list[pq.FileMetaData] | None = None,
    by_id: FileColumns | None = None, source: str | None = None,
) -> Iterator[pa.Table]:  # fmt: skip
    """A parquet file ``batch_rows`` rows at a time, restricted to the ``columns`` it has:
    memory holds a batch, not the file (``as_dictionary``, ``by_id``, ``source``: as
    :func:`read_parquet`; a skeleton and its source are read whole, then given in batches).
    ``footer`` receives the file's footer once it is open (so a caller needing it reads it once)."""
    if source is not None:
        if footer is not None:
            footer.append(parquet_metadata(storage, path))
        whole = read_skeleton(storage, path, source, columns)
        # (the length clamped here: pyarrow slices a table of no column to any length asked)
        rows = whole.num_rows
        yield from (whole.slice(i, min(batch_rows, rows - i)) for i in range(0, max(rows, 1), batch_rows))
        return
    if by_id is not None:
        batches = iter_parquet(storage, path, by_id.names(columns), batch_rows,
                               as_dictionary=by_id.names(list(as_dictionary)) or (), footer=footer)  # fmt: skip
        yield from (by_id.to_query(b) for b in batches)
        return
    fs = storage.arrow_filesystem()
    with fs.open_input_file(storage.arrow_path(path)) as f:
        pf = parquet_file(f, as_dictionary)
        if footer is not None:
            footer.append(pf.metadata)
        yield from parquet_batches(
            pf, f, _present(pf, columns), batch_rows, local=isinstance(fs, pafs.LocalFileSystem)
        )


def parquet_batches(
    pf: pq.ParquetFile,
    f: pa.NativeFile,
    columns: Sequence[str] | None,
    batch_rows: int,
    *,
    local: bool,
    use_threads: bool = True,
) -> Iterator[pa.Table]:
    """``pf`` (opened on ``f``) ``batch_rows`` rows at a time, ``columns`` only (default all);
    in a ``local`` file the columns of :func:`same_columns` are decoded once."""
    copies = same_columns(pf, f, columns) if local else {}
    read = [c for c in _names(pf, columns) if c not in copies] if copies else columns
    for batch in pf.iter_batches(batch_size=batch_rows, columns=read, use_threads=use_threads):
        table = pa.Table.from_batches([batch])
        yield _with_copies(pf, table, columns, copies) if copies else table


def same_columns(
    pf: pq.ParquetFile, f: pa.NativeFile, columns: Sequence[str] | None = None
) -> dict[str, str]:
    """``{copy: original}`` for top-level columns (of ``columns``, default all) whose chunks are
    byte for byte another's in every row group, with the same Parquet and Arrow types and levels:
    they decode to the same values."""
    meta = pf.metadata
    if meta.num_row_groups == 0:
        return {}
    names = _names(pf, columns)
    schema, arrow = pf.schema, pf.schema_arrow
    leaves = {schema.column(i).path: i for i in range(meta.num_columns)}
    groups: dict[tuple[object, ...], list[str]] = {}
    for name in names:
        i = leaves.get(name)
        if i is None:  # a nested column: several leaves
            continue
        col = schema.column(i)
        chunks = tuple(
            (c.total_compressed_size, c.num_values, c.compression, c.has_dictionary_page)
            for c in (meta.row_group(g).column(i) for g in range(meta.num_row_groups))
        )
        field = arrow.field(name)
        key = (col.physical_type, str(col.logical_type), col.max_definition_level, col.max_repetition_level,
               field.type, field.nullable, chunks)  # fmt: skip
        groups.setdefault(key, []).append(name)
    copies: dict[str, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        spans = {
            name: [_chunk_span(meta, leaves[name], g) for g in range(meta.num_row_groups)] for name in members
        }
        first, rest = members[0], members[1:]
        original = [_read_span(f, start, size) for start, size in spans[first]]
        for name in rest:
            # chunks of distinct columns lie apart: offsets that do not (a writer's bug) prove nothing
            apart = all(
                a[0] + a[1] <= b[0] or b[0] + b[1] <= a[0]
                for a, b in zip(spans[first], spans[name], strict=True)
            )
            if apart and all(
                _read_span(f, start, size).equals(o)
                for (start, size), o in zip(spans[name], original, strict=True)
            ):
                copies[name] = first
    return copies


def _read_span(f: pa.NativeFile, start: int, size: int) -> pa.Buffer:
    """``size`` bytes at ``start``, in a buffer of Arrow's pool (``read_at``'s bytes were fresh
    memory each time: comparing a 1M-row file's two key columns took 38-69 ms so, 16-18 ms now)."""
    f.seek(start)
    return f.read_buffer(size)


def _chunk_span(meta: pq.FileMetaData, column: int, row_group: int) -> tuple[int, int]:
    """(first byte, size) of a column chunk: its dictionary page, if any, then its data pages."""
    c = meta.row_group(row_group).column(column)
    start = c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset
    return int(start), int(c.total_compressed_size)


def _with_copies(
    pf: pq.ParquetFile, table: pa.Table, wanted: Sequence[str] | None, copies: dict[str, str]
) -> pa.Table:
    """``table`` (read without the copies) with every column of ``wanted`` in order, each copy
    sharing its original's arrays under its own field."""
    arrow = pf.schema_arrow
    names = _names(pf, wanted)
    return pa.Table.from_arrays(
        [table.column(copies.get(n, n)) for n in names], schema=pa.schema([arrow.field(n) for n in names])
    )


def _names(pf: pq.ParquetFile, columns: Sequence[str] | None) -> list[str]:
    return list(pf.schema_arrow.names) if columns is None else list(columns)


def _present(pf: pq.ParquetFile, columns: Sequence[str] | None) -> list[str] | None:
    if columns is None:
        return None
    present = set(pf.schema_arrow.names)
    return [c for c in columns if c in present]
