"""One engine's side of ``spark_vs_hudi_bench.py``: the workload through one Spark session.

Runs in the environment of the engine it measures and imports nothing of the other:
``--engine hudi`` in the Apache Hudi test tier's PySpark 3.5.1 environment with Hudi 0.15's Spark
bundle (``df.write.format("hudi")``, Hudi's own reader); ``--engine ours`` in the project's
environment (``hudi_spark.write``, ``hudi_spark.read``). Inputs are read from the
workload's parquet files and cached in Spark before any timing. Prints one JSON object: seconds
per phase and the answers of the reads (row count, sum of ``ts``), which the caller compares.
With ``--serve`` the process writes, then runs the reads one at a time as the caller asks, so
that two engines' processes can take turns read by read (the caller times them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HUDI_SESSION_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
}
#: the same on both sides: local[2] with two shuffle partitions, UTC, 3 GB of driver memory (--driver-memory)
COMMON_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "3g",
    "spark.driver.maxResultSize": "0",  # no cap: the 10M line collects 12.5M rows to Arrow (> 1 GB)
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4",
          "hoodie.bucket.index.hash.field": "uuid"}  # fmt: skip


def write_options(index: str) -> dict[str, str]:
    opts = {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        # Hudi's Spark writer turns inline compaction on for MOR: both sides keep the log files the
        # reads are about, and neither keeps a metadata table (ours has none)
        "hoodie.compact.inline": "false",
        "hoodie.metadata.enable": "false",
        "hoodie.parquet.compression.codec": "zstd",
    }
    return {**opts, **(BUCKET if index == "BUCKET" else {})}


def session(
    engine: str, bundle: str | None, master: str = "local[2]", driver_memory: str | None = None
) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(f"bench-{engine}")
    conf = dict(COMMON_CONF)
    if driver_memory:
        conf["spark.driver.memory"] = driver_memory
    if engine == "hudi":
        conf.update(HUDI_SESSION_CONF)
        conf["spark.jars"] = str(bundle)
    else:
        from hudi_spark.session import REQUIRED_CONF, prepare_environment

        prepare_environment(master)  # the Python workers run this interpreter
        conf.update(REQUIRED_CONF)
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class WorkerPeak:
    """The largest resident set of any Spark Python worker (``pyspark.daemon`` and the workers
    it forks), sampled every 50 ms on a thread: what a task's Python side holds at its peak."""

    def __init__(self) -> None:
        import threading

        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def reset(self) -> None:
        self.peak_kb = 0

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if not _python_worker(f.read()):
                            continue
                    with open(f"/proc/{pid}/status") as f:
                        rss = next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:"))
                except (OSError, StopIteration, ValueError):
                    continue  # the process ended meanwhile
                self.peak_kb = max(self.peak_kb, rss)


def _python_worker(cmdline: bytes) -> bool:
    """A Spark Python worker's command line: ``pyspark.daemon`` and the workers it forks."""
    return b"pyspark.daemon" in cmdline


def tree_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of this process's descendants so far, split into the JVM
    (``java``) and Spark's Python workers (``pyspark.daemon`` and the workers it forks): where a
    write's time goes on each side of the row-to-Arrow hop."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    kind: dict[int, str] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue  # the process ended meanwhile
        p = int(pid)
        parent[p], cpu[p] = int(fields[1]), (int(fields[11]) + int(fields[12])) / tick
        if cmd.split(b"\0", 1)[0].endswith(b"java"):
            kind[p] = "jvm"
        elif _python_worker(cmd):
            kind[p] = "python_workers"
    me, out = os.getpid(), {"jvm": 0.0, "python_workers": 0.0}
    for p, k in kind.items():
        q = p
        while q > 1 and q != me:
            q = parent.get(q, 0)
        if q == me:
            out[k] += cpu[p]
    return out


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


#: bulk_inserts after the second whose median is the steady-state figure (bulk_insert_warm)
WARM_BULK_WRITES = 3

#: scans of the bulk input into the noop sink before the reads, on both engines (the JVM keeps
#: compiling the scan well past five: after five, a BUCKET table's read_optimized scans took
#: 0.64 s (ours) and 0.83 s (Apache Hudi's), twenty-five scans later 0.44 s and 0.54 s)
PARQUET_WARM_UPS = 25


def warm_up_parquet(spark: Any, path: Path) -> None:
    """Spark's own parquet reader run hot before any read is timed, the same way in both engines'
    sessions. Both read_optimized scans are that reader, but only Apache Hudi's snapshot reads use
    it too (ours merge every slice with logs in Python), so before this the JVM had compiled it
    in Hudi's session by the read_optimized phase and not in ours: our read_optimized scan of a
    BUCKET table (every slice has logs) in a fresh session took 1.57, 1.14, 1.15, 1.08 s over its
    first runs after the first, 0.77-0.88 s after five scans of another file, and it kept getting
    faster over twenty-five more (the sixty-first session's entry in benchmarks/README.md)."""
    for _ in range(PARQUET_WARM_UPS):
        spark.read.parquet(str(path)).write.format("noop").mode("overwrite").save()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=["hudi", "ours"], required=True)
    p.add_argument("--data", required=True, help="folder with base.parquet and upsert-K.parquet")
    p.add_argument("--table", required=True)
    p.add_argument("--index", choices=["SIMPLE", "BUCKET"], default="SIMPLE")
    p.add_argument("--upserts", type=int, default=5)
    p.add_argument("--bundle", default=None)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default=None, help="spark.driver.memory (default 3g)")
    p.add_argument("--no-arrow", action="store_true",
                   help="skip the collect to Arrow (at 10M rows the 12.5M-row collect exceeds Hudi's driver)")  # fmt: skip
    p.add_argument("--reads-only", action="store_true",
                   help="no writes: the reads of an existing --table (the other engine's)")  # fmt: skip
    p.add_argument("--cpus", default=None, help="comma-separated CPUs to pin this run to (default: all)")
    p.add_argument("--serve", action="store_true",
                   help="after the writes, run one read per name read from stdin (the caller takes turns "
                        "between engines); an empty line ends")  # fmt: skip
    a = p.parse_args(argv)
    if a.cpus:  # before the JVM starts: it and the Python workers it forks inherit the affinity
        os.sched_setaffinity(0, {int(c) for c in a.cpus.split(",")})
    spark = session(a.engine, a.bundle, a.master, a.driver_memory)
    opts = write_options(a.index)
    if not a.reads_only:
        shutil.rmtree(a.table, ignore_errors=True)
    data = Path(a.data)

    def cached(name: str) -> Any:
        df = spark.read.parquet(str(data / name)).cache()
        df.count()
        return df

    def write(df: Any, operation: str) -> None:
        if a.engine == "hudi":
            o = {**opts, "hoodie.datasource.write.operation": operation}
            df.write.format("hudi").options(**o).mode("append").save(a.table)
        else:
            import hudi_spark

            hudi_spark.write(df, a.table, operation=operation, options=opts)

    def load(query: str = "snapshot") -> Any:
        if a.engine == "ours":  # (the same as format("hudi") in this driver, which imported hudi_spark)
            import hudi_spark

            return hudi_spark.read(spark, a.table, {"hoodie.datasource.query.type": query})
        return spark.read.format("hudi").option("hoodie.datasource.query.type", query).load(a.table)

    def to_arrow(df: Any) -> Any:
        import pyarrow as pa

        if hasattr(df, "toArrow"):  # Spark 4
            return df.toArrow()
        return pa.Table.from_batches(df._collect_as_arrow())  # Spark 3.5

    def warm_up_reads() -> None:  # JIT, Python workers, the data source's first planning
        load().write.format("noop").mode("overwrite").save()
        to_arrow(load())

    out: dict[str, Any] = {"engine": a.engine, "index": a.index, "spark": spark.version}
    if a.reads_only:
        warm_up_reads()
        key = spark.read.parquet(str(data / "base.parquet")).select("uuid").first()[0]
    else:  # warm-up on a throwaway table
        target = a.table
        a.table = f"{target}-warm-up"
        tiny = spark.read.parquet(str(data / "upsert-0.parquet")).limit(1000)
        write(tiny, "bulk_insert")
        write(tiny, "upsert")
        warm_up_reads()
        a.table = target
        base = cached("base.parquet")
        key = base.select("uuid").first()[0]
        ups = [cached(f"upsert-{k}.parquet") for k in range(a.upserts)]
        out["bulk_cpu"] = []

        def bulk() -> float:  # one bulk_insert of the base rows, with its processes' CPU
            before = tree_cpu()
            seconds, _ = timed(lambda: write(base, "bulk_insert"))
            after = tree_cpu()
            out["bulk_cpu"].append({k: round(after[k] - before[k], 2) for k in after})
            return seconds

        out["bulk_insert"] = bulk()
        # the same rows again into new tables: the first large writes of a fresh JVM also pay
        # the JIT of its row-to-Arrow path (ours: the JVM's CPU 2.1 s on the first 1M-row
        # bulk_insert, 0.8 s on the next, then ~0.7 s), which our local engine's figure does not
        # include; bulk_insert_warm is the median of the third to fifth writes
        again = []
        for k in range(WARM_BULK_WRITES + 1):
            a.table = f"{target}-again-{k}"
            again.append(bulk())
            shutil.rmtree(a.table, ignore_errors=True)
        out["bulk_insert_again"], out["bulk_insert_warm"] = again[0], statistics.median(again[1:])
        a.table = target
        out["upserts"] = [timed(lambda d=d: write(d, "upsert"))[0] for d in ups]
    spark.catalog.clearCache()  # the inputs: the reads do not use them
    # "what changed since": the rows of the last upsert, each upsert a day later than the last
    latest = data / f"upsert-{a.upserts - 1}.parquet" if a.upserts else data / "base.parquet"
    since = int(spark.read.parquet(str(latest)).agg({"ts": "min"}).first()[0])
    warm_up_parquet(spark, data / "base.parquet")
    out["log_files"] = sum(1 for f in Path(a.table).rglob(".*.log.*") if not f.name.endswith(".crc"))
    workers = WorkerPeak()
    out["worker_rss_mb"] = {}
    answers: dict[str, Any] = {}

    def keep(name: str, fn: Any) -> Any:  # a read that also records its answer
        return lambda: answers.__setitem__(name, fn())

    # the reads, in the order they run; the narrower ones (one partition of five, one record key)
    # against the full count
    reads: dict[str, Any] = {
        "scan_noop": lambda: load().write.format("noop").mode("overwrite").save(),
        "count": keep("rows", lambda: load().count()),
        "group_by": keep(
            "groups", lambda: load().groupBy("city").agg({"ts": "sum", "fare": "max"}).collect()
        ),
    }
    if not a.no_arrow:
        reads["to_arrow"] = keep("table", lambda: to_arrow(load()))
    reads["ro_scan_noop"] = lambda: load("read_optimized").write.format("noop").mode("overwrite").save()
    reads["count_city"] = keep("city_rows", lambda: load().filter("city = 'berlin'").count())
    reads["count_key"] = keep("key_rows", lambda: load().filter(f"uuid = '{key}'").count())
    reads["count_since"] = keep("since_rows", lambda: load().filter(f"ts >= {since}").count())
    if a.engine == "ours" and not a.reads_only:
        # the same reads through spark.read.format("hudi"), which in a driver that imported
        # hudi_spark is hudi_spark.read; datasource_*: through PySpark 4's Python data source
        # (every file slice in Python), as a job that never imports hudi_spark reads
        import hudi_spark

        fmt = lambda: spark.read.format("hudi").load(a.table)  # noqa: E731

        def source() -> Any:
            return spark.read.format("hudi").option("hoodie.spark.read.format.fast", "false").load(a.table)

        reads["datasource_scan_noop"] = lambda: source().write.format("noop").mode("overwrite").save()
        reads["datasource_count"] = lambda: source().count()
        berlin = [("city", "=", "berlin")]  # given to hudi_spark.read: every path prunes the partitions
        reads["format_scan_noop"] = lambda: fmt().write.format("noop").mode("overwrite").save()
        reads["format_count"] = lambda: fmt().count()
        reads["format_count_city"] = lambda: fmt().filter("city = 'berlin'").count()
        reads["filters_count_city"] = keep(
            "pruned_rows", lambda: hudi_spark.read(spark, a.table, filters=berlin).count()
        )
        # a record key pinned: only the base files whose footer may hold it are read
        one_key = [("uuid", "=", key)]
        reads["format_count_key"] = keep("pushed_key_rows", lambda: fmt().filter(f"uuid = '{key}'").count())
        reads["filters_count_key"] = keep(
            "skipped_key_rows", lambda: hudi_spark.read(spark, a.table, filters=one_key).count()
        )
        # a range on a data column: only the base files whose row group statistics reach it
        newer = [("ts", ">=", since)]
        reads["format_count_since"] = keep(
            "pushed_since_rows", lambda: fmt().filter(f"ts >= {since}").count()
        )
        reads["filters_count_since"] = keep(
            "skipped_since_rows", lambda: hudi_spark.read(spark, a.table, filters=newer).count()
        )

    def run(name: str) -> float:
        """One run of a read; a Python worker's peak RSS kept per read (every run of it)."""
        if name not in out["worker_rss_mb"]:
            workers.reset()
        seconds, _ = timed(reads[name])
        out["worker_rss_mb"][name] = round(workers.peak_kb / 1024)
        return seconds

    if a.serve:
        # the caller times the reads, one run per request, taking turns with the other engine
        print("@@ready " + json.dumps({**out, "reads": list(reads)}), flush=True)
        for line in sys.stdin:
            name = line.strip()
            if not name:
                break
            print("@@read " + json.dumps({"read": name, "seconds": run(name)}), flush=True)
    else:
        for name in reads:
            # a read's figure is the median of three runs after a first one, reported apart
            # (``<name>_first``): the JVM compiles a scan's hot loops over its first runs (the
            # same parquet scan, fresh session: 3.8, 1.0, 0.70, 0.67, ... 0.55 s), so a median of
            # the first three measured how warm the engine's earlier phases had left that code
            out[f"{name}_first"] = run(name)
            out[name] = statistics.median(run(name) for _ in range(3))
    workers.close()
    if not answers:  # --serve ended before any read: the tables are written, nothing to compare
        spark.stop()
        return 0
    if "pruned_rows" in answers:
        assert answers["pruned_rows"] == answers["city_rows"], answers
    for skipped, full in (("pushed_key_rows", "key_rows"), ("skipped_key_rows", "key_rows"),
                          ("pushed_since_rows", "since_rows"), ("skipped_since_rows", "since_rows")):  # fmt: skip
        if skipped in answers:
            assert answers[skipped] == answers[full], answers
    import pyarrow.compute as pc

    table, groups = answers.get("table"), answers["groups"]
    out["answers"] = {
        "rows": answers["rows"],
        "arrow_rows": answers["rows"] if table is None else table.num_rows,
        "ts_sum": sum(int(r["sum(ts)"]) for r in groups)
        if table is None
        else pc.sum(table.column("ts")).as_py(),
        "groups": sorted([r[0], int(r["sum(ts)"])] for r in groups),
        "city_rows": answers["city_rows"],
        "key_rows": answers["key_rows"],
        "since_rows": answers["since_rows"],
    }
    spark.stop()
    print("@@bench " + json.dumps(out))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    sys.exit(main(sys.argv[1:]))
