"""GLOBAL_SIMPLE index: keys are unique across partitions.

A key that arrives with a new partition is, with ``hoodie.simple.index.update.partition.path``
(default true), deleted from its old partition and inserted into the new one; otherwise the
update goes to the old partition.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.write.records import (
    BASE_INSTANT,
    DELETE_FLAG,
    FILE_ID,
    LOCATION_PARTITION,
    NATURAL_DELETE,
    PARTITION_PATH,
)

__all__ = ["split_partition_changes"]


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
            moved_rows.column_names.index(PARTITION_PATH), PARTITION_PATH, moved_rows.column(LOCATION_PARTITION)
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
        deletes.column_names.index(NATURAL_DELETE), NATURAL_DELETE, pa.array([True] * deletes.num_rows, pa.bool_())
    )
    # ... and, unless the incoming row is itself a delete, an insert into the new partition
    inserts = moved_rows.filter(pc.invert(moved_rows.column(DELETE_FLAG)))
    null = pa.nulls(inserts.num_rows, pa.string())
    for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
        inserts = inserts.set_column(inserts.column_names.index(name), name, null)
    return pa.concat_tables([stay, deletes, inserts])
