"""Reading base files (parquet) of a file slice."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_core.storage.base import Storage

__all__ = ["read_parquet"]


def read_parquet(storage: Storage, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    """A parquet file, restricted to the ``columns`` it has (others are added by alignment)."""
    fs = storage.arrow_filesystem()
    apath = storage.arrow_path(path)
    with fs.open_input_file(apath) as f:
        pf = pq.ParquetFile(f)
        if columns is not None:
            present = set(pf.schema_arrow.names)
            columns = [c for c in columns if c in present]
        return pf.read(columns=columns)
