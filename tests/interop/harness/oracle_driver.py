"""Apache Hudi 0.15 as a test oracle: one Spark 3.5 session serving requests from our tests.

Runs in the oracle's own environment (PySpark 3.5.1, Hudi's Spark bundle on ``spark.jars``), never
in the project's: it imports nothing of ours. One request per line on stdin, one answer per line
on stdout, each a JSON object starting with ``@@oracle ``; everything else (the JVM, Spark, Hudi)
prints to stderr. Requests:

- ``{"op": "write", "path", "input": parquet file, "options": {...}, "mode": "append"}``:
  ``spark.read.parquet(input).write.format("hudi")``, Hudi's datasource writer.
- ``{"op": "read", "path", "options": {...}, "output": parquet file}``: ``spark.read.format("hudi")``,
  collected to Arrow and written to ``output``; answers the row count.
- ``{"op": "read_stream", "path", "options": {...}, "checkpoint": folder, "output": folder}``:
  ``spark.readStream.format("hudi")``, Hudi's streaming source, run with ``availableNow`` from
  ``checkpoint``; each micro-batch with rows written to ``output/<batch id>.parquet``; answers
  the batch ids.
- ``{"op": "hadoop_conf", "conf": {...}}``: settings of the context's Hadoop configuration (the
  S3A connector's endpoint and credentials: each file system reads them when it is first made);
- ``{"op": "sql", "sql"}``: a SQL statement (Hudi's procedures: ``CALL run_compaction(...)``);
  answers its rows as lists of strings.
- ``{"op": "ping"}``.

A failed request answers ``{"ok": false, "error": "<class>: <first line>"}`` and the session lives on.

Every request runs on the session's settings as they were when it started, plus what a test
set itself with ``SET key=value`` (:class:`Settings`): Hudi's reads change the session's settings
and leave them changed, which changes the answers of later queries in the same session.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

HUDI_SESSION_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.memory": "2g",
    # C2 on (no TieredStopAtLevel=1, unlike our quick-start sessions): the session lives for the
    # whole tier and Hudi's writes get a third faster once compiled (layout 7's writes and queries
    # the fourth time in one JVM: 29 s against 42 s on C1 alone; the tier 848 s against 940 s)
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC",
}


SPILL_PATH = "hoodie.memory.spillable.map.path"
#: the metadata table's log readers spill under this key, which defaults to the file-system
#: view's spill folder, "/tmp/" (HoodieMetadataConfig; a file index keeps its reader open for
#: good, so its folder outlives every query); neither takes SPILL_PATH
METADATA_SPILL_PATHS = ("hoodie.metadata.spillable.map.path", "hoodie.filesystem.view.spillable.dir")
#: every spill folder setting the oracle points at its local dir
SPILL_KEYS = (SPILL_PATH, *METADATA_SPILL_PATHS)


def session(jar: str, local_dir: str) -> SparkSession:
    builder = SparkSession.builder.master("local[2]").appName("hudi-oracle")
    # Hudi's spillable maps (merges, compaction, MOR reads) make their folders under
    # hoodie.memory.spillable.map.path (default /tmp/, some paths java.io.tmpdir) and delete them
    # at a JVM exit the oracle never has (it is killed): keep them in local_dir (see _spill)
    java = f"{HUDI_SESSION_CONF['spark.driver.extraJavaOptions']} -Djava.io.tmpdir={local_dir}"
    settings = {
        **HUDI_SESSION_CONF,
        "spark.jars": jar,
        "spark.local.dir": local_dir,
        "spark.sql.warehouse.dir": f"{local_dir}/warehouse",  # Hudi's SQL tables: not in the working folder
        "spark.driver.extraJavaOptions": java,
        f"spark.hadoop.{SPILL_PATH}": local_dir,  # MOR reads take it from the Hadoop configuration
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for key in SPILL_KEYS:  # Hudi's SQL and reads take hoodie.* from the session
        spark.conf.set(key, local_dir)
    return spark


def _spill(spark: SparkSession, options: dict) -> dict:
    """A request's options with the session's spill folders unless they name theirs (a
    DataFrame write takes no hoodie.* setting from the session)."""
    return {**{k: spark.conf.get(k) for k in SPILL_KEYS}, **options}


class Settings:
    """The session's SQL settings, put back before each request. Hudi 0.15 sets some for good,
    in the session rather than for its own scan: after a COW table's upsert and snapshot read
    ``spark.sql.parquet.recordLevelFilter.enabled`` is on, and a CDC query turns
    ``spark.sql.parquet.enableVectorizedReader`` off (``SET`` before and after, by hand).
    Together they make Spark's parquet reader drop rows by a pushed filter, where it otherwise
    skips only whole row groups, so a later incremental query of a merge-on-read table merged
    its log records with other base rows (``test_incremental_merges`` failed whenever
    ``test_hudi_table_features``'s CDC test ran before it in the same oracle). A test's answers
    are a fresh session's, as a user's first query gets them."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.wanted = self._current()

    def _current(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.spark.sql("SET").collect()}

    def asked(self, statement: str) -> None:
        """A test's own ``SET key=value``: kept from now on."""
        body = statement.strip()[3:].strip().rstrip(";")
        if "=" in body:
            key, value = body.split("=", 1)
            self.wanted[key.strip()] = value.strip()

    def restore(self) -> None:
        current = self._current()
        for key, value in {**{k: None for k in self.wanted}, **current}.items():
            if self.wanted.get(key) == value:
                continue
            try:
                if key in self.wanted:
                    self.spark.conf.set(key, self.wanted[key])
                else:
                    self.spark.conf.unset(key)
            except Exception as exc:  # (a static setting cannot change: it never did)
                print(f"oracle: {key} left at {value!r}: {_error(exc)}", file=sys.stderr)


#: what Apache Hudi 0.15's incremental query of a table with an internal schema (schema on read)
#: sets in the context's Hadoop configuration and never unsets: every later read of another table
#: in the session would take that table's schema ("cannot prune col: v which does not exist")
_LEAKED = ("hoodie.schema.internal.querySchema", "hoodie.tablePath", "hoodie.valid.commits.list")


def handle(spark: SparkSession, request: dict) -> dict:
    op = request["op"]
    if op == "ping":
        return {"ok": True, "spark": spark.version}
    if op == "write":
        df = spark.read.parquet(request["input"])
        writer = df.write.format("hudi").options(**_spill(spark, request.get("options", {})))
        writer.mode(request.get("mode", "append")).save(request["path"])
        return {"ok": True}
    if op == "read":
        try:
            df = (
                spark.read.format("hudi")
                .options(**_spill(spark, request.get("options", {})))
                .load(request["path"])
            )
            batches = df._collect_as_arrow()
        finally:
            conf = spark.sparkContext._jsc.hadoopConfiguration()
            for key in _LEAKED:
                conf.unset(key)
        table = pa.Table.from_batches(batches) if batches else _empty(df)
        pq.write_table(table, request["output"])
        return {"ok": True, "rows": table.num_rows}
    if op == "stream":
        return _stream(spark, request)
    if op == "read_stream":
        return _read_stream(spark, request)
    if op == "hadoop_conf":  # (an S3A endpoint, say: read by each file system when first made)
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        for key, value in request["conf"].items():
            conf.set(key, value)
        return {"ok": True}
    if op == "sql":
        rows = spark.sql(request["sql"]).collect()
        return {"ok": True, "rows": [[None if v is None else str(v) for v in r] for r in rows]}
    return {"ok": False, "error": f"unknown op {op!r}"}


def _stream(spark: SparkSession, request: dict) -> dict:
    """Structured Streaming into Hudi's sink: the folder's parquet files one micro-batch each
    (oldest first), until none is left; then waits (up to ``settle_s``) for the sink's async table
    services to complete what they scheduled (Hudi's services outlive the query)."""
    stream = (
        spark.readStream.schema(request["schema"]).option("maxFilesPerTrigger", 1).parquet(request["input"])
    )
    options = {**_spill(spark, request.get("options", {})), "checkpointLocation": request["checkpoint"]}
    query = (
        stream.writeStream.format("hudi").options(**options).trigger(availableNow=True).start(request["path"])
    )
    query.awaitTermination()
    timeline = os.path.join(request["path"], ".hoodie")
    deadline = time.monotonic() + float(request.get("settle_s", 60))
    while time.monotonic() < deadline:
        names = os.listdir(timeline)
        pending = {n.split(".")[0] for n in names if n.endswith((".requested", ".inflight"))}
        done = {n.split(".")[0] for n in names if n.count(".") == 1 and not n.startswith(".")}
        if pending <= done:
            break
        time.sleep(0.2)
    return {"ok": True}


def _read_stream(spark: SparkSession, request: dict) -> dict:
    """Hudi's streaming source from the request's checkpoint until it has read what the table
    holds; each micro-batch with rows to a parquet file of its own."""
    batches: list[int] = []

    def sink(df, batch_id: int) -> None:
        got = df._collect_as_arrow()
        if got:
            pq.write_table(pa.Table.from_batches(got), os.path.join(request["output"], f"{batch_id}.parquet"))
            batches.append(batch_id)

    os.makedirs(request["output"], exist_ok=True)
    stream = spark.readStream.format("hudi").options(**_spill(spark, request.get("options", {})))
    query = (
        stream.load(request["path"]).writeStream.foreachBatch(sink)
        .option("checkpointLocation", request["checkpoint"]).trigger(availableNow=True).start()
    )  # fmt: skip
    query.awaitTermination()
    return {"ok": True, "batches": batches}


def _empty(df) -> pa.Table:  # a query with no rows still answers its columns
    return df.limit(0).toPandas().pipe(pa.Table.from_pandas, preserve_index=False)


def _error(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    if java is not None:  # the innermost Java cause says what went wrong
        while java.getCause() is not None:
            java = java.getCause()
        return str(java.toString()).splitlines()[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def main() -> None:
    jar, local_dir = sys.argv[1], sys.argv[2]
    # Answers get stdout to themselves: the JVM and every library print to what was stderr.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    spark = session(jar, local_dir)

    def answer(obj: dict) -> None:
        answers.write("@@oracle " + json.dumps(obj) + "\n")
        answers.flush()

    settings = Settings(spark)
    answer({"ok": True, "ready": spark.version})
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "exit":
            break
        try:
            settings.restore()
            statement = str(request.get("sql", ""))
            if request.get("op") == "sql" and statement.strip()[:4].upper() == "SET ":
                settings.asked(statement)
            result = handle(spark, request)
        except Exception as exc:  # the session lives on; the test decides what a failure means
            traceback.print_exc(file=sys.stderr)
            result = {"ok": False, "error": _error(exc)}
        answer(result)
    spark.stop()


if __name__ == "__main__":
    main()
