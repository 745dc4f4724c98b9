"""The layouts every interop run covers, in both directions."""

from __future__ import annotations

import os

ALL_OPS = ["upsert", "insert", "delete", "upsert", "insert_overwrite", "upsert", "delete_partition",
           "bulk_insert", "insert_overwrite_table", "upsert"]  # fmt: skip

#: the layouts run every time; together they cover every value of every dimension. Four have
#: Hudi write without its metadata table (``hoodie.metadata.enable=false``, as many 0.x users
#: run it): its reads then list files, and each of its writes costs about half. Two carry the
#: rich columns (``workloads.RICH``: decimal, date, timestamp, list, map, nested struct) through
#: both log block formats, inline compaction and partial updates; two change their schema between
#: writes (``Workload.evolve``: a new column, an int widened to long), where Hudi 0.15 takes it
#: (avro log blocks, no global index: docs/interop.md, "Hudi quirks")
LAYOUTS = [
    dict(
        table_type="COPY_ON_WRITE",
        index="SIMPLE",
        payload="overwrite",
        keygen="simple",
        ops=ALL_OPS,
        clean=True,
        metadata=False,
    ),
    dict(
        table_type="MERGE_ON_READ",
        index="SIMPLE",
        payload="overwrite",
        keygen="simple",
        ops=ALL_OPS,
        log_format="avro",
        compaction="none",
        evolve=True,
    ),
    dict(
        table_type="MERGE_ON_READ",
        index="BLOOM",
        payload="default",
        keygen="complex",
        log_format="parquet",
        compaction="inline",
        clean=True,
        rich=True,
    ),
    dict(
        table_type="MERGE_ON_READ",
        index="GLOBAL_BLOOM",
        payload="event_time",
        keygen="timestamp",
        log_format="avro",
        compaction="async",
        metadata=False,
    ),
    dict(table_type="COPY_ON_WRITE", index="BUCKET", payload="default", keygen="custom", evolve=True),
    dict(
        table_type="MERGE_ON_READ",
        index="BUCKET",
        payload="event_time",
        keygen="nonpartitioned",
        log_format="parquet",
        compaction="inline",
        clean=True,
    ),
    dict(table_type="COPY_ON_WRITE", index="GLOBAL_BLOOM", payload="overwrite", keygen="complex", clean=True),
    dict(
        table_type="MERGE_ON_READ",
        index="BLOOM",
        payload="overwrite",
        keygen="custom",
        log_format="avro",
        compaction="async",
        clean=True,
    ),
    dict(
        table_type="MERGE_ON_READ",
        index="BUCKET",
        payload="partial",
        keygen="simple",
        compaction="inline",
        metadata=False,
        rich=True,
    ),
    dict(
        table_type="COPY_ON_WRITE",
        index="BLOOM",
        payload="partial",
        keygen="nonpartitioned",
        clean=True,
        metadata=False,
    ),
    dict(
        table_type="MERGE_ON_READ",
        index="GLOBAL_BLOOM",
        payload="partial",
        keygen="complex",
        compaction="async",
    ),
    # hoodie.datasource.write.drop.partition.columns, first written by an insert (docs/interop.md,
    # "Hudi quirks"): keys moved by the global index into log records, then compacted
    dict(
        table_type="MERGE_ON_READ",
        index="GLOBAL_BLOOM",
        payload="partial",
        keygen="simple",
        compaction="inline",
        hive_style=True,
        drop=True,
        first="insert",
    ),
]
#: the base seed; HUDI_INTEROP_SEED=<n> replays another draw of the same layouts
BASE_SEED = int(os.environ.get("HUDI_INTEROP_SEED", "1500"))
