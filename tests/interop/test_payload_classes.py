"""OverwriteNonDefaultsWithLatestAvroPayload, AWSDmsAvroPayload and FirstValueAvroPayload,
written by Apache Hudi, by our local engine and (merge-on-read) by our Spark engine, each table
read by Hudi and by us (and, merge-on-read, compacted by Hudi and by us): every answer the same.

- OverwriteNonDefaults: an update's null fields keep the stored values. Which values an update
  meets depends on where the writer put the earlier ones: a small file's update is merged into a
  new base file, any other goes to the log, where a key's records replace each other whole before
  the last one meets the base row. Both writers place them alike, so their tables answer alike.
- AWSDms: a record whose ``Op`` is ``D`` (any case) deletes its key.
- FirstValue: DefaultHoodieRecordPayload, but a tie of ordering values keeps the earlier record.
- A bulk_insert stores records flagged deleted as rows (Hudi's row writer), which every reader
  returns until a log record replaces them.

Apache Hudi 0.15 cannot read a merge-on-read table whose log holds an AWSDms delete
(``AWSDmsAvroPayload.combineAndGetUpdateValue`` calls ``get()`` on the empty record of a delete:
``NoSuchElementException``), which every BUCKET delete is; there our reader's answer is the one
Hudi gives for the same writes on copy-on-write.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from oracle import OracleError
from runner import compacted_by_both, write_rows
from workloads import table_options

pytestmark = pytest.mark.interop

MODEL = "org.apache.hudi.common.model."
NON_DEFAULTS = MODEL + "OverwriteNonDefaultsWithLatestAvroPayload"
DMS = MODEL + "AWSDmsAvroPayload"
FIRST_VALUE = MODEL + "FirstValueAvroPayload"
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}


def _batch(rows: list[tuple], deleted: list[bool] | None = None) -> pa.Table:
    """(id, ts, n, s, Op) rows in partition p1."""
    t = pa.table({
        "id": [r[0] for r in rows], "ts": pa.array([r[1] for r in rows], pa.int64()),
        "n": pa.array([r[2] for r in rows], pa.int64()), "s": pa.array([r[3] for r in rows], pa.string()),
        "Op": [r[4] for r in rows], "p": ["p1"] * len(rows),
    })  # fmt: skip
    return t if deleted is None else t.append_column("_hoodie_is_deleted", pa.array(deleted))


#: updates with null fields and older ordering values, deletes by Op (and a new key's), a key
#: deleted and written again, one precombined in its batch, and ties of ordering values (in a
#: batch, against the stored record, between log records)
STEPS = [
    ("insert", _batch([("a", 1, 1, "a1", "I"), ("b", 1, 2, "b1", "I"), ("c", 1, 3, "c1", "I"),
                       ("d", 1, 4, "d1", "I"), ("e", 1, 5, "e1", "I")])),
    ("upsert", _batch([("a", 2, None, "a2", "U"), ("b", 0, 20, None, "U"), ("c", 2, None, None, "D"),
                       ("f", 2, None, "f2", "I"), ("f", 2, 6, "f2b", "I"), ("g", 2, 7, None, "d"),
                       ("e", 1, 50, "e2", "U")])),
    ("upsert", _batch([("a", 3, 30, None, "U"), ("b", 3, None, "b3", "U"), ("d", 3, None, None, "u"),
                       ("d", 2, 40, "d2", "U"), ("e", 3, None, None, "d")])),
    ("upsert", _batch([("c", 4, None, "c4", "I"), ("a", 4, None, None, "U"), ("b", 3, 33, "b4", "U")])),
]  # fmt: skip

CASES = {
    "non-defaults": (NON_DEFAULTS, {}),
    "non-defaults-bucket": (NON_DEFAULTS, BUCKET),
    "dms": (DMS, {}),
    "first-value": (FIRST_VALUE, {}),
    "first-value-bucket": (FIRST_VALUE, BUCKET),
}


def _options(table_type: str, payload: str, operation: str, more: dict[str, str]) -> dict[str, str]:
    return table_options(
        "t", table_type, operation, {"hoodie.datasource.write.payload.class": payload, **more}
    )


def _rows(table: pa.Table, commits: list[str]) -> list[tuple[object, ...]]:
    """(id, ts, n, s, Op, the step whose commit last wrote the row), sorted."""
    step = {c: i for i, c in enumerate(commits)}
    return sorted(
        (r["id"], r["ts"], r["n"], r["s"], r["Op"], step.get(r["_hoodie_commit_time"], "compacted"))
        for r in table.to_pylist()
    )


def _answers(
    hudi, path: Path, commits: list[str]
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Hudi's snapshot of the table and ours."""
    return _rows(hudi.oracle.read(path), commits), _rows(HudiTable.open(str(path)).read(), commits)


def _commits(path: Path) -> list[str]:
    return list(HudiTable.open(str(path)).timeline.completed_commits().timestamps())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("case", list(CASES))
def test_every_writer_and_reader_give_the_same_rows(
    hudi, spark, tmp_path: Path, case: str, table_type: str
) -> None:
    payload, more = CASES[case]
    answers = {}
    # hudi_spark's tasks run core's handles: its plumbing is checked on merge-on-read, where the
    # log and the base file both take updates
    writers = ("hudi", "ours", "spark") if table_type == "MERGE_ON_READ" else ("hudi", "ours")
    for writer in writers:
        path = tmp_path / writer
        for operation, rows in STEPS:
            write_rows(writer, hudi.oracle, spark, path, rows, _options(table_type, payload, operation, more))
        commits = _commits(path)
        assert len(commits) == len(STEPS)
        theirs, ours = _answers(hudi, path, commits)
        assert ours == theirs, f"{writer}'s table: our reader against Hudi's"
        answers[writer] = ours
    assert all(answer == answers["hudi"] for answer in answers.values())
    if table_type == "MERGE_ON_READ":  # each engine compacts a copy of Hudi's table
        before = [r[:5] for r in answers["hudi"]]
        for compacted in compacted_by_both(hudi.oracle, tmp_path / "hudi", tmp_path):
            for answer in _answers(hudi, compacted, _commits(compacted)):
                assert [r[:5] for r in answer] == before


def test_hudi_cannot_read_a_dms_delete_in_a_log_and_we_answer_as_copy_on_write(hudi, tmp_path: Path) -> None:
    cow, mor = tmp_path / "cow", tmp_path / "mor"
    for path, table_type in ((cow, "COPY_ON_WRITE"), (mor, "MERGE_ON_READ")):
        for operation, rows in STEPS:
            hudi.oracle.write(path, rows, _options(table_type, DMS, operation, BUCKET))
    with pytest.raises(OracleError, match="NoSuchElementException"):
        hudi.oracle.read(mor)
    expected = [r[:5] for r in _rows(hudi.oracle.read(cow), _commits(cow))]
    assert [r[:5] for r in _rows(HudiTable.open(str(mor)).read(), _commits(mor))] == expected


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bulk_insert_stores_records_flagged_deleted(hudi, tmp_path: Path, table_type: str) -> None:
    flagged = _batch([("a", 1, 1, "a1", "I"), ("b", 1, 2, "b1", "D"), ("c", 1, 3, "c1", "I")],
                     deleted=[False, False, True])  # fmt: skip
    update = _batch([("a", 2, None, "a2", "U")], deleted=[False])
    more = {**BUCKET, "hoodie.bucket.index.num.buckets": "1"}  # the update's log shares the slice
    answers = []
    for writer in ("hudi", "ours"):
        path = tmp_path / writer
        for operation, rows in (("bulk_insert", flagged), ("upsert", update)):
            write_rows(writer, hudi.oracle, None, path, rows, _options(table_type, DMS, operation, more))
        theirs, ours = _answers(hudi, path, _commits(path))
        assert ours == theirs
        answers.append(ours)
    assert answers[1] == answers[0]
    assert [r[:5] for r in answers[0]] == [
        ("a", 2, None, "a2", "U"), ("b", 1, 2, "b1", "D"), ("c", 1, 3, "c1", "I")
    ]  # fmt: skip
    # without the row writer Hudi's bulk_insert drops them, and so do we
    for writer in ("hudi", "ours"):
        path = tmp_path / f"{writer}-no-row-writer"
        options = {
            **_options(table_type, DMS, "bulk_insert", more),
            "hoodie.datasource.write.row.writer.enable": "false",
        }
        write_rows(writer, hudi.oracle, None, path, flagged, options)
        assert [r[0] for r in _answers(hudi, path, _commits(path))[1]] == ["a"]
        assert [r[0] for r in _answers(hudi, path, _commits(path))[0]] == ["a"]
