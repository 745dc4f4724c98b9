"""The merged rows' hand-over to the JVM (meta columns as codes) gives back every value: those in
the driver's lists, those outside them (an archived instant, another writer's file name), nulls,
and record keys that are not the key field's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

SCHEMA = pa.schema([(name, pa.string()) for name in (
    "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
    "_hoodie_file_name", "key", "part")] + [("v", pa.float64())])  # fmt: skip


def test_values_in_and_out_of_the_lists_come_back_as_they_were(spark: Any) -> None:
    from hudi_spark.compat import spark_schema, to_arrow
    from hudi_spark.handover import Handover

    handover = Handover(
        SCHEMA,
        {"_hoodie_commit_time": ("001", "002"), "_hoodie_partition_path": ("a",),
         "_hoodie_file_name": ("f1", "f1_0-1-2_001.parquet")},
        key_field="key",
    )  # fmt: skip
    rows = pa.table({
        "_hoodie_commit_time": ["001", "002", "000", None, "002"],  # "000": archived, not in the list
        "_hoodie_commit_seqno": ["001_0_1", "002_0_1", "000_0_1", None, "002_0_2"],
        "_hoodie_record_key": ["k1", "part:k2", "k3", None, "k5"],  # one not the key's text, one null
        "_hoodie_partition_path": ["a", "a", "b'\\x", "a", None],
        "_hoodie_file_name": ["f1_0-1-2_001.parquet", "f1", "other.parquet", "f1", "f1"],
        "key": ["k1", "k2", "k3", "k4", "k5"],
        "part": ["a", "a", "b", "a", None],
        "v": [1.0, 2.0, None, 4.0, 5.0],
    }, schema=SCHEMA)  # fmt: skip
    wire = handover.encode(rows.to_batches()[0])
    assert wire.schema == handover.wire_schema()
    # the four meta columns cross as codes; only the two rows with a value outside the lists carry it
    assert [f.name for f in wire.schema if f.name in rows.column_names] == ["_hoodie_commit_seqno", "key", "part", "v"]
    assert wire.column("__hudi_spark_overflow").null_count == 3
    frame = spark.range(0, 1, 1, 1).mapInArrow(  # one task hands the batch over
        lambda _: iter([wire]), spark_schema(handover.wire_schema())
    )
    back = to_arrow(handover.decode(frame))
    assert back.schema == spark_schema_as_arrow(SCHEMA)
    assert back.to_pylist() == rows.to_pylist()


def spark_schema_as_arrow(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def test_a_merged_read_hands_over_codes_and_answers_as_core(spark: Any, tmp_path: Path) -> None:
    import hudi_spark
    from hudi_spark.compat import to_arrow
    from hudi_spark.handover import handover_for
    from hudi_spark.reading import ReadSpec, plan, read_schema

    path = str(tmp_path / "t")
    table = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                             partition_fields="part", ordering_field="ts")  # fmt: skip
    keys = [f"k{i:03d}" for i in range(200)]
    rows = pa.table({"key": keys, "ts": pa.array([1] * 200, pa.int64()), "part": ["a", "b"] * 100})
    table.bulk_insert(rows)
    HudiTable.open(path).upsert(pa.table({"key": keys[:50], "ts": pa.array([2] * 50, pa.int64()),
                                          "part": ["a", "b"] * 25}))  # fmt: skip
    spec = ReadSpec.from_options({"path": path})
    schema = read_schema(spec)
    splits = plan(spec, schema.names)
    assert any(s.log_files for s in splits)
    handover = handover_for(HudiTable.open(path), splits, schema)
    assert handover is not None
    assert handover.encoded == ["_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path",
                                "_hoodie_file_name"]  # fmt: skip
    ours = to_arrow(hudi_spark.read(spark, path, {}))
    core = HudiTable.open(path).read()
    assert ours.sort_by("key").to_pylist() == core.select(ours.column_names).sort_by("key").to_pylist()
    assert sorted(ours.column("ts").to_pylist()) == [1] * 150 + [2] * 50
