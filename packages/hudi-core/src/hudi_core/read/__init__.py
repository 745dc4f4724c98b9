"""Queries over a table: snapshot (time travel), read-optimized, incremental; file-slice merge;
read splits (``plan_splits`` / ``read_split``, streamed by ``iter_split``) shared with engines such as Spark."""

from __future__ import annotations

from hudi_core.read.filters import FilterError
from hudi_core.read.merge import merge_file_slice, tells_delta, with_path_partition_columns
from hudi_core.read.query import (
    QUERY_TYPES,
    QueryError,
    incremental_schema_instant,
    iter_batches,
    path_partition_values,
    plan_splits,
    projected_splits,
    read_table,
)
from hudi_core.read.splits import ReadContext, Split, iter_split, read_split, read_split_delta

__all__ = [
    "QUERY_TYPES",
    "FilterError",
    "QueryError",
    "ReadContext",
    "Split",
    "incremental_schema_instant",
    "iter_batches",
    "iter_split",
    "merge_file_slice",
    "path_partition_values",
    "plan_splits",
    "projected_splits",
    "read_split",
    "read_split_delta",
    "read_table",
    "tells_delta",
    "with_path_partition_columns",
]
