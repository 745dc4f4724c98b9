"""Reading base files (parquet) of a file slice."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_core.storage.base import Storage

__all__ = ["iter_parquet", "read_parquet"]


def read_parquet(storage: Storage, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    """A parquet file, restricted to the ``columns`` it has (others are added by alignment)."""
    with storage.arrow_filesystem().open_input_file(storage.arrow_path(path)) as f:
        pf = pq.ParquetFile(f)
        return pf.read(columns=_present(pf, columns))


def iter_parquet(
    storage: Storage, path: str, columns: Sequence[str] | None, batch_rows: int
) -> Iterator[pa.Table]:
    """A parquet file ``batch_rows`` rows at a time, restricted to the ``columns`` it has:
    memory holds a batch, not the file."""
    with storage.arrow_filesystem().open_input_file(storage.arrow_path(path)) as f:
        pf = pq.ParquetFile(f)
        for batch in pf.iter_batches(batch_size=batch_rows, columns=_present(pf, columns)):
            yield pa.Table.from_batches([batch])


def _present(pf: pq.ParquetFile, columns: Sequence[str] | None) -> list[str] | None:
    if columns is None:
        return None
    present = set(pf.schema_arrow.names)
    return [c for c in columns if c in present]
