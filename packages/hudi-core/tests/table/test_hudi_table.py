from __future__ import annotations

import zlib
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import ConfigError, HudiTable, TableNotFoundError, UnsupportedTableVersionError
from hudi_core.config.properties import load_properties
from hudi_core.testing.corpus import corpus_root

SCHEMA = pa.schema([("ts", pa.int64()), ("uuid", pa.string()), ("rider", pa.string()),
                    ("fare", pa.float64()), ("city", pa.string())])  # fmt: skip


def test_create_writes_properties_like_hudi_and_the_skeleton(tmp_path: Path) -> None:
    t = HudiTable.create(str(tmp_path / "trips"), name="trips", table_type="MERGE_ON_READ",
                         record_key_fields="uuid", partition_fields="city", ordering_field="ts",
                         schema=SCHEMA, options={"hoodie.database.name": "default",
                                                 "hoodie.datasource.write.hive_style_partitioning": "true"})  # fmt: skip
    props_file = tmp_path / "trips/.hoodie/hoodie.properties"
    text = props_file.read_text("latin-1")
    assert text.startswith("#Properties saved on ")
    props = load_properties(text)
    assert props["hoodie.table.checksum"] == str(zlib.crc32(b"default.trips"))
    assert props["hoodie.table.type"] == "MERGE_ON_READ"
    assert props["hoodie.table.version"] == "6"
    assert props["hoodie.timeline.layout.version"] == "1"
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert "hoodie.populate.meta.fields" not in props
    # The create schema uses Spark's [T, "null"] unions and Properties escaping of ':'
    assert '"type"\\:["long","null"]' in text
    for sub in (".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids", ".schema", "archived"):
        assert (tmp_path / "trips/.hoodie" / sub).is_dir()
    assert t.schema() == pa.schema([f.with_nullable(True) for f in SCHEMA])
    # the same keys as a Hudi-written MOR table (minus those only Spark SQL sets)
    root = corpus_root()
    assert root is not None
    theirs = load_properties(
        (root / "tables/trips_mor_avro/v6_trips_8i1u/.hoodie/hoodie.properties").read_text()
    )
    assert set(theirs) <= set(props)


def test_create_twice_is_refused(tmp_path: Path) -> None:
    HudiTable.create(str(tmp_path), name="t", record_key_fields="id")
    with pytest.raises(ConfigError, match="already exists"):
        HudiTable.create(str(tmp_path), name="t", record_key_fields="id")


def test_bad_create_arguments_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="table_type"):
        HudiTable.create(str(tmp_path), name="t", table_type="MERGE", record_key_fields="id")
    with pytest.raises(ConfigError, match="not in the schema"):
        HudiTable.create(str(tmp_path), name="t", record_key_fields="nope", schema=SCHEMA)


def test_open_reads_back_what_create_wrote(tmp_path: Path) -> None:
    HudiTable.create(str(tmp_path), name="t", table_type="cow", record_key_fields=["id", "name"],
                     partition_fields=["a", "b"])  # fmt: skip
    t = HudiTable.open(f"file://{tmp_path}")
    assert (t.name, t.table_type) == ("t", "COPY_ON_WRITE")
    assert t.config.record_key_fields == ["id", "name"]
    assert t.config.partition_fields == ["a", "b"]
    assert t.config.keygen_class == "org.apache.hudi.keygen.ComplexKeyGenerator"
    assert list(t.timeline) == []


def test_missing_table_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match="no Hudi table"):
        HudiTable.open(str(tmp_path / "nothing"))


def test_corrupt_properties_fall_back_to_the_backup_then_fail_clearly(tmp_path: Path) -> None:
    HudiTable.create(str(tmp_path), name="t", record_key_fields="id")
    props = tmp_path / ".hoodie/hoodie.properties"
    good = props.read_bytes()
    props.write_bytes(
        good.replace(b"hoodie.table.name=t", b"hoodie.table.name=x")
    )  # checksum no longer matches
    with pytest.raises(ConfigError, match="checksum"):
        HudiTable.open(str(tmp_path))
    (tmp_path / ".hoodie/hoodie.properties.backup").write_bytes(good)
    assert HudiTable.open(str(tmp_path)).name == "t"
    (tmp_path / ".hoodie/hoodie.properties.backup").unlink()
    props.write_bytes(b"\x00garbage")
    with pytest.raises(ConfigError, match="required key"):
        HudiTable.open(str(tmp_path))


def test_update_rewrites_with_a_new_checksum(tmp_path: Path) -> None:
    t = HudiTable.create(str(tmp_path), name="t", record_key_fields="id")
    t.config = t.config.update(t.storage, {"hoodie.database.name": "db"})
    reopened = HudiTable.open(str(tmp_path))
    assert reopened.config["hoodie.table.checksum"] == str(zlib.crc32(b"db.t"))
    assert not (tmp_path / ".hoodie/hoodie.properties.backup").exists()


def test_version_8_tables_fail_clearly() -> None:
    root = corpus_root()
    assert root is not None
    with pytest.raises(UnsupportedTableVersionError, match="table version 8 is not supported yet"):
        HudiTable.open(str(root / "tables/stretch_v8_sample_cow/v8_nonpartitioned"))


def test_a_created_table_opens_in_hudi_rs_with_the_same_name_type_and_schema(tmp_path: Path) -> None:
    import hudi

    HudiTable.create(str(tmp_path), name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                     partition_fields="city", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    rs = hudi.HudiTableBuilder.from_base_uri(str(tmp_path)).build()
    opts = rs.hudi_options()
    assert opts["hoodie.table.name"] == "trips"
    assert opts["hoodie.table.type"] == "MERGE_ON_READ"
    rs_schema = rs.get_schema()
    data_fields = [f for f in rs_schema if not f.name.startswith("_hoodie_")]
    assert [(f.name, f.type) for f in data_fields] == [(f.name, f.type) for f in SCHEMA]
    assert rs.table_name == "trips" and rs.is_mor


def test_commit_metadata_of_a_time_that_a_clean_shares_is_the_writes(tmp_path: Path) -> None:
    """Writers pick instant times apart (Apache Hudi's and ours beside it under OCC), so a clean can
    carry a write's time: the commit's metadata is the write's, not the clean's Avro."""
    path = str(tmp_path / "t")
    opts = {"hoodie.cleaner.commits.retained": "1"}
    table = HudiTable.create(path, name="t", table_type="COPY_ON_WRITE", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=opts)  # fmt: skip
    rows = pa.table({"ts": pa.array([1, 2], pa.int64()), "uuid": ["a", "b"], "rider": ["r", "s"],
                     "fare": [1.0, 2.0], "city": ["x", "x"]}, schema=SCHEMA)  # fmt: skip
    for ts in (1, 2, 3):
        HudiTable.open(path).upsert(rows.set_column(0, "ts", pa.array([ts, ts], pa.int64())), options=opts)
    meta = Path(path) / ".hoodie"
    (clean,) = [p.name.split(".")[0] for p in meta.iterdir() if p.name.endswith(".clean")]
    write = HudiTable.open(path).timeline.completed_commits().last()
    assert write is not None
    for p in list(meta.iterdir()):  # the clean's files, moved to the write's time
        if p.name.startswith(f"{clean}.clean"):
            p.rename(meta / p.name.replace(clean, write.timestamp))
    table = HudiTable.open(path)
    same_time = [i.action for i in table.timeline.completed() if i.timestamp == write.timestamp]
    assert same_time == ["clean", "commit"]
    got = table.commit_metadata(write.timestamp)
    assert got.operation_type == "UPSERT"
    assert sum(s.num_update_writes for s in got.all_write_stats()) == 2
    assert sorted(table.read().column("uuid").to_pylist()) == ["a", "b"]
