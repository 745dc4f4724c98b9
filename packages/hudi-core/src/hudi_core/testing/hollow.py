"""A table whose timeline has a hollow commit: a write still inflight while a later one has
completed, as concurrent writers leave it (the tests of incremental queries, streaming reads and
``hudi-py read``, core's and the Apache Hudi tier's), and the small records they write."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from hudi_core.hudi_table import HudiTable

__all__ = ["Hollow", "hollow_table", "rows"]


def rows(keys: list[str], part: str, ts: int) -> pa.Table:
    """Records ``keys`` of partition ``part`` with ordering value ``ts``; ``v`` tells both."""
    n = len(keys)
    return pa.table({"id": keys, "part": [part] * n, "ts": pa.array([ts] * n, pa.int64()),
                     "v": [f"{k}@{ts}" for k in keys]})  # fmt: skip


@dataclass
class Hollow:
    """The table, its three writes' instants and where the second's completed file waits."""

    path: Path
    instants: tuple[str, str, str]
    aside: Path

    def complete(self) -> None:
        """The hollow write completes now: its completed file back, with this moment's time
        (a completion time after the third write's)."""
        time.sleep(0.01)
        name = self.aside.name.removeprefix(f"{self.path.name}-")
        (self.path / ".hoodie" / name).write_bytes(self.aside.read_bytes())
        self.aside.unlink()


def hollow_table(path: Path, table_type: str) -> Hollow:
    """Three writes of ours to disjoint file groups (an insert into partitions a and b, an update
    of a1, an update of b2), the second's completed file then taken away (kept beside the
    table): it reads as a write still inflight while the third completed, as an optimistic
    writer's commit does while a faster one completes."""
    HudiTable.create(str(path), name="t", record_key_fields="id", partition_fields="part",
                     ordering_field="ts", table_type=table_type)  # fmt: skip
    c1 = HudiTable.open(str(path)).insert(
        pa.concat_tables([rows(["a1", "a2"], "a", 1), rows(["b1", "b2"], "b", 1)])
    )
    c2 = HudiTable.open(str(path)).upsert(rows(["a1"], "a", 2))
    c3 = HudiTable.open(str(path)).upsert(rows(["b2"], "b", 3))
    done = next((path / ".hoodie").glob(f"{c2.instant}.*commit"))
    aside = path.parent / f"{path.name}-{done.name}"
    done.replace(aside)
    return Hollow(path, (c1.instant, c2.instant, c3.instant), aside)
