"""``hudi_spark.write``: the same table as core's local engine, readable by hudi-rs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hudi_core import HudiTable
from hudi_core.client.write_client import WriteClient
from hudi_core.timeline.commit_metadata import CommitMetadata

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

DATA_COLS = ["uuid", "ts", "city", "fare"]


def _opts(table_type: str, index: str = "SIMPLE") -> dict[str, str]:
    return {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.index.type": index,
        "hoodie.bucket.index.num.buckets": "2",
        # these inputs are tiny: without this a BUCKET write would run in one task (see
        # test_a_tiny_bucket_write_runs_in_one_task); here rows meet through the shuffle
        "hoodie.spark.write.single.task.max.bytes": "0",
    }


def _batches() -> list[tuple[str, pa.Table]]:
    first = pa.table({
        "uuid": [f"k{i}" for i in range(40)] + ["k0"],  # k0 twice: precombine keeps ts=100
        "ts": [*range(40), 100],
        "city": ["sf", "nyc", "la", "sf"] * 10 + ["sf"],
        "fare": [float(i) for i in range(40)] + [99.0],
    })  # fmt: skip
    second = pa.table({
        "uuid": [f"k{i}" for i in range(30, 50)],
        "ts": [1000 + i for i in range(20)],
        "city": ["sf", "nyc", "la", "sf"] * 5,
        "fare": [1000.0 + i for i in range(20)],
    })  # fmt: skip
    deletes = pa.table(
        {
            "uuid": ["k1", "k2", "k45"],
            "ts": [5000, 5000, 5000],
            "city": ["nyc", "la", "sf"],
            "fare": [0.0] * 3,
        }
    )
    return [("upsert", first), ("upsert", second), ("delete", deletes)]


def _rows(path: str) -> list[tuple[Any, ...]]:
    t = HudiTable.open(path).read(columns=DATA_COLS)
    return sorted(zip(*(t.column(c).to_pylist() for c in DATA_COLS), strict=True))


#: every input is "too big" for one Python worker: a write task spills its rows and writes one
#: file group at a time (stages.by_group; no two groups fit in one byte)
ONE_GROUP_AT_A_TIME = {"hoodie.spark.write.task.max.bytes": "1"}
#: the same for SIMPLE / GLOBAL_SIMPLE: key shuffles get more tasks (a few hundred bytes each),
#: precombine spills by key group and the write by bucket
SMALL_TASKS = {"hoodie.spark.write.task.max.bytes": "256"}
#: key tasks of 2 KB (their count is the input's estimated size over it): several still hold more
#: and spill (25 spills over the six precombine cases, counted once); 256 bytes made 8 times the
#: tasks (233 spills) and tripled the cases' time for the same paths
SPILLING_KEY_TASKS = {"hoodie.spark.write.task.max.bytes": "2048"}
#: SIMPLE / GLOBAL_SIMPLE keys co-grouped with every existing key (the default on few tasks is
#: the look-up in the tasks holding the keys)
JOIN_LOOKUP = {"hoodie.spark.index.lookup": "join"}
TASK_LOOKUP = {"hoodie.spark.index.lookup": "task"}


@pytest.mark.parametrize(
    ("table_type", "index", "extra"),
    [("COPY_ON_WRITE", "SIMPLE", {}), ("MERGE_ON_READ", "BUCKET", {}), ("MERGE_ON_READ", "GLOBAL_SIMPLE", {}),
     ("MERGE_ON_READ", "BUCKET", ONE_GROUP_AT_A_TIME), ("COPY_ON_WRITE", "BUCKET", ONE_GROUP_AT_A_TIME),
     ("COPY_ON_WRITE", "SIMPLE", SMALL_TASKS), ("MERGE_ON_READ", "GLOBAL_SIMPLE", SMALL_TASKS),
     ("COPY_ON_WRITE", "SIMPLE", JOIN_LOOKUP), ("MERGE_ON_READ", "GLOBAL_SIMPLE", JOIN_LOOKUP)],
    ids=["cow-simple", "mor-bucket", "mor-global", "mor-bucket-by-group", "cow-bucket-by-group",
         "cow-simple-small-tasks", "mor-global-small-tasks", "cow-simple-join", "mor-global-join"],
)  # fmt: skip
def test_same_snapshot_as_local_engine(
    spark: Any, tmp_path: Path, table_type: str, index: str, extra: dict[str, str]
) -> None:
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = _opts(table_type, index)
    for op, data in _batches():
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type=table_type, record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        df = spark.createDataFrame(data).repartition(3)  # rows of every group in several input partitions
        res = hudi_spark.write(df, remote, operation=op, options={**opts, **extra})
        assert res.instant is not None
    assert _rows(remote) == _rows(local)
    rows = {r[0]: r for r in _rows(remote)}
    assert rows["k0"][1] == 100 and "k1" not in rows and "k45" not in rows and rows["k31"][3] == 1001.0
    timeline = HudiTable.open(remote).timeline.completed_commits()
    expected_action = "deltacommit" if table_type == "MERGE_ON_READ" else "commit"
    assert [i.action for i in timeline] == [expected_action] * 3
    # an independent reader (hudi-rs) sees the same rows
    import hudi

    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(remote).build().read())
    assert sorted(rs.column("uuid").to_pylist()) == sorted(r[0] for r in _rows(remote)), (
        rs.num_rows,
        len(_rows(remote)),
        len(rows),
    )


def test_spark_datasource_reads_what_spark_wrote(spark: Any, tmp_path: Path, collected: Any) -> None:
    import hudi_spark

    path = str(tmp_path / "t")
    _, first = _batches()[0]
    hudi_spark.write(
        spark.createDataFrame(first), path, operation="bulk_insert", options=_opts("COPY_ON_WRITE")
    )
    got = collected(spark.read.format("hudi").load(path).select("uuid"))
    assert sorted(got.column("uuid").to_pylist()) == sorted(
        [f"k{i}" for i in range(40)] + ["k0"]
    )  # bulk_insert keeps duplicates


def test_failed_task_attempt_is_retried_and_its_files_removed(spark: Any, tmp_path: Path) -> None:
    import hudi_spark
    from hudi_core.timeline.commit_metadata import CommitMetadata

    path = str(tmp_path / "t")
    _, first = _batches()[0]
    opts = {**_opts("COPY_ON_WRITE"), "hoodie.spark.testing.fail.first.write.attempt": "true"}
    res = hudi_spark.write(spark.createDataFrame(first), path, operation="insert", options=opts)
    table = HudiTable.open(path)
    meta = CommitMetadata.from_json(table.timeline.read_details(table.timeline.completed_commits()[-1]))
    file_ids = [s.file_id for s in meta.all_write_stats()]
    assert len(file_ids) == len(set(file_ids)) == 3  # one file group per city, each listed once
    on_disk = sorted(p.name for p in Path(path).glob("*/*.parquet"))
    assert on_disk == sorted(
        s.path.rsplit("/", 1)[-1] for s in meta.all_write_stats()
    )  # the dead attempt's file is gone
    assert sorted(table.read(columns=["uuid"]).column("uuid").to_pylist()) == sorted(
        first.column("uuid").to_pylist()
    )
    assert res.inserted == 41
    assert len(res.removed_files) == 3  # the injected failure happened after its file was written


def test_dataframe_writer_format_hudi(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _, first = _batches()[0]
    opts = {**_opts("COPY_ON_WRITE"), "hoodie.datasource.write.operation": "insert"}
    spark.createDataFrame(first).write.format("hudi").options(**opts).mode("append").save(path)
    t = HudiTable.open(path)
    assert sorted(t.read(columns=["uuid"]).column("uuid").to_pylist()) == sorted(
        first.column("uuid").to_pylist()
    )
    assert [i.action for i in t.timeline.completed_commits()] == ["commit"]
    data_source = {"hoodie.spark.write.format.pipeline": "false"}  # PySpark's Python data source
    with pytest.raises(Exception, match=r"hudi_spark\.write"):
        spark.createDataFrame(first).write.format("hudi").options(
            **{**opts, "hoodie.datasource.write.operation": "upsert", **data_source}
        ).mode("append").save(path)


def test_failed_mor_append_attempt_leaves_no_stray_log_file(spark: Any, tmp_path: Path) -> None:
    """A task that dies after appending log blocks (which carry the instant being committed) is
    retried; the dead attempt's log file is deleted before the commit, so no reader applies it."""
    import hudi
    import hudi_spark
    from hudi_core.log.reader import read_log_file
    from hudi_core.table.file_names import LogFileName

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts("MERGE_ON_READ"), "hoodie.parquet.small.file.limit": "0"}  # updates go to log files
    (_, first), _, _ = _batches()
    second = (
        first.slice(0, 20)
        .set_column(1, "ts", pa.array(range(2000, 2020)))
        .set_column(3, "fare", pa.array([-1.0] * 20))
    )
    HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                     partition_fields="city", ordering_field="ts", options=opts, schema=first.schema)  # fmt: skip
    for data in (first, second):
        WriteClient(HudiTable.open(local), opts).write(data, operation="upsert")
    hudi_spark.write(spark.createDataFrame(first), remote, operation="upsert", options=opts)
    failing = {**opts, "hoodie.spark.testing.fail.first.write.attempt": "true"}
    res = hudi_spark.write(spark.createDataFrame(second), remote, operation="upsert", options=failing)

    table = HudiTable.open(remote)
    meta = CommitMetadata.from_json(table.timeline.read_details(table.timeline.completed_commits()[-1]))
    committed = {s.path.rsplit("/", 1)[-1] for s in meta.all_write_stats()}
    logs = {p.name: p for p in Path(remote).glob("*/.*.log.*")}
    assert logs and set(logs) <= committed  # every log file on disk is one the commit lists
    assert any(
        LogFileName.parse(p.rsplit("/", 1)[-1]) is not None for p in res.removed_files
    )  # a dead log was removed
    for p in logs.values():  # only blocks of the committed instant remain
        blocks = read_log_file(table.storage, str(p))
        assert {b.instant_time for b in blocks} == {res.instant}
    per_group = [(LogFileName.parse(n).file_id) for n in logs]  # type: ignore[union-attr]
    assert len(per_group) == len(set(per_group))
    assert _rows(remote) == _rows(local)
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(remote).build().read())
    assert sorted(rs.column("uuid").to_pylist()) == sorted(
        r[0] for r in _rows(local)
    )  # hudi-rs: no duplicate, no loss


def _tied_duplicates(n: int = 400) -> pa.Table:
    """100 keys, each n / 100 times with one ordering value (``fare`` tells the rows apart), spread
    over the input partitions."""
    return pa.table({
        "uuid": [f"k{i % 100}" for i in range(n)], "ts": [7] * n,
        "city": [["sf", "nyc"][(i % 100) % 2] for i in range(n)], "fare": [float(i) for i in range(n)],
    })  # fmt: skip


@pytest.mark.parametrize(
    ("index", "extra"), [("SIMPLE", {}), ("BUCKET", {}), ("BUCKET", ONE_GROUP_AT_A_TIME)]
)
def test_precombine_ties_go_to_the_later_input_row_as_locally(
    spark: Any, tmp_path: Path, index: str, extra: dict[str, str]
) -> None:
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts("MERGE_ON_READ", index), **extra}
    data = _tied_duplicates()
    HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid", partition_fields="city",
                     ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
    WriteClient(HudiTable.open(local), opts).write(data, operation="upsert")
    df = spark.createDataFrame(data)
    assert df.rdd.getNumPartitions() > 1
    hudi_spark.write(df, remote, operation="upsert", options=opts)
    assert _rows(remote) == _rows(local)
    assert {r[0]: r[3] for r in _rows(remote)}["k5"] == 305.0  # the last of k5's four rows


@pytest.mark.parametrize("key", ["uuid", "uuid,city", "info.id"])
@pytest.mark.parametrize("operation", ["upsert", "bulk_insert"])
def test_precombine_of_raw_rows_shuffled_by_key_fields_as_locally(
    spark: Any, tmp_path: Path, key: str, operation: str
) -> None:
    """Precombine with the key shuffle on the input rows themselves (one top-level key field) or
    on the keyed rows (two fields, a nested one), in spilling key tasks: every duplicate meets
    its key's others, and ties go to the later input row, as in the local engine."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts("MERGE_ON_READ"), **SPILLING_KEY_TASKS, "hoodie.datasource.write.recordkey.field": key,
            "hoodie.combine.before.insert": "true"}  # fmt: skip
    data = _tied_duplicates()
    data = data.append_column("info", pa.array([{"id": k} for k in data.column("uuid").to_pylist()]))
    HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields=key, partition_fields="city",
                     ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
    WriteClient(HudiTable.open(local), opts).write(data, operation=operation)
    df = spark.createDataFrame(data)
    assert df.rdd.getNumPartitions() > 1
    hudi_spark.write(df, remote, operation=operation, options=opts)
    assert _rows(remote) == _rows(local)
    fares = {r[0]: r[3] for r in _rows(remote)}
    assert len(fares) == 100 and fares["k5"] == 305.0  # the last of k5's four rows


def test_two_field_values_that_make_one_key_are_precombined_as_one(spark: Any, tmp_path: Path) -> None:
    """("1,b:2", "3") and ("1", "2,b:3") both make the key ``a:1,b:2,b:3``: as in Apache Hudi,
    whose precombine compares keys, one record is left (the later), however the input is split."""
    import hudi_spark

    opts = {**_opts("MERGE_ON_READ"), **SMALL_TASKS, "hoodie.datasource.write.recordkey.field": "a,b"}
    rows = [("1,b:2", "3"), ("1", "2,b:3")] * 20
    data = pa.table({"a": [r[0] for r in rows], "b": [r[1] for r in rows], "uuid": [f"u{i}" for i in range(40)],
                     "ts": [7] * 40, "city": ["sf"] * 40, "fare": [float(i) for i in range(40)]})  # fmt: skip
    hudi_spark.write(spark.createDataFrame(data), str(tmp_path / "t"), operation="upsert", options=opts)
    got = HudiTable.open(str(tmp_path / "t")).read(columns=["_hoodie_record_key", "uuid"])
    assert got.column("_hoodie_record_key").to_pylist() == ["a:1,b:2,b:3"]
    assert got.column("uuid").to_pylist() == ["u39"]


@pytest.mark.parametrize(("table_type", "index"), [("COPY_ON_WRITE", "SIMPLE"), ("MERGE_ON_READ", "BUCKET")])
def test_bulk_insert_then_insert_same_as_local_engine(
    spark: Any, tmp_path: Path, table_type: str, index: str
) -> None:
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts(table_type, index), "hoodie.combine.before.insert": "true"}
    (_, first), (_, second), _ = _batches()
    HudiTable.create(local, name="trips", table_type=table_type, record_key_fields="uuid", partition_fields="city",
                     ordering_field="ts", options=opts, schema=first.schema)  # fmt: skip
    for op, data in (("bulk_insert", first), ("insert", second)):
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        hudi_spark.write(spark.createDataFrame(data), remote, operation=op, options=opts)
    assert _rows(remote) == _rows(local)
    assert len(_rows(remote)) == 60  # k0 combined in the bulk_insert; k30..k49 inserted in new cities


def test_jvm_hash_bucket_equals_core_for_every_kind_of_key(spark: Any) -> None:
    """The JVM computes the BUCKET index's bucket of a one-string-field key (no Python hop):
    it must be core's (and Java Hudi's) bucket for ASCII, accented, CJK and surrogate-pair keys."""
    from hudi_core.write.index.bucket import BucketIndex
    from hudi_spark.writer import _jvm_bucket

    keys = ["k1", "trip-000000042", "é", "ключ-7", "東京-12", "🚕 ride 9", "a" * 300, "x,y:z", "0"]
    index = BucketIndex(7, ("uuid",), ("uuid",))
    df = spark.createDataFrame(pa.table({"uuid": keys, "n": list(range(len(keys)))}))
    got = dict(df.selectExpr("uuid", f"{_jvm_bucket(df, index)} AS b").collect())
    assert got == dict(zip(keys, index.bucket_ids(pa.array(keys)).tolist(), strict=True))
    assert len(set(got.values())) > 1
    # a key column whose name needs quoting in SQL
    odd = df.withColumnRenamed("uuid", "trip `id`.x")
    odd_index = BucketIndex(7, ("trip `id`.x",), ("trip `id`.x",))
    assert dict(odd.selectExpr("`trip ``id``.x`", f"{_jvm_bucket(odd, odd_index)} AS b").collect()) == got
    # not one string field: no JVM shortcut (the Arrow UDF computes it)
    assert _jvm_bucket(df, BucketIndex(7, ("uuid", "n"), ("uuid", "n"))) is None
    assert _jvm_bucket(df.selectExpr("n AS uuid"), index) is None


@pytest.mark.parametrize("extra", [{}, ONE_GROUP_AT_A_TIME], ids=["whole-task", "by-group"])
def test_non_partitioned_bucket_table_same_as_local_engine(
    spark: Any, tmp_path: Path, extra: dict[str, str]
) -> None:
    """No partition columns: the hash bucket alone picks the Spark task and the file group."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {k: v for k, v in _opts("MERGE_ON_READ", "BUCKET").items() if "partitionpath" not in k}
    opts["hoodie.bucket.index.num.buckets"] = "3"
    for op, data in _batches():
        data = data.drop_columns(["city"])
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        hudi_spark.write(
            spark.createDataFrame(data).repartition(2), remote, operation=op, options={**opts, **extra}
        )
    cols = ["uuid", "ts", "fare"]
    got = HudiTable.open(remote).read(columns=cols).sort_by("uuid")
    assert got.equals(HudiTable.open(local).read(columns=cols).sort_by("uuid"))
    assert got.num_rows == 47 and len({f.name.split("_")[0] for f in Path(remote).glob("*.parquet")}) == 3


@pytest.mark.parametrize("op", ["insert_overwrite", "insert_overwrite_table"])
@pytest.mark.parametrize(
    ("table_type", "index", "extra"),
    [
        ("COPY_ON_WRITE", "SIMPLE", {}),
        ("MERGE_ON_READ", "BUCKET", {}),
        ("MERGE_ON_READ", "BUCKET", ONE_GROUP_AT_A_TIME),
    ],
    ids=["cow-simple", "mor-bucket", "mor-bucket-by-group"],
)
def test_overwrites_same_as_local_engine(
    spark: Any, tmp_path: Path, op: str, table_type: str, index: str, extra: dict[str, str]
) -> None:
    """insert_overwrite replaces the file groups of the partitions it writes; _table replaces
    every partition. Same table content as the local engine; the replacecommit names the
    replaced groups; hudi-rs reads the result."""
    import hudi
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = _opts(table_type, index)
    (_, first), (_, second), _ = _batches()
    overwrite = second.filter(pc.is_in(second.column("city"), value_set=pa.array(["sf", "nyc"])))
    HudiTable.create(local, name="trips", table_type=table_type, record_key_fields="uuid", partition_fields="city",
                     ordering_field="ts", options=opts, schema=first.schema)  # fmt: skip
    for o, data in (("upsert", first), (op, overwrite)):
        WriteClient(HudiTable.open(local), opts).write(data, operation=o)
        hudi_spark.write(
            spark.createDataFrame(data).repartition(3), remote, operation=o, options={**opts, **extra}
        )
    assert _rows(remote) == _rows(local)
    cities = {r[2] for r in _rows(remote)}
    assert cities == ({"sf", "nyc"} if op == "insert_overwrite_table" else {"sf", "nyc", "la"})
    assert len(_rows(remote)) == overwrite.num_rows + (0 if op == "insert_overwrite_table" else 10)
    last = HudiTable.open(remote).timeline.completed_commits()[-1]
    assert last.action == "replacecommit"
    meta = CommitMetadata.from_json(HudiTable.open(remote).timeline.read_details(last))
    replaced = meta.partition_to_replace_file_ids
    assert set(replaced) == ({"sf", "nyc", "la"} if op == "insert_overwrite_table" else {"sf", "nyc"})
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(remote).build().read())
    assert sorted(rs.column("uuid").to_pylist()) == sorted(r[0] for r in _rows(remote))
    if index == "BUCKET":  # the bucket index's invariant: one file group per (partition, bucket)
        groups = [(s.partition_path, s.file_id[:8]) for s in HudiTable.open(remote).file_slices()]
        assert len(groups) == len(set(groups)), groups


@pytest.mark.parametrize("extra", [JOIN_LOOKUP, TASK_LOOKUP], ids=["join", "task-lookup"])
def test_an_upsert_reads_the_keys_of_the_partitions_it_writes_only(
    spark: Any, tmp_path: Path, extra: dict[str, str]
) -> None:
    """SIMPLE, as Apache Hudi's: the existing keys come from the partitions the records go to
    (the co-group found them by a distinct over the records; it read every partition before).
    Another partition's base files are never opened: here they are not parquet at all."""
    import hudi_spark

    remote = str(tmp_path / "t")
    opts = {**_opts("COPY_ON_WRITE"), **extra}
    hudi_spark.write(spark.createDataFrame(_batches()[0][1]), remote, operation="upsert", options=opts)
    for city in ("la", "nyc"):
        for f in (tmp_path / "t" / city).glob("*.parquet"):
            f.write_bytes(b"not a parquet file")
    update = pa.table(
        {"uuid": ["k0", "k3", "new"], "ts": [200, 201, 202], "city": ["sf"] * 3, "fare": [1.0, 2.0, 3.0]}
    )
    res = hudi_spark.write(spark.createDataFrame(update), remote, operation="upsert", options=opts)
    meta = HudiTable.open(remote).commit_metadata(res.instant)
    assert {s.partition_path for s in meta.all_write_stats()} == {"sf"}
    stats = meta.all_write_stats()
    assert (sum(s.num_update_writes for s in stats), sum(s.num_inserts for s in stats)) == (2, 1)
    sf = HudiTable.open(remote).read(columns=DATA_COLS, filters=[("city", "=", "sf")])
    fares = dict(zip(sf.column("uuid").to_pylist(), sf.column("fare").to_pylist(), strict=True))
    assert (fares["k0"], fares["k3"], fares["new"], fares["k4"]) == (1.0, 2.0, 3.0, 4.0)
    assert len(fares) == 21  # 20 sf rows of the first write, one new


@pytest.mark.parametrize("extra", [JOIN_LOOKUP, TASK_LOOKUP], ids=["join", "task-lookup"])
def test_global_index_key_moved_twice_lives_once_as_locally(
    spark: Any, tmp_path: Path, extra: dict[str, str]
) -> None:
    """GLOBAL_SIMPLE on MOR through Spark (co-grouped join, or look-up in tasks): a moved key's
    old base copy (deleted by a log block) is not a location, so moving it again leaves one live
    row, as core does."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts("MERGE_ON_READ", "GLOBAL_SIMPLE"), **extra}

    def rows(ids: list[str], city: str, ts: int) -> pa.Table:
        return pa.table(
            {"uuid": ids, "ts": [ts] * len(ids), "city": [city] * len(ids), "fare": [float(ts)] * len(ids)}
        )

    steps = [rows(["a", "b", "c"], "sf", 1), rows(["a"], "nyc", 2), rows(["a"], "nyc", 3),
             rows(["a", "b"], "la", 4), rows(["a"], "sf", 5)]  # fmt: skip
    for data in steps:
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation="upsert")
        hudi_spark.write(spark.createDataFrame(data), remote, operation="upsert", options=opts)
    assert _rows(remote) == _rows(local) == [("a", 5, "sf", 5.0), ("b", 4, "la", 4.0), ("c", 1, "sf", 1.0)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("extra", [JOIN_LOOKUP, TASK_LOOKUP], ids=["join", "task-lookup"])
def test_a_stale_record_moves_no_key_as_locally(
    spark: Any, tmp_path: Path, extra: dict[str, str], table_type: str
) -> None:
    """GLOBAL_SIMPLE with EventTimeAvroPayload through Spark: a record older than the stored one,
    with another partition, is merged with the stored record first (the stored one wins), so the
    key stays where it is, once (Apache Hudi's answer, tests/interop/test_write_semantics.py)."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts(table_type, "GLOBAL_SIMPLE"), **extra,
            "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.EventTimeAvroPayload"}  # fmt: skip

    def rows(ids: list[str], city: str, ts: int) -> pa.Table:
        return pa.table(
            {"uuid": ids, "ts": [ts] * len(ids), "city": [city] * len(ids), "fare": [float(ts)] * len(ids)}
        )

    for data in (rows(["a", "b"], "sf", 1), rows(["a"], "sf", 10), rows(["a", "b"], "nyc", 5)):
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type=table_type, record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation="upsert")
        hudi_spark.write(spark.createDataFrame(data), remote, operation="upsert", options=opts)
    assert _rows(remote) == _rows(local) == [("a", 10, "sf", 10.0), ("b", 5, "nyc", 5.0)]


@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET"])
def test_input_of_unknown_size_as_locally(spark: Any, tmp_path: Path, index: str) -> None:
    """An RDD-backed DataFrame: Spark cannot size it (it reports Long.MaxValue); the write plans
    its tasks as for an unknown size (four write tasks per core, the key shuffles at the default
    parallelism) and equals the local engine."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = _opts("MERGE_ON_READ", index)
    for op, data in _batches():
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        df = spark.createDataFrame(data)
        unsized = spark.createDataFrame(df.rdd, df.schema)
        assert int(str(unsized._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())) >= 2**62
        hudi_spark.write(unsized, remote, operation=op, options=opts)
    assert _rows(remote) == _rows(local)


def test_unknown_index_lookup_mode_is_a_clear_error_and_writes_nothing(spark: Any, tmp_path: Path) -> None:
    import hudi_spark
    from hudi_core.errors import ConfigError

    remote = str(tmp_path / "spark")
    (_, first), (_, second), _ = _batches()
    hudi_spark.write(spark.createDataFrame(first), remote, operation="upsert", options=_opts("MERGE_ON_READ"))
    before = _rows(remote)
    with pytest.raises(ConfigError, match=r"hoodie\.spark\.index\.lookup='broadcast'"):
        hudi_spark.write(spark.createDataFrame(second), remote, operation="upsert",
                         options={**_opts("MERGE_ON_READ"), "hoodie.spark.index.lookup": "broadcast"})  # fmt: skip
    assert _rows(remote) == before
    assert len(HudiTable.open(remote).timeline.completed_commits()) == 1


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bulk_insert_writes_a_large_input_partition_while_it_arrives(
    spark: Any, tmp_path: Path, table_type: str
) -> None:
    """bulk_insert (no shuffle) writes a task's rows as they arrive, holding about
    task.max.bytes of them: one input partition over the limit becomes one file group per table
    partition (as Apache Hudi's bulk_insert: one open file per partition path, rolled over only
    at the max file size) written a row group at a time, and the table holds the same rows as
    the local engine's (duplicates kept, as bulk_insert does)."""
    import hudi
    import hudi_spark
    import pyarrow.parquet as pq
    from hudi_core.fs_view import FileSystemView

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = _opts(table_type, "SIMPLE")
    _, first = _batches()[0]
    HudiTable.create(local, name="trips", table_type=table_type, record_key_fields="uuid", partition_fields="city",
                     ordering_field="ts", options=opts, schema=first.schema)  # fmt: skip
    WriteClient(HudiTable.open(local), opts).write(first, operation="bulk_insert")
    df = spark.createDataFrame(first).coalesce(1)
    batch = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "8")  # several batches in the one task
    try:
        hudi_spark.write(df, remote, operation="bulk_insert", options={**opts, **SMALL_TASKS})
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", batch)
    assert _rows(remote) == _rows(local) and len(_rows(remote)) == 41

    view = FileSystemView(HudiTable.open(remote))
    slices = {p: view.latest_file_slices(partitions=[p]) for p in view.partitions()}
    assert slices.keys() == set(FileSystemView(HudiTable.open(local)).partitions())
    assert all(len(s) == 1 for s in slices.values()), slices
    row_groups = [pq.ParquetFile(Path(remote) / p / s.base_file.name).metadata.num_row_groups
                  for p, ss in slices.items() for s in ss if s.base_file is not None]  # fmt: skip
    assert max(row_groups) > 1, row_groups  # written while the rows arrived, not gathered first
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(remote).build().read())
    assert rs.num_rows == 41


def test_bulk_insert_rolls_a_file_over_at_the_max_file_size_of_bytes_written(
    spark: Any, tmp_path: Path
) -> None:
    """As Apache Hudi's bulk_insert: a file group is rolled over at ``hoodie.parquet.max.file.size``
    of parquet bytes written, not at the insert record size estimate (1024 bytes a record by
    default, which would cut these rows into ~70 files of 292 rows)."""
    import hudi_spark
    import numpy as np
    from hudi_core.testing.files import parquet_data_bytes

    n, max_size = 20_000, 300_000
    rng = np.random.default_rng(7)
    data = pa.table({
        "uuid": [f"{k:032x}" for k in rng.integers(0, 2**63, n)],
        "ts": pa.array(rng.integers(0, 10**12, n), pa.int64()),
        "fare": rng.random(n),
        "city": ["berlin"] * n,
    })  # fmt: skip
    path = str(tmp_path / "t")
    opts = {**_opts("MERGE_ON_READ"), "hoodie.parquet.max.file.size": str(max_size)}
    hudi_spark.write(spark.createDataFrame(data).coalesce(1), path, operation="bulk_insert", options=opts)

    files = sorted((tmp_path / "t" / "berlin").glob("*.parquet"))
    written = [parquet_data_bytes(f) for f in files]
    assert all(size <= max_size for size in written), written
    # every file but the last is filled to more than half the limit: a few files, not ~70
    assert sorted(written)[1:] and all(size > max_size // 2 for size in sorted(written)[1:]), written
    assert len(files) <= -(-sum(written) // (max_size // 2)), written
    assert HudiTable.open(path).read(columns=["uuid"]).num_rows == n


@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET"])
def test_same_snapshot_with_adaptive_query_execution_on(spark: Any, tmp_path: Path, index: str) -> None:
    """A user's session has adaptive query execution on (Spark's default; the test session turns
    it off): it may re-plan the shuffles, and the table must still equal the local engine's."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = _opts("MERGE_ON_READ", index)
    before = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    try:
        for op, data in _batches():
            if not HudiTable.exists(local):
                HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                                 partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
            WriteClient(HudiTable.open(local), opts).write(data, operation=op)
            hudi_spark.write(spark.createDataFrame(data).repartition(3), remote, operation=op, options=opts)
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", before)
    assert _rows(remote) == _rows(local)
    from hudi_core.fs_view import FileSystemView

    def groups(path: str) -> dict[str, int]:
        view = FileSystemView(HudiTable.open(path))
        return {p: len(view.latest_file_slices(p)) for p in view.partitions()}

    assert groups(remote) == groups(local)  # no file group written twice by two tasks


@pytest.mark.parametrize("index", ["BUCKET", "SIMPLE"])
def test_a_null_key_in_a_task_raises_the_local_engines_error_and_loses_nothing(
    spark: Any, tmp_path: Path, index: str
) -> None:
    """Spark wraps a task's exception in a PythonException with a generic first line; the
    caller gets core's error instead, and the table stays at its last commit."""
    import hudi_spark
    from hudi_core.errors import InvalidRecordKeyError

    base = str(tmp_path / "t")
    opts = _opts("MERGE_ON_READ", index)
    first = pa.table({"uuid": ["a", "b"], "city": ["sf", "la"], "ts": [1, 1], "fare": [1.0, 2.0]})
    hudi_spark.write(spark.createDataFrame(first), base, operation="upsert", options=opts)
    before = HudiTable.open(base).read().sort_by("uuid")
    bad = pa.table({"uuid": ["a", None], "city": ["sf", "la"], "ts": [2, 2], "fare": [9.0, 9.0]})
    for op in ("upsert", "bulk_insert"):
        with pytest.raises(InvalidRecordKeyError, match="record key field 'uuid' is null") as info:
            hudi_spark.write(spark.createDataFrame(bad), base, operation=op, options=opts)
        assert "PythonException" in type(info.value.__cause__).__name__  # Spark's, kept as the cause
    table = HudiTable.open(base)
    assert table.read().sort_by("uuid").equals(before)
    assert len(list(table.timeline.completed_commits())) == 1


@pytest.mark.parametrize("index", ["BUCKET", "SIMPLE"])
def test_a_partition_value_that_would_leave_the_table_is_refused(
    spark: Any, tmp_path: Path, index: str
) -> None:
    """Partition paths are checked in the Spark tasks as in core: nothing is written outside
    the base path, the caller gets core's UnsafePathError and the table stays as it was."""
    import hudi_spark
    from hudi_core.errors import UnsafePathError

    base = tmp_path / "table"
    opts = _opts("MERGE_ON_READ", index)
    hudi_spark.write(spark.createDataFrame(pa.table({"uuid": ["a"], "city": ["sf"], "ts": [1], "fare": [1.0]})),
                     str(base), operation="upsert", options=opts)  # fmt: skip

    def data_files() -> list[Path]:
        return sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file() and ".hoodie" not in p.parts
                      and not p.name.startswith(".hoodie_partition_metadata"))  # fmt: skip

    before = data_files()
    bad = pa.table({"uuid": ["b", "c"], "city": ["la", "../../escaped"], "ts": [2, 2], "fare": [2.0, 3.0]})
    with pytest.raises(UnsafePathError, match="escaped"):
        hudi_spark.write(spark.createDataFrame(bad), str(base), operation="upsert", options=opts)
    # no data file is left anywhere (another task's file of the same write was rolled back; as in
    # Hudi, a partition folder it created may stay, with its partition metadata only)
    assert data_files() == before
    assert [p.name for p in tmp_path.iterdir()] == ["table"]
    assert not (tmp_path.parent / "escaped").exists() and not (tmp_path.parent.parent / "escaped").exists()
    assert HudiTable.open(str(base)).read(columns=["uuid"]).column("uuid").to_pylist() == ["a"]


@pytest.mark.parametrize("keys", ["uuid,city", "n"], ids=["composite-key", "integer-key"])
def test_bucket_index_without_one_string_key_same_as_local_engine(
    spark: Any, tmp_path: Path, keys: str
) -> None:
    """A key that is not one string column has its hash bucket computed by the Arrow UDF
    (core's hash in Python) instead of the JVM: same file groups and rows as the local engine."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts("MERGE_ON_READ", "BUCKET"), "hoodie.datasource.write.recordkey.field": keys,
            "hoodie.bucket.index.num.buckets": "3"}  # fmt: skip
    if "," in keys:
        opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.ComplexKeyGenerator"
    for op, data in _batches():
        data = data.append_column("n", pc.cast(pc.utf8_slice_codeunits(data.column("uuid"), 1), pa.int64()))
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields=keys,
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        hudi_spark.write(spark.createDataFrame(data).repartition(2), remote, operation=op, options=opts)
    cols = ["_hoodie_record_key", "_hoodie_partition_path", "uuid", "ts", "fare", "n"]
    got = HudiTable.open(remote).read(columns=cols).sort_by("_hoodie_record_key")
    assert got.equals(HudiTable.open(local).read(columns=cols).sort_by("_hoodie_record_key"))
    # 40 keys, then 20 (k30-k39 again, each in another city: a new key of a partitioned
    # BUCKET table), less 3 deletes
    assert got.num_rows == 57

    def groups(base: str) -> set[tuple[str, str]]:  # (partition, bucket id: the file id's first 8 digits)
        files = [p for p in Path(base).glob("*/*") if p.name.endswith(".parquet") or ".log." in p.name]
        return {(p.parent.name, p.name.lstrip(".")[:8]) for p in files}

    assert groups(remote) == groups(local) and len(groups(remote)) > 3


def test_input_size_is_what_spark_reads_and_unknown_for_an_rdd(spark: Any, tmp_path: Path) -> None:
    """Write tasks are planned by Spark's size estimate of the input: a parquet input's files'
    bytes (fewer when columns are dropped); an RDD's size is unknown."""
    import pyarrow.parquet as pq
    from hudi_spark.writer import _input_bytes

    data = pa.table({"k": [f"key-{i}" for i in range(5000)], "v": [float(i) for i in range(5000)]})
    for i in range(2):
        pq.write_table(data.slice(i * 2500, 2500), tmp_path / f"part-{i}.parquet")
    on_disk = sum(p.stat().st_size for p in tmp_path.glob("*.parquet"))
    df = spark.read.parquet(str(tmp_path))
    assert _input_bytes(df) == on_disk
    assert 0 < _input_bytes(df.select("v")) < on_disk
    assert _input_bytes(spark.createDataFrame(spark.sparkContext.parallelize([(1,)]), "a int")) == float(
        "inf"
    )


@pytest.mark.parametrize(
    ("table_type", "index", "keys", "extra"),
    [
        ("MERGE_ON_READ", "BUCKET", "uuid", ONE_GROUP_AT_A_TIME),
        ("MERGE_ON_READ", "BUCKET", "n", {}),
        ("COPY_ON_WRITE", "BUCKET", "n", ONE_GROUP_AT_A_TIME),
        ("COPY_ON_WRITE", "SIMPLE", "uuid", {}),
        ("MERGE_ON_READ", "GLOBAL_SIMPLE", "uuid", JOIN_LOOKUP),
    ],
    ids=[
        "jvm-hash-by-group",
        "arrow-udf-hash",
        "cow-arrow-udf-hash-by-group",
        "cow-simple",
        "mor-global-join",
    ],
)
def test_upsert_with_is_deleted_rows_same_as_local_engine(
    spark: Any, tmp_path: Path, table_type: str, index: str, keys: str, extra: dict[str, str]
) -> None:
    """Upserts carrying ``_hoodie_is_deleted``: rows flagged true delete their key (one names a
    key that does not exist). Every way a BUCKET write finds a row's file group before the
    tasks tag it (the JVM's hash, the Arrow UDF, a spilling task's own grouping) keeps one
    group per row, flagged or not; the SIMPLE indexes tag them as the local engine does."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts(table_type, index), "hoodie.datasource.write.recordkey.field": keys}
    (_, first), (_, second), (_, deletes) = _batches()  # deletes: k1 (nyc), k2 (la), k45 (sf)
    deletes = pa.concat_tables([deletes, deletes.slice(0, 1).set_column(0, "uuid", pa.array(["k99"]))])
    flagged = [*[False] * second.num_rows, *[True] * deletes.num_rows]
    batches = [
        first.append_column("_hoodie_is_deleted", pa.array([False] * first.num_rows)),
        pa.concat_tables([second, deletes]).append_column("_hoodie_is_deleted", pa.array(flagged)),
    ]
    for data in batches:
        data = data.append_column("n", pc.cast(pc.utf8_slice_codeunits(data.column("uuid"), 1), pa.int64()))
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type=table_type, record_key_fields=keys,
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation="upsert")
        hudi_spark.write(
            spark.createDataFrame(data).repartition(2), remote, operation="upsert", options={**opts, **extra}
        )
    assert _rows(remote) == _rows(local)
    kept = {r[0] for r in _rows(remote)}
    assert not kept & {"k1", "k2", "k45", "k99"} and {"k0", "k3", "k31", "k49"} <= kept


def test_a_tiny_bucket_write_runs_in_one_task_same_as_local_engine(spark: Any, tmp_path: Path) -> None:
    """An input under hoodie.spark.write.single.task.max.bytes (a small micro-batch) is written
    by one task, with no shuffle: every data file of a commit carries the same write token. The
    table is the local engine's, precombine ties and deletes included."""
    import hudi_spark

    def tokens_of(files: list[str]) -> set[str]:  # base: id_token_instant.parquet; log: ...log.N_token
        return {Path(f).name.split("_")[-2 if f.endswith(".parquet") else -1] for f in files}

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = {**_opts("MERGE_ON_READ", "BUCKET"), "hoodie.spark.write.single.task.max.bytes": str(1 << 20)}
    tokens = []
    for op, data in _batches():
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        res = hudi_spark.write(spark.createDataFrame(data).repartition(3), remote, operation=op, options=opts)
        tokens.append(tokens_of(res.files))
    assert _rows(remote) == _rows(local)
    assert [len(t) for t in tokens] == [1, 1, 1]
    # the same rows through the shuffle are written by several tasks (one per core here)
    shuffled = str(tmp_path / "shuffled")
    res = hudi_spark.write(spark.createDataFrame(_batches()[0][1]).repartition(3), shuffled, operation="upsert",
                           options={**opts, "hoodie.spark.write.single.task.max.bytes": "0"})  # fmt: skip
    assert len(tokens_of(res.files)) >= 2


@pytest.mark.parametrize("mode", [None, "PARTITION_SORT"])
def test_bulk_insert_orders_each_file_as_the_sort_mode_says(
    spark: Any, tmp_path: Path, mode: str | None
) -> None:
    """Input order with Hudi's default (NONE), keys ascending with a sorting mode."""
    import hudi_spark
    import pyarrow.parquet as pq

    keys = [f"k{(i * 37) % 100:03d}" for i in range(100)]  # every key once, not in order
    data = pa.table({"uuid": keys, "ts": list(range(100)), "city": ["sf"] * 100})
    opts = {**_opts("COPY_ON_WRITE"), **({"hoodie.bulkinsert.sort.mode": mode} if mode else {})}
    base = str(tmp_path / "t")
    hudi_spark.write(
        spark.createDataFrame(data.to_pandas()).coalesce(1), base, operation="bulk_insert", options=opts
    )
    (f,) = (tmp_path / "t" / "sf").glob("*.parquet")  # one task, one file group
    written = pq.read_table(f, columns=["uuid"]).column(0).to_pylist()
    assert written == (sorted(keys) if mode else keys)


def test_inline_clustering_after_spark_writes(spark: Any, tmp_path: Path) -> None:
    """``hoodie.clustering.inline``: after every second commit the small file groups are
    clustered, the groups rewritten as Spark tasks (core's clustering on the Spark engine)."""
    import hudi_spark

    path = str(tmp_path / "t")
    opts = {**_opts("MERGE_ON_READ"), "hoodie.parquet.small.file.limit": "0",
            "hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "2"}  # fmt: skip
    first, second = (b for _, b in _batches()[:2])
    hudi_spark.write(spark.createDataFrame(first), path, operation="upsert", options=opts)
    assert not HudiTable.open(path).timeline.filter(actions=["replacecommit"])
    hudi_spark.write(spark.createDataFrame(second), path, operation="upsert", options=opts)
    clusterings = HudiTable.open(path).timeline.completed().filter(actions=["replacecommit"])
    assert len(clusterings) == 1
    slices = HudiTable.open(path).file_slices()
    assert sorted(s.partition_path for s in slices) == ["la", "nyc", "sf"] and not any(
        s.log_files for s in slices
    )
    local = str(tmp_path / "local")
    for _, batch in _batches()[:2]:
        hudi_spark.write(
            spark.createDataFrame(batch), local, operation="upsert", options=_opts("MERGE_ON_READ")
        )
    assert _rows(path) == _rows(local)


@pytest.mark.parametrize(
    "extra",
    [
        {"hoodie.index.type": "BUCKET"},
        {"hoodie.index.type": "SIMPLE", **JOIN_LOOKUP},
        {"hoodie.index.type": "SIMPLE", **TASK_LOOKUP},
    ],
    ids=["bucket", "simple-join", "simple-task-lookup"],
)
def test_an_update_of_a_clustered_file_group_is_refused(
    spark: Any, tmp_path: Path, extra: dict[str, str]
) -> None:
    """A pending clustering plan (ours, written as Apache Hudi's; tests/interop/test_pending_clustering.py
    runs Hudi's own): an update of one of its file groups raises core's ClusteringUpdateError from
    the driver's plan or from the write tasks, and nothing of the write is visible."""
    import hudi_spark
    from hudi_core.errors import ClusteringUpdateError

    path = str(tmp_path / "t")
    opts = {**_opts("MERGE_ON_READ"), **extra}
    first = _batches()[0][1]
    hudi_spark.write(spark.createDataFrame(first), path, operation="upsert", options=opts)
    assert HudiTable.open(path).schedule_clustering(
        {"hoodie.clustering.plan.strategy.partition.selected": "sf"}
    )
    before = _rows(path)
    update = pa.table({"uuid": ["k0"], "ts": [200], "city": ["sf"], "fare": [1.0]})
    with pytest.raises(ClusteringUpdateError, match="in partition 'sf'"):
        hudi_spark.write(spark.createDataFrame(update), path, operation="upsert", options=opts)
    assert _rows(path) == before
    elsewhere = pa.table({"uuid": ["k1"], "ts": [200], "city": ["nyc"], "fare": [1.0]})
    hudi_spark.write(spark.createDataFrame(elsewhere), path, operation="upsert", options=opts)
    assert ("k1", 200, "nyc", 1.0) in _rows(path)
