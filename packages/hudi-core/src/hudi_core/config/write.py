"""Write-side options a Hudi Spark user passes today (``hoodie.datasource.write.*`` and friends)."""

from __future__ import annotations

from hudi_core.config.concurrency import ConcurrencyOptions
from hudi_core.config.property import ConfigProperty
from hudi_core.config.storage import StorageOptions  # re-exported: it used to live here

__all__ = [
    "GLOBAL_INDEX_TYPES",
    "IndexOptions",
    "StorageOptions",
    "WriteBehaviourOptions",
    "WriteBufferOptions",
    "WriteOptions",
]


def _w(key: str, default: object, doc: str, *aliases: str, group: str = "write") -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, aliases=aliases, group=group)


class WriteOptions:
    TABLE_NAME = _w("hoodie.datasource.write.table.name", None, "Table name for writes.")
    TABLE_TYPE = _w(
        "hoodie.datasource.write.table.type",
        "COPY_ON_WRITE",
        "Table type when the write creates the table.",
        "hoodie.datasource.write.storage.type",
    )
    OPERATION = _w("hoodie.datasource.write.operation", "upsert", "Write operation.")
    PARTITIONS_TO_DELETE = _w(
        "hoodie.datasource.write.partitions.to.delete",
        None,
        "delete_partition: comma-separated partition paths.",
    )
    RECORDKEY_FIELD = _w("hoodie.datasource.write.recordkey.field", None, "Record key field(s).")
    PARTITIONPATH_FIELD = _w("hoodie.datasource.write.partitionpath.field", None, "Partition field(s).")
    PRECOMBINE_FIELD = _w("hoodie.datasource.write.precombine.field", None, "Ordering field.")
    KEYGEN_CLASS = _w("hoodie.datasource.write.keygenerator.class", None, "Key generator class.")
    KEYGEN_TYPE = _w("hoodie.datasource.write.keygenerator.type", None, "Key generator short name.")
    PAYLOAD_CLASS = _w(
        "hoodie.datasource.write.payload.class",
        "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
        "Payload class for merging records.",
    )
    PARQUET_SMALL_FILE_LIMIT = _w(
        "hoodie.parquet.small.file.limit", 104857600, "Base files below this size take new inserts."
    )
    PARQUET_MAX_FILE_SIZE = _w("hoodie.parquet.max.file.size", 125829120, "Target base file size.")
    PARQUET_COMPRESSION = _w(
        "hoodie.parquet.compression.codec",
        "zstd",
        "Parquet codec of base files and parquet log blocks. Our default is zstd, where Hudi 0.14 "
        "writes gzip: zstd writes 3-6x faster and reads faster at about gzip's size, and every "
        "reader of Hudi tables reads it (Apache Hudi, Spark's parquet reader, hudi-rs); Hudi "
        "itself moves to zstd in its newer releases. gzip gives Hudi 0.14's files.",
    )
    PARQUET_COMPRESSION_LEVEL = _w(
        "hoodie.parquet.compression.level",
        None,
        "Level of the parquet codec (gzip 1-9, zstd -131072-22, brotli 0-11; other codecs take "
        "none). Unset: zlib's 6 for gzip, as Hudi's Hadoop codec; zstd's fast level -1 for zstd, "
        "whose files are about the size of snappy's (Spark's and deltalake's default codec) and "
        "write ~20% and read ~30% faster than at zstd's level 1, for ~50% more bytes; 1 or 3 "
        "(parquet-mr's zstd default) write smaller files. Unset, zstd also stores the columns it "
        "barely shrinks (random hex keys, random doubles) uncompressed; any level set compresses every "
        "column. An option of ours: Apache Hudi takes its "
        "zstd level from parquet-mr's Hadoop setting parquet.compression.codec.zstd.level.",
    )
    RECORD_SIZE_ESTIMATE = _w(
        "hoodie.copyonwrite.record.size.estimate", 1024, "Record size guess before any commit exists."
    )
    LOGFILE_MAX_SIZE = _w("hoodie.logfile.max.size", 1073741824, "Roll to a new log version above this.")
    LOGFILE_DATA_BLOCK_FORMAT = _w(
        "hoodie.logfile.data.block.format", "avro", "Log data block format: avro or parquet."
    )
    CONCURRENCY_MODE = ConcurrencyOptions.MODE
    BULK_INSERT_SORT_MODE = _w(
        "hoodie.bulkinsert.sort.mode",
        "NONE",
        "bulk_insert: NONE (input order), GLOBAL_SORT (by partition and "
        "key, each file one run of keys), PARTITION_SORT (each file sorted by key).",
    )
    EXECUTOR_TYPE = _w("hoodie.write.executor.type", "SIMPLE", "SIMPLE, BOUNDED_IN_MEMORY or DISRUPTOR.")
    ENGINE = _w("hoodie.engine", "local", "Engine that runs the write: local or spark.")
    SET_NULL_FOR_MISSING_COLUMNS = _w(
        "hoodie.write.set.null.for.missing.columns", False,
        "A write whose rows lack some of the table's columns: false (Hudi's default) refuses it, so "
        "an upsert cannot blank the columns it left out; true writes nulls in them.",
    )  # fmt: skip
    TIMESTAMP_NTZ = _w(
        "hoodie.write.timestamp.ntz.enabled", False,
        "Timestamps without a time zone (a naive timestamp column, Spark's TIMESTAMP_NTZ) in a new "
        "column: false refuses them, as Apache Hudi 0.15's writer does (its reader fails on a table "
        "that has one); true stores them as Avro's local-timestamp-micros, which hudi-py, hudi-rs and "
        "Spark's parquet reader read. A column the table already has keeps its type.",
    )  # fmt: skip
    COMBINE_BEFORE_INSERT = _w("hoodie.combine.before.insert", False, "Deduplicate inserts.")
    INSERT_DROP_DUPLICATES = _w(
        "hoodie.datasource.write.insert.drop.duplicates", False,
        "insert and upsert: drop the incoming records whose key the table holds (in the record's "
        "partition; any partition for a global index), the rest deduplicated by the ordering "
        "field, as Apache Hudi's Spark writer does; refused with bulk_insert and the BUCKET index.",
    )  # fmt: skip
    MERGE_ALLOW_DUPLICATE_ON_INSERTS = _w(
        "hoodie.merge.allow.duplicate.on.inserts", True,
        "insert into a base file that has records (a small file, a copy-on-write BUCKET file group): "
        "true (Apache Hudi's Spark writer for insert) keeps the stored records and adds the new ones, "
        "duplicate keys included; false merges them by key as an upsert does, one record per key there.",
    )  # fmt: skip
    ROW_WRITER = _w(
        "hoodie.datasource.write.row.writer.enable", True,
        "bulk_insert writes the rows as they come, as Apache Hudi's row writer does: a record flagged "
        "deleted (_hoodie_is_deleted, AWSDmsAvroPayload's Op = D, a Debezium payload's "
        "_change_operation_type = d) is stored as a row; false drops such "
        "records, as Hudi's bulk_insert without its row writer does.",
    )  # fmt: skip
    COMBINE_BEFORE_UPSERT = _w("hoodie.combine.before.upsert", True, "Deduplicate upserts.")
    MARKERS_TYPE = _w("hoodie.write.markers.type", "DIRECT", "Marker type; DIRECT is written.")
    PARALLELISM = _w("hoodie.upsert.shuffle.parallelism", 0, "Tasks for a write; 0 = engine default.")


#: index types that find a key in any partition (``hoodie.index.type``)
GLOBAL_INDEX_TYPES = ("GLOBAL_SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX")


class IndexOptions:
    TYPE = _w(
        "hoodie.index.type",
        "SIMPLE",
        "SIMPLE, BLOOM, BUCKET, or a global index: GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX.",
        group="index",
    )
    BUCKET_NUM = _w(
        "hoodie.bucket.index.num.buckets", 4, "Buckets (file groups) per partition.", group="index"
    )
    BUCKET_ENGINE = _w(
        "hoodie.index.bucket.engine",
        "SIMPLE",
        "BUCKET: SIMPLE (a fixed number of buckets per partition) is the engine we write; "
        "Hudi's CONSISTENT_HASHING (resizable buckets) is refused.",
        group="index",
    )
    BUCKET_HASH_FIELD = _w(
        "hoodie.bucket.index.hash.field",
        None,
        "Fields hashed into buckets; default the record key.",
        group="index",
    )
    GLOBAL_UPDATE_PARTITION_PATH = _w(
        "hoodie.simple.index.update.partition.path",
        True,
        "GLOBAL_SIMPLE: a key whose partition changed moves to the new partition.",
        group="index",
    )
    RECORD_INDEX_UPDATE_PARTITION_PATH = _w(
        "hoodie.record.index.update.partition.path",
        False,
        "RECORD_INDEX: a key whose partition changed moves to the new partition (Hudi's "
        "default: it stays, updated, in its partition).",
        group="index",
    )
    METADATA_ENABLE = _w(
        "hoodie.metadata.enable",
        True,
        "Apache Hudi's metadata table. Our writers write none (they drop it; Hudi's next writer "
        "rebuilds it); false makes RECORD_INDEX move keys as Hudi's does without its record "
        "index: as GLOBAL_SIMPLE, by hoodie.simple.index.update.partition.path.",
        group="index",
    )


class WriteBufferOptions:
    """The write buffer (seed 5.1): per-bucket and total limits, scaled down from Flink's
    256 MB / 1 GB for a Python process."""

    BUCKET_MAX_BYTES = _w(
        "hoodie.write.buffer.bucket.max.bytes",
        64 * 1024 * 1024,
        "Flush a bucket's buffered records once they reach this estimated size.",
    )
    TOTAL_MAX_BYTES = _w(
        "hoodie.write.buffer.total.max.bytes",
        256 * 1024 * 1024,
        "When all buckets together exceed this, flush the largest bucket.",
    )
    RECORD_SIZE_SAMPLE_RATE = _w(
        "hoodie.write.buffer.record.size.sample.rate",
        0.01,
        "Fraction of batches whose per-record size is re-measured (the rest reuse the estimate).",
    )
    STREAM_CHUNK_MAX_BYTES = _w(
        "hoodie.write.stream.chunk.max.bytes",
        64 * 1024 * 1024,
        "A streamed write (an iterator of record batches) runs keys, dedupe and the index lookup "
        "over chunks of about this many Arrow bytes; all chunks go into one instant.",
    )


class WriteBehaviourOptions:
    """Options of the write pipeline that are not table properties."""

    FAILED_WRITES_POLICY = ConcurrencyOptions.FAILED_WRITES_POLICY
    RECORD_SIZE_ESTIMATION_THRESHOLD = _w(
        "hoodie.record.size.estimation.threshold",
        1.0,
        "A commit counts for the record size estimate once it wrote more than this fraction "
        "of hoodie.parquet.small.file.limit bytes.",
    )
    CLUSTERING_UPDATES_STRATEGY = _w(
        "hoodie.clustering.updates.strategy",
        "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
        "Updates to file groups of a pending clustering plan: ...RejectUpdateStrategy (Hudi's "
        "default) refuses the write; ...AllowUpdateStrategy writes them (a clustering that "
        "completes later drops them unless its commit detects the conflict).",
    )
    BLOOM_INDEX_UPDATE_PARTITION_PATH = _w(
        "hoodie.bloom.index.update.partition.path",
        True,
        "Global index: a key whose partition changed moves to the new partition.",
        group="index",
    )
