"""Base files (spec 6): parquet with the meta columns first and Hudi's footer keys.

The file carries what Hudi's Avro write path puts there: ``parquet.avro.schema`` (the writer
schema with meta fields), ``writer.model.name=avro``, the bloom filter and the min/max record
keys. Parquet types follow the Avro schema (decimals as FIXED_LEN_BYTE_ARRAY, timestamps as
micros adjusted to UTC, lists in the standard 3-level layout).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.bloom import BloomFilter, build_bloom_filter, deserialize_bloom_filter, might_contain
from hudi_core.bloom.murmur import key_buffers
from hudi_core.config.bloom import BloomOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError, SchemaMismatchError
from hudi_core.schema.avro_schema import META_FIELDS, add_meta_fields, avro_to_arrow
from hudi_core.storage.base import Storage

__all__ = [
    "BLOOM_FILTER_KEY",
    "BLOOM_TYPE_KEY",
    "MAX_KEY",
    "MIN_KEY",
    "PARQUET_CODECS",
    "PARQUET_DEFAULT_LEVELS",
    "BaseFileResult",
    "column_codecs",
    "dictionary_columns",
    "footer_may_hold",
    "java_min_max",
    "key_span",
    "parquet_codec",
    "read_base_file",
    "read_bloom_filter",
    "read_footer",
    "write_base_file",
]

MIN_KEY = "hoodie_min_record_key"
MAX_KEY = "hoodie_max_record_key"
BLOOM_FILTER_KEY = "org.apache.hudi.bloomfilter"
BLOOM_TYPE_KEY = "hoodie_bloom_filter_type_code"
AVRO_SCHEMA_KEY = "parquet.avro.schema"
WRITER_MODEL_KEY = "writer.model.name"

PARQUET_CODECS = {
    "uncompressed": "none",
    "none": "none",
    "gzip": "gzip",
    "snappy": "snappy",
    "zstd": "zstd",
    "lz4": "lz4",
    "lz4_raw": "lz4",
    "brotli": "brotli",
}
#: a codec's level when none is set: zlib's default for gzip (Hudi's Hadoop codec), zstd's fast
#: level -1 for zstd (``hoodie.parquet.compression.level`` says why)
PARQUET_DEFAULT_LEVELS = {"gzip": 6, "zstd": -1}
#: the codecs whose level can be set
_LEVELLED = ("gzip", "zstd", "brotli")


def parquet_codec(name: str, level: int | str | None = None) -> dict[str, Any]:
    """pyarrow's ``compression`` and ``compression_level`` for a Hudi codec name
    (``hoodie.parquet.compression.codec``) and level (``hoodie.parquet.compression.level``;
    None: the codec's default, :data:`PARQUET_DEFAULT_LEVELS`)."""
    codec = PARQUET_CODECS.get(name.lower())
    if codec is None:
        raise SchemaMismatchError(
            f"hoodie.parquet.compression.codec={name!r} is not supported; use one of "
            f"{', '.join(sorted(PARQUET_CODECS))}"
        )
    opts: dict[str, Any] = {"compression": codec}
    if level is None or level == "":
        if codec in PARQUET_DEFAULT_LEVELS:
            opts["compression_level"] = PARQUET_DEFAULT_LEVELS[codec]
        return opts
    if codec not in _LEVELLED:
        raise ConfigError(
            f"hoodie.parquet.compression.level={level!r}: the {name} codec takes no level "
            f"(levels are for {', '.join(_LEVELLED)})"
        )
    low, high = pa.Codec.minimum_compression_level(codec), pa.Codec.maximum_compression_level(codec)
    try:
        number = int(level)
    except ValueError:
        number = low - 1
    if not low <= number <= high:
        raise ConfigError(
            f"hoodie.parquet.compression.level={level!r} is not a {name} level ({low} to {high})"
        )
    opts["compression_level"] = number
    return opts


@dataclass(frozen=True)
class BaseFileResult:
    path: str
    size: int
    num_records: int
    min_key: str | None
    max_key: str | None


def java_min_max(keys: pa.Array | pa.ChunkedArray) -> tuple[str | None, str | None]:
    """Min and max in Java ``String.compareTo`` order (UTF-16 code units).

    UTF-8 byte order equals code-point order, which differs from UTF-16 order only when keys mix
    supplementary characters with U+E000..U+FFFF; only then are the keys compared one by one.
    """
    if len(keys) == 0 or keys.null_count == len(keys):
        return None, None
    mm = pc.min_max(keys)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if pc.all(pc.string_is_ascii(keys)).as_py():
        return lo, hi  # the common case: byte order is UTF-16 order, no regex scans needed
    has_supp = pc.any(pc.match_substring_regex(keys, "[\U00010000-\U0010ffff]")).as_py()
    has_high_bmp = pc.any(pc.match_substring_regex(keys, "[\ue000-\uffff]")).as_py()
    if has_supp and has_high_bmp:
        values = [k for k in keys.to_pylist() if k is not None]
        lo = min(values, key=lambda s: s.encode("utf-16-be"))
        hi = max(values, key=lambda s: s.encode("utf-16-be"))
    return lo, hi


def _bloom_settings(config: HoodieConfig | Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = config if isinstance(config, HoodieConfig) else HoodieConfig(dict(config or {}))
    return {
        "filter_type": str(cfg.get(BloomOptions.FILTER_TYPE)),
        "num_entries": int(cfg.get(BloomOptions.NUM_ENTRIES)),
        "fpp": float(cfg.get(BloomOptions.FPP)),
        "max_entries": int(cfg.get(BloomOptions.DYNAMIC_MAX_ENTRIES)),
    }


def _file_schema(data: pa.Table, avro_schema: dict[str, Any]) -> pa.Schema:
    """The Arrow schema parquet is written with: the Avro schema's types, data's column order."""
    writer = avro_to_arrow(add_meta_fields(avro_schema))
    by_name = {f.name: f for f in writer}
    fields = []
    for name in data.schema.names:
        if name not in by_name:
            raise SchemaMismatchError(
                f"column {name!r} is not in the Avro writer schema; add it to the schema or drop it"
            )
        # Avro's timestamp-* come back zoned (parquet: adjusted to UTC), its local-timestamp-*
        # naive (not adjusted), each in its own unit, as parquet-avro writes them
        fields.append(by_name[name])
    return pa.schema(fields)


def _cast(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """``data`` in ``schema``'s types; a dictionary column of the type's values stays a
    dictionary (a parquet writer stores it exactly as the spelled-out strings)."""
    columns, fields = [], []
    for field in schema:
        col = data.column(field.name)
        if (
            pa.types.is_timestamp(col.type)
            and col.type.tz is None
            and pa.types.is_timestamp(field.type)
            and field.type.tz
        ):
            col = col.cast(pa.timestamp(col.type.unit, "UTC"))
        if pa.types.is_dictionary(col.type) and col.type.value_type == field.type:
            # written as it is: parquet dictionary-encodes the column the same either way
            columns.append(col)
            fields.append(pa.field(field.name, col.type, field.nullable, field.metadata))
            continue
        try:
            columns.append(col.cast(field.type) if col.type != field.type else col)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise SchemaMismatchError(
                f"column {field.name!r} of type {col.type} does not fit the writer schema type "
                f"{field.type}: {e}"
            ) from e
        fields.append(field)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def write_base_file(
    storage: Storage,
    path: str,
    data: pa.Table,
    *,
    avro_schema: dict[str, Any],
    compression: str = "gzip",
    compression_level: int | str | None = None,
    populate_meta_fields: bool = True,
    bloom_config: HoodieConfig | Mapping[str, Any] | None = None,
) -> BaseFileResult:
    """Write ``data`` (the five meta columns first) as a Hudi base file at ``path``.

    ``avro_schema`` is the table's writer schema (with or without meta fields). With
    ``populate_meta_fields=False`` the meta columns are written null except
    ``_hoodie_file_name``, and the file has no bloom filter or min/max keys (spec 6.1).
    """
    if data.schema.names[:5] != list(META_FIELDS):
        raise SchemaMismatchError(
            f"a base file needs the meta columns {', '.join(META_FIELDS)} first, got "
            f"{', '.join(data.schema.names[:5])}; use hudi_core.io.meta.add_meta_columns"
        )
    parquet_codec(compression, compression_level)  # a bad codec or level: before anything is written
    if not populate_meta_fields:
        n = data.num_rows
        for i in range(4):
            data = data.set_column(i, pa.field(META_FIELDS[i], pa.string()), pa.nulls(n, pa.string()))
    writer_avro = add_meta_fields(avro_schema)
    table = _cast(data, _file_schema(data, avro_schema))
    footer: dict[str, str] = {}
    min_key = max_key = None
    if populate_meta_fields:
        keys = table.column("_hoodie_record_key")
        bloom = build_bloom_filter(keys, **_bloom_settings(bloom_config))
        min_key, max_key = java_min_max(keys)
        footer[BLOOM_FILTER_KEY] = bloom.serialize()
        footer[BLOOM_TYPE_KEY] = bloom.type_code
        if min_key is not None and max_key is not None:
            footer[MIN_KEY] = min_key
            footer[MAX_KEY] = max_key
    footer[AVRO_SCHEMA_KEY] = json.dumps(writer_avro, separators=(",", ":"))
    footer[WRITER_MODEL_KEY] = "avro"
    # one dictionary per dictionary column: a parquet writer falls back to plain pages when the
    # dictionary changes from one chunk to the next
    table = table.replace_schema_metadata(None).unify_dictionaries()
    codec = column_codecs(table, compression, compression_level)
    with storage.open_write(path) as f:
        writer = pq.ParquetWriter(
            f,
            table.schema,
            **codec,
            store_schema=False,  # no ARROW:schema key: the footer key set matches Hudi's
            use_compliant_nested_type=True,
            # each column in its Avro type's unit (timestamp-millis -> MILLIS), not all micros
            coerce_timestamps=None,
            write_statistics=True,
            use_dictionary=dictionary_columns(table),
        )
        try:
            writer.write_table(table)
            # pyarrow drops schema metadata with store_schema=False; add the footer keys here.
            writer.add_key_value_metadata(footer)
        finally:
            writer.close()
    return BaseFileResult(
        path=path,
        size=storage.size(path),
        num_records=table.num_rows,
        min_key=min_key,
        max_key=max_key,
    )


#: dictionary encoding (:func:`dictionary_columns`): never for columns of (nearly) distinct
#: values, always for the meta columns with one value per file or partition
_NEVER_DICT = frozenset(("_hoodie_commit_seqno", "_hoodie_record_key"))
_ALWAYS_DICT = frozenset(("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name"))
_DICT_SAMPLE = 4096


def dictionary_columns(table: pa.Table) -> list[str]:
    """Top-level columns worth dictionary encoding: those whose first rows repeat values. Arrow
    builds a dictionary of up to 1 MB per column chunk before it falls back to plain pages; for
    unique strings and random doubles that is wasted work and a larger file (a compacted base
    file of the trips benchmark: written in 0.045 s against 0.067 s, 7% smaller)."""
    out = []
    n = min(table.num_rows, _DICT_SAMPLE)
    for f in table.schema:
        if f.name in _NEVER_DICT:
            continue
        if f.name in _ALWAYS_DICT or n < 64:
            out.append(f.name)
            continue
        t = f.type
        if not (pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
                or pa.types.is_binary(t) or pa.types.is_integer(t)):  # fmt: skip
            out.append(f.name)
            continue
        # (pc.unique, nulls one value as in count_distinct's mode "all": half its time)
        distinct = len(pc.unique(table.column(f.name).slice(0, n)))
        if distinct * 2 <= n:
            out.append(f.name)
    return out


#: at zstd's default level, a flat column whose first values the codec leaves above this share of
#: their size is stored uncompressed (:func:`column_codecs`)
PLAIN_ABOVE = 0.9
_SAMPLE_ROWS, _SAMPLE_BYTES = 4096, 64 * 1024


def column_codecs(table: pa.Table, name: str, level: int | str | None = None) -> dict[str, Any]:
    """pyarrow's compression settings for writing ``table`` with codec ``name`` at ``level``
    (:func:`parquet_codec`), column by column at our default, zstd at an unset level: zstd's
    fast level does not entropy-code literals, so values without repeats (random hex keys such
    as uuids) come out at ~91% of their size while compressing costs ~60% of their column's
    write. A flat column whose first 4,096 values (at most 64 KB) the codec leaves above
    :data:`PLAIN_ABOVE` of their size is therefore written uncompressed, which every parquet
    reader reads (the codec is a column chunk's own). A level set, another codec, nested columns
    or names with dots (pyarrow's per-column settings take dotted paths) keep one codec for all."""
    opts = parquet_codec(name, level)
    if (level is not None and level != "") or opts["compression"] != "zstd":
        return opts
    if any(pa.types.is_nested(f.type) or "." in f.name for f in table.schema):
        return opts
    codec = pa.Codec("zstd", compression_level=opts["compression_level"])
    plain = [f.name for f in table.schema if _incompressible(table.column(f.name), codec)]
    if not plain:
        return opts
    return {
        "compression": {n: ("none" if n in plain else "zstd") for n in table.column_names},
        "compression_level": {n: opts["compression_level"] for n in table.column_names if n not in plain},
    }


def _incompressible(column: pa.ChunkedArray, codec: pa.Codec) -> bool:
    sample = _sample_bytes(column)
    if sample is None or sample.size < 1024:
        return False
    return codec.compress(sample, asbytes=False).size > PLAIN_ABOVE * sample.size


def _one_length_layout(arr: pa.Array) -> pa.Buffer | None:
    """:func:`_sample_bytes` of strings of one byte length (keys, hex ids, names of one shape):
    each value's 4-byte length and bytes as one row of a matrix, or None for other strings."""
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) or not len(arr):
        return None
    offsets, data = key_buffers(arr)
    length = int(offsets[1] - offsets[0])
    if length == 0 or not (np.diff(offsets) == length).all():
        return None
    rows = min(len(arr), -(-_SAMPLE_BYTES // (4 + length)))
    start = int(offsets[0])
    plain = np.empty((rows, 4 + length), dtype=np.uint8)
    plain[:, :4] = np.frombuffer(np.array([length], "<i4").tobytes(), dtype=np.uint8)
    plain[:, 4:] = np.frombuffer(data, dtype=np.uint8)[start : start + rows * length].reshape(rows, length)
    return pa.py_buffer(plain.reshape(-1)[:_SAMPLE_BYTES])


def _sample_bytes(column: pa.ChunkedArray) -> pa.Buffer | None:
    """The column's first values as parquet's PLAIN encoding lays them out (a string is its 4-byte
    length, then its bytes: fixed-length values compress on their lengths), or None for types
    without such a layout here (booleans, dictionaries, nested)."""
    chunks = [c for c in column.chunks if len(c)]
    if not chunks:
        return None
    arr = chunks[0].slice(0, _SAMPLE_ROWS)
    arr = arr.drop_null() if arr.null_count else arr
    t = arr.type
    if (
        pa.types.is_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_string(t)
        or pa.types.is_large_binary(t)
    ):
        same = _one_length_layout(arr)
        if same is not None:
            return same
        values = arr.cast(pa.large_binary())
        lengths = pc.binary_length(values).cast(pa.int32()).to_numpy(zero_copy_only=False)
        prefixes = pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(4), len(lengths), [None, pa.py_buffer(lengths.astype("<i4").tobytes())]
        ).cast(values.type)
        plain = pc.binary_join_element_wise(prefixes, values, pa.scalar(b"", values.type))
        data = plain.buffers()[2]
        return None if data is None else data.slice(0, min(data.size, _SAMPLE_BYTES))
    if pa.types.is_primitive(t) and not pa.types.is_boolean(t) and t.bit_width % 8 == 0 and len(arr):
        buffer = arr.buffers()[1]
        if buffer is None:
            return None
        size = t.bit_width // 8
        return buffer.slice(arr.offset * size, min(len(arr) * size, _SAMPLE_BYTES))
    return None


def read_base_file(
    storage: Storage,
    path: str,
    columns: list[str] | None = None,
    filters: Any = None,
) -> pa.Table:
    """Read a base file (any parquet Hudi wrote), optionally only ``columns`` and rows
    matching pyarrow ``filters``."""
    return pq.read_table(
        storage.arrow_path(path),
        filesystem=storage.arrow_filesystem(),
        columns=columns,
        filters=filters,
    )


def read_footer(storage: Storage, path: str) -> dict[str, str]:
    """The footer key/value metadata of a base file."""
    with storage.open_read(path) as f:
        kv = pq.ParquetFile(f).metadata.metadata or {}
    return {k.decode("utf-8"): v.decode("utf-8") for k, v in kv.items()}


def key_span(keys: pa.Array) -> tuple[pa.Array, tuple[str, str] | None]:
    """The distinct ``keys`` and, when every one is ASCII, their least and greatest: what
    :func:`footer_may_hold` takes."""
    distinct = pc.unique(keys)
    span = None
    if len(distinct) and distinct.null_count == 0 and pc.all(pc.string_is_ascii(distinct)).as_py():
        least, greatest = pc.min_max(distinct).values()
        span = (least.as_py(), greatest.as_py())
    return distinct, span


def footer_may_hold(
    meta: pq.FileMetaData,
    wanted: pa.Array,
    span: tuple[str, str] | None,
    *,
    probe: Callable[[int, int], bool] | None = None,
) -> bool:
    """False when a base file's footer rules out every key of ``wanted``: its min/max record
    keys, then its bloom filter (``wanted`` and ``span`` as :func:`key_span` gives them). A bloom
    filter never misses a key it holds, so False is certain; a file without these keys may hold
    any. ``probe(filter_chars, keys)`` says whether decoding the filter is worth it (default:
    always)."""
    raw = meta.metadata or {}

    def entry(key: str) -> str | None:  # decoded one at a time: the filter's ~1 MB only if probed
        value = raw.get(key.encode("utf-8"))
        return None if value is None else value.decode("utf-8")

    lo, hi = entry(MIN_KEY), entry(MAX_KEY)
    if lo is not None and hi is not None:
        # byte order equals Java's order except for rare supplementary characters: only prune
        # by range when every key is ASCII
        if span is not None and lo.isascii() and hi.isascii():
            if span[1] < lo or span[0] > hi:
                return False
            if span[0] < lo or span[1] > hi:  # (random keys mostly fall inside: no filter)
                wanted = wanted.filter(pc.and_(pc.greater_equal(wanted, lo), pc.less_equal(wanted, hi)))
                if len(wanted) == 0:
                    return False
    bloom = raw.get(BLOOM_FILTER_KEY.encode("utf-8"))  # base64: its length in bytes is in characters
    if bloom is not None and (probe is None or probe(len(bloom), len(wanted))):
        return bool(might_contain(bloom.decode("utf-8"), entry(BLOOM_TYPE_KEY), wanted).any())
    return True


def read_bloom_filter(storage: Storage, path: str) -> BloomFilter | None:
    """The bloom filter in a base file's footer, or None for files without one."""
    footer = read_footer(storage, path)
    if BLOOM_FILTER_KEY not in footer:
        return None
    return deserialize_bloom_filter(footer[BLOOM_FILTER_KEY], footer.get(BLOOM_TYPE_KEY))
