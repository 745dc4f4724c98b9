"""What a Hudi Spark user expects around a write, beyond its rows: the operation option, table
services after the commit, option conflicts, the key generator a new table gets, a rejected
first write, delete_partition, ``df.write.format("hudi")`` as ``hudi_spark.write`` (a driver
that imported hudi_spark) under Hudi's save modes, and what the Python data source's writer refuses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.client.write_client import WriteClient
from hudi_core.errors import ConfigError, SchemaMismatchError

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

OPTS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
}
#: df.write.format("hudi") through PySpark's Python data source rather than as hudi_spark.write
DATA_SOURCE = {"hoodie.spark.write.format.pipeline": "false"}


def _batch(i: int, keys: tuple[str, ...] = ("a", "b")) -> pa.Table:
    n = len(keys)
    return pa.table({"uuid": list(keys), "ts": [i] * n, "city": ["sf"] * n, "v": [float(i)] * n})


def _completed(path: str) -> list[str]:
    return [i.action for i in HudiTable.open(path).timeline.completed()]


def _rows(path: str) -> list[tuple[Any, ...]]:
    data = HudiTable.open(path).read(columns=["uuid", "v"]).to_pydict()
    return sorted(zip(data["uuid"], data["v"], strict=True))


def _local(path: str, data: pa.Table, op: str, opts: dict[str, str]) -> None:
    if not HudiTable.exists(path):
        HudiTable.create(path, name="trips", table_type=opts.get("hoodie.datasource.write.table.type", "COPY_ON_WRITE"),
                         record_key_fields="uuid", partition_fields="city", ordering_field="ts", options=opts)  # fmt: skip
    WriteClient(HudiTable.open(path), opts).write(data, operation=op)


@pytest.mark.parametrize(
    ("table_type", "services"),
    [
        # inline compaction every 2 deltacommits (run as a Spark job)
        ("MERGE_ON_READ", {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}),
        # the automatic clean, keeping 2 commits
        ("COPY_ON_WRITE", {"hoodie.cleaner.commits.retained": "2"}),
    ],
)
def test_table_services_run_after_the_commit_as_on_the_local_engine(
    spark: Any, tmp_path: Path, table_type: str, services: dict[str, str]
) -> None:
    import hudi_spark

    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type, **services}
    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    for i in range(5):
        _local(local, _batch(i), "upsert", opts)
        hudi_spark.write(spark.createDataFrame(_batch(i)), remote, operation="upsert", options=opts)
    assert _completed(remote) == _completed(local)
    expected = ["commit", "commit", "commit", "commit", "clean", "commit", "clean"]
    if table_type == "MERGE_ON_READ":
        expected = ["deltacommit", "deltacommit", "compaction"] * 2 + ["deltacommit"]  # (a .commit file)
    assert _completed(remote) == expected
    files = lambda p: sorted(n for n in os.listdir(f"{p}/sf") if not n.startswith(".hoodie_partition"))  # noqa: E731
    assert len(files(remote)) == len(files(local))
    assert _rows(remote) == _rows(local) == [("a", 4.0), ("b", 4.0)]


def test_the_operation_option_is_the_operation(spark: Any, tmp_path: Path) -> None:
    import hudi_spark

    path = str(tmp_path / "t")
    hudi_spark.write(spark.createDataFrame(_batch(1)), path, options=OPTS)  # upsert by default
    deletes = {**OPTS, "hoodie.datasource.write.operation": "delete"}
    res = hudi_spark.write(spark.createDataFrame(_batch(2, ("a",))), path, options=deletes)
    assert res.operation == "delete"
    assert _rows(path) == [("b", 1.0)]
    with pytest.raises(ConfigError, match=r"contradicts hoodie\.datasource\.write\.operation='delete'"):
        hudi_spark.write(spark.createDataFrame(_batch(3)), path, operation="upsert", options=deletes)
    assert _rows(path) == [("b", 1.0)]


@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET"])
def test_an_insert_keeps_the_records_of_the_file_it_reaches_as_the_local_engine(
    spark: Any, tmp_path: Path, index: str
) -> None:
    """An insert of keys the table holds: the file it reaches (the small file, BUCKET's group)
    keeps its records beside the new ones (hoodie.merge.allow.duplicate.on.inserts, true for
    insert); with the option false it merges them by key. The same rows as the local engine's."""
    import hudi_spark

    for allow in ("true", "false"):
        opts = {**OPTS, "hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "1",
                "hoodie.merge.allow.duplicate.on.inserts": allow}  # fmt: skip
        second = pa.table(
            {"uuid": ["a", "c", "c"], "ts": [2, 2, 3], "city": ["sf"] * 3, "v": [2.0, 3.0, 4.0]}
        )
        ours, local = str(tmp_path / f"spark-{allow}"), str(tmp_path / f"local-{allow}")
        hudi_spark.write(spark.createDataFrame(_batch(1)), ours, operation="insert", options=opts)
        hudi_spark.write(spark.createDataFrame(second), ours, operation="insert", options=opts)
        _local(local, _batch(1), "insert", opts)
        _local(local, second, "insert", opts)
        expected = [("a", 1.0), ("a", 2.0), ("b", 1.0), ("c", 3.0), ("c", 4.0)] if allow == "true" else [
            ("a", 2.0), ("b", 1.0), ("c", 4.0)]  # fmt: skip
        assert _rows(ours) == _rows(local) == expected


@pytest.mark.parametrize("operation", ["insert", "upsert"])
def test_drop_duplicates_drops_stored_keys_as_the_local_engine(
    spark: Any, tmp_path: Path, operation: str
) -> None:
    """hoodie.datasource.write.insert.drop.duplicates: the stored a is dropped, c's two copies
    deduplicated by ts; bulk_insert refuses the option before anything is written."""
    import hudi_spark

    opts = {**OPTS, "hoodie.datasource.write.insert.drop.duplicates": "true"}
    second = pa.table({"uuid": ["a", "c", "c"], "ts": [2, 3, 2], "city": ["sf"] * 3, "v": [2.0, 3.0, 4.0]})
    ours, local = str(tmp_path / "spark"), str(tmp_path / "local")
    hudi_spark.write(spark.createDataFrame(_batch(1)), ours, operation="insert", options=opts)
    hudi_spark.write(spark.createDataFrame(second), ours, operation=operation, options=opts)
    _local(local, _batch(1), "insert", opts)
    _local(local, second, operation, opts)
    assert _rows(ours) == _rows(local) == [("a", 1.0), ("b", 1.0), ("c", 3.0)]
    with pytest.raises(ConfigError, match="bulk_insert"):
        hudi_spark.write(spark.createDataFrame(second), ours, operation="bulk_insert", options=opts)
    assert _rows(ours) == [("a", 1.0), ("b", 1.0), ("c", 3.0)]


def test_an_upsert_with_a_null_ordering_value_is_refused(spark: Any, tmp_path: Path) -> None:
    import hudi_spark
    from hudi_core.errors import InvalidRecordError

    path = str(tmp_path / "t")
    hudi_spark.write(spark.createDataFrame(_batch(1)), path, options=OPTS)
    bad = pa.table({"uuid": ["a"], "ts": pa.array([None], pa.int64()), "city": ["sf"], "v": [5.0]})
    with pytest.raises(InvalidRecordError, match=r"ordering field 'ts' is null .*record key 'a'"):
        hudi_spark.write(spark.createDataFrame(bad), path, options=OPTS)
    assert _rows(path) == [("a", 1.0), ("b", 1.0)]


def test_a_write_under_another_table_name_is_refused(spark: Any, tmp_path: Path) -> None:
    import hudi_spark

    path = str(tmp_path / "t")
    hudi_spark.write(spark.createDataFrame(_batch(1)), path, operation="upsert", options=OPTS)
    with pytest.raises(ConfigError, match="a Hudi table named 'trips' already exists"):
        hudi_spark.write(spark.createDataFrame(_batch(2)), path, operation="upsert",
                         options={**OPTS, "hoodie.table.name": "other"})  # fmt: skip
    assert _completed(path) == ["commit"]


def test_a_rejected_first_write_leaves_no_table_behind(spark: Any, tmp_path: Path) -> None:
    """The options of a write that failed do not stick to the path: the corrected retry
    creates the table from its own options."""
    import hudi_spark

    path = str(tmp_path / "t")
    df = spark.createDataFrame(_batch(1))
    with pytest.raises(SchemaMismatchError, match="tss"):
        hudi_spark.write(
            df, path, operation="upsert", options={**OPTS, "hoodie.datasource.write.precombine.field": "tss"}
        )
    assert not HudiTable.exists(path)
    hudi_spark.write(df, path, operation="upsert", options=OPTS)
    assert HudiTable.open(path).config.ordering_field == "ts"
    assert _rows(path) == [("a", 1.0), ("b", 1.0)]


def test_a_new_table_partitioned_by_a_date_gets_the_simple_key_generator(spark: Any, tmp_path: Path) -> None:
    """As Hudi's Spark datasource infers it: the partition path is the date's text, as core
    writes it, not Flink's TimestampBased yyyyMMdd."""
    import datetime

    import hudi_spark

    path = str(tmp_path / "t")
    data = pa.table({"uuid": ["a"], "ts": [1], "day": [datetime.date(2024, 1, 5)]})
    opts = {**OPTS, "hoodie.datasource.write.partitionpath.field": "day"}
    hudi_spark.write(spark.createDataFrame(data), path, operation="upsert", options=opts)
    table = HudiTable.open(path)
    assert (
        table.config.to_dict()["hoodie.table.keygenerator.class"]
        == "org.apache.hudi.keygen.SimpleKeyGenerator"
    )
    assert sorted(p.name for p in Path(path).iterdir() if not p.name.startswith(".")) == ["2024-01-05"]


@pytest.mark.parametrize("pipeline", [True, False])
def test_a_table_without_record_keys_gets_keys_made_up_per_task(
    spark: Any, tmp_path: Path, pipeline: bool
) -> None:
    """No record key field: Hudi's datasource bulk-inserts when no operation is given, and each
    task numbers its rows under the write's instant (``<instant>_<task>_<row>``); rows read back
    keep their keys, so a delete of them finds them."""
    import hudi_spark

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "logs", "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", **({} if pipeline else DATA_SOURCE)}  # fmt: skip
    rows = pa.table({"city": ["sf", "la"] * 6, "v": list(range(12))})
    df = spark.createDataFrame(rows).repartition(3)
    df.write.format("hudi").options(**opts).mode("append").save(path)
    hudi_spark.write(df, path, operation="insert" if pipeline else "bulk_insert", options=opts)
    table = HudiTable.open(path)
    commits = [i.timestamp for i in table.timeline.completed_commits()]
    assert [i.action for i in table.timeline.completed_commits()] == ["deltacommit", "deltacommit"]
    assert "recordkey" not in (Path(path) / ".hoodie/hoodie.properties").read_text()
    stored = table.read().to_pylist()
    keys = [r["_hoodie_record_key"] for r in stored]
    assert len(keys) == len(set(keys)) == 24 and sorted(r["v"] for r in stored) == sorted(list(range(12)) * 2)
    made = [k.split("_") for k in keys]
    assert {c for c, _, _ in made} == set(commits) and len({(c, task) for c, task, _ in made}) == 6
    gone = hudi_spark.read(spark, path).filter("v < 3")
    hudi_spark.write(gone, path, operation="delete", options=opts)
    assert sorted(r["v"] for r in HudiTable.open(path).read().to_pylist()) == sorted(list(range(3, 12)) * 2)


def test_delete_partition_by_option_and_by_rows(spark: Any, tmp_path: Path) -> None:
    import hudi_spark

    path = str(tmp_path / "t")
    data = pa.table(
        {"uuid": list("abcde"), "ts": [1] * 5, "city": ["sf", "la", "nyc", "ny1", "sp"], "v": [1.0] * 5}
    )
    hudi_spark.write(spark.createDataFrame(data), path, operation="upsert", options=OPTS)
    by_option = {**OPTS, "hoodie.datasource.write.partitions.to.delete": "sf,ny*"}
    res = hudi_spark.write(
        spark.createDataFrame(data.slice(0, 0)), path, operation="delete_partition", options=by_option
    )
    assert res.instant is not None
    assert sorted(HudiTable.open(path).read(columns=["city"]).column("city").to_pylist()) == ["la", "sp"]
    hudi_spark.write(
        spark.createDataFrame(data.slice(1, 1)), path, operation="delete_partition", options=OPTS
    )
    assert HudiTable.open(path).read(columns=["city"]).column("city").to_pylist() == ["sp"]
    assert _completed(path) == ["commit", "replacecommit", "replacecommit"]


def test_dataframe_writer_refuses_what_it_cannot_write_without_a_shuffle(spark: Any, tmp_path: Path) -> None:
    """The Python data source's writer (each task writes its own rows)."""
    path = str(tmp_path / "t")

    def save(options: dict[str, str], data: pa.Table | None = None) -> None:
        df = spark.createDataFrame(_batch(1) if data is None else data)
        df.write.format("hudi").options(**options, **DATA_SOURCE).mode("append").save(path)

    with pytest.raises(Exception, match=r"operation 'upsert' \(Hudi's default"):  # not a silent bulk_insert
        save(OPTS)
    insert = {**OPTS, "hoodie.datasource.write.operation": "insert"}
    with pytest.raises(Exception, match="BUCKET index"):
        save({**insert, "hoodie.index.type": "BUCKET"})
    assert not HudiTable.exists(path)  # the refused first write created nothing
    with pytest.raises(Exception, match="no column"):  # the precombine field is required
        save(insert, _batch(1).drop_columns(["ts"]))
    save(insert)
    with pytest.raises(Exception, match="small files"):  # Hudi would pack these into the first file
        save(insert)
    with pytest.raises(Exception, match=r"conflicts with the table's hoodie\.table\.recordkey\.fields"):
        save(
            {**insert, "hoodie.datasource.write.recordkey.field": "v", "hoodie.parquet.small.file.limit": "0"}
        )
    drop = {
        **insert,
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.datasource.write.insert.drop.duplicates": "true",
    }
    with pytest.raises(Exception, match=r"insert\.drop\.duplicates"):  # a look-up of the stored keys
        save(drop)
    save({**insert, "hoodie.parquet.small.file.limit": "0"})  # new file groups only: duplicates, as in Hudi
    assert _rows(path) == [("a", 1.0), ("a", 1.0), ("b", 1.0), ("b", 1.0)]
    assert _completed(path) == ["commit", "commit"]


@pytest.mark.parametrize("pipeline", [True, False], ids=["as_write", "data_source"])
def test_dataframe_writer_modes_as_hudi(spark: Any, tmp_path: Path, pipeline: bool) -> None:
    """mode("overwrite") deletes the table and writes it anew (Hudi's SaveMode.Overwrite), the same
    as hudi_spark.write and through the data source; an upsert (Hudi's default operation) runs
    as hudi_spark.write, where the data source refuses it in one line naming that call."""
    import ast

    path = str(tmp_path / "t")
    way = {} if pipeline else DATA_SOURCE
    bulk = {**OPTS, "hoodie.datasource.write.operation": "bulk_insert", **way}
    spark.createDataFrame(_batch(1)).write.format("hudi").options(**bulk).mode("append").save(path)
    spark.createDataFrame(_batch(2, ("c",))).write.format("hudi").options(**bulk).mode("append").save(path)
    assert _rows(path) == [("a", 1.0), ("b", 1.0), ("c", 2.0)] and _completed(path) == ["commit", "commit"]
    spark.createDataFrame(_batch(3, ("x",))).write.format("hudi").options(**bulk).mode("overwrite").save(path)
    assert _rows(path) == [("x", 3.0)] and _completed(path) == ["commit"]
    with pytest.raises(Exception, match=r"mode\('append'\) is the only save mode for operation 'delete'"):
        spark.createDataFrame(_batch(4, ("x",))).write.format("hudi").options(
            **{**OPTS, "hoodie.datasource.write.operation": "delete", **way}
        ).mode("overwrite").save(path)
    upsert = spark.createDataFrame(_batch(4, ("x", "y"))).write.format("hudi").options(**OPTS, **way)
    if pipeline:
        upsert.mode("append").save(path)
        assert _rows(path) == [("x", 4.0), ("y", 4.0)] and _completed(path) == ["commit", "commit"]
        return
    with pytest.raises(Exception) as refused:
        upsert.mode("append").save(path)
    line = next(x for x in str(refused.value).splitlines() if "hudi_spark.write(" in x)
    assert "operation 'upsert' (Hudi's default)" in line
    call = line[line.index("hudi_spark.write(") : line.index(": in a driver")]
    node = ast.parse(call.strip()).body[0].value  # type: ignore[attr-defined]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    assert ast.literal_eval(node.args[1]) == path and kwargs == {
        "operation": "upsert",
        "options": {**OPTS, **way},
    }
    assert _rows(path) == [("x", 3.0)]  # nothing written by the refused writes


def test_dataframe_writer_runs_every_operation_and_save_mode_as_hudi(spark: Any, tmp_path: Path) -> None:
    """``df.write.format("hudi")`` in a driver that imported hudi_spark is hudi_spark.write: an
    upsert by default, a delete, the BUCKET index, MERGE_ON_READ; Spark's default save mode
    (errorifexists) fails on an existing table and ``ignore`` leaves it be, as Apache Hudi's
    writer; ``partitionBy`` names the partition field of a new table."""
    path, local = str(tmp_path / "t"), str(tmp_path / "local")
    mor = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.index.type": "BUCKET",
           "hoodie.bucket.index.num.buckets": "2"}  # fmt: skip
    first = pa.table(
        {"uuid": ["a", "b", "c"], "ts": [1, 1, 1], "city": ["sf", "la", "sf"], "v": [1.0, 1.0, 1.0]}
    )
    spark.createDataFrame(first).write.format("hudi").options(**mor).save(path)  # errorifexists, no table yet
    _local(local, first, "upsert", mor)
    with pytest.raises(Exception, match=f"hoodie table at {path} already exists"):
        spark.createDataFrame(first).write.format("hudi").options(**mor).save(path)
    spark.createDataFrame(first.slice(0, 1)).write.format("hudi").options(**mor).mode("ignore").save(path)
    assert _completed(path) == ["deltacommit"]
    steps = [
        ("upsert", pa.table({"uuid": ["a", "d"], "ts": [2, 2], "city": ["sf", "la"], "v": [2.0, 2.0]})),
        ("delete", pa.table({"uuid": ["b"], "ts": [3], "city": ["la"], "v": [0.0]})),
    ]
    for op, data in steps:
        spark.createDataFrame(data).write.format("hudi").options(
            **{**mor, "hoodie.datasource.write.operation": op}
        ).mode("append").save(path)
        _local(local, data, op, mor)
        assert _rows(path) == _rows(local), op
    assert _rows(path) == [("a", 2.0), ("c", 1.0), ("d", 2.0)]
    assert _completed(path) == ["deltacommit"] * 3
    assert any(Path(path).glob("*/.*log*"))  # MOR logs
    by = str(tmp_path / "by")
    plain = {k: v for k, v in OPTS.items() if k != "hoodie.datasource.write.partitionpath.field"}
    spark.createDataFrame(first).write.format("hudi").options(**plain).partitionBy("city").save(by)
    assert HudiTable.open(by).config.partition_fields == ["city"]
    assert sorted(p.name for p in Path(by).iterdir() if not p.name.startswith(".")) == ["la", "sf"]


@pytest.mark.parametrize("pipeline", [True, False], ids=["as_write", "data_source"])
def test_dataframe_writer_overwrites_as_the_local_engine(spark: Any, tmp_path: Path, pipeline: bool) -> None:
    """insert_overwrite (the partitions written) and insert_overwrite_table (with
    mode("overwrite"), as Hudi: the timeline is kept) through df.write.format("hudi"), as
    hudi_spark.write and through the data source: the same rows and actions as core's local engine."""
    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")

    def rows(uuids: list[str], city: str, v: float) -> pa.Table:
        return pa.table(
            {"uuid": uuids, "ts": [1] * len(uuids), "city": [city] * len(uuids), "v": [v] * len(uuids)}
        )

    steps = [
        ("bulk_insert", "append", pa.concat_tables([rows(["a", "b"], "sf", 1.0), rows(["c"], "la", 1.0)])),
        ("insert_overwrite", "append", rows(["d"], "sf", 2.0)),  # sf replaced, la kept
        ("insert_overwrite_table", "overwrite", rows(["e"], "nyc", 3.0)),  # every partition replaced
    ]
    for op, mode, data in steps:
        opts = {**OPTS, "hoodie.datasource.write.operation": op, **({} if pipeline else DATA_SOURCE)}
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", record_key_fields="uuid", partition_fields="city",
                             ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        spark.createDataFrame(data).write.format("hudi").options(**opts).mode(mode).save(remote)
        assert _rows(remote) == _rows(local), op
    assert _rows(remote) == [("e", 3.0)]
    assert _completed(remote) == _completed(local) == ["commit", "replacecommit", "replacecommit"]
