"""The same writes by Apache Hudi and by us give the same table: where a payload, a delete or a
global index's partition change decides which record survives, both snapshots hold the same
rows, each last written by the same step (its ``_hoodie_commit_time`` is that step's commit).

The cases are the ones our writer once got wrong: a stale record that would move a key under a
global index (Hudi merges it with the stored record first, and the stored one wins; on
merge-on-read it does so for every stored key, and writes the stored record again), deletes
whose ordering value is smaller than the stored record's (the delete operation and
EventTimeAvroPayload always delete; DefaultHoodieRecordPayload's loses in a copy-on-write merge),
and inserts of keys a file already holds (kept beside the stored records, or merged by key with
``hoodie.merge.allow.duplicate.on.inserts=false``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import InvalidRecordError
from hudi_spark.table_ops import open_or_create
from oracle import OracleError
from runner import compacted_by_both
from workloads import table_options

pytestmark = pytest.mark.interop

EVENT_TIME = "org.apache.hudi.common.model.EventTimeAvroPayload"
DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def _batch(
    ids: list[str], p: str, ts: list[int] | list[float], v: str, deleted: list[bool] | None = None
) -> pa.Table:
    kind = pa.float64() if any(isinstance(t, float) for t in ts) else pa.int64()
    t = pa.table({"id": ids, "p": [p] * len(ids), "ts": pa.array(ts, kind), "v": [v] * len(ids)})
    return t if deleted is None else t.append_column("_hoodie_is_deleted", pa.array(deleted))


#: a newer a, an older b and c twice into p1 (which holds a and b), d twice into p2 (empty)
_REINSERT = pa.concat_tables(
    [_batch(["a", "b", "c", "c"], "p1", [2, 0, 2, 3], "again"), _batch(["d", "d"], "p2", [2, 1], "again")]
)

NAN, INF = float("nan"), float("inf")

#: name -> (payload, index, steps of (operation, rows)[, more write options])
CASES = {
    "stale-record-moves-no-key": (
        EVENT_TIME,
        "GLOBAL_SIMPLE",
        [
            ("upsert", _batch(["a", "b"], "p1", [1, 1], "first")),
            ("upsert", _batch(["a"], "p1", [10], "latest")),  # merge-on-read: in a log file
            ("upsert", _batch(["a", "b"], "p2", [5, 5], "stale")),  # a is older than stored: stays
        ],
    ),
    # on merge-on-read a global index merges every stored key's record, not only a moving one's:
    # a stale record in its key's own partition writes the stored record again (a's commit moves)
    **{
        f"stale-record-stays-{index.lower()}": (
            EVENT_TIME,
            index,
            [
                ("upsert", _batch(["a", "b", "c"], "p1", [10, 10, 10], "first")),
                ("upsert", _batch(["a", "b"], "p1", [5, 20], "second")),
                ("upsert", _batch(["b"], "p1", [15], "third")),  # b stale now
                ("upsert", _batch(["c"], "p2", [30], "fourth")),  # c moves
            ],
        )
        for index in ("GLOBAL_SIMPLE", "GLOBAL_BLOOM")
    },
    # a key whose base file still holds it after a delete: upserted again it is a new record,
    # deleted again there is nothing to delete
    "deleted-key-comes-back": (
        DEFAULT,
        "GLOBAL_SIMPLE",
        [
            ("upsert", _batch(["a", "b", "c"], "p1", [1, 1, 1], "first")),
            ("delete", _batch(["a", "b"], "p1", [2, 2], "x")),
            ("upsert", _batch(["a", "c"], "p1", [3, 3], "back")),
            ("upsert", _batch(["a", "b"], "p1", [4, 4], "x", deleted=[False, True])),
        ],
    ),
    "deletes-of-moved-keys": (
        DEFAULT,
        "GLOBAL_SIMPLE",
        [
            ("upsert", _batch(["a", "b", "c"], "p1", [10, 10, 10], "x")),
            ("upsert", _batch(["a", "b"], "p2", [5, 20], "x", deleted=[True, True])),
            ("delete", _batch(["c"], "p1", [1], "x")),
        ],
    ),
    # an insert reaching a file with records (p1's small file; with BUCKET, the key's file group
    # on copy-on-write) keeps them beside the new ones, duplicate keys included, and an upsert
    # then updates every copy in the group; merge-on-read BUCKET inserts go to the group's log
    "insert-keeps-stored-records": (
        DEFAULT,
        "SIMPLE",
        [
            ("insert", _batch(["a", "b"], "p1", [1, 1], "first")),
            ("insert", _REINSERT),
            ("upsert", _batch(["b"], "p1", [5], "latest")),
        ],
    ),
    "bucket-insert-keeps-stored-records": (
        DEFAULT,
        "BUCKET",
        [
            ("insert", _batch(["a", "b"], "p1", [1, 1], "first")),
            ("insert", _batch(["a", "b", "c", "c"], "p1", [2, 0, 2, 3], "again")),
        ],
    ),
    # ... and with hoodie.merge.allow.duplicate.on.inserts=false merges into it by key, the
    # insert's last copy of a key winning there (a new file group keeps every copy)
    "insert-merges-by-key": (
        DEFAULT,
        "SIMPLE",
        [
            ("insert", _batch(["a", "b"], "p1", [1, 1], "first")),
            ("insert", _REINSERT),
        ],
        {"hoodie.merge.allow.duplicate.on.inserts": "false"},
    ),
    # hoodie.datasource.write.insert.drop.duplicates: stored keys (in their partition) dropped, the
    # rest deduplicated by ordering value, for an insert and for an upsert
    "drop-duplicates": (
        DEFAULT,
        "SIMPLE",
        [
            ("insert", _batch(["a", "b"], "p1", [1, 1], "first")),
            ("insert", _REINSERT),
            (
                "upsert",
                pa.concat_tables([_batch(["a"], "p1", [9], "latest"), _batch(["a"], "p2", [9], "latest")]),
            ),
        ],
        {"hoodie.datasource.write.insert.drop.duplicates": "true"},
    ),
    # a double ordering field compares as Java's Double.compare: NaN above infinity (and equal to
    # itself: a tie takes the incoming record), -0.0 below 0.0; in a batch, against the stored
    # record, and (merge-on-read) between log files
    "floating-ordering-values": (
        DEFAULT,
        "SIMPLE",
        [
            ("upsert", _batch(["a", "b", "c", "d", "e"], "p1", [NAN, 0.0, -0.0, INF, 1.0], "first")),
            (
                "upsert",
                pa.concat_tables(
                    [
                        _batch(["a", "b", "c", "d", "e"], "p1", [5.0, -0.0, 0.0, NAN, NAN], "second"),
                        _batch(["e", "f", "f"], "p1", [2.0, NAN, -INF], "second"),
                    ]
                ),
            ),
            ("upsert", _batch(["a", "b", "e", "f"], "p1", [NAN, -INF, 3.0, NAN], "third")),
        ],
    ),
    # RECORD_INDEX is global: an update naming another partition updates the key where it is
    # (hoodie.record.index.update.partition.path=false), a delete finds it there; without the
    # metadata table Hudi's falls back to GLOBAL_SIMPLE, which moves the key
    **{
        name: (
            DEFAULT,
            "RECORD_INDEX",
            [
                ("upsert", _batch(["a", "b", "c"], "p1", [1, 1, 1], "first")),
                ("upsert", _batch(["a", "d"], "p2", [2, 2], "moved")),
                ("delete", _batch(["b"], "p2", [3], "x")),
            ],
            {"hoodie.metadata.enable": metadata, "hoodie.metadata.record.index.enable": metadata},
        )
        for name, metadata in (("record-index", "true"), ("record-index-without-metadata", "false"))
    },
    "older-deletes": (
        EVENT_TIME,
        "SIMPLE",
        [
            ("upsert", _batch(["a", "b", "c"], "p1", [10, 10, 10], "x")),
            ("delete", _batch(["a"], "p1", [1], "x")),
            ("upsert", _batch(["b"], "p1", [5], "x", deleted=[True])),
        ],
    ),
}


def _options(table_type: str, index: str, payload: str, operation: str) -> dict[str, str]:
    return table_options("t", table_type, operation, {"hoodie.datasource.write.payload.class": payload,
                                                      "hoodie.index.type": index})  # fmt: skip


def _rows(table: pa.Table, commits: list[str]) -> list[tuple[object, ...]]:
    """(id, the partition that holds it, ts, v, the step whose commit last wrote the row),
    sorted; ``ts`` as its text (a NaN equals no other, -0.0 equals 0.0). The partition is the
    row's path: where a key stays in its partition under a global index, the column ``p`` holds
    the update's value, which Hudi's COW reader replaces with the path's (docs/interop.md)."""
    step = {c: i for i, c in enumerate(commits)}
    return sorted(
        (r["id"], r["_hoodie_partition_path"], repr(r["ts"]), r["v"], step[r["_hoodie_commit_time"]])
        for r in table.to_pylist()
    )


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("case", list(CASES))
def test_hudi_and_we_keep_the_same_records(hudi, tmp_path: Path, case: str, table_type: str) -> None:
    payload, index, steps, *more = CASES[case]
    answers = []
    for writer in ("hudi", "ours"):
        path = tmp_path / writer
        for operation, rows in steps:
            options = {**_options(table_type, index, payload, operation), **(more[0] if more else {})}
            if writer == "hudi":
                hudi.oracle.write(path, rows, options)
                continue
            table, _ = open_or_create(str(path), options, rows.schema)
            getattr(table, operation)(rows, options=options)
        commits = list(HudiTable.open(str(path)).timeline.completed_commits().timestamps())
        assert len(commits) == len(steps)
        # Hudi's answer on its table, ours on ours
        snapshot = hudi.oracle.read(path) if writer == "hudi" else HudiTable.open(str(path)).read()
        answers.append(_rows(snapshot, commits))
    assert answers[1] == answers[0]


def test_hudi_reads_our_copy_on_write_table_incrementally_past_a_delete_partition(
    hudi, tmp_path: Path
) -> None:
    """Apache Hudi's ``delete_partition`` commit stores the table schema with the five meta fields,
    and its COW incremental query of its own table then fails (``COLUMN_ALREADY_EXISTS``,
    docs/interop.md, explore seed 6104). Ours stores the data fields, as every other commit of
    both writers does, so Hudi's incremental query of our table answers, with our rows."""
    path = str(tmp_path / "t")
    table = HudiTable.create(path, name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                             partition_fields="p", ordering_field="ts")  # fmt: skip
    table.upsert(pa.concat_tables([_batch(["a", "b"], "p1", [1, 1], "x"), _batch(["c"], "p2", [1], "x")]))
    HudiTable.open(path).upsert(_batch(["d"], "p1", [2], "y"))
    HudiTable.open(path).delete_partition("p2")
    replaced = HudiTable.open(path).timeline.completed_commits().last()
    assert replaced is not None and replaced.action == "replacecommit"
    metadata = json.loads((tmp_path / "t" / ".hoodie" / f"{replaced.timestamp}.replacecommit").read_text())
    schema = json.loads(metadata["extraMetadata"]["schema"])
    assert [f["name"] for f in schema["fields"]] == ["id", "p", "ts", "v"]
    incremental = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": "000",
    }
    theirs = hudi.oracle.read(path, incremental)
    ours = HudiTable.open(path).read(query_type="incremental", start="000")
    key = lambda t: sorted((r["id"], r["p"], r["v"]) for r in t.select(["id", "p", "v"]).to_pylist())  # noqa: E731
    assert key(theirs) == key(ours) == [("a", "p1", "x"), ("b", "p1", "x"), ("d", "p1", "y")]


def test_both_writers_refuse_an_upsert_with_a_null_ordering_value(hudi, tmp_path: Path) -> None:
    """A record without ordering value cannot be combined with its other versions: Apache Hudi's
    writer refuses the upsert ("Ordering value is null for record"), ours too, and either table
    stays as it was."""
    options = _options("MERGE_ON_READ", "SIMPLE", DEFAULT, "upsert")
    bad = pa.table(
        {"id": ["b", "a"], "p": ["p1", "p1"], "ts": pa.array([2, None], pa.int64()), "v": ["y", "y"]}
    )
    for writer in ("hudi", "ours"):
        path = tmp_path / writer
        if writer == "hudi":
            hudi.oracle.write(path, _batch(["a"], "p1", [1], "x"), options)
            with pytest.raises(OracleError, match="Ordering value is null"):
                hudi.oracle.write(path, bad, options)
        else:
            table, _ = open_or_create(str(path), options, bad.schema)
            table.upsert(_batch(["a"], "p1", [1], "x"), options=options)
            with pytest.raises(
                InvalidRecordError, match=r"ordering field 'ts' is null in row 1 \(record key 'a'\)"
            ):
                HudiTable.open(str(path)).upsert(bad, options=options)
        for answer in (hudi.oracle.read(path), HudiTable.open(str(path)).read()):
            assert [(r["id"], r["ts"], r["v"]) for r in answer.to_pylist()] == [("a", 1, "x")]


def test_compaction_of_a_key_stored_twice_gives_what_a_read_gave(hudi, tmp_path: Path) -> None:
    """An insert keeps a key's copies in one base file; a log update and a log delete then meet
    the first copy only, in a read and in a compaction: Apache Hudi's compaction and ours, each
    on a copy of the same Hudi-written table, leave the rows the read showed before."""
    options = {
        **_options("MERGE_ON_READ", "BUCKET", DEFAULT, "insert"),
        "hoodie.bucket.index.num.buckets": "1",
    }
    path = tmp_path / "t"
    hudi.oracle.write(path, _batch(["a", "a", "b", "b"], "p1", [1, 2, 1, 2], "first"), options)
    hudi.oracle.write(
        path, _batch(["a"], "p1", [5], "update"), {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    hudi.oracle.write(
        path, _batch(["b"], "p1", [9], "x"), {**options, "hoodie.datasource.write.operation": "delete"}
    )
    rows = lambda t: sorted((r["id"], r["ts"], r["v"]) for r in t.to_pylist())  # noqa: E731
    before = rows(HudiTable.open(str(path)).read())
    assert (
        before == rows(hudi.oracle.read(path)) == [("a", 2, "first"), ("a", 5, "update"), ("b", 2, "first")]
    )
    for compacted in compacted_by_both(hudi.oracle, path, tmp_path):
        assert rows(hudi.oracle.read(compacted)) == rows(HudiTable.open(str(compacted)).read()) == before


_INFO = pa.struct([("id", pa.string()), ("city", pa.string()), ("ts", pa.int64())])


def _nested(rows: list[tuple[str, str, int]], v: int) -> pa.Table:
    return pa.table({"info": pa.array([{"id": i, "city": c, "ts": t} for i, c, t in rows], _INFO),
                     "v": pa.array([v] * len(rows), pa.int64())})  # fmt: skip


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_nested_key_partition_and_ordering_field(hudi, tmp_path: Path, table_type: str) -> None:
    """Record key, partition and ordering field inside a struct (``info.id``, ``info.city``,
    ``info.ts``): both writers keep the same records, the ordering value deciding in a batch (d)
    and against the stored record (b) under DefaultHoodieRecordPayload. Ours took the last
    record of a batch and the incoming one against the stored record: it looked for the
    ordering field among the top-level columns only."""
    options = table_options("n", table_type, "upsert", {
        "hoodie.datasource.write.recordkey.field": "info.id",
        "hoodie.datasource.write.partitionpath.field": "info.city",
        "hoodie.datasource.write.precombine.field": "info.ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.datasource.write.payload.class": DEFAULT,
    })  # fmt: skip
    steps = [
        _nested([("a", "sf", 1), ("b", "la", 1), ("c", "sf", 1)], 1),
        _nested([("a", "sf", 2), ("b", "la", 0), ("d", "la", 5), ("d", "la", 3)], 2),
        _nested([("c", "sf", 9)], 3),
    ]
    answers = []
    for writer in ("hudi", "ours"):
        path = tmp_path / writer
        for rows in steps:
            if writer == "hudi":
                hudi.oracle.write(path, rows, options)
            else:
                open_or_create(str(path), options, rows.schema)[0].upsert(rows, options=options)
        for answer in (hudi.oracle.read(path), HudiTable.open(str(path)).read()):
            answers.append(sorted((r["_hoodie_record_key"], r["_hoodie_partition_path"], r["v"], r["info"]["ts"])
                                  for r in answer.to_pylist()))  # fmt: skip
    expected = [("a", "sf", 2, 2), ("b", "la", 1, 1), ("c", "sf", 3, 9), ("d", "la", 2, 5)]
    assert answers == [expected] * 4  # Hudi's and our reader, on Hudi's table and on ours


def test_record_index_writers_taking_turns(hudi, tmp_path: Path) -> None:
    """Hudi's writer with its record index (in its metadata table) and ours with
    ``hoodie.index.type=RECORD_INDEX`` on one merge-on-read table: an update naming another
    partition stays where its key is, whichever writer takes it. Ours drops the metadata table, as
    on every write, so Hudi's next write looks keys up without a record index (GLOBAL_SIMPLE, which
    moves them) and builds it again; the write after that keeps keys again. Both readers agree
    after every step, and no key is ever stored twice."""
    path = tmp_path / "t"
    options = table_options("t", "MERGE_ON_READ", "upsert", {
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
        "hoodie.parquet.small.file.limit": "0",
    })  # fmt: skip

    def rows(ids: str, p: str, ts: int) -> pa.Table:
        return _batch(list(ids), p, [ts] * len(ids), f"step{ts}")

    steps = [
        ("hudi", rows("abc", "p1", 1), {"a": "p1", "b": "p1", "c": "p1"}),
        ("hudi", rows("a", "p2", 2), {"a": "p1"}),  # stays: Hudi's record index
        ("ours", rows("bd", "p2", 3), {"b": "p1", "d": "p2"}),  # b stays: ours
        ("hudi", rows("de", "p1", 4), {"d": "p1", "e": "p1"}),  # d moves: no record index
        ("hudi", rows("e", "p2", 5), {"e": "p1"}),  # stays: the record index is back
    ]
    where: dict[str, tuple[str, int]] = {}
    for writer, batch, stored_in in steps:
        if writer == "hudi":
            hudi.oracle.write(path, batch, options)
        else:
            open_or_create(str(path), options, batch.schema)[0].upsert(batch, options=options)
        ts = batch.column("ts")[0].as_py()
        where.update({key: (partition, ts) for key, partition in stored_in.items()})
        expected = sorted((key, p, ts) for key, (p, ts) in where.items())
        for answer in (hudi.oracle.read(path), HudiTable.open(str(path)).read()):
            stored = answer.select(["id", "_hoodie_partition_path", "ts"]).to_pylist()
            assert sorted(tuple(r.values()) for r in stored) == expected
