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

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.timeline.instant import format_range_instant
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from hudi_spark.compat import arrow_schema, spark_schema
from hudi_spark.options import ReadOptions
from hudi_spark.reading import ReadSpec, core_filters, plan_groups, read_schema, read_slices

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["PUSHDOWN", "HudiDataSource", "pushdown_unset", "register"]


class SlicePartition(InputPartition):
    """A Spark input partition: one or more file slices of the table."""

    def __init__(self, slices: Sequence[Any]) -> None:
        super().__init__(tuple(slices))

    @property
    def slices(self) -> tuple[Any, ...]:
        return tuple(self.value)


class HudiReader(DataSourceReader):
    def __init__(self, spec: ReadSpec, schema: StructType) -> None:
        self.spec = spec
        self.arrow_schema = arrow_schema(schema)
        self.filters: list[tuple[str, str, Any]] = []

    def partitions(self) -> Sequence[InputPartition]:
        # core's splits: the query resolved once (schema, commits, projection, pushed filters);
        # snapshot slices already merge across a pending compaction
        groups = plan_groups(self.spec, self.arrow_schema.names, filters=self.filters or None)
        return [SlicePartition(g) for g in groups] or [SlicePartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, SlicePartition)
        return read_slices(self.spec, partition.slices, self.arrow_schema)


class FilteringHudiReader(HudiReader):
    """:class:`HudiReader` taking Spark's filters (PySpark 4.1+, with
    ``spark.sql.python.filterPushdown.enabled``): those core understands prune partitions and
    drop rows in the tasks; Spark still evaluates every one of them after the scan."""

    def pushFilters(self, filters: list[Any]) -> list[Any]:
        self.filters = core_filters(filters)
        return filters


class HudiStreamReader(DataSourceStreamReader):
    """``spark.readStream.format("hudi")``, as Hudi's streaming source: the offset is the last
    commit read; each micro-batch is the incremental query ``(previous, latest]`` (on MOR the
    latest value of each record changed in those commits). A new query starts after
    ``hoodie.datasource.streaming.startOffset``: ``earliest`` (every commit), ``latest`` or an
    instant time."""

    def __init__(self, spec: ReadSpec, schema: StructType) -> None:
        self.spec = spec
        self.batch = HudiReader(spec, schema)

    def _latest(self) -> str | None:
        last = self.spec.open_table().timeline.completed_commits().last()
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
        if _pushdown_enabled():
            return FilteringHudiReader(self._spec(), schema)
        return HudiReader(self._spec(), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return HudiStreamReader(self._spec(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        from hudi_spark.datasource_writer import HudiArrowWriter

        return HudiArrowWriter(dict(self.options), schema, overwrite)


PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


def _pushdown_enabled() -> bool:
    """Whether Spark is asking for a reader that takes filters. PySpark's planning worker refuses
    a reader that implements ``pushFilters`` when ``spark.sql.python.filterPushdown.enabled`` is
    off, and hands ``DataSource.reader`` no configuration: Spark asks for a reader from its
    filter pushdown worker (``data_source_pushdown_filters``, only when the setting is on) or from
    the planning worker, where the setting is the local ``enable_pushdown`` (PySpark 4.1+). Any
    other caller gets the reader without ``pushFilters``, so format("hudi") works in any session."""
    import inspect

    frame = inspect.currentframe()
    try:
        caller = frame.f_back.f_back if frame is not None and frame.f_back is not None else None
        if caller is None:
            return False
        if caller.f_code.co_filename.endswith("data_source_pushdown_filters.py"):
            return True
        return caller.f_locals.get("enable_pushdown") is True
    finally:
        del frame


def register(spark: SparkSession) -> None:
    """Register the ``hudi`` format on a session (``hudi_spark`` does this on import too), and
    let it take filters (``spark.sql.python.filterPushdown.enabled``, PySpark 4.1+) unless the
    session says otherwise."""
    spark.dataSource.register(HudiDataSource)
    if pushdown_unset(spark):
        spark.conf.set(PUSHDOWN, "true")


def pushdown_unset(spark: SparkSession) -> bool:
    """Whether nobody set ``spark.sql.python.filterPushdown.enabled`` in this session yet."""
    return spark.conf.get(PUSHDOWN, None) is None
