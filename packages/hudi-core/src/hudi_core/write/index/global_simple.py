"""GLOBAL_SIMPLE index: keys are unique across partitions.

A key that arrives with a new partition is, with ``hoodie.simple.index.update.partition.path``
(default true), deleted from its old partition and inserted into the new one; otherwise the
update goes to the old partition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.write.records import (
    BASE_INSTANT,
    DELETE_FLAG,
    FILE_ID,
    LOCATION_PARTITION,
    NATURAL_DELETE,
    PARTITION_PATH,
    RECORD_KEY,
)

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView

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
        live = merge_file_slice(view.table, s).column(RECORD_KEY)
        gone = here.filter(pc.invert(pc.is_in(here.column(RECORD_KEY), value_set=live)))
        stale.append(gone.select([RECORD_KEY, LOCATION_PARTITION, FILE_ID]))
    if not stale:
        return existing
    gone = pa.concat_tables(stale)

    def ids(t: pa.Table) -> pa.Array:
        cols = [t.column(c).combine_chunks() for c in (RECORD_KEY, LOCATION_PARTITION, FILE_ID)]
        return pc.binary_join_element_wise(*cols, "\x00")

    return existing.filter(pc.invert(pc.is_in(ids(existing), value_set=ids(gone))))


def split_partition_changes(tagged: pa.Table, *, update_partition_path: bool) -> pa.Table:
    """Rewrite rows whose located partition differs from their incoming partition."""
    loc = tagged.column(LOCATION_PARTITION)
    moved = pc.fill_null(pc.and_(pc.is_valid(loc), pc.not_equal(loc, tagged.column(PARTITION_PATH))), False)
    if not pc.any(moved).as_py():
        return tagged
    stay = tagged.filter(pc.invert(moved))
    moved_rows = tagged.filter(moved)
    if not update_partition_path:
        fixed = moved_rows.set_column(
            moved_rows.column_names.index(PARTITION_PATH),
            PARTITION_PATH,
            moved_rows.column(LOCATION_PARTITION),
        )
        return pa.concat_tables([stay, fixed])
    # delete at the old location ...
    deletes = moved_rows.set_column(
        moved_rows.column_names.index(PARTITION_PATH), PARTITION_PATH, moved_rows.column(LOCATION_PARTITION)
    )
    deletes = deletes.set_column(
        deletes.column_names.index(DELETE_FLAG), DELETE_FLAG, pa.array([True] * deletes.num_rows, pa.bool_())
    )
    deletes = deletes.set_column(
        deletes.column_names.index(NATURAL_DELETE),
        NATURAL_DELETE,
        pa.array([True] * deletes.num_rows, pa.bool_()),
    )
    # ... and, unless the incoming row is itself a delete, an insert into the new partition
    inserts = moved_rows.filter(pc.invert(moved_rows.column(DELETE_FLAG)))
    null = pa.nulls(inserts.num_rows, pa.string())
    for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
        inserts = inserts.set_column(inserts.column_names.index(name), name, null)
    return pa.concat_tables([stay, deletes, inserts])
