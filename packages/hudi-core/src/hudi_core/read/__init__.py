"""Queries over a table: snapshot (time travel), read-optimized, incremental; file-slice merge."""

from __future__ import annotations

from hudi_core.read.filters import FilterError
from hudi_core.read.merge import merge_file_slice
from hudi_core.read.query import QUERY_TYPES, QueryError, iter_batches, read_table

__all__ = ["QUERY_TYPES", "FilterError", "QueryError", "iter_batches", "merge_file_slice", "read_table"]
