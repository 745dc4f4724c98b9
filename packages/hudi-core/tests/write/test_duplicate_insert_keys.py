"""``insert`` keeps duplicate keys (hoodie.combine.before.insert=false); a later upsert of such a
key updates every copy in its file group, as Java's merge handle does, and adds no extra row."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.read import iter_split, plan_splits


def _rows(table: pa.Table) -> list[tuple[str, int]]:
    return sorted((r["id"], r["v"]) for r in table.select(["id", "v"]).to_pylist())


@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE"])
def test_upsert_of_a_key_inserted_twice_updates_both_copies(tmp_path: Path, index: str) -> None:
    import hudi

    t = HudiTable.create(str(tmp_path), name="d", table_type="COPY_ON_WRITE", record_key_fields="id",
                         ordering_field="ts", options={"hoodie.index.type": index})  # fmt: skip
    t.insert(pa.table({"id": ["a", "a", "b"], "ts": [1, 2, 3], "v": [1, 2, 3]}))
    result = t.upsert(pa.table({"id": ["a", "c"], "ts": [5, 6], "v": [10, 20]}))
    assert (result.inserted, result.updated) == (1, 2)
    expected = [("a", 10), ("a", 10), ("b", 3), ("c", 20)]
    assert _rows(t.read()) == expected
    rs = hudi.HudiTableBuilder.from_base_uri(str(tmp_path)).build()
    assert _rows(pa.Table.from_batches(rs.read())) == expected


def test_mor_log_update_of_a_duplicated_key_reads_like_java(tmp_path: Path) -> None:
    """MOR with updates in a log (BUCKET index, no small-file merge): Hudi's merge-on-read
    iterator merges a log record into the first base copy of its key only, later copies read
    as stored; a log delete removes the first copy only. Compaction gives the same rows, as
    Apache Hudi 0.15's does. hudi-rs reads the same rows at every step, and so does a read that
    streams the base file one row at a time."""
    import hudi

    t = HudiTable.create(str(tmp_path), name="d", table_type="MERGE_ON_READ", record_key_fields="id",
                         ordering_field="ts", options={"hoodie.index.type": "BUCKET",
                                                       "hoodie.bucket.index.num.buckets": "1"})  # fmt: skip
    t.insert(pa.table({"id": ["a", "a", "b", "b"], "ts": [1, 2, 3, 4], "v": [1, 2, 3, 4]}))

    def both() -> list[tuple[str, int]]:
        ours = _rows(HudiTable.open(str(tmp_path)).read())
        # streamed a base row at a time: the copies of a key meet the log record in different batches
        table = HudiTable.open(str(tmp_path))
        streamed = [p for s in plan_splits(table) for p in iter_split(table, s, batch_rows=1)]
        assert _rows(pa.concat_tables(streamed)) == ours
        rs = _rows(pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(tmp_path)).build().read()))
        assert ours == rs
        return ours

    t.upsert(pa.table({"id": ["a", "c"], "ts": [5, 6], "v": [10, 20]}))
    assert both() == [("a", 2), ("a", 10), ("b", 3), ("b", 4), ("c", 20)]
    t.delete(pa.table({"id": ["b"]}))
    assert both() == [("a", 2), ("a", 10), ("b", 4), ("c", 20)]
    assert t.compact(), "a compaction ran"
    assert (
        not list(tmp_path.glob(".*.log.*")) or HudiTable.open(str(tmp_path)).file_slices()[0].log_files == ()
    )
    assert both() == [("a", 2), ("a", 10), ("b", 4), ("c", 20)]


def _insert_twice(path: Path, table_type: str, options: dict[str, str]) -> HudiTable:
    """a, b in p1; then an insert of a newer a, an older b, c twice in p1 (packed into the
    small file of p1, or BUCKET's one file group there) and d twice in p2 (a new file group)."""
    t = HudiTable.create(str(path), name="d", table_type=table_type, record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=options)  # fmt: skip
    t.insert(pa.table({"id": ["a", "b"], "ts": [1, 1], "v": [1, 2], "p": ["p1", "p1"]}))
    HudiTable.open(str(path)).insert(
        pa.table({"id": ["a", "b", "c", "c", "d", "d"], "ts": [2, 0, 2, 3, 2, 1], "v": [3, 4, 5, 6, 7, 8],
                  "p": ["p1", "p1", "p1", "p1", "p2", "p2"]}),
        options=options,
    )  # fmt: skip
    return HudiTable.open(str(path))


def _read_both(path: Path) -> list[tuple[str, int]]:
    import hudi

    ours = _rows(HudiTable.open(str(path)).read())
    assert _rows(pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(path)).build().read())) == ours
    return ours


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET"])
def test_insert_into_a_file_with_records_keeps_them(tmp_path: Path, table_type: str, index: str) -> None:
    """hoodie.merge.allow.duplicate.on.inserts (true, as Apache Hudi's Spark writer has it for
    insert): the stored a and b stay beside the new a and b (Java's concat handle), as in every
    file the insert reaches; merge-on-read with BUCKET writes the inserts into p1's group's log,
    which a read merges by key as Hudi's does (one c), and p2's new group keeps both d. A later
    upsert of b updates every copy of it."""
    options = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "1"}
    t = _insert_twice(tmp_path, table_type, options)
    if table_type == "MERGE_ON_READ" and index == "BUCKET":
        expected = [("a", 3), ("b", 4), ("c", 6), ("d", 7), ("d", 8)]
    else:
        expected = [("a", 1), ("a", 3), ("b", 2), ("b", 4), ("c", 5), ("c", 6), ("d", 7), ("d", 8)]
    assert _read_both(tmp_path) == expected
    if table_type == "COPY_ON_WRITE":
        t.upsert(pa.table({"id": ["b"], "ts": [5], "v": [9], "p": ["p1"]}), options=options)
        assert _read_both(tmp_path) == [
            ("a", 1),
            ("a", 3),
            ("b", 9),
            ("b", 9),
            ("c", 5),
            ("c", 6),
            ("d", 7),
            ("d", 8),
        ]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_without_duplicates_merges_into_the_file_by_key(tmp_path: Path, table_type: str) -> None:
    """hoodie.merge.allow.duplicate.on.inserts=false: a file the insert reaches keeps one record
    per key, the last of the insert's copies (Java's merge handle); a new file group keeps them
    all, as Java's create handle does."""
    options = {"hoodie.merge.allow.duplicate.on.inserts": "false"}
    _insert_twice(tmp_path, table_type, options)
    assert _read_both(tmp_path) == [("a", 3), ("b", 4), ("c", 6), ("d", 7), ("d", 8)]
