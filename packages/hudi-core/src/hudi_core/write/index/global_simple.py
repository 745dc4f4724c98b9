"""GLOBAL_SIMPLE index: keys are unique across partitions.

A key that arrives with a new partition is, with ``hoodie.simple.index.update.partition.path``
(default true), merged with its stored record and, unless the stored one wins, deleted from its
old partition and inserted into the new one; otherwise the update goes to the old partition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.schema.fields import field_values
from hudi_core.write.payload import incoming_wins, merged_by_winner
from hudi_core.write.records import (
    BASE_INSTANT,
    DELETE_FLAG,
    FILE_ID,
    LOCATION_PARTITION,
    NATURAL_DELETE,
    PARTITION_PATH,
    RECORD_KEY,
    data_columns,
)

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView
    from hudi_core.write.index.simple import SimpleIndex

__all__ = ["live_locations", "split_partition_changes"]


def live_locations(view: FileSystemView, existing: pa.Table) -> pa.Table:
    """Drop the stale locations of keys found in several file groups of a merge-on-read table.

    A key that moved partition is deleted from its old file group by a log block while its old
    base file still holds it; the key locations come from base files, so the key shows up in
    both groups. Only where it is live (the slice's base merged with its logs) is it located;
    Java's global index reads the merged records the same way. Rare: only the groups holding
    such keys are read."""
    if existing.num_rows == 0:
        return existing
    keys = existing.column(RECORD_KEY)
    counts = pc.value_counts(keys)
    repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    if len(repeated) == 0:
        return existing
    from hudi_core.read.merge import merge_file_slice

    involved = existing.filter(pc.is_in(keys, value_set=repeated))
    groups = set(
        zip(
            involved.column(LOCATION_PARTITION).to_pylist(), involved.column(FILE_ID).to_pylist(), strict=True
        )
    )
    stale = []
    for s in view.latest_merged_file_slices(partitions=sorted({p for p, _ in groups})):
        if (s.partition_path, s.file_id) not in groups or not s.log_files:
            continue
        here = involved.filter(pc.and_(pc.equal(involved.column(LOCATION_PARTITION), s.partition_path),
                                       pc.equal(involved.column(FILE_ID), s.file_id)))  # fmt: skip
        live = merge_file_slice(view.table, s, history=view.table.schema_history()).column(RECORD_KEY)
        gone = here.filter(pc.invert(pc.is_in(here.column(RECORD_KEY), value_set=live)))
        stale.append(gone.select([RECORD_KEY, LOCATION_PARTITION, FILE_ID]))
    if not stale:
        return existing
    gone = pa.concat_tables(stale)

    def ids(t: pa.Table) -> pa.Array:
        cols = [t.column(c).combine_chunks() for c in (RECORD_KEY, LOCATION_PARTITION, FILE_ID)]
        return pc.binary_join_element_wise(*cols, "\x00")

    return existing.filter(pc.invert(pc.is_in(ids(existing), value_set=ids(gone))))


def split_partition_changes(tagged: pa.Table, index: SimpleIndex, view: FileSystemView | None) -> pa.Table:
    """Rewrite the located rows as Java's ``HoodieIndexUtils.tagGlobalLocationBackToRecords`` does.

    Without ``update_partition_path`` a row whose located partition differs from its incoming
    one goes to the key's partition. With it (``mergeForPartitionUpdatesIfNeeded``):

    - an incoming delete goes to the key's location (its payload then decides, as any delete's),
      unless its file slice no longer holds the key: then it has nothing to delete;
    - other rows are first merged with the key's stored record (the latest of its file slice,
      read from ``view``) by the index's payload. Where the stored record wins (a greater
      ordering value), the key does not move: the merged record is an update at its location.
      Where the incoming one wins and its partition differs, the key moves: a delete at the old
      location and the merged record (PartialUpdate fills its null fields from the stored one)
      inserted in the new partition. A key its file slice no longer holds (deleted by a log
      block) is an insert.

    On COPY_ON_WRITE only the rows whose partition changes are merged. On MERGE_ON_READ every
    located row is (Java's ``mayContainDuplicateLookup``: the index reads keys from base files,
    where a moved or deleted key may linger), so a record that loses to the stored one writes
    the stored record again under the new instant; not under a record index, whose locations
    are the latest ones, nor on an unpartitioned table.

    A row located in a file group ``view`` does not show (written earlier in this instant) is
    not merged: it moves unmerged, or stays an update."""
    loc = tagged.column(LOCATION_PARTITION)
    located = pc.is_valid(loc)
    moved = pc.fill_null(pc.and_(located, pc.not_equal(loc, tagged.column(PARTITION_PATH))), False)
    merging = moved
    if _merges_every_stored_key(index, view):
        merging = pc.fill_null(located, False)
    if not pc.any(merging).as_py():
        return tagged
    stay = tagged.filter(pc.invert(merging))
    rows = tagged.filter(merging)
    if not index.update_partition_path:
        return pa.concat_tables([stay, _at_location(rows)])
    theirs, has, found = _stored_versions(rows, view)
    flag = rows.column(DELETE_FLAG)
    # an incoming delete goes where its key is stored; a key no longer stored has nothing to
    # delete there (an orphan delete: a streamed write's later chunks may still need it)
    deletes, gone = rows.filter(flag), pc.invert(found.filter(flag))
    deletes = pa.concat_tables(
        [_at_location(deletes.filter(pc.invert(gone))), _unlocated(deletes.filter(gone))]
    )
    upsert = pc.invert(flag)
    kept, winners, found = _merged(rows.filter(upsert), theirs.filter(upsert), has.filter(upsert),
                                   found.filter(upsert), index)  # fmt: skip
    # a winner found where it arrived is an update there
    same = pc.fill_null(pc.equal(winners.column(LOCATION_PARTITION), winners.column(PARTITION_PATH)), False)
    updates = pc.and_(same, found)
    movers, found = winners.filter(pc.invert(updates)), found.filter(pc.invert(updates))
    # a delete at the old location (written without ordering value: it always wins) ...
    old_copies = _at_location(movers.filter(found))
    old_copies = _set(old_copies, DELETE_FLAG, _all_true(old_copies.num_rows))
    old_copies = _set(old_copies, NATURAL_DELETE, _all_true(old_copies.num_rows))
    # ... and the merged record inserted into its partition
    return pa.concat_tables([stay, deletes, kept, winners.filter(updates), old_copies, _unlocated(movers)])


def _merges_every_stored_key(index: SimpleIndex, view: FileSystemView | None) -> bool:
    if not index.update_partition_path or index.latest_locations or view is None:
        return False
    return view.table.config.is_mor and view.table.config.is_partitioned


def _set(table: pa.Table, name: str, column: pa.Array | pa.ChunkedArray) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, column)


def _all_true(n: int) -> pa.Array:
    return pa.array(np.ones(n, dtype=bool))


def _at_location(rows: pa.Table) -> pa.Table:
    """``rows`` sent to the partition their key is stored in."""
    return _set(rows, PARTITION_PATH, rows.column(LOCATION_PARTITION))


def _unlocated(rows: pa.Table) -> pa.Table:
    """``rows`` as new records of their own partition."""
    null = pa.nulls(rows.num_rows, pa.string())
    for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
        rows = _set(rows, name, null)
    return rows


def _stored_versions(rows: pa.Table, view: FileSystemView | None) -> tuple[pa.Table, pa.Array, pa.Array]:
    """Per row: its key's stored record (a null row where none is), whether one is, and whether
    a stored copy is left at its location (its file slice holds the key, or it is a file slice
    ``view`` does not show: one this instant wrote, whose base instant is newer)."""
    if view is None or rows.num_rows == 0:
        none = pa.array(np.zeros(rows.num_rows, dtype=bool))
        return pa.table({RECORD_KEY: pa.nulls(rows.num_rows, pa.string())}), none, pc.invert(none)
    stored, looked, latest = _stored_records(view, rows)
    keys = rows.column(RECORD_KEY).combine_chunks().cast(pa.string())
    at = pc.index_in(keys, value_set=stored.column(RECORD_KEY).combine_chunks().cast(pa.string()))
    has = pc.is_valid(at)
    group = pc.binary_join_element_wise(rows.column(LOCATION_PARTITION), rows.column(FILE_ID), "\x00")
    shown = pc.less_equal(rows.column(BASE_INSTANT), latest.take(pc.index_in(group, value_set=looked)))
    return stored.take(at), has, pc.or_(has, pc.invert(pc.fill_null(shown, False)))


def _merged(
    rows: pa.Table, theirs: pa.Table, has: pa.Array, found: pa.Array, index: SimpleIndex
) -> tuple[pa.Table, pa.Table, pa.Array]:
    """``rows`` merged with their stored versions ``theirs`` by the index's payload: (the rows
    whose stored record won, as updates at their location; the others, merged; ``found`` of
    the others)."""
    if not pc.any(has).as_py():
        return rows.slice(0, 0), rows, found
    order = index.payload.update_field(index.ordering_field)
    stored_order, incoming_order = field_values(theirs, order), field_values(rows, order)
    if stored_order is not None and incoming_order is not None:
        wins = incoming_wins(index.payload, stored_order.combine_chunks(), incoming_order.combine_chunks())
    else:  # no ordering values: the incoming record wins
        wins = _all_true(rows.num_rows)
    wins = pc.or_(wins, pc.invert(has))  # nothing stored: the incoming record as it is
    names = [n for n in data_columns(rows) if n in theirs.column_names]
    merged = merged_by_winner(index.payload, rows, theirs, wins, names)
    return _at_location(merged.filter(pc.invert(wins))), merged.filter(wins), found.filter(wins)


def _stored_records(view: FileSystemView, movers: pa.Table) -> tuple[pa.Table, pa.Array, pa.Array]:
    """The latest stored record of each mover's key in the file group it was located in (its
    file slice merged), the groups read (partition and file id joined by a NUL) and the newest
    instant of each group's slice read."""
    from hudi_core.read.merge import merge_file_slice

    located = movers.group_by([LOCATION_PARTITION, FILE_ID]).aggregate([])
    groups = set(zip(located.column(LOCATION_PARTITION).to_pylist(), located.column(FILE_ID).to_pylist(),
                     strict=True))  # fmt: skip
    keys = movers.column(RECORD_KEY)
    records, looked, latest = [], [], []
    for s in view.latest_merged_file_slices(partitions=sorted({p for p, _ in groups})):
        if (s.partition_path, s.file_id) not in groups:
            continue
        looked.append(f"{s.partition_path}\x00{s.file_id}")
        latest.append(s.latest_instant)
        rows = merge_file_slice(view.table, s, history=view.table.schema_history())
        records.append(rows.filter(pc.is_in(rows.column(RECORD_KEY), value_set=keys)))
    if records:
        stored = pa.concat_tables(records, promote_options="permissive")
    else:
        stored = pa.table({RECORD_KEY: pa.array([], pa.string())})
    return stored, pa.array(looked, pa.string()), pa.array(latest, pa.string())
