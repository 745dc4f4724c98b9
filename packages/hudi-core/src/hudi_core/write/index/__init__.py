"""Stage 3: indexes locate the file group of each incoming key (``hoodie.index.type``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import IndexOptions
from hudi_core.errors import ConfigError
from hudi_core.write.index.bucket import BucketIndex, bucket_file_id, bucket_id_of_file
from hudi_core.write.index.global_simple import split_partition_changes
from hudi_core.write.index.simple import SimpleIndex, existing_key_locations, join_locations
from hudi_core.write.index.slices import FileGroupLocation, file_group_locations
from hudi_core.write.records import (
    BASE_INSTANT,
    DELETE_FLAG,
    FILE_ID,
    LOCATION_PARTITION,
    PARTITION_PATH,
    RECORD_KEY,
)

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView

__all__ = [
    "BUCKET_NUM",
    "BucketIndex",
    "FileGroupLocation",
    "Index",
    "SimpleIndex",
    "bucket_file_id",
    "file_group_locations",
    "index_for",
    "tag_locations",
]

Index = Union[BucketIndex, SimpleIndex]
#: stage 3 column of the BUCKET index: the hash bucket of the key
BUCKET_NUM = "_hoodie_w_hash_bucket"
KINDS = ("BUCKET", "SIMPLE", "GLOBAL_SIMPLE")


def index_for(config: HoodieConfig, record_key_fields: list[str]) -> Index:
    """The index named by ``hoodie.index.type``."""
    kind = str(config.get_str(IndexOptions.TYPE)).upper()
    if kind == "BUCKET":
        n = int(config.get(IndexOptions.BUCKET_NUM))
        if n <= 0:
            raise ConfigError(f"hoodie.bucket.index.num.buckets={n} must be positive")
        hash_fields = config.get_list(IndexOptions.BUCKET_HASH_FIELD) or list(record_key_fields)
        return BucketIndex(n, tuple(hash_fields), tuple(record_key_fields))
    if kind == "SIMPLE":
        return SimpleIndex()
    if kind == "GLOBAL_SIMPLE":
        return SimpleIndex(
            "GLOBAL_SIMPLE", True, bool(config.get(IndexOptions.GLOBAL_UPDATE_PARTITION_PATH))
        )
    raise ConfigError(f"hoodie.index.type={kind!r} is not supported; use one of {', '.join(KINDS)}")


def tag_locations(
    data: pa.Table, index: Index, view: FileSystemView | None, *, drop_orphan_deletes: bool = True
) -> pa.Table:
    """Add FILE_ID, BASE_INSTANT (null for new keys) and LOCATION_PARTITION to ``data``.

    Deletes of keys that do not exist are dropped: there is nothing to delete (a streamed write
    keeps them, ``drop_orphan_deletes=False``: they may delete keys inserted earlier in the stream).
    ``view`` is None for a table without commits.
    """
    if isinstance(index, BucketIndex):
        tagged = _tag_bucket(data, index, view)
    else:
        partitions = None if index.is_global else pc.unique(data.column(PARTITION_PATH)).to_pylist()
        existing = (
            existing_key_locations(view, partitions, keys=data.column(RECORD_KEY))
            if view is not None
            else existing_key_locations_empty()
        )
        tagged = join_locations(data, existing, global_=index.is_global)
        if index.is_global:
            tagged = split_partition_changes(tagged, update_partition_path=index.update_partition_path)
    if not drop_orphan_deletes:
        return tagged
    orphan_delete = pc.and_(tagged.column(DELETE_FLAG), pc.is_null(tagged.column(FILE_ID)))
    if pc.any(orphan_delete).as_py():
        tagged = tagged.filter(pc.invert(orphan_delete))
    return tagged


def existing_key_locations_empty() -> pa.Table:
    from hudi_core.write.index.simple import _EMPTY

    return _EMPTY.empty_table()


def _tag_bucket(data: pa.Table, index: BucketIndex, view: FileSystemView | None) -> pa.Table:
    buckets = index.bucket_ids(data.column(RECORD_KEY))
    rows = []
    if view is not None:
        for s in file_group_locations(view, pc.unique(data.column(PARTITION_PATH)).to_pylist()):
            b = bucket_id_of_file(s.file_id)
            if b is not None:
                rows.append((s.partition_path, b, s.file_id, s.base_instant))
    loc = pa.table(
        {
            PARTITION_PATH: pa.array([r[0] for r in rows], pa.string()),
            BUCKET_NUM: pa.array([r[1] for r in rows], pa.int32()),
            FILE_ID: pa.array([r[2] for r in rows], pa.string()),
            BASE_INSTANT: pa.array([r[3] for r in rows], pa.string()),
        }
    )
    loc = loc.append_column(LOCATION_PARTITION, loc.column(PARTITION_PATH))
    work = data.drop_columns([c for c in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION, BUCKET_NUM) if c in data.column_names])
    work = work.append_column(BUCKET_NUM, pa.array(buckets, pa.int32()))
    # join only the keys and a row number: Acero cannot carry nested columns through a join
    narrow = work.select([PARTITION_PATH, BUCKET_NUM]).append_column(
        "_hoodie_w_row", pa.array(np.arange(work.num_rows, dtype=np.int64))
    )
    joined = narrow.join(loc, keys=[PARTITION_PATH, BUCKET_NUM], join_type="left outer").sort_by("_hoodie_w_row")
    for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
        work = work.append_column(name, joined.column(name))
    return work
