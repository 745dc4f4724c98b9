"""Reading a Hudi table on Spark, whatever the PySpark version: the read options resolved once
(:class:`ReadSpec`), the declared schema, core's read splits packed into Spark input partitions,
and :func:`read_in_tasks`, the read as a ``mapInArrow`` over one seed row per input partition.

``spark.read.format("hudi")`` (PySpark 4's Data Source API, :mod:`hudi_spark.datasource`) plans
and reads with the same functions; :func:`read_in_tasks` is how ``hudi_spark.read`` reads on
PySpark 3.5, which has no Python data sources, with the same options and the same answers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.timeline.instant import format_query_instant, format_range_instant

from hudi_spark.compat import spark_schema
from hudi_spark.options import ReadOptions
from hudi_spark.stages import conform

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "ReadSpec",
    "group_slices",
    "plan_groups",
    "read_in_tasks",
    "read_schema",
    "read_slices",
    "table_arrow_schema",
]  # fmt: skip

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
        if "provider" in lower and "location" in lower:
            raise ConfigError(
                "CREATE TABLE ... USING hudi: Spark gives a Python data source none of a catalog table's "
                "options when it reads the table; use CREATE TEMPORARY VIEW <name> USING hudi OPTIONS "
                "(path '<base path>') or spark.read.format(\"hudi\").load(path).createOrReplaceTempView(...)"
            )
        base = lower.get("path")
        if not base:
            raise ConfigError(
                f'spark.read.format("hudi") needs a path: .load("<base path>") (options: {sorted(lower)})'
            )
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


def read_schema(spec: ReadSpec) -> pa.Schema:
    """The declared (Arrow) schema of a read: the table's at the query's instant, pruned to
    ``hoodie.datasource.read.columns`` when given."""
    from hudi_core.read import incremental_schema_instant

    table = spec.open_table()
    as_of = spec.as_of
    if spec.query_type == "incremental":
        as_of = incremental_schema_instant(table.timeline.completed_commits(), spec.start, spec.end)
    schema = table_arrow_schema(table, as_of)
    if spec.columns:
        missing = [c for c in spec.columns if c not in schema.names]
        if missing:
            raise ConfigError(f"columns {missing} are not in table {spec.base_uri} (columns: {schema.names})")
        schema = pa.schema([schema.field(c) for c in spec.columns])
    return schema


def plan_groups(spec: ReadSpec, columns: Sequence[str], *, start: str | None = None,
                end: str | None = None) -> list[list[Any]]:  # fmt: skip
    """Core's read splits of the query (one per file slice, merged across a pending compaction),
    packed into Spark input partitions of at most ``hoodie.spark.read.split.bytes``. ``start``
    and ``end`` make it an incremental query over that range (a streaming micro-batch)."""
    from hudi_core.read import plan_splits

    table = spec.open_table()
    if start is not None:
        splits = plan_splits(table, "incremental", None, start=start, end=end, columns=list(columns))
    else:
        as_of = None if spec.query_type == "incremental" else spec.as_of
        splits = plan_splits(
            table, spec.query_type, as_of, start=spec.start, end=spec.end, columns=list(columns)
        )
    return group_slices(splits, int(HoodieConfig(spec.options).get(ReadOptions.SPLIT_SIZE)))


def read_slices(spec: ReadSpec, slices: Sequence[Any], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The rows of core's read splits (in a task), as batches of exactly ``schema`` (Spark
    compares names, types and nullability)."""
    from hudi_core.read import read_split

    if not slices:
        return
    table = spec.open_table()
    for split in slices:
        data = read_split(table, split)
        if data.num_rows:
            yield from conform(data, schema).to_batches()


def _read_task(seeds: Iterator[pa.RecordBatch], *, spec: ReadSpec, groups: list[list[Any]],
               schema: pa.Schema) -> Iterator[pa.RecordBatch]:  # fmt: skip
    for seed in seeds:
        for i in seed.column(0).to_pylist():
            yield from read_slices(spec, groups[i], schema)


def read_in_tasks(spark: SparkSession, base_uri: str, options: dict[str, str]) -> DataFrame:
    """The read as Spark tasks without the Data Source API (PySpark 3.5): planned here, on the
    driver, as ``format("hudi")`` plans it; one seed row per input partition, each task reads
    its partition's splits in ``mapInArrow``."""
    spec = ReadSpec.from_options({**options, "path": base_uri})
    schema = read_schema(spec)
    groups = plan_groups(spec, schema.names)
    if not groups:
        return spark.createDataFrame([], spark_schema(schema))
    seeds = spark.range(0, len(groups), 1, len(groups))  # one row, one task, per input partition
    task = functools.partial(_read_task, spec=spec, groups=groups, schema=schema)
    return seeds.mapInArrow(task, spark_schema(schema))
