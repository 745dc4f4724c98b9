"""Spark benchmark: the write benchmark's workload (a bulk_insert of N rows, then ``--upserts``
upserts of N/10, half of them updates) through core's local engine and through
``hudi_spark.write`` on ``local[1]`` and ``local[2]``; Spark start-up is timed separately, and
so is Spark's own floor for the same rows (read, shuffle, one Arrow hop, no work).

``python benchmarks/spark_bench.py --rows 1000000 10000000`` (default 1M; sizes configurable).

Both engines start from the same parquet files on disk (``--source parquet``, the default: what a
data engineer's job reads), read inside the timing: ``pq.ParquetDataset(...).read()`` for the local engine,
``spark.read.parquet`` for Spark. ``--source cache`` feeds Spark a cached in-memory DataFrame
instead; the scan of Spark's columnar cache alone costs ~0.55 s per 1M rows on local[2] (a
``noop`` write), more than reading the parquet file (~0.15 s), so it measures the cache.

Every timed write runs ``--repeat`` times (default 3, each time into a new table) in both
engines and the median of each phase is printed: one run's phases vary by +-20% on a shared
machine. Ratios are printed against the local engine measured in the same run. About
``spark.sql.execution.arrow.maxRecordsPerBatch``: every JVM<->Python hop (mapInArrow, the
co-grouped index join) moves Arrow batches of at most this many rows; the probe measured the
hop at ~60 MB/s with 10k-row batches costing ~10% more than 100k-row batches, and core's stages
are vectorised per batch, so fewer, larger batches win. hudi-spark sets 100000 (``--batch`` to try
others); much larger batches only raise the Python workers' peak memory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from typing import Any

import numpy as np
import pyarrow as pa

OPTS = {
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": "4",
}


def make(n: int, start: int = 0, ts: int = 0) -> pa.Table:
    rng = np.random.default_rng(start)
    ids = np.arange(start, start + n)
    return pa.table({
        "uuid": pa.array(ids.astype(str)).cast(pa.string()),
        "ts": pa.array(np.full(n, ts, dtype=np.int64)),
        "city": pa.array(np.array(["sf", "nyc", "la", "sp", "ch"])[ids % 5]),
        "fare": pa.array(rng.random(n) * 100),
        "rider": pa.array(np.char.add("rider-", (ids % 1000).astype(str))),
    })  # fmt: skip


#: extra Spark settings for every session (``--conf k=v``)
SPARK_CONF: dict[str, str] = {}

#: rows of the warm-up writes that run before the timed ones (in both engines)
WARM_ROWS = 1_000_000


def write_inputs(
    n: int, root: str, files: int, name: str = "input", upserts: int = 1
) -> tuple[list[str], list[list[str]]]:
    """The bulk_insert input (N rows) and ``upserts`` upsert inputs (N/10 rows each, half updates
    of the rows before it, half new) as parquet files, ``files`` of each (Spark reads one file per task)."""
    import pyarrow.parquet as pq

    def save(kind: str, data: pa.Table) -> list[str]:
        os.makedirs(f"{root}/{name}/{kind}")
        step = -(-data.num_rows // files)
        paths = [f"{root}/{name}/{kind}/part-{i}.parquet" for i in range(files)]
        for i, p in enumerate(paths):
            pq.write_table(data.slice(i * step, step), p)
        return paths

    first = save("first", make(n))
    return first, [
        save(f"upsert-{i}", make(n // 10, n - n // 20 + i * (n // 20), ts=1 + i)) for i in range(upserts)
    ]


def median_phases(runs: list[tuple[float, list[float]]]) -> tuple[float, list[float]]:
    """The median bulk_insert and the median of each upsert over repeated runs of the workload."""
    import statistics

    return statistics.median(b for b, _ in runs), [
        statistics.median(u[i] for _, u in runs) for i in range(len(runs[0][1]))
    ]


def run_local(root: str, first: list[str], upserts: list[list[str]], warm: tuple[list[str], list[list[str]]],
              repeat: int = 1) -> tuple[float, list[float]]:  # fmt: skip
    import pyarrow.parquet as pq
    from hudi_core import HudiTable
    from hudi_core.client.write_client import WriteClient

    def once(path: str, first: list[str], upserts: list[list[str]]) -> tuple[float, list[float]]:
        HudiTable.create(path, name="bench", table_type="MERGE_ON_READ", record_key_fields="uuid",
                         partition_fields="city", ordering_field="ts", options=OPTS, schema=make(1).schema)  # fmt: skip
        t0 = time.perf_counter()
        WriteClient(HudiTable.open(path), OPTS).write(
            pq.ParquetDataset(first).read(), operation="bulk_insert"
        )
        bulk, times = time.perf_counter() - t0, []
        for files in upserts:
            t1 = time.perf_counter()
            WriteClient(HudiTable.open(path), OPTS).write(pq.ParquetDataset(files).read(), operation="upsert")
            times.append(time.perf_counter() - t1)
        return bulk, times

    once(f"{root}/local-warm-up", *warm)  # as for Spark: the timed write is not the process's first
    runs = []
    for i in range(repeat):
        runs.append(once(f"{root}/local-{i}", first, upserts))
        shutil.rmtree(f"{root}/local-{i}", ignore_errors=True)
    return median_phases(runs)


def machine_cpu_seconds() -> float:
    """CPU seconds the whole machine spent busy (JVM, Python workers, driver): /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / os.sysconf("SC_CLK_TCK")  # user nice system irq softirq


def _cpu_work(_: int) -> float:
    """A few seconds of CPU-bound Python and Arrow work (compute, sort, gzip parquet)."""
    import io

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = time.perf_counter()
    a = pa.array(np.random.default_rng(0).random(3_000_000))
    keys = pa.array(np.char.add("k", np.arange(300_000).astype(str)))
    for _ in range(5):
        pc.sum(pc.multiply(a, a))
        pc.sort_indices(keys)
        pq.write_table(pa.table({"a": a}), io.BytesIO(), compression="gzip")
    x = 0
    for i in range(3_000_000):
        x += i
    return time.perf_counter() - t


def machine_scaling() -> float:
    """The speed-up of doing the same CPU-bound work in two processes at once over doing it
    twice in one process: the ceiling for local[2] over local[1] on this machine."""
    import multiprocessing as mp

    one = min(_cpu_work(0) for _ in range(2))
    with mp.get_context("spawn").Pool(2) as pool:
        two = min(max(pool.map(_cpu_work, [0, 1])) for _ in range(2))
    return 2 * one / two


def python_worker_peak_rss_mb() -> float:
    """Largest peak RSS (VmHWM) of the live PySpark Python workers (forked by pyspark.daemon)."""
    peak = 0.0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"pyspark.daemon" not in f.read():
                    continue
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return peak


def run_spark(master: str, n: int, root: str, batch: int, java_opts: str, memory: str, source: str,
              inputs: tuple[list[str], list[list[str]]], warm: tuple[list[str], list[list[str]]],
              repeat: int = 1) -> tuple[float, float, list[float]]:  # fmt: skip
    import hudi_spark

    t0 = time.perf_counter()
    conf = {
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(batch),
        # the test session's C1-only JIT (quick start) makes the JVM side of every Arrow hop
        # ~2x slower on big inputs: a real job keeps the full JIT
        "spark.driver.extraJavaOptions": java_opts,
        "spark.driver.memory": memory,
        **SPARK_CONF,
    }
    spark = hudi_spark.spark_session(master, conf=conf)
    # The first writes of a session start the Python workers (which import pyarrow, pandas and
    # hudi_core) and run the JVM's shuffle and Arrow code before the JIT has compiled it: the
    # same bulk_insert + upserts of up to 1M rows run first into a throwaway table, reported
    # with start-up (a 1M-row bulk_insert took 4.2 s cold and 2.4 s warm on local[2])
    w0 = time.perf_counter()
    hudi_spark.write(
        spark.read.parquet(*warm[0]), f"{root}/warm-up-{master}", operation="bulk_insert", options=OPTS
    )
    for files in warm[1]:
        hudi_spark.write(
            spark.read.parquet(*files), f"{root}/warm-up-{master}", operation="upsert", options=OPTS
        )
    print(
        f"    {master}: warm-up bulk_insert + upserts of {min(n, WARM_ROWS):,} rows {time.perf_counter() - w0:.2f}s (not counted)"
    )
    startup = time.perf_counter() - t0
    floor = [spark_floor(spark, files) for files in (inputs[0], inputs[1][0])]
    print(f"    {master}: Spark's own floor (read + shuffle + one Arrow hop into Python, no work; best of 3): "
          f"{n:,} rows {floor[0]:.2f}s, {n // 10:,} rows {floor[1]:.2f}s")  # fmt: skip
    first_bytes = make(n).nbytes
    runs, wall, cpu = [], [0.0, 0.0], [0.0, 0.0]
    for r in range(repeat):
        path = f"{root}/spark-{master}-{r}"
        if source == "cache":
            first = spark.createDataFrame(make(n)).cache()
            upd = [
                spark.createDataFrame(make(n // 10, n - n // 20 + i * (n // 20), ts=1 + i)).cache()
                for i in range(len(inputs[1]))
            ]
            first.count(), [u.count() for u in upd]
        else:
            first, upd = spark.read.parquet(*inputs[0]), [spark.read.parquet(*files) for files in inputs[1]]
        t1, c1 = time.perf_counter(), machine_cpu_seconds()
        hudi_spark.write(first, path, operation="bulk_insert", options=OPTS)
        t2, c2 = time.perf_counter(), machine_cpu_seconds()
        times = []
        for df in upd:
            t = time.perf_counter()
            hudi_spark.write(df, path, operation="upsert", options=OPTS)
            times.append(time.perf_counter() - t)
        t3, c3 = time.perf_counter(), machine_cpu_seconds()
        runs.append((t2 - t1, times))
        wall, cpu = [wall[0] + t2 - t1, wall[1] + t3 - t2], [cpu[0] + c2 - c1, cpu[1] + c3 - c2]
        if source == "cache":
            for cached in (first, *upd):
                cached.unpersist()
        shutil.rmtree(path, ignore_errors=True)
    print(f"    {master}: cores busy on average (machine CPU / wall): bulk_insert {cpu[0] / wall[0]:.2f}, "
          f"upserts {cpu[1] / wall[1]:.2f}; Python worker peak RSS {python_worker_peak_rss_mb():.0f} MB "
          f"(input {first_bytes / 2**20:.0f} MB in Arrow)")  # fmt: skip
    bulk, times = median_phases(runs)
    spark.stop()
    return startup, bulk, times


def spark_floor(spark: Any, files: list[str]) -> float:
    """What any distributed write of these rows costs in Spark before it does any work: read
    the parquet files, shuffle the rows by key across the default parallelism, and move them
    into Python workers as Arrow, where they are only counted (best of 3)."""
    import pyarrow as pa

    def count(batches: Any) -> Any:
        yield pa.RecordBatch.from_pydict({"n": [sum(b.num_rows for b in batches)]})

    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        df = spark.read.parquet(*files)
        df.repartition(spark.sparkContext.defaultParallelism, "uuid").mapInArrow(count, "n long").collect()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    ap.add_argument("--batch", type=int, default=100_000, help="spark.sql.execution.arrow.maxRecordsPerBatch")
    ap.add_argument("--java-opts", default="-XX:+UseParallelGC", help="spark.driver.extraJavaOptions")
    ap.add_argument("--driver-memory", default="3g", help="spark.driver.memory (local mode: executors too)")
    ap.add_argument(
        "--option", action="append", default=[], help="k=v write option for every write (both engines)"
    )
    ap.add_argument(
        "--skip-local", action="store_true", help="do not time the local engine (ratios print as nan)"
    )
    ap.add_argument(
        "--source",
        choices=["parquet", "cache"],
        default="parquet",
        help="Spark's input: the parquet files both engines read (default) or a cached DataFrame",
    )
    ap.add_argument("--files", type=int, default=4, help="parquet files per input")
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of the timed workload per engine; medians are printed"
    )
    ap.add_argument(
        "--upserts",
        type=int,
        default=2,
        help="upserts of N/10 rows after the bulk_insert (the write benchmark's workload)",
    )
    ap.add_argument("--conf", action="append", default=[], help="k=v Spark setting for every session")
    ap.add_argument(
        "--machine-check",
        action="store_true",
        help="first print how well the machine scales CPU-bound work over two processes (~20 s)",
    )
    args = ap.parse_args(argv)
    if args.machine_check:
        print(
            f"machine: two processes do CPU-bound work {machine_scaling():.2f}x as fast as one (the ceiling for local[2] over local[1])"
        )
    SPARK_CONF.update(dict(c.split("=", 1) for c in args.conf))
    OPTS.update(dict(o.split("=", 1) for o in args.option))
    for n in args.rows:
        root = tempfile.mkdtemp(prefix="spark-bench-")
        try:
            inputs = write_inputs(n, root, args.files, upserts=args.upserts)
            warm = write_inputs(min(n, WARM_ROWS), root, args.files, name="warm-up", upserts=args.upserts)
            if args.skip_local:
                lb, lu = float("nan"), [float("nan")] * args.upserts
            else:
                lb, lu = run_local(root, *inputs, warm, repeat=args.repeat)
            print(f"rows={n:,}  medians of {args.repeat} run(s)")
            print(
                f"rows={n:,}  local engine: bulk_insert {lb:.2f}s ({n / lb:,.0f} rows/s), upserts of {n // 10:,} rows {_times(lu)}"
            )
            results = {}
            for master in args.masters:
                s, b, u = run_spark(master, n, root, args.batch, args.java_opts, args.driver_memory, args.source, inputs, warm,
                                    repeat=args.repeat)  # fmt: skip
                print(f"rows={n:,}  spark {master}: start-up + warm-up {s:.1f}s (not counted), bulk_insert {b:.2f}s "
                      f"({n / b:,.0f} rows/s, {b / lb:.2f}x local), upserts {_times(u)} ({sum(u) / sum(lu):.2f}x local); "
                      f"workload (bulk_insert + {len(u)} upserts) {b + sum(u):.2f}s ({(b + sum(u)) / (lb + sum(lu)):.2f}x local)")  # fmt: skip
                results[master] = (b, sum(u))
            if {"local[1]", "local[2]"} <= set(results):
                (b1, u1), (b2, u2) = results["local[1]"], results["local[2]"]
                print(f"rows={n:,}  local[2] over local[1]: bulk_insert {b1 / b2:.2f}x, upserts {u1 / u2:.2f}x, "
                      f"workload {(b1 + u1) / (b2 + u2):.2f}x faster")  # fmt: skip
        finally:
            shutil.rmtree(root, ignore_errors=True)


def _times(times: list[float]) -> str:
    return "+".join(f"{t:.2f}" for t in times) + "s"


if __name__ == "__main__":
    main()
