"""Helpers for tests that check the files a write made."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from hudi_core.write.handles.parquet_out import data_bytes

__all__ = ["parquet_data_bytes"]


def parquet_data_bytes(path: str | Path) -> int:
    """The data bytes of the parquet file at ``path`` as the writers' file sizing counts them
    (``parquet_out.data_bytes``)."""
    return data_bytes(pq.ParquetFile(path).metadata)
