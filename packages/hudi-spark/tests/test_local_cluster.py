"""End to end on ``local-cluster[2,1,1024]``: executors are separate JVMs with their own Python
workers, so nothing may rely on driver-local state. Runs in a subprocess (one SparkContext per
process; the shared test session is ``local[2,2]``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import pyarrow as pa
    import hudi_spark
    from hudi_core import HudiTable

    path = sys.argv[1]
    spark = hudi_spark.spark_session("local-cluster[2,1,1024]", conf={"spark.local.dir": sys.argv[2]})
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts"}
    first = pa.table({"k": [str(i) for i in range(100)], "ts": [0] * 100, "p": ["a", "b"] * 50})
    second = pa.table({"k": [str(i) for i in range(50, 150)], "ts": [1] * 100, "p": ["a", "b"] * 50})
    hudi_spark.write(spark.createDataFrame(first).repartition(4), path, operation="upsert", options=opts)
    hudi_spark.write(spark.createDataFrame(second).repartition(4), path, operation="upsert", options=opts)
    # the BUCKET index's own plan (JVM hash, repartitionById; each task spills and writes one
    # group at a time, in the executors' local directories)
    bopts = {**opts, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "3",
             "hoodie.spark.write.task.max.bytes": "1", "hoodie.spark.write.single.task.max.bytes": "0"}
    for data in (first, second):
        hudi_spark.write(spark.createDataFrame(data).repartition(4), path + "_bucket", operation="upsert", options=bopts)
    pids = spark.sparkContext.parallelize(range(8), 8).map(lambda _: os.getppid()).distinct().collect()
    df = spark.read.format("hudi").load(path)
    rows = sorted((r["k"], r["ts"]) for r in df.select("k", "ts").collect())
    bdf = spark.read.format("hudi").load(path + "_bucket")
    bucket_rows = sorted((r["k"], r["ts"]) for r in bdf.select("k", "ts").collect())
    # collected to Arrow from the executors' Arrow files (hudi_spark.collect)
    arrow = hudi_spark.read(spark, path + "_bucket").toArrow()
    arrow_rows = sorted(zip(arrow.column("k").to_pylist(), arrow.column("ts").to_pylist()))
    left = [d for _, dirs, _ in os.walk(sys.argv[2]) for d in dirs if d.startswith("hudi-spark-collect-")]
    # counted in the executors' read tasks, no column decoded (hudi_spark.collect)
    counted = hudi_spark.read(spark, path + "_bucket", filters=[("k", ">=", "5")]).count()
    print(json.dumps({"rows": rows, "bucket_rows": bucket_rows, "arrow_rows": arrow_rows, "left": left,
                      "counted": counted,
                      "executor_daemons": len(pids),
                      "commits": len(HudiTable.open(path).timeline.completed_commits())}))
    spark.stop()
    """
)


def test_write_and_read_on_local_cluster(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "t"), str(tmp_path / "local")],
        capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["executor_daemons"] == 2  # really two executors
    assert result["commits"] == 2
    expected = sorted([(str(i), 0) for i in range(50)] + [(str(i), 1) for i in range(50, 150)])
    assert [tuple(r) for r in result["rows"]] == expected
    assert [tuple(r) for r in result["bucket_rows"]] == expected
    assert [tuple(r) for r in result["arrow_rows"]] == expected and result["left"] == []
    assert result["counted"] == sum(1 for k, _ in expected if k >= "5")
