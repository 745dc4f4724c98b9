"""Helpers for tests that check the files a write made."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

__all__ = ["parquet_data_bytes"]


def parquet_data_bytes(path: str | Path) -> int:
    """Compressed bytes of a parquet file's column chunks (its data, without the footer): what
    a writer's file sizing counts as bytes written."""
    meta = pq.ParquetFile(path).metadata
    return sum(
        meta.row_group(i).column(j).total_compressed_size
        for i in range(meta.num_row_groups)
        for j in range(meta.num_columns)
    )
