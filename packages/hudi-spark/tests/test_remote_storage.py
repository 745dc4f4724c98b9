"""The Spark pipeline on remote storage: ``hudi_spark.write`` and every Spark read of a
merge-on-read table at ``s3://`` on moto's server and at ``hdfs://`` on an HDFS mini cluster (both
on loopback). The Python tasks reach the store with the options the driver was given; on HDFS
Spark's own parquet reader reads the base files it can (the JVM's HDFS client); on S3 the tasks
read everything in the tier's session (no S3 connector in its JVM), and in a PySpark 4 and a 3.5
job whose JVM has Hadoop's S3A connector Spark's reader reads those base files as ``s3a://``
when ``hoodie.spark.read.jvm.object.store`` asks it to."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.s3 import S3Bucket
from hudi_core.timeline.commit_metadata import CommitMetadata

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

COLUMNS = ["uuid", "ts", "city", "fare"]
SECRET = "s3cr3t-of-the-spark-tier-5d1c"


@dataclass(frozen=True)
class Store:
    uri: str  # the table's
    options: dict[str, str]  # what reaches it (S3: endpoint and keys)


@pytest.fixture
def store(request: pytest.FixtureRequest, spark: Any) -> Store:
    """A table location on S3 or HDFS. ``spark`` comes first: its JVM is launched (a fork that
    runs Python's after-fork handlers) before this process uses hdfs-native, whose threads would
    leave fsspec's handler waiting in the child for ever."""
    if request.param == "s3":
        bucket: S3Bucket = request.getfixturevalue("s3_bucket")
        # (moto takes any key pair: the secret is one no other setting holds)
        return Store(f"{bucket.uri}/trips", {**bucket.options, "hoodie.storage.s3.secret.key": SECRET})
    root: str = request.getfixturevalue("hdfs_root")
    return Store(f"{root}/spark-{uuid.uuid4().hex}", {})


def _options(store: Store, index: str) -> dict[str, str]:
    return {
        **store.options,
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.index.type": index,
        "hoodie.bucket.index.num.buckets": "2",
        "hoodie.spark.write.single.task.max.bytes": "0",  # BUCKET: rows meet through the shuffle
        "hoodie.parquet.small.file.limit": "0",  # updates go to log files, inserts to new groups
        # the third delta commit compacts inline, in the remote store, in the write's services
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "3",
    }


def _steps() -> list[tuple[str, pa.Table]]:
    def rows(keys: range, ts: int, fare: float) -> pa.Table:
        return pa.table({
            "uuid": [f"k{i:03d}" for i in keys], "ts": [ts + i for i in keys],
            "city": [("sf", "nyc", "la")[i % 3] for i in keys], "fare": [fare + i for i in keys],
        })  # fmt: skip

    return [
        ("bulk_insert", rows(range(0, 120), 0, 0.0)),
        ("upsert", rows(range(100, 160), 1000, 500.0)),  # 20 updates, 40 new keys
        ("delete", rows(range(0, 120, 10), 5000, 0.0)),
        ("upsert", rows(range(5, 150, 5), 2000, 900.0)),  # updates, and deleted keys written again
    ]


def _expected() -> list[tuple[Any, ...]]:
    """The rows the steps leave (each key's latest step; deletes remove)."""
    rows: dict[str, tuple[Any, ...]] = {}
    for op, data in _steps():
        for row in zip(*(data.column(c).to_pylist() for c in COLUMNS), strict=True):
            if op == "delete":
                rows.pop(row[0], None)
            else:
                rows[row[0]] = row
    return sorted(rows.values())


def _sorted(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(zip(*(table.column(c).to_pylist() for c in COLUMNS), strict=True))


@pytest.mark.parametrize(
    ("store", "index"), [("s3", "SIMPLE"), ("s3", "BUCKET"), ("hdfs", "SIMPLE")], indirect=["store"]
)
def test_a_merge_on_read_table_on_remote_storage_written_and_read_through_spark(
    spark: Any, store: Store, index: str, collected: Any
) -> None:
    import hudi_spark

    uri = store.uri
    opts = _options(store, index)
    for op, data in _steps():
        # a write task's first attempt dies after writing its files: the retried attempt's files
        # are committed, the dead one's found by its markers and deleted
        retried = {"hoodie.spark.testing.fail.first.write.attempt": "true"} if op == "upsert" else {}
        result = hudi_spark.write(
            spark.createDataFrame(data).repartition(2), uri, operation=op, options={**opts, **retried}
        )
        assert result.instant is not None
    expected = _expected()

    table = HudiTable.open(uri, options=opts)
    completed = table.timeline.completed()
    actions = [i.action for i in completed]
    assert actions.count("deltacommit") == 4 and actions.count("compaction") == 1  # the inline one
    # every data file is one a completed instant names: the dead attempts' are gone
    named: set[str] = set()
    for instant in completed:
        meta = CommitMetadata.from_json(table.timeline.read_details(instant))
        for stat in meta.all_write_stats():
            named.add(stat.path.rsplit("/", 1)[-1])
            named.update(f.rsplit("/", 1)[-1] for f in stat.log_files or [])
    stored = {
        info.name
        for city in ("sf", "nyc", "la")
        for info in table.storage.list(f"{uri}/{city}")
        if not info.name.startswith(".hoodie_partition_metadata")
    }
    assert stored and stored <= named

    # the local engine, and Spark's reads: hudi_spark.read and format("hudi"), each collected by
    # Spark (with the rows of its parquet scans, on HDFS) and by the read tasks, and counted
    assert _sorted(table.read(columns=COLUMNS)) == expected
    snapshot = collected(hudi_spark.read(spark, uri, opts).select(*COLUMNS))
    assert _sorted(snapshot) == expected
    through_format = collected(spark.read.format("hudi").options(**opts).load(uri).select(*COLUMNS))
    assert _sorted(through_format) == expected
    narrow = hudi_spark.read(spark, uri, opts).filter("city = 'nyc' AND fare > 900").select(*COLUMNS)
    assert _sorted(collected(narrow)) == [r for r in expected if r[2] == "nyc" and r[3] > 900]
    # read_optimized: the base files alone, the last upsert's updates (in logs) not among them;
    # the compaction left no deleted key in them
    optimized = hudi_spark.read(spark, uri, {**opts, "hoodie.datasource.query.type": "read_optimized"})
    base_rows = _sorted(collected(optimized.select(*COLUMNS)))
    assert base_rows == _sorted(table.read("read_optimized", columns=COLUMNS))
    assert base_rows != expected and {r[0] for r in base_rows} <= {r[0] for r in expected}
    scanned = optimized.inputFiles()  # the base files Spark's own parquet scan reads
    if uri.startswith("hdfs://"):
        assert scanned and all(f.startswith(f"{uri}/") and f.endswith(".parquet") for f in scanned)
    else:  # no S3 connector in the JVM: the tasks read every split, even when asked to leave them
        assert scanned == []
        asked = {
            **opts,
            "hoodie.datasource.query.type": "read_optimized",
            "hoodie.spark.read.jvm.object.store": "true",
        }
        optimized = hudi_spark.read(spark, uri, asked)
        assert optimized.inputFiles() == [] and _sorted(collected(optimized)) == base_rows
    compaction = next(i for i in completed if i.action == "compaction")
    # what the last upsert changed: an incremental query from the compaction on
    since = hudi_spark.read(spark, uri, {
        **opts, "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": compaction.timestamp,
    })  # fmt: skip
    last = _steps()[-1][1]
    assert _sorted(collected(since.select(*COLUMNS))) == _sorted(last)

    # the credentials the options carried are written nowhere in the table
    if store.options:
        leaked = [
            p for p in table.storage.walk_files(uri) if SECRET.encode() in table.storage.read_bytes(p.path)
        ]
        assert leaked == []


#: a PySpark job whose JVM has Hadoop's S3A connector (a session of its own: the tier's shared
#: one cannot take jars once started) reads each table of its arguments with hudi_spark.read
JVM_S3_JOB = """
import json, sys
import hudi_spark
from hudi_spark.session import spark_session

args = json.loads(open(sys.argv[1]).read())
conf = {"spark.jars": ",".join(args["jars"]), **{f"spark.hadoop.{k}": v for k, v in args["hadoop"].items()}}
spark = spark_session("local[2]", conf=conf)
out = []
for uri, options in args["reads"]:
    df = hudi_spark.read(spark, uri, options)
    rows = sorted([r.key, r.ts, r.v, r.part] for r in df.select("key", "ts", "v", "part").collect())
    out.append({"files": sorted(df.inputFiles()), "rows": rows})
print("RESULT " + json.dumps(out))
spark.stop()
"""


def _mor_table(uri: str, options: dict[str, str]) -> HudiTable:
    """A merge-on-read table (BUCKET, 2 buckets) whose partition ``a`` has log files after an
    upsert and partition ``b`` none."""
    opts = {**options, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
    table = HudiTable.create(uri, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                             partition_fields="part", ordering_field="ts", options=opts)  # fmt: skip

    def rows(part: str, n: int, ts: int) -> pa.Table:
        return pa.table({"key": [f"{part}{i:03d}" for i in range(n)], "ts": pa.array([ts] * n, pa.int64()),
                         "v": [float(ts + i) for i in range(n)], "part": [part] * n})  # fmt: skip

    table.bulk_insert(pa.concat_tables([rows("a", 40, 1), rows("b", 40, 1)]), options=opts)
    HudiTable.open(uri, options=opts).upsert(rows("a", 10, 2), options=opts)
    return HudiTable.open(uri, options=opts)


def _pyspark_python(version: str) -> str:
    """The interpreter of a PySpark ``version`` ("4": this one; "3.5": the Spark 3.5 tier's venv,
    with our packages installed editable, made if missing)."""
    import sys

    if version == "4":
        return sys.executable
    import spark35

    return str(spark35.ensure())


@pytest.mark.slow
@pytest.mark.parametrize("pyspark", ["4", "3.5"])
def test_spark_reads_s3_base_files_in_its_jvm_when_it_has_an_s3_connector(
    s3_bucket: S3Bucket, tmp_path: Path, pyspark: str
) -> None:
    """With ``hoodie.spark.read.jvm.object.store``, on a session whose JVM has Hadoop's S3A
    connector (of the Hadoop its PySpark ships) and reaches the bucket (its own settings),
    ``hudi_spark.read`` lets Spark's parquet reader read the base files of ``s3://`` tables as
    ``s3a://`` (read_optimized: all; snapshot: those without logs, or all with the merge told as
    a delta), the rest merged in Python tasks; a bucket the JVM cannot reach, and any table
    without the option, is read in Python tasks alone. Every answer is the local engine's."""
    import subprocess

    import s3a
    from hudi_spark.reading import ReadSpec, plan, read_schema

    python = _pyspark_python(pyspark)
    where = "import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent / 'jars')"
    pyspark_jars = Path(
        subprocess.run([python, "-c", where], check=True, capture_output=True, text=True).stdout.strip()
    )
    jars = s3a.s3a_jars(s3a.hadoop_version(pyspark_jars))
    server = s3_bucket.server
    other = server.create_bucket(f"hudi-{uuid.uuid4().hex[:12]}")
    tables = {b.name: _mor_table(f"{b.uri}/t", b.options) for b in (s3_bucket, other)}
    # the second bucket, to the JVM, is at a closed port: its probe fails at once
    closed = f"fs.s3a.bucket.{other.name}"
    hadoop = {**s3a.s3a_settings(server.endpoint_url), f"{closed}.endpoint": "http://127.0.0.1:9",
              f"{closed}.retry.limit": "0", f"{closed}.attempts.maximum": "0"}  # fmt: skip
    ours = tables[s3_bucket.name]
    queries = [
        {},
        {"hoodie.spark.read.jvm.delta": "true"},
        {"hoodie.datasource.query.type": "read_optimized"},
    ]
    jvm = {"hoodie.spark.read.jvm.object.store": "true"}
    reads = [(ours.base_uri, {**s3_bucket.options, **jvm, **q}) for q in queries]
    reads.append((tables[other.name].base_uri, {**other.options, **jvm}))
    reads.append((ours.base_uri, s3_bucket.options))  # the default: Python tasks alone
    job = tmp_path / "job.py"
    job.write_text(JVM_S3_JOB)
    (tmp_path / "args.json").write_text(
        json.dumps({"jars": [str(j) for j in jars], "hadoop": hadoop, "reads": reads})
    )
    done = subprocess.run([python, str(job), str(tmp_path / "args.json")], capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    snapshot, delta, optimized, unreachable, default = json.loads(line.removeprefix("RESULT "))

    def base_files(*, with_logs: bool) -> list[str]:
        spec = ReadSpec.from_options({**s3_bucket.options, "path": ours.base_uri})
        splits = plan(spec, read_schema(spec).names)
        return sorted("s3a://" + s.base_file.path.split("://", 1)[1]
                      for s in splits if with_logs or not s.log_files)  # fmt: skip

    def model(table: HudiTable, query: str = "snapshot") -> list[list[Any]]:
        got = table.read(query, columns=["key", "ts", "v", "part"])
        return sorted(
            list(r) for r in zip(*(got.column(c).to_pylist() for c in got.column_names), strict=True)
        )

    assert snapshot["rows"] == delta["rows"] == model(ours)
    assert optimized["rows"] == model(ours, "read_optimized") != model(ours)
    # the JVM's scans: partition b's base files alone (a's have logs); with the delta, all
    assert snapshot["files"] == base_files(with_logs=False)
    assert len(snapshot["files"]) == 2 and all("/t/b/" in f for f in snapshot["files"])
    assert delta["files"] == optimized["files"] == base_files(with_logs=True)
    assert len(optimized["files"]) == 4
    assert unreachable["files"] == [] and unreachable["rows"] == model(tables[other.name])
    assert default["files"] == [] and default["rows"] == model(ours)
