"""Stage 3: indexes locate the file group of each incoming key (``hoodie.index.type``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import GLOBAL_INDEX_TYPES, IndexOptions, WriteBehaviourOptions
from hudi_core.errors import ConfigError
from hudi_core.write.dedupe import ordering_field
from hudi_core.write.index.bucket import BucketIndex, bucket_file_id, bucket_id_of_file
from hudi_core.write.index.global_simple import live_locations, split_partition_changes
from hudi_core.write.index.simple import SimpleIndex, existing_key_locations, join_locations
from hudi_core.write.index.slices import FileGroupLocation, file_group_locations
from hudi_core.write.payload import payload_for
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
    "checked_index_type",
    "drop_stored_keys",
    "file_group_locations",
    "index_for",
    "live_locations",
    "tag_locations",
    "tag_with_locations",
]

Index = BucketIndex | SimpleIndex
#: stage 3 column of the BUCKET index: the hash bucket of the key
BUCKET_NUM = "_hoodie_w_hash_bucket"
KINDS = ("BUCKET", "SIMPLE", "BLOOM", *GLOBAL_INDEX_TYPES)
#: the option that says whether a global index moves a key whose partition changed
_UPDATE_PARTITION_PATH = {
    "GLOBAL_SIMPLE": IndexOptions.GLOBAL_UPDATE_PARTITION_PATH,
    "GLOBAL_BLOOM": WriteBehaviourOptions.BLOOM_INDEX_UPDATE_PARTITION_PATH,
    "RECORD_INDEX": IndexOptions.RECORD_INDEX_UPDATE_PARTITION_PATH,
}


def checked_index_type(config: HoodieConfig) -> str:
    """``hoodie.index.type``, upper case, once its options are known good (ConfigError): the
    writers check it before an instant starts."""
    kind = str(config.get_str(IndexOptions.TYPE)).upper()
    if kind not in KINDS:
        raise ConfigError(f"hoodie.index.type={kind!r} is not supported; use one of {', '.join(KINDS)}")
    if kind == "BUCKET":
        engine = str(config.get_str(IndexOptions.BUCKET_ENGINE)).upper()
        if engine != "SIMPLE":
            # its file groups are found through the hashing metadata under .hoodie/.bucket_index,
            # which our writers do not keep: a key hashed as SIMPLE's would land in another group
            raise ConfigError(f"hoodie.index.bucket.engine={engine!r} is not supported; only SIMPLE is")
        n = int(config.get(IndexOptions.BUCKET_NUM))
        if n <= 0:
            raise ConfigError(f"hoodie.bucket.index.num.buckets={n} must be positive")
    return kind


def index_for(config: HoodieConfig, record_key_fields: list[str]) -> Index:
    """The index named by ``hoodie.index.type``."""
    kind = checked_index_type(config)
    if kind == "BUCKET":
        hash_fields = config.get_list(IndexOptions.BUCKET_HASH_FIELD) or list(record_key_fields)
        return BucketIndex(
            int(config.get(IndexOptions.BUCKET_NUM)), tuple(hash_fields), tuple(record_key_fields)
        )
    # BLOOM and GLOBAL_BLOOM (Hudi Spark's default until 0.14, still in many jobs) find the same
    # locations as SIMPLE and GLOBAL_SIMPLE: the look-up probes each base file's bloom filter
    # and key range before it reads keys, so their answers and semantics are Hudi's.
    if kind in ("SIMPLE", "BLOOM"):
        return SimpleIndex(kind)
    # RECORD_INDEX keeps each key's location in the metadata table, which our writers drop (a
    # Hudi writer rebuilds it); its answers are a global look-up's, which is what it does here.
    # Without a metadata table Hudi's falls back to GLOBAL_SIMPLE, that index's partition rule too.
    rule = kind if kind != "RECORD_INDEX" or config.get(IndexOptions.METADATA_ENABLE) else "GLOBAL_SIMPLE"
    update = bool(config.get(_UPDATE_PARTITION_PATH[rule]))
    payload, ordering = payload_for(config), ordering_field(config)
    return SimpleIndex(kind, True, update, payload, ordering, latest_locations=rule == "RECORD_INDEX")


def tag_locations(
    data: pa.Table,
    index: Index,
    view: FileSystemView | None,
    *,
    drop_orphan_deletes: bool = True,
    split: bool = True,
) -> pa.Table:
    """Add FILE_ID, BASE_INSTANT (null for new keys) and LOCATION_PARTITION to ``data``.

    Deletes of keys that do not exist are dropped: there is nothing to delete (a streamed write
    keeps them, ``drop_orphan_deletes=False``: they may delete keys inserted earlier in the stream).
    ``view`` is None for a table without commits. ``split=False`` leaves a global index's
    partition changes for the caller to split (:func:`split_partition_changes`).
    """
    if isinstance(index, BucketIndex):
        tagged = _tag_bucket(data, index, view)
        return tagged if not drop_orphan_deletes else _drop_orphan_deletes(tagged)
    if view is None:
        existing = existing_key_locations_empty()
    elif index.is_global:
        existing = existing_key_locations(view, None, keys=data.column(RECORD_KEY))
    else:  # a key is looked for in its own partition's files only
        existing = existing_key_locations(
            view, None, keys=data.column(RECORD_KEY), key_partitions=data.column(PARTITION_PATH)
        )
    return tag_with_locations(
        data, existing, index, view, drop_orphan_deletes=drop_orphan_deletes, split=split
    )


def drop_stored_keys(data: pa.Table, index: Index, view: FileSystemView | None) -> pa.Table:
    """``data`` without the records whose key the table holds, in the record's partition (any
    partition for a global index): ``hoodie.datasource.write.insert.drop.duplicates``, which
    Apache Hudi's writer applies with its index's look-up before an insert or upsert."""
    if view is None or not data.num_rows:
        return data
    global_ = isinstance(index, SimpleIndex) and index.is_global
    keys = data.column(RECORD_KEY)
    parts = None if global_ else data.column(PARTITION_PATH)
    existing = existing_key_locations(view, None, keys=keys, key_partitions=parts)
    if not existing.num_rows:
        return data
    located = join_locations(data, existing, global_=global_)
    return data.filter(pc.is_null(located.column(FILE_ID)))


def tag_with_locations(
    data: pa.Table, existing: pa.Table, index: SimpleIndex, view: FileSystemView | None, *,
    drop_orphan_deletes: bool = True, split: bool = True,
) -> pa.Table:  # fmt: skip
    """SIMPLE / GLOBAL_SIMPLE tagging against given key locations (``existing_key_locations``'s
    rows: read from ``view``, or shipped by an engine that co-groups them with the records).
    A global index on a merge-on-read table first drops moved keys' stale copies
    (:func:`live_locations`, which reads ``view``), then splits partition changes."""
    if index.is_global and view is not None and view.table.config.is_mor:
        existing = live_locations(view, existing)
    tagged = join_locations(data, existing, global_=index.is_global)
    if index.is_global and split:
        tagged = split_partition_changes(tagged, index, view)
    return tagged if not drop_orphan_deletes else _drop_orphan_deletes(tagged)


def _drop_orphan_deletes(tagged: pa.Table) -> pa.Table:
    orphan_delete = pc.and_(tagged.column(DELETE_FLAG), pc.is_null(tagged.column(FILE_ID)))
    if pc.any(orphan_delete).as_py():
        tagged = tagged.filter(pc.invert(orphan_delete))
    return tagged


def existing_key_locations_empty() -> pa.Table:
    from hudi_core.write.index.simple import _EMPTY

    return _EMPTY.empty_table()


def _tag_bucket(data: pa.Table, index: BucketIndex, view: FileSystemView | None) -> pa.Table:
    buckets = index.bucket_ids(data.column(RECORD_KEY))
    work = data.drop_columns(
        [c for c in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION, BUCKET_NUM) if c in data.column_names]
    )
    work = work.append_column(BUCKET_NUM, pa.array(buckets, pa.int32()))
    parts = work.column(PARTITION_PATH).combine_chunks().dictionary_encode()
    pdict = {v: i for i, v in enumerate(parts.dictionary.to_pylist())}
    width = max(index.num_buckets, int(buckets.max()) + 1 if len(buckets) else 1)
    # (partition code, bucket) -> row of the location table: a lookup array, no join
    lookup = np.full(len(pdict) * width + 1, -1, dtype=np.int64)
    fids: list[str] = []
    bases: list[str] = []
    if view is not None:
        for s in file_group_locations(view, list(pdict)):
            b = bucket_id_of_file(s.file_id)
            if b is not None and b < width and s.partition_path in pdict:
                lookup[pdict[s.partition_path] * width + b] = len(fids)
                fids.append(s.file_id)
                bases.append(s.base_instant)
    pcodes = parts.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    pos = lookup[pcodes * width + buckets.astype(np.int64)]
    found = pos >= 0
    if not found.any():
        null = pa.nulls(work.num_rows, pa.string())
        return (
            work.append_column(FILE_ID, null)
            .append_column(BASE_INSTANT, null)
            .append_column(LOCATION_PARTITION, null)
        )
    at = pa.array(np.where(found, pos, 0), mask=~found)
    work = work.append_column(FILE_ID, pa.array(fids, pa.string()).take(at))
    work = work.append_column(BASE_INSTANT, pa.array(bases, pa.string()).take(at))
    loc = pc.if_else(
        pa.array(found), work.column(PARTITION_PATH).combine_chunks(), pa.scalar(None, pa.string())
    )
    return work.append_column(LOCATION_PARTITION, loc)
