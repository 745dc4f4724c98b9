"""``spark.read.format("hudi")``, ``spark.readStream.format("hudi")`` and
``df.write.format("hudi")`` through PySpark 4's Python Data Source API.

Planning (``partitions``) is core's ``read.plan_splits`` (one split per file slice, merged across
a pending compaction); each Spark input partition holds one split, or several small ones; each
task reads its splits with core's ``read_split`` and yields Arrow batches cast to exactly the
declared schema (Spark compares nullability too); :mod:`hudi_spark.reading` does both, also for
``hudi_spark.read`` on PySpark 3.5. A streaming read is a run of incremental queries: its offsets
are instant times, each micro-batch the commits after the last one read.

PySpark 3.5 has no ``pyspark.sql.datasource``: this module is imported only on 4.x.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.read import ReaderOptions
from hudi_core.read.hollow import BLOCK, USE_TRANSITION_TIME, blocked_at, hollow_policy, latest_completion
from hudi_core.timeline.instant import format_range_instant
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from hudi_spark.compat import arrow_schema, spark_schema
from hudi_spark.options import ReadOptions
from hudi_spark.reading import ReadSpec, plan_groups, read_changes, read_schema, read_slices

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["HudiDataSource", "register"]


class SlicePartition(InputPartition):
    """A Spark input partition: one or more file slices of the table."""

    def __init__(self, slices: Sequence[Any]) -> None:
        super().__init__(tuple(slices))

    @property
    def slices(self) -> tuple[Any, ...]:
        return tuple(self.value)


class ChangesPartition(InputPartition):
    """The one input partition of a CDC query: the changes of the commits in ``(start, end]``."""

    def __init__(self, start: str | None, end: str | None) -> None:
        super().__init__((start, end))


class HudiReader(DataSourceReader):
    """The batch reader. It takes no filters (``pushFilters``): PySpark 4.1-4.3 keep the read
    that filter pushdown planned on the relation, shared by every query of the DataFrame, and a
    later query of it that pushes no filter reads with the earlier query's reader (a count after
    ``df.filter("id = 5").count()`` counted only that key's rows). Filters of a read in a driver
    that imported ``hudi_spark`` are planned into it by :mod:`hudi_spark.collect` instead."""

    def __init__(self, spec: ReadSpec, schema: StructType) -> None:
        self.spec = spec
        self.arrow_schema = arrow_schema(schema)

    def partitions(self) -> Sequence[InputPartition]:
        # core's splits: the query resolved once (schema, commits, projection); snapshot slices
        # already merge across a pending compaction
        if self.spec.changes:
            return [ChangesPartition(self.spec.start, self.spec.end)]
        groups = plan_groups(self.spec, self.arrow_schema.names)
        return [SlicePartition(g) for g in groups] or [SlicePartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, ChangesPartition):
            return read_changes(self.spec, *partition.value)
        assert isinstance(partition, SlicePartition)
        return read_slices(self.spec, partition.slices, self.arrow_schema)


class HudiStreamReader(DataSourceStreamReader):
    """``spark.readStream.format("hudi")``, as Hudi's streaming source: the offset is the last
    instant read; each micro-batch is the incremental query ``(previous, latest]`` (on MOR the
    latest value of each record changed in those commits). A new query starts after
    ``hoodie.datasource.streaming.startOffset``: ``earliest`` (every commit), ``latest`` or an
    instant time. A write still pending while a later one completed (a hollow commit:
    concurrent writers) holds the stream back until it completes, so that its records are read
    (``hoodie.read.timeline.holes.resolution.policy``, BLOCK here; USE_TRANSITION_TIME makes the
    offsets completion times instead)."""

    def __init__(self, spec: ReadSpec, schema: StructType) -> None:
        # a stream blocks at a hollow commit unless told otherwise (a batch query fails there),
        # and each micro-batch's incremental query reads under the same policy
        self.policy = hollow_policy(spec.options, default=BLOCK)
        options = {**spec.options, ReaderOptions.HOLLOW_COMMITS.key: self.policy}
        self.spec = dataclasses.replace(spec, options=options)
        self.batch = HudiReader(self.spec, schema)

    def _latest(self) -> str | None:
        """The newest completed instant of any action, short of a hollow commit (BLOCK), as Hudi's
        source; under USE_TRANSITION_TIME the latest completion time."""
        timeline = self.spec.open_table().timeline
        completed = timeline.completed()
        if self.policy == USE_TRANSITION_TIME:
            return latest_completion(timeline, completed)
        bound = blocked_at(timeline, completed, self.policy)
        last = (completed if bound is None else completed.before(bound)).last()
        return last.timestamp if last is not None else None

    def initialOffset(self) -> dict[str, str]:
        key = ReadOptions.STREAMING_START.key.lower()  # Spark hands over option keys lower-cased
        given = next((v for k, v in self.spec.options.items() if k.lower() == key), None)
        start = str(given or ReadOptions.STREAMING_START.default).strip()
        if start.lower() == "earliest":
            return {"instant": "0"}
        if start.lower() == "latest":
            return {"instant": self._latest() or "0"}
        return {"instant": format_range_instant(start, option=ReadOptions.STREAMING_START.key)}

    def latestOffset(self, start: dict[str, str] | None = None, limit: Any = None) -> dict[str, str]:
        """The newest commit (every new commit is read: no read limit is taken); PySpark < 4.2
        calls this without arguments."""
        latest = self._latest()
        start = start or self.initialOffset()
        # never behind where the query stands (a startOffset after the newest commit)
        return {"instant": latest} if latest is not None and latest > start["instant"] else start

    def partitions(self, start: dict[str, str], end: dict[str, str]) -> Sequence[InputPartition]:
        if start["instant"] >= end["instant"]:
            return []
        if self.spec.changes:  # a CDC stream: each micro-batch the changes of its commits
            return [ChangesPartition(start["instant"], end["instant"])]
        groups = plan_groups(
            self.spec, self.batch.arrow_schema.names, start=start["instant"], end=end["instant"]
        )
        return [SlicePartition(g) for g in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self.batch.read(partition)

    def commit(self, end: dict[str, str]) -> None:
        pass  # nothing to release: the table keeps its commits until they are cleaned


class HudiDataSource(DataSource):
    """The ``hudi`` format: ``spark.read.format("hudi").load(base_uri)``."""

    @classmethod
    def name(cls) -> str:
        return "hudi"

    def _spec(self) -> ReadSpec:
        return ReadSpec.from_options(self.options)

    def schema(self) -> StructType:
        return spark_schema(read_schema(self._spec()))

    def reader(self, schema: StructType) -> DataSourceReader:
        # a user-given schema (spark.read.schema(...)) prunes columns too
        return HudiReader(self._spec(), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return HudiStreamReader(self._spec(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        from hudi_spark.datasource_writer import HudiArrowWriter

        return HudiArrowWriter(dict(self.options), schema, overwrite)


def register(spark: SparkSession) -> None:
    """Register the ``hudi`` format on a session (``hudi_spark`` does this on import too)."""
    spark.dataSource.register(HudiDataSource)
