"""A global index's key that arrives with another partition: merged with its stored record
first, as Apache Hudi 0.15 does (``HoodieIndexUtils.mergeForPartitionUpdatesIfNeeded``), so a
stale record never moves a key, and a delete without ordering value always deletes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable

EVENT_TIME = "org.apache.hudi.common.model.EventTimeAvroPayload"
PARTIAL = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
BOTH_TYPES = pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])


def _table(tmp_path: Path, table_type: str, index: str, payload: str) -> tuple[HudiTable, dict[str, str]]:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="p", ordering_field="ts",
                         options={"hoodie.datasource.write.payload.class": payload})  # fmt: skip
    return t, {"hoodie.index.type": index, "hoodie.datasource.write.payload.class": payload}


def _rows(t: HudiTable) -> list[tuple[object, ...]]:
    snap = t.read(columns=["id", "p", "ts", "v", "w"])
    return sorted(tuple(r.values()) for r in snap.to_pylist())


def _batch(ids: list[str], p: str, ts: int, v: str | None, w: str | None = "w") -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": [p] * n, "ts": [ts] * n, "v": pa.array([v] * n, pa.string()),
                     "w": pa.array([w] * n, pa.string())})  # fmt: skip


@BOTH_TYPES
@pytest.mark.parametrize("index", ["GLOBAL_SIMPLE", "GLOBAL_BLOOM"])
def test_a_stale_record_with_another_partition_leaves_the_key_where_it_is(
    tmp_path: Path, table_type: str, index: str
) -> None:
    t, opts = _table(tmp_path, table_type, index, EVENT_TIME)
    t.upsert(_batch(["a", "b"], "p1", 1, "first"), options=opts)
    t.upsert(_batch(["a"], "p1", 10, "latest"), options=opts)  # on MOR: in a log file
    before = {r["id"]: r["_hoodie_commit_time"] for r in t.read().to_pylist()}
    # older than the stored record: Java merges first, the stored record wins, the key stays
    t.upsert(_batch(["a", "b"], "p2", 5, "stale"), options=opts)
    assert _rows(t) == [("a", "p1", 10, "latest", "w"), ("b", "p2", 5, "stale", "w")]
    # the merged record is written again at the key's location, so its commit time is the new
    # write's (as Apache Hudi's, which routes the merged record there as an update)
    after = {r["id"]: r["_hoodie_commit_time"] for r in t.read().to_pylist()}
    assert after["a"] > before["a"]


@BOTH_TYPES
def test_a_newer_partial_record_moves_the_key_with_the_stored_fields_it_lacks(
    tmp_path: Path, table_type: str
) -> None:
    t, opts = _table(tmp_path, table_type, "GLOBAL_SIMPLE", PARTIAL)
    t.upsert(_batch(["a", "b"], "p1", 1, "v1", "w1"), options=opts)
    t.upsert(_batch(["a"], "p2", 2, None, "w2"), options=opts)  # newer: moves, v filled from p1's
    assert _rows(t) == [("a", "p2", 2, "v1", "w2"), ("b", "p1", 1, "v1", "w1")]


@BOTH_TYPES
def test_a_delete_of_a_moved_key_follows_its_payload(tmp_path: Path, table_type: str) -> None:
    t, opts = _table(tmp_path, table_type, "GLOBAL_SIMPLE", DEFAULT)
    t.upsert(_batch(["a", "b", "c"], "p1", 10, "x"), options=opts)
    flagged = _batch(["a", "b"], "p2", 5, "x").append_column("_hoodie_is_deleted", pa.array([True, True]))
    flagged = flagged.set_column(2, "ts", pa.array([5, 20], pa.int64()))
    # the deletes go where the keys are stored. DefaultHoodieRecordPayload's older delete loses to
    # the stored record in a copy-on-write merge; a merge-on-read snapshot lets a logged delete
    # beat the base record whatever its ordering value (both as Apache Hudi 0.15 answers)
    t.upsert(flagged, options=opts)
    # the delete operation's records have no ordering value for Java: it deletes whatever is stored
    t.delete(_batch(["c"], "p1", 1, "x"), options=opts)
    assert _rows(t) == ([("a", "p1", 10, "x", "w")] if table_type == "COPY_ON_WRITE" else [])


@BOTH_TYPES
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE"])
def test_the_delete_operation_beats_a_greater_stored_ordering_value(
    tmp_path: Path, table_type: str, index: str
) -> None:
    t, opts = _table(tmp_path, table_type, index, EVENT_TIME)
    t.upsert(_batch(["a", "b", "c"], "p1", 10, "x"), options=opts)
    t.delete(_batch(["a"], "p1", 1, "x"), options=opts)
    # EventTimeAvroPayload checks for a delete before it compares ordering values
    flagged = _batch(["b"], "p1", 5, "x").append_column("_hoodie_is_deleted", pa.array([True]))
    t.upsert(flagged, options=opts)
    assert _rows(t) == [("c", "p1", 10, "x", "w")]
    if table_type == "MERGE_ON_READ":
        t.compact()
        assert _rows(t) == [("c", "p1", 10, "x", "w")]


@BOTH_TYPES
def test_without_an_ordering_field_the_incoming_record_moves_the_key(tmp_path: Path, table_type: str) -> None:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="p")  # fmt: skip
    opts = {"hoodie.index.type": "GLOBAL_SIMPLE"}
    t.upsert(_batch(["a", "b"], "p1", 10, "old"), options=opts)
    t.upsert(_batch(["a"], "p2", 5, "new"), options=opts)
    assert _rows(t) == [("a", "p2", 5, "new", "w"), ("b", "p1", 10, "old", "w")]


@BOTH_TYPES
@pytest.mark.parametrize(
    ("more", "moved"),
    [
        ({}, False),  # Hudi's record index keeps a key in its partition
        ({"hoodie.record.index.update.partition.path": "true"}, True),
        ({"hoodie.metadata.enable": "false"}, True),  # Hudi's falls back to GLOBAL_SIMPLE's rule
        ({"hoodie.metadata.enable": "false", "hoodie.simple.index.update.partition.path": "false"}, False),
    ],
)
def test_the_record_index_finds_keys_in_any_partition(
    tmp_path: Path, table_type: str, more: dict[str, str], moved: bool
) -> None:
    """``hoodie.index.type=RECORD_INDEX`` (Hudi 0.14's record-level index) is global; whether a
    key moves follows the record index's own option, or GLOBAL_SIMPLE's without a metadata table."""
    t, opts = _table(tmp_path, table_type, "RECORD_INDEX", DEFAULT)
    opts.update(more)
    t.upsert(_batch(["a", "b", "c"], "p1", 1, "first"), options=opts)
    t.upsert(_batch(["a", "d"], "p2", 2, "second"), options=opts)
    t.delete(_batch(["b"], "p2", 3, None), options=opts)  # b is in p1: found there
    assert _rows(t) == [
        ("a", "p2", 2, "second", "w"),
        ("c", "p1", 1, "first", "w"),
        ("d", "p2", 2, "second", "w"),
    ]
    where = {
        r["id"]: r["_hoodie_partition_path"]
        for r in t.read(columns=["id", "_hoodie_partition_path"]).to_pylist()
    }
    assert where == {"a": "p2" if moved else "p1", "c": "p1", "d": "p2"}


@BOTH_TYPES
@pytest.mark.parametrize(
    ("index", "more"),
    [
        ("GLOBAL_SIMPLE", {}),
        ("GLOBAL_BLOOM", {}),
        ("RECORD_INDEX", {}),  # its locations are the latest: nothing merged before the write
        ("RECORD_INDEX", {"hoodie.metadata.enable": "false"}),  # GLOBAL_SIMPLE's look-up
    ],
)
def test_a_stale_record_in_its_own_partition_rewrites_the_stored_one_on_merge_on_read(
    tmp_path: Path, table_type: str, index: str, more: dict[str, str]
) -> None:
    """A global index on a merge-on-read table merges every stored key's incoming record with the
    stored one, as Apache Hudi's (``mayContainDuplicateLookup``: it reads keys from base files):
    a record that loses writes the stored record again, under the new commit. On copy-on-write,
    and under a record index, the write's own merge keeps the stored record as it was."""
    t, opts = _table(tmp_path, table_type, index, EVENT_TIME)
    opts.update({**more, "hoodie.record.index.update.partition.path": "true"})
    t.upsert(_batch(["a", "b"], "p1", 10, "first"), options=opts)
    first = {r["id"]: r["_hoodie_commit_time"] for r in t.read().to_pylist()}
    t.upsert(_batch(["a"], "p1", 5, "stale"), options=opts)
    assert _rows(t) == [("a", "p1", 10, "first", "w"), ("b", "p1", 10, "first", "w")]
    second = t.timeline.completed_commits().last()
    assert second is not None
    written_again = table_type == "MERGE_ON_READ" and (index != "RECORD_INDEX" or bool(more))
    after = {r["id"]: r["_hoodie_commit_time"] for r in t.read().to_pylist()}
    assert after == {"a": second.timestamp if written_again else first["a"], "b": first["b"]}


def test_a_key_deleted_by_a_log_block_comes_back_as_a_new_record(tmp_path: Path) -> None:
    """Its base file still holds the key; the global index finds it there but its file slice no
    longer does: upserted again, the record is new (Hudi's ``tag as a new record``: it goes where
    inserts go, not into the group's log), and a delete of it there deletes nothing."""
    t, opts = _table(tmp_path, "MERGE_ON_READ", "GLOBAL_SIMPLE", DEFAULT)
    opts["hoodie.parquet.small.file.limit"] = "0"  # every insert in a file group of its own
    t.upsert(_batch(["a", "b", "c"], "p1", 1, "first"), options=opts)
    t.delete(_batch(["a", "b"], "p1", 2, None), options=opts)
    t.upsert(_batch(["a"], "p1", 3, "back"), options=opts)
    files = {r["id"]: r["_hoodie_file_name"].split("_")[0] for r in t.read().to_pylist()}
    assert files["a"] != files["c"]
    before = _log_files(tmp_path / "t" / "p1")
    t.upsert(_batch(["b"], "p1", 4, None).append_column("_hoodie_is_deleted", pa.array([True])), options=opts)
    assert _rows(t) == [("a", "p1", 3, "back", "w"), ("c", "p1", 1, "first", "w")]
    # the second delete of b wrote nothing into the group that holds its deleted copy
    assert _log_files(tmp_path / "t" / "p1") == before


def _log_files(partition: Path) -> dict[str, int]:
    return {f.name: f.stat().st_size for f in partition.iterdir() if ".log." in f.name}


def test_a_partial_record_of_a_key_no_longer_stored_takes_no_other_records_fields(tmp_path: Path) -> None:
    """PartialUpdate fills a record's null fields from its key's stored record only: a key whose
    file slice deleted it has none, whatever the other keys merged beside it hold."""
    t, opts = _table(tmp_path, "MERGE_ON_READ", "GLOBAL_SIMPLE", PARTIAL)
    t.upsert(_batch(["a", "b"], "p1", 1, "v1", "w1"), options=opts)
    t.delete(_batch(["a"], "p1", 2, None), options=opts)
    t.upsert(
        pa.concat_tables([_batch(["b"], "p1", 3, None, "w3"), _batch(["a"], "p2", 3, None, "w3")]),
        options=opts,
    )
    assert _rows(t) == [("a", "p2", 3, None, "w3"), ("b", "p1", 3, "v1", "w3")]
