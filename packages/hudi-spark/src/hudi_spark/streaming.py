"""``hudi_spark.write_stream``: Structured Streaming into a Hudi table.

Every micro-batch is one commit (a deltacommit on MERGE_ON_READ) written by
:func:`hudi_spark.writer.write` from ``foreachBatch``. The commit's extra metadata records the
query id and batch id, and the batch under this writer's identifier as Apache Hudi's sink records
it (``_hudi_streaming_sink_checkpoint``); Spark replays the last batch after a crash (same id, same
offsets), and a batch already committed is skipped, so each batch lands exactly once, also when
Hudi's sink ran the query before ours or runs it after. A failing batch is rolled
back (its files removed by markers) and tried again, as Hudi's streaming sink retries it
(``hoodie.datasource.write.streaming.retry.count`` attempts, waits doubling from
``retry.interval.ms``); when every attempt fails the query stops (restarting it replays that
batch) unless ``ignore.failed.batch`` drops it. Compaction (MERGE_ON_READ) and, with
``hoodie.clustering.async.enabled``, clustering are scheduled by the driver after a commit once
enough commits accumulated, and run in the background (:mod:`hudi_spark.services`).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hudi_core.config.compaction import CompactionOptions
from hudi_core.config.property import HoodieConfig

from hudi_spark.commit import BATCH_KEY, QUERY_KEY, SINK_CHECKPOINT_KEY, sink_checkpoint_value
from hudi_spark.options import StreamOptions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

__all__ = ["StreamSink", "start_sink", "write_stream"]

log = logging.getLogger(__name__)


def _query_id(checkpoint_location: str) -> str:
    """The query id Spark keeps in ``<checkpoint>/metadata``: stable across restarts."""
    path = os.path.join(checkpoint_location.removeprefix("file://"), "metadata")
    try:
        with open(path, encoding="utf-8") as f:
            return str(json.loads(f.readline())["id"])
    except (OSError, ValueError, KeyError):
        return checkpoint_location  # a remote checkpoint: its location identifies the query


class StreamSink:
    """The ``foreachBatch`` function: one commit per micro-batch, replays skipped, a failing
    batch retried; the background services asked after each commit."""

    def __init__(self, base_uri: str, *, options: Mapping[str, str], checkpoint_location: str, operation: str,
                 compactor: Any = None, clusterer: Any = None) -> None:  # fmt: skip
        self.base_uri = base_uri
        self.options = dict(options)
        self.checkpoint_location = checkpoint_location
        self.operation = operation
        self.compactor = compactor
        self.clusterer = clusterer
        self.results: list[Any] = []
        self.dropped: list[int] = []  # batches given up on (ignore.failed.batch)
        conf = HoodieConfig(self.options)
        self.attempts = max(1, int(conf.get(StreamOptions.RETRY_COUNT)))
        self.interval_s = int(conf.get(StreamOptions.RETRY_INTERVAL_MS)) / 1000
        self.ignore_failed = bool(conf.get(StreamOptions.IGNORE_FAILED_BATCH))
        self.identifier = str(conf.get(StreamOptions.CHECKPOINT_IDENTIFIER))

    @property
    def services(self) -> list[Any]:
        return [s for s in (self.compactor, self.clusterer) if s is not None]

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        from hudi_spark.writer import write_commit

        extra = {QUERY_KEY: _query_id(self.checkpoint_location), BATCH_KEY: str(batch_id),
                 SINK_CHECKPOINT_KEY: sink_checkpoint_value(self.identifier, batch_id)}  # fmt: skip
        wait = self.interval_s
        for attempt in range(1, self.attempts + 1):
            try:  # a failed attempt is rolled back by the write; the next one writes the batch anew
                res = write_commit(df, self.base_uri, operation=self.operation, options=self.options,
                                   extra_metadata=extra, batch=False)  # fmt: skip
                break
            except Exception as e:
                if attempt < self.attempts:
                    log.warning("micro-batch %s failed (attempt %d of %d), retrying in %.1f s: %s",
                                batch_id, attempt, self.attempts, wait, e)  # fmt: skip
                    time.sleep(wait)
                    wait *= 2
                elif self.ignore_failed:
                    log.error("micro-batch %s failed %d times; dropped (%s): %s", batch_id, attempt,
                              StreamOptions.IGNORE_FAILED_BATCH.key, e)  # fmt: skip
                    self.dropped.append(batch_id)
                    return
                else:
                    raise
        self.results.append(res)
        if res.instant is not None:
            for service in self.services:
                service.maybe_schedule()

    def wait(self) -> None:
        """Block until the background compaction and clustering running now are finished."""
        for service in self.services:
            service.wait()


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
    writer = stream_df.writeStream.option("checkpointLocation", checkpoint_location)
    if query_name:
        writer = writer.queryName(query_name)
    if trigger:
        writer = writer.trigger(**dict(trigger))
    return start_sink(writer, base_uri, options, checkpoint_location=checkpoint_location, operation=operation)


def start_sink(
    writer: DataStreamWriter, base_uri: str, options: Mapping[str, Any] | None, *, checkpoint_location: str,
    operation: str = "upsert",
) -> StreamingQuery:  # fmt: skip
    """Start ``writer`` (a stream's ``DataStreamWriter``, its trigger, name and checkpoint
    location set) with the table's sink as its ``foreachBatch``, and the background services
    Hudi's streaming sink runs (async compaction on MERGE_ON_READ, async clustering); the query
    carries the sink as ``hudi_sink``. ``write_stream`` and ``df.writeStream.format("hudi")``
    (:mod:`hudi_spark.format_hudi`) start their queries here."""
    from hudi_spark.services import AsyncClusterer, AsyncCompactor

    spark = writer._spark
    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    conf = HoodieConfig(opts)
    compactor = None
    table_type = (
        opts.get("hoodie.datasource.write.table.type") or opts.get("hoodie.table.type") or ""
    ).upper()
    if table_type in ("MERGE_ON_READ", "MOR") and bool(conf.get(StreamOptions.ASYNC_COMPACT)):
        if not bool(conf.get(StreamOptions.DISABLE_COMPACTION)):
            every = int(conf.get(CompactionOptions.MAX_DELTA_COMMITS))
            compactor = AsyncCompactor(spark, base_uri, every=every, options=opts)
        opts = {**opts, "hoodie.compact.inline": "false"}  # as Hudi's streaming sink: async, not inline
    clusterer = AsyncClusterer.from_options(spark, base_uri, opts)
    sink = StreamSink(base_uri, options=opts, checkpoint_location=checkpoint_location, operation=operation,
                      compactor=compactor, clusterer=clusterer)  # fmt: skip
    query = writer.foreachBatch(sink).start()
    query.hudi_sink = sink  # type: ignore[attr-defined]  # lets callers wait for the services
    return query
