"""SIMPLE index: join incoming keys with the keys stored in the latest base files of the
affected partitions (a pyarrow hash join, no per-record dictionaries)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hudi_core.write.records import BASE_INSTANT, FILE_ID, LOCATION_PARTITION, PARTITION_PATH, RECORD_KEY

from hudi_core.write.index.slices import FileGroupLocation, file_group_locations

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView

__all__ = ["LOCATIONS_SCHEMA", "SimpleIndex", "existing_key_locations", "join_locations"]

_ROW = "_hoodie_w_row"
_EMPTY = pa.schema(
    [(RECORD_KEY, pa.string()), (LOCATION_PARTITION, pa.string()), (FILE_ID, pa.string()),
     (BASE_INSTANT, pa.string())]
)  # fmt: skip
#: the schema of ``existing_key_locations`` (public name for engines that ship it to tasks)
LOCATIONS_SCHEMA = _EMPTY


def _slice_keys(view: FileSystemView, s: FileGroupLocation) -> pa.Table | None:
    if s.base_file is None:
        return None
    storage = view.table.storage
    keys = pq.read_table(
        storage.arrow_path(s.base_file.path), columns=[RECORD_KEY], filesystem=storage.arrow_filesystem()
    ).column(RECORD_KEY)
    n = len(keys)
    return pa.table(
        {
            RECORD_KEY: keys.cast(pa.string()),
            LOCATION_PARTITION: pa.array([s.partition_path] * n, pa.string()),
            FILE_ID: pa.array([s.file_id] * n, pa.string()),
            BASE_INSTANT: pa.array([s.base_instant] * n, pa.string()),
        }
    )


def existing_key_locations(view: FileSystemView, partitions: Iterable[str] | None) -> pa.Table:
    """``(record key, partition, file id, base instant)`` of every key in the latest base files
    of ``partitions`` (all partitions when None); file groups under a pending compaction are
    read from the slice before it and located at the compaction instant."""
    locs = file_group_locations(view, partitions)
    tables = [t for s in locs if (t := _slice_keys(view, s)) is not None]
    return pa.concat_tables(tables) if tables else _EMPTY.empty_table()


def join_locations(data: pa.Table, existing: pa.Table, *, global_: bool) -> pa.Table:
    """``data`` with FILE_ID, BASE_INSTANT and LOCATION_PARTITION from ``existing`` (nulls for
    new keys), rows kept in input order."""
    data = data.drop_columns([c for c in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION) if c in data.column_names])
    if global_:
        right = existing
        keys = [RECORD_KEY]
    else:
        right = existing.append_column(PARTITION_PATH, existing.column(LOCATION_PARTITION))
        keys = [RECORD_KEY, PARTITION_PATH]
    # join only the keys and a row number: Acero cannot carry nested columns through a join
    work = data.select(keys).append_column(_ROW, pa.array(np.arange(data.num_rows, dtype=np.int64)))
    joined = work.join(right, keys=keys, join_type="left outer", use_threads=True).sort_by(_ROW)
    out = data
    for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
        out = out.append_column(name, joined.column(name))
    return out


@dataclass(frozen=True)
class SimpleIndex:
    kind: str = "SIMPLE"
    is_global: bool = False
    update_partition_path: bool = True
