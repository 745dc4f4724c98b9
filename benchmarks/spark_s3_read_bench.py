"""``hudi_spark.read`` of a merge-on-read table on S3 (moto's server on loopback): the Python
tasks reading every file slice (the default) against Spark's own parquet reader reading the base
files through Hadoop's S3A connector (``hoodie.spark.read.jvm.object.store=true``).

The write benchmark's trips (``--rows``, 2 base files per partition), then an upsert of the first
tenth of the rows: the file groups holding those keys get log files, half of the slices. Our
session's JVM gets the S3A connector of the Hadoop its PySpark ships (``tests/tools/s3a.py``,
fetched by Maven's client once) pointed at the server, through a counting proxy. Each query runs
``--repeat`` times in one session, both paths alternating (the first round dropped), into
Spark's ``noop`` sink; S3A's default input stream (3.5.0: ``analytics``, which keeps what it
read across reads of an unchanged file) and its ``classic`` stream, each in a session of its own.
Printed: medians, the ratio JVM / Python, and the requests each read made by kind.

    .venv/bin/python benchmarks/spark_s3_read_bench.py --rows 2000000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

PATHS = {"python": {}, "jvm": {"hoodie.spark.read.jvm.object.store": "true"}}


def make_table(uri: str, options: dict[str, str], rows: int) -> None:
    from hudi_core import HudiTable
    from write_bench import trips

    data = trips(rows, 0, 1, np.random.default_rng(1))
    table = HudiTable.create(uri, name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=options)  # fmt: skip
    table.bulk_insert(data, options=options)
    updates = data.slice(0, rows // 10)
    updates = updates.set_column(
        updates.schema.get_field_index("ts"), "ts", pa.array([2] * updates.num_rows, pa.int64())
    )
    HudiTable.open(uri, options=options).upsert(updates, options=options)


def measure(spark: Any, proxy: Any, uri: str, options: dict[str, str], repeat: int) -> None:
    import hudi_spark
    from s3_requests import _kind

    for query in ("read_optimized", "snapshot"):
        times: dict[str, list[float]] = {p: [] for p in PATHS}
        requests: dict[str, Counter[str]] = {}
        for n in range(repeat):
            for path, extra in PATHS.items() if n % 2 else reversed(PATHS.items()):
                start = len(proxy.seen)
                t0 = time.perf_counter()
                df = hudi_spark.read(spark, uri, {**options, **extra, "hoodie.datasource.query.type": query})
                df.write.format("noop").mode("overwrite").save()
                times[path].append(time.perf_counter() - t0)
                requests[path] = Counter(_kind(q) for q in proxy.seen[start:])
        med = {p: statistics.median(t[1:]) for p, t in times.items()}
        print(f"  {query}: python {med['python']:.2f} s, jvm {med['jvm']:.2f} s, jvm / python "
              f"{med['jvm'] / med['python']:.2f}x", flush=True)  # fmt: skip
        for path, kinds in requests.items():
            shown = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            print(f"    {path}: {sum(kinds.values())} requests a read ({shown})", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=6)
    args = ap.parse_args()
    import s3a
    from hudi_core.testing.s3 import FAKE_AWS_ENV, FlakyS3Proxy, MotoS3Server
    from hudi_spark.session import spark_session

    os.environ.update(FAKE_AWS_ENV)
    with MotoS3Server() as server, FlakyS3Proxy(server.endpoint_url) as proxy:
        bucket = server.create_bucket("spark-s3-read")
        uri = f"{bucket.uri}/trips"
        options = {**bucket.options, "hoodie.storage.s3.endpoint": proxy.endpoint_url}
        t0 = time.perf_counter()
        make_table(uri, options, args.rows)
        print(f"{args.rows} rows on S3 in {time.perf_counter() - t0:.1f} s", flush=True)
        for stream in ("analytics", "classic"):
            conf = {
                **s3a.s3a_session_conf(proxy.endpoint_url),
                "spark.hadoop.fs.s3a.input.stream.type": stream,
            }
            spark = spark_session("local[2]", app_name="spark-s3-read", conf=conf, fast=False)
            print(f"S3A input stream {stream}:", flush=True)
            try:
                measure(spark, proxy, uri, options, args.repeat)
            finally:
                spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
