"""How the write path's handles and compaction write base files:
:func:`hudi_core.io.base_file.write_base_file`'s layout (meta columns, Avro-typed parquet schema,
footer keys, bloom filter) with the encoder settings chosen for speed.

* gzip at zlib's default level 6, which is what Hudi's parquet-mr writer uses (Hadoop's
  ``ZlibCompressor`` default); Arrow's own gzip default is level 9, slower for ~0.1% smaller files.
* No dictionary for columns whose values are (nearly) all distinct: ``_hoodie_commit_seqno`` and
  ``_hoodie_record_key`` always, data columns when a sample says so. Arrow builds a dictionary
  of up to 1 MB per column chunk before falling back to plain pages; for unique strings and
  random doubles that is wasted work (and a larger file).
* At zstd's default level, no compression for columns it barely shrinks (random keys, random
  doubles: :func:`hudi_core.io.base_file.column_codecs`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hudi_core.bloom import BloomFilter, build_bloom_filter
from hudi_core.bloom.filter import BloomFilterError, bloom_sizing, deserialize_bloom_filter
from hudi_core.config.write import WriteOptions
from hudi_core.errors import SchemaMismatchError
from hudi_core.io.base_file import (
    AVRO_SCHEMA_KEY,
    BLOOM_FILTER_KEY,
    BLOOM_TYPE_KEY,
    MAX_KEY,
    MIN_KEY,
    WRITER_MODEL_KEY,
    _bloom_settings,
    _cast,
    _file_schema,
    column_codecs,
    dictionary_columns,
    java_min_max,
    parquet_codec,
)
from hudi_core.schema.avro_schema import META_FIELDS, add_meta_fields

__all__ = [
    "BaseFileOut",
    "GrowingFooter",
    "data_bytes",
    "dictionary_columns",
    "file_table",
    "footer_of",
    "new_bloom_filter",
    "write_parquet",
    "write_pieces",
]


def data_bytes(meta: pq.FileMetaData) -> int:
    """Compressed bytes of a parquet file's column chunks (its data, without the footer): what
    file sizing counts as bytes written."""
    return sum(
        meta.row_group(i).column(j).total_compressed_size
        for i in range(meta.num_row_groups)
        for j in range(meta.num_columns)
    )


@dataclass(frozen=True)
class BaseFileOut:
    path: str
    size: int
    num_records: int


def codec_options(config: Any, table: pa.Table | None = None) -> dict[str, Any]:
    """pyarrow's compression settings for a write's ``hoodie.parquet.compression.codec`` and
    ``hoodie.parquet.compression.level``; with ``table`` (the rows, or the first of them, to
    write) column by column, as :func:`hudi_core.io.base_file.column_codecs` chooses."""
    name = str(config.get_str(WriteOptions.PARQUET_COMPRESSION))
    level = config.get_str(WriteOptions.PARQUET_COMPRESSION_LEVEL)
    return parquet_codec(name, level) if table is None else column_codecs(table, name, level)


def file_table(table: pa.Table, avro_schema: dict[str, Any], *, populate_meta_fields: bool) -> pa.Table:
    """``table`` (meta columns first) as written: Avro-typed, meta keys null without meta fields."""
    if table.schema.names[:5] != list(META_FIELDS):
        raise SchemaMismatchError(
            f"a base file needs the meta columns {', '.join(META_FIELDS)} first, got {', '.join(table.schema.names[:5])}"
        )
    if not populate_meta_fields:
        for i in range(4):
            table = table.set_column(
                i, pa.field(META_FIELDS[i], pa.string()), pa.nulls(table.num_rows, pa.string())
            )
    return _cast(table, _file_schema(table, avro_schema)).replace_schema_metadata(None)


def footer_of(
    keys: pa.Array | pa.ChunkedArray | None,
    avro_schema_with_meta: dict[str, Any],
    config: Any,
    *,
    bloom: BloomFilter | None = None,
) -> dict[str, str]:
    """Hudi's footer keys; ``keys`` None (no meta fields): no bloom filter, no min/max keys.
    ``bloom``: the filter of ``keys`` already built (:func:`new_bloom_filter`, keys added in
    order as they were written)."""
    footer: dict[str, str] = {}
    if keys is not None:
        if bloom is None:
            bloom = build_bloom_filter(keys, **_bloom_settings(config))
        lo, hi = java_min_max(keys)
        footer[BLOOM_FILTER_KEY] = bloom.serialize()
        footer[BLOOM_TYPE_KEY] = bloom.type_code
        if lo is not None and hi is not None:
            footer[MIN_KEY], footer[MAX_KEY] = lo, hi
    footer[AVRO_SCHEMA_KEY] = json.dumps(avro_schema_with_meta, separators=(",", ":"))
    footer[WRITER_MODEL_KEY] = "avro"
    return footer


def new_bloom_filter(config: Any) -> BloomFilter:
    """An empty bloom filter with the write's settings, for a file written piece by piece: the
    keys added in order give the bytes :func:`footer_of` builds from all of them at once."""
    return build_bloom_filter(None, **_bloom_settings(config))


class GrowingFooter:
    """The footer of a base file rewritten as the old file's keys, in order, then new ones: a
    merge that deletes nothing (updated rows keep their places, inserts follow). Continuing the
    old file's bloom filter with the new keys gives the bytes a filter built from every key
    gives (a filter's state depends only on the keys added, in order), and the old min/max keys
    with the new keys give the new ones; so the rewrite hashes only its inserts. :meth:`start_from`
    leaves it unusable when the old footer cannot be continued exactly (no filter, other
    settings), and :meth:`invalidate` (a delete) too; :func:`write_parquet` then builds the
    footer from every key. Compaction continues the base file's footer with the keys its merge
    adds too (``compaction.runner``)."""

    def __init__(self) -> None:
        self.bloom: BloomFilter | None = None
        self.bounds: list[str] = []
        self.usable = False

    def start_from(self, metadata: dict[bytes, bytes] | None, config: Any) -> None:
        meta = {k.decode(): v.decode() for k, v in (metadata or {}).items()}
        settings = _bloom_settings(config)
        if BLOOM_FILTER_KEY not in meta or MIN_KEY not in meta or MAX_KEY not in meta:
            return
        try:
            bloom = deserialize_bloom_filter(meta[BLOOM_FILTER_KEY], meta.get(BLOOM_TYPE_KEY))
        except BloomFilterError:
            return
        if (bloom.bit_size, bloom.num_hashes) != bloom_sizing(settings["num_entries"], settings["fpp"]):
            return
        if bloom.type_code != str(settings["filter_type"]).upper():
            return
        if bloom.type_code != "SIMPLE" and (
            bloom.num_entries != settings["num_entries"] or not bloom.resume(settings["max_entries"])
        ):
            return
        self.bloom, self.bounds, self.usable = bloom, [meta[MIN_KEY], meta[MAX_KEY]], True

    def add(self, keys: pa.Array) -> None:
        if self.usable and len(keys):
            assert self.bloom is not None
            self.bloom.add(keys)
            lo, hi = java_min_max(
                pa.concat_arrays([pa.array(self.bounds, pa.string()), keys.cast(pa.string())])
            )
            self.bounds = [str(lo), str(hi)]

    def invalidate(self) -> None:
        self.usable = False

    def key_entries(self) -> dict[str, str]:
        """The footer's bloom filter, its type, and the least and greatest record keys."""
        assert self.usable and self.bloom is not None
        return {BLOOM_FILTER_KEY: self.bloom.serialize(), BLOOM_TYPE_KEY: self.bloom.type_code,
                MIN_KEY: self.bounds[0], MAX_KEY: self.bounds[1]}  # fmt: skip

    def footer(self, avro_schema_with_meta: dict[str, Any]) -> dict[str, str]:
        return {**footer_of(None, avro_schema_with_meta, None), **self.key_entries()}


def open_writer(sink: Any, table: pa.Table, config: Any) -> pq.ParquetWriter:
    """A writer of base file rows ``table``'s shape, compressed as the write's ``config`` says."""
    return pq.ParquetWriter(
        sink, table.schema, store_schema=False,  # no ARROW:schema key: the footer key set matches Hudi's
        use_compliant_nested_type=True, coerce_timestamps=None,  # each in its Avro unit
        write_statistics=True, use_dictionary=dictionary_columns(table), **codec_options(config, table),
    )  # fmt: skip


#: Arrow bytes gathered into one row group when a file is written piece by piece
ROW_GROUP_ARROW_BYTES = 64 * 1024 * 1024


def write_parquet(
    ctx: Any, path: str, data: pa.Table | Iterable[pa.Table], *, growing: GrowingFooter | None = None
) -> BaseFileOut:
    """Write ``data`` (meta columns first) as a base file at ``path`` for a handle's ``ctx``
    (:func:`write_pieces`)."""
    return write_pieces(ctx.storage, path, data, config=ctx.config, avro_schema=ctx.avro_schema,
                        populate_meta_fields=bool(ctx.populate_meta_fields), growing=growing)  # fmt: skip


def write_pieces(
    storage: Any, path: str, data: pa.Table | Iterable[pa.Table], *, config: Any, avro_schema: dict[str, Any],
    populate_meta_fields: bool, growing: GrowingFooter | None = None,
) -> BaseFileOut:  # fmt: skip
    """Write ``data`` (meta columns first) as a base file at ``path``, compressed as the write's
    ``config`` says, typed by the writer's ``avro_schema``.

    ``data`` may be an iterable of tables (at least one, all of one schema): they are written as
    they come, gathered into row groups of about ``ROW_GROUP_ARROW_BYTES``, so a merge never
    holds the whole file; only the keys are kept, for the footer's bloom filter (unless
    ``growing``, kept up to date by the caller while ``data`` is consumed, is still usable)."""
    codec_options(config)  # reject a bad codec or level before the file exists
    pieces = [data] if isinstance(data, pa.Table) else data
    keys: list[pa.Array] = []
    rows = 0
    with storage.open_write(path) as f:
        writer: pq.ParquetWriter | None = None
        pending: list[pa.Table] = []
        pending_bytes = 0
        try:
            for piece in pieces:
                out = file_table(piece, avro_schema, populate_meta_fields=populate_meta_fields)
                if writer is None:
                    writer = open_writer(f, out, config)
                if populate_meta_fields:
                    keys.extend(out.column(RECORD_KEY_COL).chunks)
                pending.append(out)
                pending_bytes += out.nbytes
                rows += out.num_rows
                if pending_bytes >= ROW_GROUP_ARROW_BYTES:
                    _write_row_group(writer, pending)
                    pending, pending_bytes = [], 0
            if writer is None:
                raise ValueError(f"no data to write to {path}")
            if pending:
                _write_row_group(writer, pending)
            with_meta = add_meta_fields(avro_schema)
            if populate_meta_fields and growing is not None and growing.usable:
                footer = growing.footer(with_meta)
            else:
                key_col = pa.chunked_array(keys, pa.string()) if populate_meta_fields else None
                footer = footer_of(key_col, with_meta, config)
            writer.add_key_value_metadata(footer)
        finally:
            if writer is not None:
                writer.close()
        size = written_size(f)
    return BaseFileOut(path, storage.size(path) if size is None else size, rows)


def written_size(f: Any) -> int | None:
    """What a writer of a new file wrote so far, when it can tell (HDFS's cannot): no request
    to the store, as asking it for the file's size would be on S3."""
    try:
        return int(f.tell())
    except (OSError, AttributeError, ValueError):
        return None


def parquet_block_content(table: pa.Table, config: Any) -> bytes:
    """Content of a parquet log data block (a whole parquet file, as
    :func:`hudi_core.log.blocks.encode_parquet_data_block` writes it) with this module's encoder
    settings (the write's codec and level, no dictionary for unique columns)."""
    sink = io.BytesIO()
    pq.write_table(table, sink, use_dictionary=dictionary_columns(table), **codec_options(config, table))
    return sink.getvalue()


def _write_row_group(writer: pq.ParquetWriter, pending: list[pa.Table]) -> None:
    # one dictionary per dictionary column (a merge's old rows and its new ones): Arrow's writer
    # falls back to plain pages when the dictionary changes from one chunk to the next
    table = (pending[0] if len(pending) == 1 else pa.concat_tables(pending)).unify_dictionaries()
    writer.write_table(table, row_group_size=min(max(1, table.num_rows), 1 << 20))  # Arrow's default cap


RECORD_KEY_COL = "_hoodie_record_key"
