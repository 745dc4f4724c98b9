"""Reader options: how a query reads file slices (``hudi_core.read``)."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["ReaderOptions"]


class ReaderOptions:
    PARALLELISM = ConfigProperty(
        "hoodie.read.parallelism",
        0,
        "File slices read at the same time by one query (threads; parquet decode and Arrow "
        "joins release the GIL). 0 picks min(4, CPUs). read() holds the whole result anyway; "
        "iter_batches() holds at most this many slices in memory (1: one slice at a time).",
        since="0.1.0",
        group="read",
    )
    BATCH_ROWS = ConfigProperty(
        "hoodie.read.batch.rows",
        65536,
        "Rows of a base file read at a time by a streamed read of a file slice (iter_split: the "
        "Spark reader's Python tasks): it holds the slice's log records and one batch of its base "
        "file, never the whole base file beside the merged rows. read() reads slices whole.",
        since="0.1.0",
        group="read",
    )
    INCR_FALLBACK_FULL_TABLE_SCAN = ConfigProperty(
        "hoodie.datasource.read.incr.fallback.fulltablescan.enable",
        False,
        "An incremental query whose start is before the active timeline (its commits archived): "
        "false (Hudi's default) returns what the active timeline's commits in the range wrote; "
        "true scans the whole table for every record committed after the start.",
        since="0.9.0",
        group="read",
    )
    HOLLOW_COMMITS = ConfigProperty(
        "hoodie.read.timeline.holes.resolution.policy",
        "FAIL",
        "An incremental query over a timeline with a hollow commit (a write still requested or "
        "inflight while a later one completed: concurrent writers, or a failed write not rolled "
        "back yet), whose records a query past it would never see: FAIL raises; BLOCK reads only "
        "the commits before it; USE_TRANSITION_TIME takes the range's begin and end as completion "
        "times. A streaming read (spark.readStream) blocks unless told otherwise.",
        since="0.14.0",
        group="read",
    )
    INCR_PATH_GLOB = ConfigProperty(
        "hoodie.datasource.read.incr.path.glob",
        "",
        "An incremental query reads only the file slices whose path matches this glob (Hadoop's "
        "GlobPattern after a leading '*': '/2024/01/*' for one partition's files, '/{a,b}/*'), as "
        "Hudi's incremental relations do; empty reads every slice the range wrote to.",
        since="0.9.0",
        group="read",
    )
    INCR_SCHEMA_USE_END = ConfigProperty(
        "hoodie.datasource.read.schema.use.end.instanttime",
        False,
        "An incremental query of a COPY_ON_WRITE table answers with the schema of the last commit "
        "in its range instead of the table's latest (a column added after the range then is not "
        "in the answer); MERGE_ON_READ queries always take the latest, as Hudi's.",
        since="0.9.0",
        group="read",
    )
