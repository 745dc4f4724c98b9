"""``spark.read.format("hudi")``, ``spark.readStream.format("hudi")`` (and a simple
``df.write.format("hudi")``) through PySpark's Python Data Source API.

Planning (``partitions``) is core's ``read.plan_splits`` (one split per file slice, merged across
a pending compaction); each Spark input partition holds one split, or several small ones; each
task reads its splits with core's ``read_split`` and yields Arrow batches cast to exactly the
declared schema (Spark compares nullability too). A streaming read is a run of incremental
queries: its offsets are instant times, each micro-batch the commits after the last one read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.timeline.instant import format_query_instant, format_range_instant
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from hudi_spark.options import ReadOptions
from hudi_spark.stages import conform

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["HudiDataSource", "ReadSpec", "register"]

_QUERY_TYPES = ("snapshot", "read_optimized", "incremental")


@dataclass(frozen=True)
class ReadSpec:
    """What to read, resolved once on the driver from the reader options."""

    base_uri: str
    query_type: str
    as_of: str | None
    start: str | None
    end: str | None
    columns: tuple[str, ...] | None
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Any) -> ReadSpec:
        opts = {str(k): str(v) for k, v in dict(options).items()}
        # the Data Source API lower-cases nothing but gives a case-insensitive dict; look up by lower key
        lower = {k.lower(): v for k, v in opts.items()}
        base = lower.get("path")
        if not base:
            raise ConfigError('spark.read.format("hudi") needs a path: .load("<base path>")')
        conf = HoodieConfig({k: v for k, v in opts.items() if k.lower() != "path"})
        qtype = str(lower.get(ReadOptions.QUERY_TYPE.key, ReadOptions.QUERY_TYPE.default)).lower()
        if qtype not in _QUERY_TYPES:
            raise ConfigError(
                f"{ReadOptions.QUERY_TYPE.key}={qtype!r} is not one of {', '.join(_QUERY_TYPES)}"
            )

        def instant(prop: Any, parse: Callable[..., str]) -> str | None:
            raw = lower.get(prop.key.lower())
            return parse(raw, option=prop.key) if raw else None

        # as Hudi: as.of.instant in its time-travel forms; begin/end compared as strings ("000")
        as_of, start, end = (
            instant(ReadOptions.AS_OF_INSTANT, format_query_instant),
            instant(ReadOptions.BEGIN_INSTANT, format_range_instant),
            instant(ReadOptions.END_INSTANT, format_range_instant),
        )
        if qtype == "incremental" and start is None:
            raise ConfigError(
                f"an incremental query needs {ReadOptions.BEGIN_INSTANT.key} (e.g. 000 for the beginning)"
            )
        cols = lower.get(ReadOptions.COLUMNS.key)
        columns = tuple(c.strip() for c in cols.split(",") if c.strip()) if cols else None
        return cls(base, qtype, as_of, start, end, columns, dict(conf.items()))

    def open_table(self) -> HudiTable:
        from hudi_core import HudiTable

        return HudiTable.open(self.base_uri, options=self.options)


def table_arrow_schema(table: HudiTable, as_of: str | None = None) -> pa.Schema:
    """Meta columns (unless the table does not populate them, as core's reader) then the
    table's columns, all nullable: the declared read schema."""
    data = table.schema(as_of)
    meta = META_FIELDS if table.config.populate_meta_fields else ()
    fields = [pa.field(name, pa.string()) for name in meta]
    if data is not None:
        fields += [f for f in data if f.name not in META_FIELDS]
    return pa.schema([f.with_nullable(True) for f in fields])


class SlicePartition(InputPartition):
    """A Spark input partition: one or more file slices of the table."""

    def __init__(self, slices: Sequence[Any]) -> None:
        super().__init__(tuple(slices))

    @property
    def slices(self) -> tuple[Any, ...]:
        return tuple(self.value)


def group_slices(splits: Sequence[Any], split_bytes: int) -> list[list[Any]]:
    """Pack core's read splits (in order) into groups of at most ``split_bytes`` (a big one stays alone)."""
    groups: list[list[Any]] = []
    current: list[Any] = []
    size = 0
    for fs in splits:
        s = int(fs.size)
        if current and size + s > split_bytes:
            groups.append(current)
            current, size = [], 0
        current.append(fs)
        size += s
    if current:
        groups.append(current)
    return groups


class HudiReader(DataSourceReader):
    def __init__(self, spec: ReadSpec, schema: StructType) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        self.spec = spec
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")

    def partitions(self) -> Sequence[InputPartition]:
        from hudi_core.read import plan_splits

        spec = self.spec
        table = spec.open_table()
        # core's splits: the query resolved once (schema, commits, projection); snapshot slices
        # already merge across a pending compaction
        splits = plan_splits(table, spec.query_type, None if spec.query_type == "incremental" else spec.as_of,
                             start=spec.start, end=spec.end, columns=self.arrow_schema.names)  # fmt: skip
        split = int(HoodieConfig(spec.options).get(ReadOptions.SPLIT_SIZE))
        groups = group_slices(splits, split)
        return [SlicePartition(g) for g in groups] or [SlicePartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from hudi_core.read import read_split

        assert isinstance(partition, SlicePartition)
        if not partition.slices:
            return
        table = self.spec.open_table()
        for split in partition.slices:
            data = read_split(table, split)
            if data.num_rows == 0:
                continue
            yield from conform(data, self.arrow_schema).to_batches()


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
        from hudi_core.read import plan_splits

        if start["instant"] >= end["instant"]:
            return []
        splits = plan_splits(self.spec.open_table(), "incremental", None, start=start["instant"], end=end["instant"],
                             columns=self.batch.arrow_schema.names)  # fmt: skip
        return [
            SlicePartition(g)
            for g in group_slices(splits, int(HoodieConfig(self.spec.options).get(ReadOptions.SPLIT_SIZE)))
        ]

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
        from hudi_core.read import incremental_schema_instant
        from pyspark.sql.pandas.types import from_arrow_schema

        spec = self._spec()
        table = spec.open_table()
        as_of = spec.as_of
        if spec.query_type == "incremental":
            as_of = incremental_schema_instant(table.timeline.completed_commits(), spec.start, spec.end)
        schema = table_arrow_schema(table, as_of)
        if spec.columns:
            missing = [c for c in spec.columns if c not in schema.names]
            if missing:
                raise ConfigError(
                    f"columns {missing} are not in table {spec.base_uri} (columns: {schema.names})"
                )
            schema = pa.schema([schema.field(c) for c in spec.columns])
        return from_arrow_schema(schema)

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
