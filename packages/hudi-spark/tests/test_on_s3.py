"""The Spark pipeline on S3: ``hudi_spark.write`` and every Spark read of a merge-on-read table
at ``s3://`` on moto's server (loopback), its Python tasks reaching the bucket with the options
the driver was given (the JVM never opens an ``s3://`` path: no S3 connector is installed)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.s3 import S3Bucket
from hudi_core.timeline.commit_metadata import CommitMetadata

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

COLUMNS = ["uuid", "ts", "city", "fare"]
SECRET = "s3cr3t-of-the-spark-tier-5d1c"


def _options(bucket: S3Bucket, index: str) -> dict[str, str]:
    return {
        **bucket.options,
        "hoodie.storage.s3.secret.key": SECRET,  # (moto takes any key pair)
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.index.type": index,
        "hoodie.bucket.index.num.buckets": "2",
        "hoodie.spark.write.single.task.max.bytes": "0",  # BUCKET: rows meet through the shuffle
        "hoodie.parquet.small.file.limit": "0",  # updates go to log files, inserts to new groups
        # the third delta commit compacts inline, on S3, in the write's services
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


@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET"])
def test_a_merge_on_read_table_on_s3_written_and_read_through_spark(
    spark: Any, s3_bucket: S3Bucket, index: str
) -> None:
    import hudi_spark

    uri = f"{s3_bucket.uri}/trips"
    opts = _options(s3_bucket, index)
    for op, data in _steps():
        # a write task's first attempt dies after writing its files: the retried attempt's files
        # are committed, the dead one's found by its markers on S3 and deleted
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
    # every data file on S3 is one a completed instant names: the dead attempts' are gone
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

    # the local engine, and Spark's reads: hudi_spark.read and format("hudi")
    assert _sorted(table.read(columns=COLUMNS)) == expected
    snapshot = hudi_spark.read(spark, uri, opts).select(*COLUMNS).toArrow()
    assert _sorted(snapshot) == expected
    through_format = spark.read.format("hudi").options(**opts).load(uri).select(*COLUMNS).toArrow()
    assert _sorted(through_format) == expected
    narrow = hudi_spark.read(spark, uri, opts).filter("city = 'nyc' AND fare > 900").select(*COLUMNS)
    assert _sorted(narrow.toArrow()) == [r for r in expected if r[2] == "nyc" and r[3] > 900]
    # read_optimized: the base files alone, the last upsert's updates (in logs) not among them;
    # the compaction left no deleted key in them
    optimized = hudi_spark.read(spark, uri, {**opts, "hoodie.datasource.query.type": "read_optimized"})
    base_rows = _sorted(optimized.select(*COLUMNS).toArrow())
    assert base_rows == _sorted(table.read("read_optimized", columns=COLUMNS))
    assert base_rows != expected and {r[0] for r in base_rows} <= {r[0] for r in expected}
    compaction = next(i for i in completed if i.action == "compaction")
    # what the last upsert changed: an incremental query from the compaction on
    since = hudi_spark.read(spark, uri, {
        **opts, "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": compaction.timestamp,
    })  # fmt: skip
    last = _steps()[-1][1]
    assert _sorted(since.select(*COLUMNS).toArrow()) == _sorted(last)

    # the credentials the options carried are written nowhere in the table
    leaked = [p for p in table.storage.walk_files(uri) if SECRET.encode() in table.storage.read_bytes(p.path)]
    assert leaked == []
