"""Options specific to the Spark binding (read options use Hudi Spark's own keys)."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["ReadOptions", "SparkOptions", "StreamOptions"]


def _r(key: str, default: object, doc: str, *aliases: str) -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, aliases=aliases, group="read")


class ReadOptions:
    QUERY_TYPE = _r("hoodie.datasource.query.type", "snapshot", "snapshot, read_optimized or incremental.")
    AS_OF_INSTANT = _r("as.of.instant", None, "Time travel: the snapshot as of this instant.")
    BEGIN_INSTANT = _r("hoodie.datasource.read.begin.instanttime", None, "Incremental: start (exclusive).")
    END_INSTANT = _r("hoodie.datasource.read.end.instanttime", None, "Incremental: end (inclusive).")
    INCREMENTAL_FORMAT = _r(
        "hoodie.datasource.query.incremental.format", "latest_state",
        "Incremental: latest_state (the records the commits wrote, as they stand) or cdc (the changes "
        "of a table with hoodie.table.cdc.enabled: op, ts_ms, before, after; core's read_changes).",
    )  # fmt: skip
    CDC_IMAGES = _r(
        "hoodie.spark.read.cdc.images", "json",
        "A CDC query's before and after images: json (Hudi's answer, JSON text) or struct (typed structs "
        "of the table's data fields, its latest schema; core's read_changes(images=\"struct\")).",
    )  # fmt: skip
    COLUMNS = _r("hoodie.datasource.read.columns", None, "Comma-separated columns to read (pruning).")
    MERGE_TYPE = _r(
        "hoodie.datasource.merge.type", "payload_combine",
        "Snapshot of a merge-on-read table: payload_combine merges the log records into the base "
        "rows; skip_merge gives the base rows as stored and the logs' records beside them.",
    )  # fmt: skip
    STREAMING_START = _r(
        "hoodie.datasource.streaming.startOffset", "earliest",
        "readStream: where a new query starts, earliest, latest or an instant time (exclusive).",
    )  # fmt: skip
    JVM_PARQUET = _r(
        "hoodie.spark.read.jvm.parquet", True,
        "hudi_spark.read: file slices with nothing to merge (no log files, or a read_optimized query) "
        "of a table on local disk or HDFS (and, with hoodie.spark.read.jvm.object.store, on S3) are read by "
        "Spark's own parquet reader, in the JVM; false merges every slice in Python tasks, as "
        "format(\"hudi\") does.",
    )  # fmt: skip
    JVM_OBJECT_STORE = _r(
        "hoodie.spark.read.jvm.object.store", False,
        "hudi_spark.read: Spark's parquet reader also reads the base files of a table on an object store "
        "that the session's JVM reaches itself: s3:// through a Hadoop file system for s3 (EMR's) or "
        "Hadoop's S3A connector (as s3a://), with the JVM's jars and its own fs.* settings (our "
        "hoodie.storage.s3.* options reach only the Python tasks); checked once per bucket and application "
        "by reading the table's hoodie.properties, Python tasks where that fails. Off: on moto's S3 server "
        "(2M rows, 10 base files of 12 MB, 2026-12-07, benchmarks/spark_s3_read_bench.py) it took 0.86-1.37x "
        "the Python tasks' time for a read_optimized scan and 1.19-1.38x for a snapshot scan with half the "
        "slices merged (Spark asks S3 for each file four times before reading it).",
    )  # fmt: skip
    JVM_DELTA = _r(
        "hoodie.spark.read.jvm.delta", False,
        "hudi_spark.read: also read the base file of a snapshot slice with log files in the JVM, "
        "with core telling the merge as a delta (rows dropped by position, rows added). Off: on the "
        "1M-row benchmark tables it cost 1.1-2x merging those slices whole in Python tasks.",
    )  # fmt: skip
    COLLECT_LOCAL = _r(
        "hoodie.spark.read.collect.local", True,
        "hudi_spark.read on a local master (local[N], local-cluster): toArrow and toPandas of the "
        "DataFrame (not derived from it, not cached) have the read tasks write their rows as Arrow streams "
        "to a temporary folder under spark.local.dir that the driver reads, instead of Spark's "
        "collection, which turns every row into the JVM's and back (the 1M-row benchmark tables: "
        "0.8-1.0 s against 2.2-3.0 s). Needs that much free scratch space while it runs.",
    )  # fmt: skip
    COUNT_NARROW = _r(
        "hoodie.spark.read.count.narrow", True,
        "hudi_spark.read: count() of the DataFrame (not derived from it, not cached) has its read tasks "
        "read no column but the filters' and the keys, ordering and delete columns a merge needs, and "
        "count the rows there, instead of Spark's count, which merges every column in Python and moves "
        "the rows into the JVM (Spark cannot prune a Python task's columns).",
    )  # fmt: skip
    FILTER_PUSHDOWN = _r(
        "hoodie.spark.read.filter.pushdown", True,
        "hudi_spark.read: filter()/where() of the DataFrame (not derived from it, not cached) plan the read "
        "again, on the same snapshot, with the comparisons and IN lists of a column against literals "
        "found in the condition (ANDed), so that core prunes partitions and skips file slices before any "
        "is merged, as filters= does (the rows are Spark's filter's); select() of its columns by name "
        "plans it with those columns alone, which the Python tasks then decode alone, and an aggregate "
        "(groupBy(...).agg/count/sum/...) is built over the read planned with the columns it uses.",
    )  # fmt: skip
    FORMAT_FAST = _r(
        "hoodie.spark.read.format.fast", True,
        "spark.read.format(\"hudi\").load(path) in a driver that imported hudi_spark (PySpark 3.5 and 4) "
        "returns hudi_spark.read's DataFrame for the same options: slices with nothing to merge read by "
        "Spark's parquet reader, count/filter/select planned into the read. false reads through PySpark 4's "
        "Python Data Source API, which reads every file slice and column in Python tasks.",
    )  # fmt: skip
    PARTITION_FRAME_BYTES = _r(
        "hoodie.spark.read.partition.frame.bytes", 64 * 1024 * 1024,
        "hudi_spark.read: when the file slices it merges in Python tasks hold at least this many bytes "
        "per partition on average, each partition's slices are merged in a frame of their own whose "
        "partition columns Spark knows (a Spark filter on them then leaves the other partitions' merges "
        "out); below it, one frame merges them all. A frame costs ~20 ms of planning and a task: at "
        "1M rows in 5 partitions (10 MB each) per-partition frames made full reads ~10% slower and a "
        "one-partition count 44% faster.",
    )  # fmt: skip
    SPLIT_SIZE = _r(
        "hoodie.spark.read.split.bytes",
        128 * 1024 * 1024,
        "Small file slices are grouped into one Spark input partition up to this many bytes.",
    )


class SparkOptions:
    COMMIT_METADATA_PREFIX = ConfigProperty(
        "hoodie.datasource.write.commitmeta.key.prefix", "_",
        "A write's options whose keys start with this prefix go into its commit's extra metadata "
        "(`_job_run=42` there as `\"_job_run\": \"42\"`), as Apache Hudi's datasource writer puts them.",
        group="spark",
    )  # fmt: skip
    WRITE_PARALLELISM = ConfigProperty(
        "hoodie.spark.write.parallelism", 0, "Tasks writing file groups; 0 = Spark's default parallelism.",
        group="spark",
    )  # fmt: skip
    TASK_MAX_BYTES = ConfigProperty(
        "hoodie.spark.write.task.max.bytes", 256 * 1024 * 1024,
        "A write task holds at most this many bytes of rows (Arrow) in its Python worker: past it, "
        "it spills them to Spark's local directories and writes a few whole file groups at a time. Key "
        "shuffles also get enough tasks that each holds about this much (Spark's size estimate).",
        group="spark",
    )  # fmt: skip

    SINGLE_TASK_MAX_BYTES = ConfigProperty(
        "hoodie.spark.write.single.task.max.bytes", 512 * 1024,
        "A BUCKET index write whose input Spark estimates at no more than this many bytes runs "
        "in one task, with no shuffle: for a small micro-batch a shuffle stage costs more than "
        "it spreads (5k-row upserts on local[2]: 0.21 s against 0.27 s; even near 50k rows, "
        "~850 KB of parquet). 0 always shuffles.",
        group="spark",
    )  # fmt: skip
    WRITE_FORMAT_PIPELINE = ConfigProperty(
        "hoodie.spark.write.format.pipeline", True,
        "df.write.format(\"hudi\").save(path) in a driver that imported hudi_spark (PySpark 3.5 and 4) "
        "runs hudi_spark.write with the writer's options, every operation (upsert by default, as Hudi) and "
        "Hudi's save modes; false writes through PySpark 4's Python data source, whose tasks cannot bring "
        "rows together (bulk_insert, insert and the overwrites only).",
        group="spark",
    )  # fmt: skip
    INDEX_LOOKUP = ConfigProperty(
        "hoodie.spark.index.lookup", "auto",
        "SIMPLE / GLOBAL_SIMPLE tagging: 'join' co-groups the records with every existing key of "
        "the table partitions (read in tasks; SIMPLE: the partitions the records go to, found by a "
        "distinct over the records, cached for it) by key hash; 'task' looks the keys up in the tasks "
        "that hold them after the key shuffle, reading only the key columns of base files whose "
        "footer min/max keys and bloom filter may hold them (each task reads those files itself, "
        "so the reads grow with the number of tasks); 'auto': 'task' up to 16 key tasks, else 'join'.",
        group="spark",
    )  # fmt: skip


class StreamOptions:
    ASYNC_COMPACT = ConfigProperty(
        "hoodie.datasource.compaction.async.enable", True,
        "Streaming MOR: run scheduled compactions in the background.", group="compaction",
    )  # fmt: skip
    DISABLE_COMPACTION = ConfigProperty(
        "hoodie.datasource.write.streaming.disable.compaction", False,
        "Streaming MOR: schedule and run no compaction in the sink (nor inline, unless "
        "`hoodie.datasource.compaction.async.enable=false` and `hoodie.compact.inline=true`): "
        "another job compacts.", group="compaction",
    )  # fmt: skip
    CHECKPOINT_IDENTIFIER = ConfigProperty(
        "hoodie.datasource.write.streaming.checkpoint.identifier", "default_single_writer",
        "This writer's name in the batch checkpoint each streaming commit records as Apache Hudi's "
        "sink does (`_hudi_streaming_sink_checkpoint`): Hudi's sink resuming a query after ours, or "
        "ours after Hudi's, skips the batches the other committed. Unique per streaming writer of a table.",
        group="spark",
    )  # fmt: skip
    RETRY_COUNT = ConfigProperty(
        "hoodie.datasource.write.streaming.retry.count", 3,
        "Attempts at a failing micro-batch's write before the query fails (each failed attempt "
        "is rolled back first).", group="spark",
    )  # fmt: skip
    RETRY_INTERVAL_MS = ConfigProperty(
        "hoodie.datasource.write.streaming.retry.interval.ms", 2000,
        "Wait before a micro-batch's next attempt, doubled after each.", group="spark",
    )  # fmt: skip
    IGNORE_FAILED_BATCH = ConfigProperty(
        "hoodie.datasource.write.streaming.ignore.failed.batch", False,
        "A micro-batch whose attempts all failed is dropped (rolled back, logged) and the query "
        "goes on, instead of failing.", group="spark",
    )  # fmt: skip
