"""SIMPLE index look-ups: footer pruning returns exactly the matching locations, and a key held
by two file groups (duplicates from plain inserts) is located in both."""

from __future__ import annotations

from pathlib import Path

import hudi_core.write.index.simple as simple
import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.fs_view import FileSystemView
from hudi_core.write.index.simple import existing_key_locations, join_locations
from hudi_core.write.records import FILE_ID, LOCATION_PARTITION, PARTITION_PATH, RECORD_KEY


def _table(tmp_path: Path) -> HudiTable:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                         partition_fields="p", ordering_field="ts",
                         options={"hoodie.parquet.small.file.limit": "0"})  # fmt: skip
    # three inserts: three file groups per partition with disjoint key ranges
    for lo in (0, 100, 200):
        ids = list(range(lo, lo + 50))
        t.insert(
            pa.table({"id": [f"k{i:04d}" for i in ids], "p": [f"p{i % 2}" for i in ids], "ts": [1] * 50})
        )
    return t


def test_pruned_lookup_equals_full_lookup_restricted_to_the_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _table(tmp_path)
    view = FileSystemView(t)
    wanted = pa.array(["k0003", "k0104", "k0149", "k9999", "k0050"])
    full = existing_key_locations(view, None)
    pruned = existing_key_locations(view, None, keys=wanted)
    expect = sorted(r for r in zip(*(full.column(c).to_pylist() for c in full.column_names), strict=True)
                    if r[0] in set(wanted.to_pylist()))  # fmt: skip
    got = sorted(zip(*(pruned.column(c).to_pylist() for c in pruned.column_names), strict=True))
    assert got == expect and len(got) == 3
    assert len(set(full.column(FILE_ID).to_pylist())) == 6
    # files whose footer min/max keys rule the keys out are not read
    reads: list[str] = []
    real = simple._file_keys
    monkeypatch.setattr(simple, "_file_keys", lambda v, file: reads.append(file) or real(v, file))
    existing_key_locations(view, None, keys=pa.array(["k0003", "k0010"]))
    assert len(reads) == 2  # of 6 files: the first insert's file in each partition


def test_lookup_over_more_file_groups_than_one_match_takes(tmp_path: Path) -> None:
    # 20 file groups in one partition (the look-up matches up to 8 files' keys at once), 2 in another
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts",
                         options={"hoodie.parquet.small.file.limit": "0"})  # fmt: skip
    for lo in range(0, 2000, 100):
        ids = range(lo, lo + 100)
        t.insert(
            pa.table(
                {"id": [f"k{i:05d}" for i in ids], "p": ["a" if lo < 1800 else "b"] * 100, "ts": [1] * 100}
            )
        )
    view = FileSystemView(t)
    full = existing_key_locations(view, None)
    assert len(set(full.column(FILE_ID).to_pylist())) == 20
    # every 7th key, some keys of no file, each with its partition (and one in the wrong one)
    keys = [f"k{i:05d}" for i in range(0, 2100, 7)]
    parts = ["a" if int(k[1:]) < 1800 else "b" for k in keys]
    parts[0] = "b"  # k00000 lives in a: a non-global look-up in b does not find it
    rows = list(zip(*(full.column(c).to_pylist() for c in (RECORD_KEY, LOCATION_PARTITION)), strict=True))
    by_key = {k: p for k, p in rows}
    for key_parts in (None, pa.array(parts)):
        got = existing_key_locations(view, None, keys=pa.array(keys), key_partitions=key_parts)
        found = sorted(got.column(RECORD_KEY).to_pylist())
        wanted = {
            k
            for k, p in zip(keys, parts, strict=True)
            if k in by_key and (key_parts is None or by_key[k] == p)
        }
        assert found == sorted(wanted) and len(found) > 250
        expect = {
            r
            for r in zip(*(full.column(c).to_pylist() for c in full.column_names), strict=True)
            if r[0] in wanted
        }
        assert set(zip(*(got.column(c).to_pylist() for c in got.column_names), strict=True)) == expect


def test_bloom_filter_probed_only_where_cheaper_than_the_key_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a small filter (1,000 entries) over a 1,000-row file: probing two keys costs less than
    # half the key column's read, and the filter rules out keys inside the file's min/max range
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                         partition_fields="p", ordering_field="ts",
                         options={"hoodie.index.bloom.num_entries": "1000", "hoodie.index.bloom.fpp": "0.0001",
                                  "hoodie.bloom.index.filter.type": "SIMPLE"})  # fmt: skip
    t.insert(pa.table({"id": [f"k{i:04d}" for i in range(0, 2000, 2)], "p": ["a"] * 1000, "ts": [1] * 1000}))
    view = FileSystemView(t)
    reads: list[object] = []
    real = simple._file_keys
    monkeypatch.setattr(simple, "_file_keys", lambda v, file: reads.append(file) or real(v, file))
    absent = pa.array(["k0001", "k1001"])  # odd keys: inside the range, in no file
    assert existing_key_locations(view, None, keys=absent).num_rows == 0
    assert reads == []  # ruled out by the filter, not read
    present = existing_key_locations(view, None, keys=pa.array(["k0001", "k1000"]))
    assert present.column(RECORD_KEY).to_pylist() == ["k1000"] and len(reads) == 1


def test_bloom_probe_cost_rule() -> None:
    # Hudi's default filter (DYNAMIC_V0, 60,000 entries: ~431k characters a row, two rows past
    # 60,000 keys) decodes slower than half the key read of a ~120k-row file: the SIMPLE
    # upsert's files are read, not probed; a few keys against a 1M-row file are probed
    assert not simple._worth_probing(863_000, 20_000, 122_880)
    assert not simple._worth_probing(863_000, 10, 122_880)
    assert simple._worth_probing(863_000, 100, 1_000_000)
    assert not simple._worth_probing(863_000, 200_000, 1_000_000)
    assert not simple._worth_probing(2_400, 0, 1_000)  # nothing wanted: the range check decides


def test_key_in_two_file_groups_is_located_in_both() -> None:
    existing = pa.table({RECORD_KEY: ["a", "a", "b"], "_hoodie_location_partition": ["p", "p", "p"],
                         FILE_ID: ["f1", "f2", "f1"], "_hoodie_base_instant": ["1", "2", "1"]})  # fmt: skip
    data = pa.table({"v": [1, 2, 3], RECORD_KEY: ["a", "c", "b"], PARTITION_PATH: ["p", "p", "p"]})
    out = join_locations(data, existing, global_=False)
    rows = sorted(zip(out.column("v").to_pylist(), out.column(FILE_ID).to_pylist(), strict=True),
                  key=lambda r: (r[0], r[1] or ""))  # fmt: skip
    assert rows == [(1, "f1"), (1, "f2"), (2, None), (3, "f1")]
    unique = join_locations(data, existing.slice(1), global_=False)  # the hash look-up path
    assert unique.column(FILE_ID).to_pylist() == ["f2", None, "f1"]


def test_a_key_stored_in_another_partition_is_new_to_a_partitioned_lookup() -> None:
    # every stored key at one location: the look-up by key alone, then by partition
    existing = pa.table({RECORD_KEY: ["a", "b"], LOCATION_PARTITION: ["p1", "p1"], FILE_ID: ["f1", "f2"],
                         "_hoodie_base_instant": ["1", "1"]})  # fmt: skip
    data = pa.table({RECORD_KEY: ["a", "b", "c"], PARTITION_PATH: ["p1", "p2", "p1"]})
    partitioned = join_locations(data, existing, global_=False)
    assert partitioned.column(FILE_ID).to_pylist() == ["f1", None, None]
    assert partitioned.column(LOCATION_PARTITION).to_pylist() == ["p1", None, None]
    stored_anywhere = join_locations(data, existing, global_=True)
    assert stored_anywhere.column(FILE_ID).to_pylist() == ["f1", "f2", None]
    assert stored_anywhere.column(LOCATION_PARTITION).to_pylist() == ["p1", "p1", None]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_global_index_key_moved_twice_lives_once(tmp_path: Path, table_type: str) -> None:
    """GLOBAL_SIMPLE on MOR: a moved key is deleted from its old file group by a log block while
    the old base file still holds it. Later upserts of that key must find only its live copy
    (no resurrection in the old partition), as Java's global index does."""
    import hudi

    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="part", ordering_field="ts")  # fmt: skip
    opts = {"hoodie.index.type": "GLOBAL_SIMPLE"}

    def rows(ids: list[str], part: str, ts: int) -> pa.Table:
        return pa.table(
            {"id": ids, "part": [part] * len(ids), "ts": [ts] * len(ids), "v": [f"{part}-{ts}"] * len(ids)}
        )

    t.upsert(rows(["a", "b", "c"], "p1", 1), options=opts)
    t.upsert(rows(["a"], "p2", 2), options=opts)  # a moves p1 -> p2
    t.upsert(rows(["a"], "p2", 3), options=opts)  # a updated where it lives
    t.upsert(rows(["a", "b"], "p3", 4), options=opts)  # a moves again, b moves for the first time
    t.upsert(rows(["a"], "p1", 5), options=opts)  # a back home
    expected = {("a", "p1", "p1-5"), ("b", "p3", "p3-4"), ("c", "p1", "p1-1")}
    snap = t.read(columns=["id", "part", "v"])
    assert sorted(zip(*(snap.column(c).to_pylist() for c in ("id", "part", "v")), strict=True)) == sorted(
        expected
    )
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(t.base_uri).build().read())
    assert sorted(zip(*(rs.column(c).to_pylist() for c in ("id", "part", "v")), strict=True)) == sorted(
        expected
    )


@pytest.mark.parametrize(("index", "moved"), [("BLOOM", False), ("GLOBAL_BLOOM", True)])
def test_hudis_bloom_index_types_keep_their_semantics(tmp_path: Path, index: str, moved: bool) -> None:
    # a Hudi job's option dict names BLOOM or GLOBAL_BLOOM: a key updated with another partition
    # value stays twice (non-global) or moves to the new partition (global, update.partition.path)
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    opts = {"hoodie.index.type": index}
    t.upsert(pa.table({"id": ["a", "b"], "p": ["x", "x"], "ts": [1, 1], "v": [1, 2]}), options=opts)
    t.upsert(pa.table({"id": ["a", "b"], "p": ["y", "x"], "ts": [2, 2], "v": [10, 20]}), options=opts)
    rows = sorted((r["id"], r["p"], r["v"]) for r in t.read(columns=["id", "p", "v"]).to_pylist())
    expected = [("a", "y", 10), ("b", "x", 20)] if moved else [("a", "x", 1), ("a", "y", 10), ("b", "x", 20)]
    assert rows == expected
