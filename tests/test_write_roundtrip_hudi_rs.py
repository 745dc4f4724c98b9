"""Tables written by hudi_core.write read back identically by hudi-rs, by our reader and by a
plain Python model, after every commit and when time-travelling to every earlier commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

hudi = pytest.importorskip("hudi")

from hudi_core import HudiTable  # noqa: E402

COLS = ["id", "p", "ts", "v"]


def rs_rows(base: str, as_of: str | None = None) -> list[tuple[Any, ...]]:
    table = hudi.HudiTableBuilder.from_base_uri(base).build()
    opts = hudi.HudiReadOptions().with_as_of_timestamp(as_of) if as_of else None
    batches = table.read(opts) if opts is not None else table.read()
    if not batches:
        return []
    t = pa.Table.from_batches(batches).select(COLS)
    return sorted(zip(*(t.column(c).to_pylist() for c in COLS), strict=True))


def our_rows(table: HudiTable, as_of: str | None = None) -> list[tuple[Any, ...]]:
    t = table.read(as_of=as_of).select(COLS)
    return sorted(zip(*(t.column(c).to_pylist() for c in COLS), strict=True))


def batch(rows: list[tuple[int, str, int, str]]) -> pa.Table:
    return pa.table(
        {"id": pa.array([r[0] for r in rows], pa.int32()), "p": [r[1] for r in rows],
         "ts": pa.array([r[2] for r in rows], pa.int64()), "v": [r[3] for r in rows]}
    )  # fmt: skip


class Model:
    def __init__(self, global_index: bool) -> None:
        self.rows: dict[Any, tuple[int, str, int, str]] = {}
        self.global_index = global_index

    def key(self, i: int, p: str) -> Any:
        return i if self.global_index else (i, p)

    def upsert(self, rows: list[tuple[int, str, int, str]]) -> None:
        for r in rows:
            self.rows[self.key(r[0], r[1])] = r

    def delete(self, keys: list[tuple[int, str]]) -> None:
        for i, p in keys:
            self.rows.pop(self.key(i, p), None)

    def overwrite(self, rows: list[tuple[int, str, int, str]]) -> None:
        parts = {r[1] for r in rows}
        self.rows = {k: v for k, v in self.rows.items() if v[1] not in parts}
        self.upsert(rows)

    def drop_partition(self, part: str) -> None:
        self.rows = {k: v for k, v in self.rows.items() if v[1] != part}

    def snapshot(self) -> list[tuple[Any, ...]]:
        return sorted(self.rows.values())


CASES = [
    (ttype, index, fmt)
    for ttype in ("COPY_ON_WRITE", "MERGE_ON_READ")
    for index in ("SIMPLE", "BUCKET", "GLOBAL_SIMPLE")
    for fmt in (("avro", "parquet") if ttype == "MERGE_ON_READ" else ("avro",))
]


@pytest.mark.parametrize(("ttype", "index", "fmt"), CASES)
def test_sequence_reads_back_everywhere(tmp_path: Path, ttype: str, index: str, fmt: str) -> None:
    base = str(tmp_path / "t")
    opts = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "2",
            "hoodie.logfile.data.block.format": fmt}  # fmt: skip
    table = HudiTable.create(base, name="t", table_type=ttype, record_key_fields="id",
                             partition_fields="p", ordering_field="ts", options=opts)  # fmt: skip
    model = Model(global_index=index.startswith("GLOBAL"))
    history: list[tuple[str, list[tuple[Any, ...]]]] = []

    def check(instant: str) -> None:
        expected = model.snapshot()
        assert our_rows(table) == expected
        assert rs_rows(base) == expected
        history.append((instant, expected))
        for ts, snap in history[:-1]:
            assert rs_rows(base, ts) == snap, f"hudi-rs time travel to {ts}"
            assert our_rows(table, ts) == snap, f"our time travel to {ts}"

    rows = [(i, "a" if i % 2 else "b", 1, f"v{i}") for i in range(1, 9)]
    r = table.insert(batch(rows))
    assert r.inserted == 8
    model.upsert(rows)
    check(r.instant)

    ups = [(1, "a", 2, "u1"), (2, "b", 2, "u2"), (20, "a", 2, "n20")]
    r = table.upsert(batch(ups))
    model.upsert(ups)
    check(r.instant)

    r = table.delete(pa.table({"id": pa.array([3, 4], pa.int32()), "p": ["a", "b"]}))
    assert r.deleted == 2
    model.delete([(3, "a"), (4, "b")])
    check(r.instant)

    moved = [(5, "b", 3, "moved5")]  # key 5 lived in partition a
    r = table.upsert(batch(moved))
    model.upsert(moved)
    check(r.instant)

    soft = batch([(6, "b", 4, "gone")]).append_column("_hoodie_is_deleted", pa.array([True]))
    r = table.upsert(soft)
    model.delete([(6, "b")])
    check(r.instant)

    over = [(100, "a", 5, "o100"), (101, "a", 5, "o101")]
    # every column of the table, _hoodie_is_deleted included since the soft delete (Hudi's writer
    # refuses a batch without one of them too)
    r = table.insert_overwrite(batch(over).append_column("_hoodie_is_deleted", pa.array([False, False])))
    assert r.replaced_file_groups >= 1
    model.overwrite(over)
    check(r.instant)

    r = table.delete_partition("b")
    model.drop_partition("b")
    check(r.instant)


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_an_archived_table_reads_back_in_hudi_rs(tmp_path: Path, ttype: str) -> None:
    base = str(tmp_path / "t")
    t = HudiTable.create(base, name="t", table_type=ttype, record_key_fields="id", partition_fields="p",
                         ordering_field="ts")  # fmt: skip
    opts = {"hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4", "hoodie.cleaner.commits.retained": "2",
            "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}  # fmt: skip
    for i in range(12):
        t.upsert(batch([(i % 4, "a", i, f"v{i}"), (100 + i, "b", i, f"n{i}")]), options=opts)
    t = HudiTable.open(base)
    assert any(f.name.startswith(".commits_.archive.") for f in t.storage.list(f"{t.meta_path}/archived"))
    assert rs_rows(base) == our_rows(t)
    assert len(our_rows(t)) == 16
    latest = t.timeline.completed_commits().timestamps()[-2]
    assert rs_rows(base, latest) == our_rows(t, latest)
