"""Merge semantics (spec 8.2-8.4) on real log blocks appended to a corpus MOR table."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute
import pytest
from hudi_core.fs_view import FileSystemView
from hudi_core.log.blocks import encode_delete_block
from hudi_core.log.format import BlockType, HeaderKey, encode_block
from hudi_core.read import merge_file_slice

from .conftest import FILE_ID, PARTITION, RIDER_A, RIDER_D, RIDER_E, Trips  # type: ignore[import-not-found]

T1, T2, T3 = "20250401000000001", "20250401000000002", "20250401000000003"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def test_overwrite_with_latest_lets_a_later_log_record_win_over_the_base(trips: Trips) -> None:
    trips.instant(T1)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A], T1, fare=1.0, ts=1)))  # smaller ts
    snap = trips.snapshot()
    assert snap[RIDER_A]["fare"] == 1.0
    assert snap[RIDER_A]["_hoodie_commit_time"] == T1
    assert snap[RIDER_A]["_hoodie_file_name"] == FILE_ID
    assert len(snap) == 8


def test_default_payload_keeps_the_base_row_with_the_greater_ordering_value(trips: Trips) -> None:
    trips.set_payload(DEFAULT_PAYLOAD)
    trips.instant(T1)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A, RIDER_E], T1, fare=2.0, ts=1695200000000)))
    snap = trips.snapshot()
    assert snap[RIDER_A]["fare"] == 2.0  # 1695200000000 > base ts 1695159649087
    assert snap[RIDER_E]["fare"] == 93.5  # base ts 1695332066204 is greater: base wins


def test_log_records_precombine_by_ordering_with_ties_to_the_later(trips: Trips) -> None:
    trips.instant(T1)
    trips.instant(T2)
    trips.instant(T3)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A], T1, fare=10.0, ts=500)))
    trips.append(trips.data_block(T2, trips.rows([RIDER_A], T2, fare=20.0, ts=400)))  # smaller: loses
    trips.append(trips.data_block(T3, trips.rows([RIDER_E], T3, fare=30.0, ts=7)))
    trips.append(trips.data_block(T3, trips.rows([RIDER_E], T3, fare=31.0, ts=7)))  # tie: later wins
    snap = trips.snapshot()
    assert snap[RIDER_A]["fare"] == 10.0
    assert snap[RIDER_E]["fare"] == 31.0


def test_delete_block_removes_keys_and_respects_ordering(trips: Trips) -> None:
    trips.instant(T1)
    trips.instant(T2)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A, RIDER_E], T1, fare=5.0, ts=1000)))
    # RIDER_A: delete with a smaller ordering value of the same class -> dropped (row stays).
    # RIDER_E: delete with a greater ordering value -> deleted. RIDER_D: natural delete -> deleted.
    trips.append(
        trips.delete_block(T2, [RIDER_A, RIDER_E], pa.array([999, 1001], pa.int64())),
        trips.delete_block(T2, [RIDER_D]),
    )
    snap = trips.snapshot()
    assert RIDER_A in snap and snap[RIDER_A]["fare"] == 5.0
    assert RIDER_E not in snap
    assert RIDER_D not in snap
    assert len(snap) == 6


def test_delete_with_ordering_of_another_java_class_always_wins(trips: Trips) -> None:
    trips.instant(T1)
    trips.instant(T2)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A], T1, ts=1000)))
    trips.append(trips.delete_block(T2, [RIDER_A], pa.array([5], pa.int32())))  # Integer vs Long
    assert RIDER_A not in trips.snapshot()


def test_one_block_of_payload_and_natural_deletes_as_hudi_writes_it(trips: Trips) -> None:
    """Hudi's writer puts a global index's natural deletes (IntWrapper 0: a key moved to another
    partition) and payload deletes (LongWrapper: the record's ts) in one delete block (explore
    seed 12705): each is applied as in a block of its own."""
    trips.instant(T1)
    trips.instant(T2)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A, RIDER_E], T1, fare=5.0, ts=1000)))
    # RIDER_A: Long, smaller than the log record's -> it stays; RIDER_E: Long, greater -> deleted
    typed = encode_delete_block([RIDER_A, RIDER_E], [PARTITION] * 2, pa.array([999, 1001], pa.int64()))
    natural = encode_delete_block([RIDER_D], [PARTITION])  # Integer 0 -> deleted whatever its ordering
    # one HoodieDeleteRecordList of the three: each block's items come after its version, length
    # and one-byte count, before its closing 00; count 3 is 06
    payload = b"\x06" + typed[9:-1] + natural[9:-1] + b"\x00"
    content = b"\x00\x00\x00\x03" + len(payload).to_bytes(4, "big") + payload
    header = {HeaderKey.INSTANT_TIME: T2, HeaderKey.SCHEMA: trips.schema_json}
    trips.append(encode_block(BlockType.DELETE, header, content))
    snap = trips.snapshot()
    assert RIDER_A in snap and snap[RIDER_A]["fare"] == 5.0
    assert RIDER_E not in snap and RIDER_D not in snap
    assert len(snap) == 6


def test_a_record_after_a_delete_brings_the_key_back(trips: Trips) -> None:
    for t in (T1, T2):
        trips.instant(t)
    again = trips.rows([RIDER_A], T2, fare=7.0, ts=1)  # before the delete hides the row
    trips.append(trips.delete_block(T1, [RIDER_A], pa.array([10**15], pa.int64())))
    assert RIDER_A not in trips.snapshot()
    trips.append(trips.data_block(T2, again))
    assert trips.snapshot()[RIDER_A]["fare"] == 7.0


def test_blocks_of_uncommitted_instants_are_skipped(trips: Trips) -> None:
    trips.instant(T1, state="INFLIGHT")
    trips.append(
        trips.data_block(T1, trips.rows([RIDER_A], T1, fare=99.0)), trips.delete_block(T1, [RIDER_E])
    )
    snap = trips.snapshot()
    assert snap[RIDER_A]["fare"] == 19.1
    assert RIDER_E in snap


def test_rollback_command_block_cancels_its_target_instants_blocks(trips: Trips) -> None:
    # T1 stays committed on the timeline, so only the rollback block can cancel its block.
    trips.instant(T1)
    trips.instant(T2)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A], T1, fare=99.0)), trips.rollback_block(T2, T1))
    assert trips.snapshot()[RIDER_A]["fare"] == 19.1


def test_corrupt_bytes_in_a_log_file_are_ignored(trips: Trips) -> None:
    trips.instant(T1)
    trips.instant(T2)
    good = trips.data_block(T2, trips.rows([RIDER_A], T2, fare=42.0))
    broken = trips.data_block(T1, trips.rows([RIDER_E], T1, fare=1.0))[:-20]  # truncated block
    trips.append(broken + good)
    snap = trips.snapshot()
    assert snap[RIDER_A]["fare"] == 42.0
    assert snap[RIDER_E]["fare"] == 93.5


def test_as_of_stops_at_later_blocks(trips: Trips) -> None:
    trips.instant(T1)
    trips.instant(T2)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A], T1, fare=1.0)))
    trips.append(trips.data_block(T2, trips.rows([RIDER_A], T2, fare=2.0)))
    assert trips.snapshot(as_of=T1)[RIDER_A]["fare"] == 1.0
    assert trips.snapshot()[RIDER_A]["fare"] == 2.0
    inc = trips.table().read("incremental", start=T1, end=T2)
    assert inc.column("_hoodie_record_key").to_pylist() == [RIDER_A]
    assert inc.column("fare").to_pylist() == [2.0]


def test_is_deleted_rows_are_dropped(trips: Trips) -> None:
    schema = json.loads(trips.schema_json)
    schema["fields"].append({"name": "_hoodie_is_deleted", "type": ["null", "boolean"], "default": None})
    rows = trips.rows([RIDER_A, RIDER_E], T1)
    flag = pa.compute.equal(rows.column("_hoodie_record_key"), RIDER_A)
    rows = rows.append_column("_hoodie_is_deleted", flag)
    trips.instant(T1)
    # The table schema must know the field for the reader to see it.
    commit = trips.root / ".hoodie" / f"{T1}.deltacommit"
    body = json.loads(commit.read_text())
    data = dict(
        schema,
        fields=[
            f
            for f in schema["fields"]
            if not f["name"].startswith("_hoodie_") or f["name"] == "_hoodie_is_deleted"
        ],
    )
    body["extraMetadata"]["schema"] = json.dumps(data)
    commit.write_text(json.dumps(body))
    trips.append(trips.data_block(T1, rows, json.dumps(schema)))
    snap = trips.snapshot()
    assert RIDER_A not in snap
    assert snap[RIDER_E]["_hoodie_commit_time"] == T1
    assert len(snap) == 7


def test_schema_evolution_fills_new_columns_with_nulls(trips: Trips) -> None:
    schema = json.loads(trips.schema_json)
    schema["fields"].append({"name": "tip", "type": ["null", "double"], "default": None})
    rows = trips.rows([RIDER_A], T1).append_column("tip", pa.array([3.5]))
    trips.instant(T1)
    commit = trips.root / ".hoodie" / f"{T1}.deltacommit"
    body = json.loads(commit.read_text())
    body["extraMetadata"]["schema"] = json.dumps(
        dict(schema, fields=[f for f in schema["fields"] if not f["name"].startswith("_hoodie_")])
    )
    commit.write_text(json.dumps(body))
    trips.append(trips.data_block(T1, rows, json.dumps(schema)))
    out = trips.table().read()
    assert out.column_names[-1] == "tip"
    tips = dict(
        zip(out.column("_hoodie_record_key").to_pylist(), out.column("tip").to_pylist(), strict=False)
    )
    assert tips[RIDER_A] == 3.5
    assert tips[RIDER_E] is None
    # Time travel reads with the schema of its instant: no tip column yet.
    assert "tip" not in trips.table().read(as_of="20250331030645735").column_names
    # An incremental range holding no commit reads with the latest schema, as Hudi does.
    empty = trips.table().read("incremental", start=T1, end="20250331030645735")
    assert empty.num_rows == 0 and empty.column_names[-1] == "tip"


def test_merge_file_slice_is_public_and_returns_meta_columns_first(trips: Trips) -> None:
    table = trips.table()
    view = FileSystemView(table)
    fs = next(s for s in view.latest_merged_file_slices() if s.file_id == FILE_ID)
    merged = merge_file_slice(table, fs, as_of=None, timeline=table.timeline)
    assert merged.column_names[:5] == [
        "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
        "_hoodie_partition_path", "_hoodie_file_name",
    ]  # fmt: skip
    fares = dict(
        zip(merged.column("_hoodie_record_key").to_pylist(), merged.column("fare").to_pylist(), strict=False)
    )
    assert fares[RIDER_D] == 25.0
    assert merged.num_rows == 4


@pytest.mark.parametrize("query", ["snapshot", "read_optimized"])
def test_iter_batches_yields_the_same_rows_as_read(trips: Trips, query: str) -> None:
    table = trips.table()
    batches = list(table.read_batches(query))
    assert sum(b.num_rows for b in batches) == table.read(query).num_rows == 8
    ro_fares = {r["_hoodie_record_key"]: r["fare"] for b in batches for r in b.to_pylist()}
    assert ro_fares[RIDER_D] == (25.0 if query == "snapshot" else 33.9)
