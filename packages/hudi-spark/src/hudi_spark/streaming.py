"""``hudi_spark.write_stream``: Structured Streaming into a Hudi table.

Every micro-batch is one commit (a deltacommit on MERGE_ON_READ) written by
:func:`hudi_spark.writer.write` from ``foreachBatch``. The commit's extra metadata records the
query id and batch id; Spark replays the last batch after a crash (same id, same offsets), and a
batch already committed is skipped, so each batch lands exactly once. A failing batch is rolled
back (its files removed by markers) and the query stops; restarting it replays that batch.
Compaction is scheduled by the driver every N deltacommits and runs in the background.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hudi_core.config.compaction import CompactionOptions
from hudi_core.config.property import HoodieConfig

from hudi_spark.commit import BATCH_KEY, QUERY_KEY
from hudi_spark.options import StreamOptions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

__all__ = ["StreamSink", "write_stream"]


def _query_id(checkpoint_location: str) -> str:
    """The query id Spark keeps in ``<checkpoint>/metadata``: stable across restarts."""
    path = os.path.join(checkpoint_location.removeprefix("file://"), "metadata")
    try:
        with open(path, encoding="utf-8") as f:
            return str(json.loads(f.readline())["id"])
    except (OSError, ValueError, KeyError):
        return checkpoint_location  # a remote checkpoint: its location identifies the query


class StreamSink:
    """The ``foreachBatch`` function: one commit per micro-batch, replays skipped."""

    def __init__(self, base_uri: str, *, options: Mapping[str, str], checkpoint_location: str, operation: str,
                 compactor: Any = None) -> None:  # fmt: skip
        self.base_uri = base_uri
        self.options = dict(options)
        self.checkpoint_location = checkpoint_location
        self.operation = operation
        self.compactor = compactor
        self.results: list[Any] = []

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        from hudi_spark.writer import write

        extra = {QUERY_KEY: _query_id(self.checkpoint_location), BATCH_KEY: str(batch_id)}
        res = write(df, self.base_uri, operation=self.operation, options=self.options, extra_metadata=extra)
        self.results.append(res)
        if self.compactor is not None and res.instant is not None:
            self.compactor.maybe_schedule()


def write_stream(
    stream_df: DataFrame,
    base_uri: str,
    *,
    options: Mapping[str, Any] | None = None,
    checkpoint_location: str,
    operation: str = "upsert",
    trigger: Mapping[str, Any] | None = None,
    query_name: str | None = None,
) -> StreamingQuery:
    """Start a streaming query writing ``stream_df`` into the table; returns the query.

    >>> q = hudi_spark.write_stream(spark.readStream.format("rate").load(), "/data/t",
    ...     options={...}, checkpoint_location="/data/t_ckpt", trigger={"processingTime": "5 seconds"})  # doctest: +SKIP
    """
    from hudi_spark.compaction import AsyncCompactor

    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    conf = HoodieConfig(opts)
    compactor = None
    table_type = (
        opts.get("hoodie.datasource.write.table.type") or opts.get("hoodie.table.type") or ""
    ).upper()
    if table_type in ("MERGE_ON_READ", "MOR") and bool(conf.get(StreamOptions.ASYNC_COMPACT)):
        compactor = AsyncCompactor(stream_df.sparkSession, base_uri,
                                   every=int(conf.get(CompactionOptions.MAX_DELTA_COMMITS)), options=opts)  # fmt: skip
        opts = {**opts, "hoodie.compact.inline": "false"}  # as Hudi's streaming sink: async, not inline
    sink = StreamSink(base_uri, options=opts, checkpoint_location=checkpoint_location, operation=operation,
                      compactor=compactor)  # fmt: skip
    writer = stream_df.writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint_location)
    if query_name:
        writer = writer.queryName(query_name)
    if trigger:
        writer = writer.trigger(**dict(trigger))
    query = writer.start()
    query.hudi_sink = sink  # type: ignore[attr-defined]  # lets callers wait for compaction
    return query
