"""Base files we write: footer keys, physical schema like Hudi's, meta columns, hudi-rs reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core.bloom import build_bloom_filter
from hudi_core.config import HoodieConfig, load_properties
from hudi_core.errors import SchemaMismatchError
from hudi_core.io import (
    add_meta_columns,
    java_min_max,
    read_base_file,
    read_bloom_filter,
    read_footer,
    write_base_file,
)
from hudi_core.keygen import key_generator_for
from hudi_core.schema.avro_schema import META_FIELDS, arrow_to_avro
from hudi_core.storage.local import LocalStorage, MemoryStorage
from hudi_core.testing.corpus import corpus_root

ROOT = corpus_root()
AVRO_PATH_FILE = (
    ROOT / "tables/sample_cow/v6_simplekeygen_nonhivestyle/10/"
    "97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0_0-119-166_20240418172804498.parquet"
    if ROOT is not None
    else None
)
needs_corpus = pytest.mark.skipif(AVRO_PATH_FILE is None or not AVRO_PATH_FILE.exists(), reason="no corpus")


def _leaves(pf: pq.ParquetFile) -> dict[str, tuple[str, str, int, int]]:
    out = {}
    for i in range(len(pf.schema)):
        c = pf.schema.column(i)
        out[c.path] = (c.physical_type, str(c.logical_type), c.max_definition_level, c.max_repetition_level)
    return out


def _rewrite_corpus_file(tmp_path: Path, **kwargs: object) -> tuple[pq.ParquetFile, pq.ParquetFile]:
    assert AVRO_PATH_FILE is not None
    theirs = pq.ParquetFile(AVRO_PATH_FILE)
    table = theirs.read()
    avro = json.loads(theirs.metadata.metadata[b"parquet.avro.schema"])
    out = tmp_path / AVRO_PATH_FILE.name
    write_base_file(LocalStorage(), str(out), table, avro_schema=avro, **kwargs)  # type: ignore[arg-type]
    return theirs, pq.ParquetFile(out)


@needs_corpus
def test_footer_and_physical_schema_match_hudi(tmp_path: Path) -> None:
    theirs, ours = _rewrite_corpus_file(tmp_path)
    assert set(ours.metadata.metadata) == set(theirs.metadata.metadata)
    # same keys -> same bloom filter, min/max, and the same Avro writer schema text
    assert ours.metadata.metadata == theirs.metadata.metadata
    their_leaves, our_leaves = _leaves(theirs), _leaves(ours)
    # parquet-avro writes the legacy 2-level list (repeated group "array"); pyarrow only writes
    # the standard 3-level layout (list/element), which parquet-avro and hudi-rs both read.
    assert {p for p in our_leaves if p.startswith("arrayField.")} == {
        "arrayField.list.element.arr_struct_f1",
        "arrayField.list.element.arr_struct_f2",
    }
    strip = {k: v for k, v in their_leaves.items() if not k.startswith("arrayField.")}
    assert {k: v for k, v in our_leaves.items() if not k.startswith("arrayField.")} == strip
    assert [f.name for f in ours.schema_arrow][:5] == list(META_FIELDS)
    assert ours.metadata.row_group(0).column(0).compression == "GZIP"


@needs_corpus
def test_round_trip_values(tmp_path: Path) -> None:
    theirs, ours = _rewrite_corpus_file(tmp_path, compression="snappy")
    assert ours.metadata.row_group(0).column(0).compression == "SNAPPY"
    a, b = (
        theirs.read().to_pylist(),
        read_base_file(
            LocalStorage(), ours.reader.metadata and str(tmp_path / AVRO_PATH_FILE.name)
        ).to_pylist(),
    )  # type: ignore[union-attr]
    assert a == b


def _sample(n: int = 3) -> tuple[pa.Table, dict]:
    data = pa.table(
        {
            "id": pa.array(range(1, n + 1), pa.int32()),
            "name": [f"n{i}" for i in range(n)],
            "ts": pa.array([1_700_000_000_000_000 + i for i in range(n)], pa.timestamp("us")),
            "tags": pa.array([["a", "b"]] * n, pa.list_(pa.string())),
        }
    )
    return data, arrow_to_avro(data.schema, "t")


def test_add_meta_columns_and_footer_keys() -> None:
    storage = MemoryStorage()
    data, avro = _sample(3)
    keys = pa.array(["k10", "k2", "k1"])
    with_meta = add_meta_columns(
        data,
        commit_time="20240101000000000",
        seqno_prefix="20240101000000000_4",
        record_keys=keys,
        partition_paths="p=1",
        file_name="f1_4-0-1_20240101000000000.parquet",
    )
    assert with_meta.schema.names[:5] == list(META_FIELDS)
    assert with_meta.column("_hoodie_commit_seqno").to_pylist() == [
        "20240101000000000_4_0",
        "20240101000000000_4_1",
        "20240101000000000_4_2",
    ]
    path = "memory://t/p=1/f1_4-0-1_20240101000000000.parquet"
    result = write_base_file(storage, path, with_meta, avro_schema=avro)
    assert (result.num_records, result.min_key, result.max_key) == (3, "k1", "k2")
    footer = read_footer(storage, path)
    assert footer["hoodie_min_record_key"] == "k1" and footer["hoodie_max_record_key"] == "k2"
    assert footer["hoodie_bloom_filter_type_code"] == "DYNAMIC_V0"
    assert footer["writer.model.name"] == "avro"
    assert json.loads(footer["parquet.avro.schema"])["fields"][0]["name"] == "_hoodie_commit_time"
    assert footer["org.apache.hudi.bloomfilter"] == build_bloom_filter(keys).serialize()
    bloom = read_bloom_filter(storage, path)
    assert bloom is not None and bloom.might_contain(["k1", "k2", "k10", "zz"]).tolist() == [
        True,
        True,
        True,
        False,
    ]
    back = read_base_file(storage, path, columns=["_hoodie_record_key", "id"], filters=[("id", ">", 1)])
    assert back.to_pylist() == [{"_hoodie_record_key": "k2", "id": 2}, {"_hoodie_record_key": "k1", "id": 3}]
    # a naive timestamp is Avro's local-timestamp-micros: parquet-avro marks it not adjusted to UTC
    assert read_base_file(storage, path).schema.field("ts").type == pa.timestamp("us")
    with storage.open_read(path) as f:
        parquet_schema = pq.ParquetFile(f).schema
    ts = parquet_schema.column(parquet_schema.names.index("ts")).logical_type
    avro_ts = next(f for f in json.loads(footer["parquet.avro.schema"])["fields"] if f["name"] == "ts")
    assert json.loads(ts.to_json())["isAdjustedToUTC"] is False
    assert avro_ts["type"] == ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]


def test_bloom_config_selects_simple_filter() -> None:
    storage = MemoryStorage()
    data, avro = _sample(2)
    t = add_meta_columns(
        data,
        commit_time="1",
        seqno_prefix="1_0",
        record_keys=pa.array(["a", "b"]),
        partition_paths="",
        file_name="f.parquet",
    )
    write_base_file(
        storage,
        "memory://s/f.parquet",
        t,
        avro_schema=avro,
        bloom_config={"hoodie.bloom.index.filter.type": "SIMPLE"},
    )
    footer = read_footer(storage, "memory://s/f.parquet")
    assert footer["hoodie_bloom_filter_type_code"] == "SIMPLE"
    assert (
        footer["org.apache.hudi.bloomfilter"]
        == build_bloom_filter(["a", "b"], filter_type="SIMPLE").serialize()
    )


def test_without_meta_fields_only_file_name_is_set() -> None:
    storage = MemoryStorage()
    data, avro = _sample(2)
    t = add_meta_columns(
        data,
        commit_time="1",
        seqno_prefix="1_0",
        record_keys=pa.array(["a", "b"]),
        partition_paths="x",
        file_name="f.parquet",
    )
    write_base_file(storage, "memory://n/f.parquet", t, avro_schema=avro, populate_meta_fields=False)
    footer = read_footer(storage, "memory://n/f.parquet")
    assert set(footer) == {"parquet.avro.schema", "writer.model.name"}
    back = read_base_file(storage, "memory://n/f.parquet")
    for name in META_FIELDS[:4]:
        assert back.column(name).null_count == 2
    assert back.column("_hoodie_file_name").to_pylist() == ["f.parquet", "f.parquet"]


def test_meta_columns_must_come_first() -> None:
    data, avro = _sample(1)
    with pytest.raises(SchemaMismatchError, match="meta columns"):
        write_base_file(MemoryStorage(), "memory://x/f.parquet", data, avro_schema=avro)


def test_java_min_max_uses_utf16_order() -> None:
    # U+1F600 is above U+FF5E as a code point (and in UTF-8 bytes), but in UTF-16 it starts with
    # the surrogate 0xD83D, below 0xFF5E: Java's max is U+FF5E
    keys = pa.array(["\uff5e", "\U0001f600", "a"])
    assert pa.compute.max(keys).as_py() == "\U0001f600"
    assert java_min_max(keys) == ("a", "\uff5e")
    assert java_min_max(pa.array(["b", "a", "c"])) == ("a", "c")


@needs_corpus
@pytest.mark.parametrize(
    "table_dir", ["sample_cow/v6_complexkeygen_hivestyle", "trips_mor_avro/v6_trips_8i1u"]
)
def test_keys_we_generate_write_the_same_footer(tmp_path: Path, table_dir: str) -> None:
    """Keys from the key generator + our writer give the footer Hudi wrote (bloom, min/max)."""
    assert ROOT is not None
    table = ROOT / "tables" / table_dir
    config = HoodieConfig(load_properties((table / ".hoodie/hoodie.properties").read_text()))
    kg = key_generator_for(config)
    for f in sorted(table.rglob("*.parquet")):
        theirs = pq.ParquetFile(f)
        raw = theirs.read()
        data = raw.drop_columns(list(META_FIELDS))
        t = add_meta_columns(
            data,
            commit_time=raw.column(0)[0].as_py(),
            seqno_prefix="x_0",
            record_keys=kg.record_keys(data),
            partition_paths=kg.partition_paths(data),
            file_name=f.name,
        )
        avro = json.loads(theirs.metadata.metadata[b"parquet.avro.schema"])
        out = tmp_path / f.name
        write_base_file(LocalStorage(), str(out), t, avro_schema=avro)
        ours = pq.ParquetFile(out).metadata.metadata
        for key in (b"org.apache.hudi.bloomfilter", b"hoodie_min_record_key", b"hoodie_max_record_key"):
            assert ours[key] == theirs.metadata.metadata[key]


def test_each_timestamp_is_stored_in_its_avro_types_unit() -> None:
    """timestamp-millis is written as parquet MILLIS (not coerced to micros under a millis
    schema, which hudi-rs then misreads), timestamp-micros as MICROS."""
    storage = MemoryStorage()
    data = pa.table({
        "id": pa.array([1, 2], pa.int32()),
        "t_ms": pa.array([1_700_000_000_123, -1_000], pa.timestamp("ms", "UTC")),
        "t_us": pa.array([1_700_000_000_123_456, -1], pa.timestamp("us", "UTC")),
    })  # fmt: skip
    avro = arrow_to_avro(data.schema, "t")
    with_meta = add_meta_columns(data, commit_time="20240101000000000", seqno_prefix="20240101000000000_0",
                                 record_keys=pa.array(["a", "b"]), partition_paths="", file_name="f_0-0-0_1.parquet")  # fmt: skip
    path = "memory://t/f_0-0-0_1.parquet"
    write_base_file(storage, path, with_meta, avro_schema=avro)
    with storage.open_read(path) as f:
        schema = pq.ParquetFile(f).schema
    units = {
        n: json.loads(schema.column(schema.names.index(n)).logical_type.to_json())["timeUnit"]
        for n in ("t_ms", "t_us")
    }
    assert units == {"t_ms": "milliseconds", "t_us": "microseconds"}
    back = read_base_file(storage, path, columns=["t_ms", "t_us"])
    assert back.column("t_ms").to_pylist() == data.column("t_ms").to_pylist()
    assert back.column("t_us").to_pylist() == data.column("t_us").to_pylist()
