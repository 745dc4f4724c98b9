"""The entry points that work on PySpark 3.5 and 4.x alike (issue #18): ``hudi_spark.write``,
``hudi_spark.write_stream``, ``hudi-py streamer`` and ``hudi_spark.read``. This module runs in
the 4.x Spark tier and, marked ``spark35``, in the Spark 3.5 tier (``make test-spark35``: a
PySpark 3.5 venv with our packages installed editable). Answers are checked against core's
local engine and core's reader."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.client.write_client import WriteClient
from hudi_core.errors import ConfigError
from hudi_core.testing.corpus import corpus_tables
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_spark.compat import has_data_source_api

#: PySpark 3.5 imports the standard library's ``distutils`` (deprecated since Python 3.10) for its
#: version checks on every Arrow path (``mapInArrow``'s pandas_udf, the schema converters), up to
#: 3.5.7; Spark 4 removed it (SPARK-45390). Nothing of ours imports it, and no 3.5 release can be
#: upgraded to: the one warning, from PySpark's own modules, is the upstream's
_PYSPARK35_DISTUTILS = "ignore:The distutils package is deprecated:DeprecationWarning:pyspark"
pytestmark = [
    pytest.mark.spark, pytest.mark.spark35, pytest.mark.xdist_group("spark"),
    pytest.mark.filterwarnings(_PYSPARK35_DISTUTILS),
]  # fmt: skip

DATA_COLS = ["uuid", "ts", "city", "fare"]
ON_4 = has_data_source_api()  # PySpark 4: format("hudi") is ours


def _df(spark: Any, table: pa.Table) -> Any:
    """A DataFrame of ``table`` (PySpark 3.5's createDataFrame takes no Arrow table; from pandas
    it calls pandas 2.2's deprecated ``is_categorical_dtype``: rows instead)."""
    from hudi_spark.compat import spark_schema

    if ON_4:
        return spark.createDataFrame(table)
    return spark.createDataFrame(table.to_pylist(), schema=spark_schema(table.schema))


def _opts(table_type: str, index: str, key: str = "uuid") -> dict[str, str]:
    return {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": key,
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.index.type": index,
        "hoodie.bucket.index.num.buckets": "2",
        "hoodie.spark.write.single.task.max.bytes": "0",  # rows meet through the shuffle
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
        {"uuid": ["k1", "k2", "k45"], "ts": [5000] * 3, "city": ["nyc", "la", "sf"], "fare": [0.0] * 3}
    )
    return [("upsert", first), ("upsert", second), ("delete", deletes)]


def _rows(path: str) -> list[tuple[Any, ...]]:
    t = HudiTable.open(path).read(columns=DATA_COLS)
    return sorted(zip(*(t.column(c).to_pylist() for c in DATA_COLS), strict=True))


@pytest.mark.parametrize(
    ("table_type", "index", "key"),
    [("COPY_ON_WRITE", "SIMPLE", "uuid"), ("MERGE_ON_READ", "BUCKET", "uuid"), ("MERGE_ON_READ", "BUCKET", "uuid,city")],
    ids=["cow-simple", "mor-bucket-jvm-hash", "mor-bucket-two-key-fields"],
)  # fmt: skip
def test_write_same_snapshot_as_local_engine(
    spark: Any, tmp_path: Path, table_type: str, index: str, key: str
) -> None:
    """upserts, precombine and a delete; BUCKET with two key fields hashes keys in Python (an
    Arrow UDF on 4.1+, a mapInArrow stage on 3.5)."""
    import hudi_spark

    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    opts = _opts(table_type, index, key)
    for op, data in _batches():
        if not HudiTable.exists(local):
            HudiTable.create(local, name="trips", table_type=table_type, record_key_fields=key,
                             partition_fields="city", ordering_field="ts", options=opts, schema=data.schema)  # fmt: skip
        WriteClient(HudiTable.open(local), opts).write(data, operation=op)
        res = hudi_spark.write(_df(spark, data).repartition(3), remote, operation=op, options=opts)
        assert res.instant is not None
    assert _rows(remote) == _rows(local)
    rows = {r[0]: r for r in _rows(remote)}
    assert rows["k0"][1] == 100 and "k1" not in rows and "k45" not in rows and rows["k31"][3] == 1001.0
    expected = "deltacommit" if table_type == "MERGE_ON_READ" else "commit"
    assert [i.action for i in HudiTable.open(remote).timeline.completed_commits()] == [expected] * 3


@pytest.mark.parametrize("way", ["write_stream", "format"])
def test_bulk_insert_then_write_stream(spark: Any, tmp_path: Path, way: str) -> None:
    """write_stream, and df.writeStream.format("hudi") in a driver that imported hudi_spark: one
    deltacommit per micro-batch (foreachBatch), later files update keys."""
    import hudi_spark

    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), str(tmp_path / "ckpt")
    src.mkdir()
    opts = {**_opts("MERGE_ON_READ", "SIMPLE"), "hoodie.compact.inline.max.delta.commits": "2"}
    first = _batches()[0][1]
    hudi_spark.write(_df(spark, first), table, operation="bulk_insert", options=opts)
    for n in range(3):
        pq.write_table(pa.table({"uuid": [f"k{i}" for i in range(5 * n, 5 * n + 5)], "ts": [2000 + n] * 5,
                                 "city": ["sf"] * 5, "fare": [float(n)] * 5}), src / f"part-{n}.parquet")  # fmt: skip
    stream = (
        spark.readStream.schema("uuid string, ts long, city string, fare double")
        .option("maxFilesPerTrigger", 1)
        .parquet(str(src))
    )
    if way == "write_stream":
        q = hudi_spark.write_stream(
            stream, table, options=opts, checkpoint_location=ckpt, trigger={"availableNow": True}
        )
    else:
        with pytest.raises(ConfigError, match=r'needs \.option\("checkpointLocation"'):
            stream.writeStream.format("hudi").options(**opts).start(table)
        writer = stream.writeStream.format("hudi").options(**opts).option("checkpointLocation", ckpt)
        q = writer.trigger(availableNow=True).outputMode("append").start(table)
    q.awaitTermination()
    if q.hudi_sink.compactor is not None:
        q.hudi_sink.compactor.wait()
    rows = {r[0]: r for r in _rows(table)}
    assert len(rows) == 40  # bulk_insert kept k0 twice; the stream's upserts keep one of each key
    assert [rows[f"k{i}"][1] for i in range(15)] == [2000 + i // 5 for i in range(15)]
    assert rows["k20"] == ("k20", 20, "sf", 20.0)
    completed = HudiTable.open(table).timeline.completed_commits()
    assert [i.action for i in completed].count("deltacommit") == 4


def test_streamer_cli_one_round(tmp_path: Path) -> None:
    """``hudi-py streamer`` in its own process, with this interpreter's PySpark: one round of a
    folder of JSON files into a merge-on-read table, with Spark and Hudi settings on the command
    line; the commit carries HoodieStreamer's checkpoint (the file's modification time in ms)
    and ours (the exact position)."""
    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    (src / "f1.json").write_text(
        "".join(f'{{"key": "k{i}", "ts": 1, "part": "p{i % 2}"}}\n' for i in range(4))
    )
    cmd = [
        sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", base, "--target-table", "t",
        "--table-type", "MERGE_ON_READ", "--source-path", str(src), "--record-key", "key",
        "--partition-field", "part", "--source-ordering-field", "ts", "--master", "local[1]", "--quick-start",
        "--spark-conf", "spark.sql.shuffle.partitions=3", "--hoodie-conf", "hoodie.bulkinsert.shuffle.parallelism=2",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "round 0: commit" in done.stderr
    table = HudiTable.open(base)
    assert table.config.table_type == "MERGE_ON_READ"
    t = table.read(columns=["key", "ts", "part"])
    assert sorted(t.column("key").to_pylist()) == ["k0", "k1", "k2", "k3"]
    (last,) = table.timeline.completed_commits()
    extra = CommitMetadata.from_json(table.timeline.read_details(last)).extra_metadata
    mtime_ns = (src / "f1.json").stat().st_mtime_ns
    assert extra["deltastreamer.checkpoint.key"] == str(mtime_ns // 10**6)
    assert extra["hoodie.py.streamer.checkpoint"] == f"{mtime_ns}:f1.json"


V6 = [t for t in corpus_tables() if t.get("table_version") == 6]


def _sorted(t: pa.Table) -> pa.Table:
    t = t.drop_columns([c for c in t.column_names if c.startswith("_hoodie_") and c != "_hoodie_record_key"])
    return t.sort_by([(c, "ascending") for c in ("_hoodie_record_key",) if c in t.column_names])


def _same(spark_table: pa.Table, core_table: pa.Table) -> None:
    assert spark_table.num_rows == core_table.num_rows
    core = core_table.select(spark_table.column_names)
    assert _sorted(spark_table).to_pylist() == _sorted(core.cast(spark_table.schema)).to_pylist()


def _queries(path: str) -> list[tuple[dict[str, str], pa.Table]]:
    table = HudiTable.open(path)
    commits = [i.timestamp for i in table.timeline.completed_commits()]
    first, last = commits[0], commits[-1]
    return [
        ({}, table.read()),
        ({"hoodie.datasource.query.type": "read_optimized"}, table.read("read_optimized")),
        ({"as.of.instant": first}, table.read(as_of=first)),
        ({"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first,
          "hoodie.datasource.read.end.instanttime": last}, table.read("incremental", start=first, end=last)),
        ({"hoodie.datasource.read.columns": "_hoodie_record_key,fare"},
         table.read(columns=["_hoodie_record_key", "fare"])),
    ]  # fmt: skip


def test_hudi_spark_read_answers_as_core_for_every_query_type(
    spark: Any, compat_root: Path, collected: Any
) -> None:
    """hudi_spark.read: format("hudi") on 4, Spark tasks on 3.5; the same rows as core's reader."""
    import hudi_spark

    entry = next(t for t in V6 if t["category"] == "trips_mor_avro")
    path = str(compat_root / entry["table_path"])
    for options, expected in _queries(path):
        got = collected(hudi_spark.read(spark, path, options))
        _same(got, expected)
    incremental = _queries(path)[3][0]
    assert collected(hudi_spark.read(spark, path, incremental)).num_rows > 0
    # filter and where of the read plan it again with core's filters (where is filter's own copy on 3.5)
    df = hudi_spark.read(spark, path)
    for narrow in (df.where("city = 'san_francisco' AND rider >= 'rider-C'"),
                   df.filter("city = 'san_francisco' AND rider >= 'rider-C'")):  # fmt: skip
        got = collected(narrow)
        assert sorted(got.column("rider").to_pylist()) == ["rider-C", "rider-D", "rider-E"]
        assert hasattr(narrow, "_hudi_methods")  # a read's DataFrame, planned with both filters
    # an aggregate of the read reads the columns it uses (a read planned with them alone)
    counts = {r["city"]: r["count"] for r in df.groupBy("city").count().collect()}
    cities = HudiTable.open(path).read(columns=["city"]).column("city").to_pylist()
    assert counts == {c: cities.count(c) for c in set(cities)}
    with pytest.raises(ConfigError, match=re.escape("hoodie.datasource.query.type='bogus'")):
        hudi_spark.read(spark, path, {"hoodie.datasource.query.type": "bogus"})


def test_hudi_spark_read_answers_a_cdc_query_on_each_version(
    spark: Any, tmp_path: Path, collected: Any
) -> None:
    """``hoodie.datasource.query.incremental.format=cdc``: the changes core's ``read_changes``
    answers (op, ts_ms, before, after), on 3.5 as on 4, with JSON or typed images."""
    import hudi_spark
    import pyarrow as pa

    path = str(tmp_path / "t")
    t = HudiTable.create(path, name="t", record_key_fields="id", ordering_field="ts",
                         options={"hoodie.table.cdc.enabled": "true"})  # fmt: skip
    t.bulk_insert(pa.table({"id": ["a", "b"], "ts": [1, 1]}))
    t.upsert(pa.table({"id": ["a", "c"], "ts": [2, 2]}))
    t.delete(pa.table({"id": ["b"], "ts": [3]}))
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "000",
               "hoodie.datasource.query.incremental.format": "cdc"}  # fmt: skip

    def rows(table: pa.Table) -> list[str]:
        return sorted(map(repr, table.select(["op", "ts_ms", "before", "after"]).to_pylist()))

    got = collected(hudi_spark.read(spark, path, options))
    assert rows(got) == rows(t.read_changes()) and sorted(got.column("op").to_pylist()) == [
        "d",
        "i",
        "i",
        "i",
        "u",
    ]
    # the images as typed structs (hoodie.spark.read.cdc.images=struct)
    typed = collected(hudi_spark.read(spark, path, {**options, "hoodie.spark.read.cdc.images": "struct"}))
    assert rows(typed) == rows(t.read_changes(images="struct"))
    assert {"id": "a", "ts": 1} in typed.column("before").to_pylist()


def test_read_in_tasks_equals_format_hudi(spark: Any, compat_root: Path) -> None:
    """3.5's read path (Spark tasks, no Data Source API) against format("hudi") on 4, query by
    query; on 3.5, where there is no format("hudi") of ours, against core's reader."""
    from hudi_spark.compat import to_arrow
    from hudi_spark.reading import read_in_tasks

    entry = next(t for t in V6 if t["category"] == "trips_mor_avro")
    path = str(compat_root / entry["table_path"])
    for options, expected in _queries(path):
        ours = read_in_tasks(spark, path, options)
        if ON_4:
            fmt = spark.read.format("hudi").options(**options).load(path)
            assert ours.schema == fmt.schema
            expected = to_arrow(fmt)
        _same(to_arrow(ours), expected)


def test_format_hudi_and_register_on_each_version(spark: Any, tmp_path: Path) -> None:
    """In a driver that imported hudi_spark, on 3.5 as on 4: df.write.format("hudi").save(path)
    is hudi_spark.write (an upsert by default, MERGE_ON_READ, BUCKET) and
    spark.read.format("hudi").load(path) is hudi_spark.read; register is optional on 4 and has
    nothing to do on 3.5."""
    import hudi_spark
    from hudi_spark.compat import to_arrow

    hudi_spark.register(spark)
    path, local = str(tmp_path / "t"), str(tmp_path / "local")
    opts = _opts("MERGE_ON_READ", "BUCKET")
    HudiTable.create(local, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                     partition_fields="city", ordering_field="ts", options=opts)  # fmt: skip
    for i, (op, batch) in enumerate(_batches()):  # upserts (Hudi's default operation), then a delete
        given = {} if op == "upsert" else {"hoodie.datasource.write.operation": op}
        writer = _df(spark, batch).write.format("hudi").options(**opts, **given)
        writer.save(path) if i == 0 else writer.mode("append").save(path)  # Spark's default mode first
        WriteClient(HudiTable.open(local), opts).write(batch, operation=op)
    loaded = spark.read.format("hudi").load(path)
    assert hasattr(loaded, "_hudi_methods")
    got, expected = to_arrow(loaded).to_pydict(), HudiTable.open(local).read().to_pydict()
    assert sorted(zip(got["uuid"], got["ts"], got["fare"], strict=True)) == sorted(
        zip(expected["uuid"], expected["ts"], expected["fare"], strict=True)
    )
    assert [i.action for i in HudiTable.open(path).timeline.completed_commits()] == ["deltacommit"] * len(
        _batches()
    )
