"""Base files: parquet with meta columns and Hudi's footer keys (spec 6)."""

from __future__ import annotations

from hudi_core.io.base_file import (
    BaseFileResult,
    java_min_max,
    read_base_file,
    read_bloom_filter,
    read_footer,
    write_base_file,
)
from hudi_core.io.meta import add_meta_columns, commit_seqnos

__all__ = [
    "BaseFileResult",
    "add_meta_columns",
    "commit_seqnos",
    "java_min_max",
    "read_base_file",
    "read_bloom_filter",
    "read_footer",
    "write_base_file",
]
