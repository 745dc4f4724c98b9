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
