"""``hoodie.parquet.compression.level``: unset, zstd files are written at zstd's fast level -1,
columns it barely shrinks uncompressed (gzip at zlib's 6); a level set reaches every column of
every parquet file a write makes, and a level the codec does not take is refused before anything
is written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ConfigError
from hudi_core.io.base_file import column_codecs, parquet_codec

DATA = ["uuid", "payload"]


def _rows(n: int) -> pa.Table:
    return pa.table({
        "uuid": [f"{i * 2654435761 % 2**32:08x}-{i:06d}" for i in range(n)],
        "ts": list(range(n)),
        "payload": [f"{i * 40503 % 65536:04x}" * 4 for i in range(n)],
        "city": ["sf"] * n,
    })  # fmt: skip


def _random_rows(n: int) -> pa.Table:
    """uuid-like random hex keys and random doubles (nothing zstd's fast level can shrink), a
    repetitive string and an ordering field."""
    rng = np.random.default_rng(7)
    hexes = rng.integers(0, 16, (n, 32)).astype(np.uint8)
    chars = np.where(hexes < 10, hexes + ord("0"), hexes - 10 + ord("a")).astype(np.uint8)
    keys = [bytes(row).decode() for row in chars]
    return pa.table({"uuid": keys, "ts": np.arange(n, dtype=np.int64), "fare": rng.random(n),
                     "note": [f"trip-{i % 7}" for i in range(n)], "city": ["sf"] * n})  # fmt: skip


def _codecs(tmp_path: Path, name: str, data: pa.Table, **options: str) -> dict[str, set[str]]:
    """Each column's codecs in the one base file an insert of ``data`` writes (and the read-back
    rows equal ``data``)."""
    table = HudiTable.create(str(tmp_path / name), name=name, table_type="COPY_ON_WRITE", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=options)  # fmt: skip
    table.insert(data, options=options)
    (path,) = (tmp_path / name / "sf").glob("*.parquet")
    meta = pq.ParquetFile(path).metadata
    back = HudiTable.open(table.base_uri).read(columns=data.column_names).sort_by("ts")
    assert back.equals(data.select(back.column_names))
    out: dict[str, set[str]] = {}
    for rg in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            col = meta.row_group(rg).column(c)
            out.setdefault(col.path_in_schema, set()).add(col.compression)
    return out


def _data_bytes(tmp_path: Path, name: str, **options: str) -> dict[str, int]:
    """Compressed bytes of the data columns of the one base file an insert of the same rows writes."""
    table = HudiTable.create(str(tmp_path / name), name=name, table_type="COPY_ON_WRITE", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=options)  # fmt: skip
    table.insert(_rows(20_000), options=options)
    (path,) = (tmp_path / name / "sf").glob("*.parquet")
    meta = pq.ParquetFile(path).metadata
    assert HudiTable.open(table.base_uri).read(columns=["uuid"]).num_rows == 20_000
    out = {}
    for rg in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            col = meta.row_group(rg).column(c)
            if col.path_in_schema in DATA:
                assert col.compression == options.get("hoodie.parquet.compression.codec", "zstd").upper()
                out[col.path_in_schema] = out.get(col.path_in_schema, 0) + col.total_compressed_size
    return out


def test_zstd_files_are_written_at_the_fast_level_unless_a_level_is_set(tmp_path: Path) -> None:
    default = _data_bytes(tmp_path, "default")  # (these columns repeat: zstd shrinks them)
    assert default == _data_bytes(tmp_path, "fast", **{"hoodie.parquet.compression.level": "-1"})
    smaller = _data_bytes(tmp_path, "level3", **{"hoodie.parquet.compression.level": "3"})
    assert all(smaller[c] < default[c] for c in DATA), (smaller, default)


def test_at_the_default_level_columns_zstd_cannot_shrink_are_stored_uncompressed(tmp_path: Path) -> None:
    data = _random_rows(20_000)
    default = _codecs(tmp_path, "default", data)
    # random hex keys (and the record key column, a copy of them) and random doubles: plain
    assert default["uuid"] == default["_hoodie_record_key"] == default["fare"] == {"UNCOMPRESSED"}
    # the sequence numbers, event times and repeated strings keep the codec
    assert default["_hoodie_commit_seqno"] == default["ts"] == default["note"] == {"ZSTD"}
    # a level set (even the default's) or another codec: that codec for every column
    for name, options in [("fast", {"hoodie.parquet.compression.level": "-1"}),
                          ("snappy", {"hoodie.parquet.compression.codec": "snappy"})]:  # fmt: skip
        codec = options.get("hoodie.parquet.compression.codec", "zstd").upper()
        assert set().union(*_codecs(tmp_path, name, data, **options).values()) == {codec}


def test_the_codec_choice_needs_flat_columns_with_plain_names() -> None:
    keys = _random_rows(5000).select(["uuid", "fare"])
    assert column_codecs(keys, "zstd")["compression"] == {"uuid": "none", "fare": "none"}
    nested = keys.append_column("tags", pa.array([[1, 2]] * keys.num_rows))
    dotted = keys.rename_columns(["trip.uuid", "fare"])
    for table in (nested, dotted):
        assert column_codecs(table, "zstd") == {"compression": "zstd", "compression_level": -1}


def test_gzip_files_are_written_at_zlibs_default_unless_a_level_is_set(tmp_path: Path) -> None:
    gzip = {"hoodie.parquet.compression.codec": "gzip"}
    default = _data_bytes(tmp_path, "default", **gzip)
    assert default == _data_bytes(tmp_path, "six", **gzip, **{"hoodie.parquet.compression.level": "6"})
    assert default != _data_bytes(tmp_path, "one", **gzip, **{"hoodie.parquet.compression.level": "1"})


@pytest.mark.parametrize(
    ("codec", "level", "expected"),
    [
        ("zstd", None, {"compression": "zstd", "compression_level": -1}),
        ("ZSTD", "19", {"compression": "zstd", "compression_level": 19}),
        ("gzip", None, {"compression": "gzip", "compression_level": 6}),
        ("snappy", None, {"compression": "snappy"}),
        ("uncompressed", None, {"compression": "none"}),
        ("brotli", 4, {"compression": "brotli", "compression_level": 4}),
    ],
)
def test_a_codec_and_level_become_pyarrows_settings(
    codec: str, level: object, expected: dict[str, object]
) -> None:
    assert parquet_codec(codec, level) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("codec", "level"), [("snappy", "1"), ("gzip", "10"), ("zstd", "23"), ("zstd", "1.5")]
)
def test_a_level_the_codec_does_not_take_is_refused_before_the_write(
    tmp_path: Path, codec: str, level: str
) -> None:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts")  # fmt: skip
    options = {"hoodie.parquet.compression.codec": codec, "hoodie.parquet.compression.level": level}
    with pytest.raises(ConfigError, match=r"hoodie\.parquet\.compression\.level"):
        table.insert(_rows(10), options=options)
    assert not (tmp_path / "t" / "sf").exists()


@pytest.mark.parametrize(
    "values",
    [
        [f"{i:08x}-aaaa-bbbb-cccc-{i * 7:012x}" for i in range(6000)],  # one length, past the byte cap
        [f"rider-{i % 9}" for i in range(300)],  # one length, fewer rows than the cap
        [None, "ab", "ab", None, "cd"] * 40,  # one length with nulls
        [f"k{i}" * (i % 5) for i in range(5000)],  # lengths 0 to 20
        ["é" * 3, "x"] * 100 + ["y" * 70_000],  # multi-byte, a value past the byte cap
    ],
)
def test_the_codecs_sample_is_the_columns_plain_encoding(values: list[str | None]) -> None:
    import struct

    from hudi_core.io.base_file import _sample_bytes

    kept = [v.encode() for v in values[:4096] if v is not None]
    plain = b"".join(struct.pack("<i", len(v)) + v for v in kept)[: 64 * 1024]
    column = pa.chunked_array([pa.array(["skipped", *values]).slice(1)])  # offsets from 1
    sample = _sample_bytes(column)
    assert sample is not None and sample.to_pybytes() == plain
