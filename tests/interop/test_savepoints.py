"""A savepoint Apache Hudi made (``create_savepoint``), then our writes and our cleaner, then
Hudi's restore (``rollback_to_savepoint``).

Before, our cleaner deleted the savepointed files like any old file slice, and Hudi's restore
then gave an empty table (COW and MOR, found by hand with the oracle). Hudi's cleaner keeps every
file a savepoint lists; so does ours now, and the restore gives the savepoint's rows to Hudi's
reader and to ours, and our next write after the restore is read by both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from runner import write_rows
from workloads import table_options

pytestmark = pytest.mark.interop


def _options(table_type: str, operation: str) -> dict[str, str]:
    return table_options("saved", table_type, operation, {"hoodie.clean.automatic": "false"})


def _rows(ids: list[str], ts: int, v: str) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": ["p1"] * n, "ts": pa.array([ts] * n, pa.int64()), "v": [v] * n})


def _answer(table: pa.Table) -> list[tuple[str, str]]:
    return sorted((r["id"], r["v"]) for r in table.select(["id", "v"]).to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_our_cleaner_keeps_a_hudi_savepoint_restorable(hudi: Any, tmp_path: Path, table_type: str) -> None:
    oracle, path = hudi.oracle, str(tmp_path / "t")
    oracle.write(path, _rows(["a", "b"], 1, "one"), _options(table_type, "insert"))
    oracle.write(path, _rows(["a"], 2, "two"), _options(table_type, "upsert"))
    saved = HudiTable.open(path).timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    oracle.sql(f"CALL create_savepoint(path => '{path}', commit_time => '{saved}')")
    for ts in range(3, 7):
        HudiTable.open(path).upsert(_rows(["a"], ts, f"v{ts}"), options=_options(table_type, "upsert"))
        if table_type == "MERGE_ON_READ" and ts % 2:
            HudiTable.open(path).compact()
    listed = set((Path(path) / "p1").iterdir())
    meta = HudiTable.open(path).clean({"hoodie.cleaner.commits.retained": "1"})
    assert meta is not None and meta.total_files_deleted > 0  # slices the savepoint does not hold went
    assert set((Path(path) / "p1").iterdir()) < listed

    oracle.sql("SET hoodie.metadata.enable=false")  # the procedure's client would bootstrap one
    oracle.sql(f"CALL rollback_to_savepoint(path => '{path}', instant_time => '{saved}')")
    expected = [("a", "two"), ("b", "one")]
    assert _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})) == expected
    assert _answer(HudiTable.open(path).read()) == expected

    # the table goes on after the restore: our next write, read by both
    HudiTable.open(path).upsert(_rows(["b", "c"], 9, "after"), options=_options(table_type, "upsert"))
    expected = [("a", "two"), ("b", "after"), ("c", "after")]
    assert _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})) == expected
    assert _answer(HudiTable.open(path).read()) == expected


#: no small files: new keys go to new file groups, merge-on-read updates to logs
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}


def _write(writer: str, oracle: Any, path: str, table_type: str, rows: pa.Table, operation: str) -> None:
    write_rows(writer, oracle, None, path, rows, {**_options(table_type, operation), **NO_SMALL_FILES})


@pytest.mark.parametrize(
    ("table_type", "writer", "savepointer", "restorer"),
    [
        ("MERGE_ON_READ", "ours", "ours", "hudi"),
        ("MERGE_ON_READ", "ours", "hudi", "ours"),
        ("MERGE_ON_READ", "hudi", "hudi", "ours"),
        ("COPY_ON_WRITE", "ours", "ours", "hudi"),
    ],
)
def test_each_engine_restores_the_others_savepoint(
    hudi: Any, tmp_path: Path, table_type: str, writer: str, savepointer: str, restorer: str
) -> None:
    """A savepoint made by one engine, restored by the other: after it an update, a new
    partition, a compaction and (MOR, restored by us) a pending compaction that a later write
    appends to. Both
    readers then give the savepoint's rows, both engines write on, and once the savepoint is
    deleted, Apache Hudi's cleaner (one commit retained) and archival keep every restored row:
    before, the logs our rollback left on slices based on a rolled-back compaction became, once
    archival moved the active timeline past that compaction, the file group's latest slice for
    Hudi's cleaner, which then deleted the restored one."""
    oracle, path = hudi.oracle, str(tmp_path / "t")
    _write(writer, oracle, path, table_type, _rows(["a", "b"], 1, "one"), "insert")
    _write(writer, oracle, path, table_type, _rows(["a"], 2, "two"), "upsert")
    saved = HudiTable.open(path).timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    if savepointer == "hudi":
        oracle.sql(f"CALL create_savepoint(path => '{path}', commit_time => '{saved}')")
    else:
        HudiTable.open(path).savepoint(saved)
    _write(writer, oracle, path, table_type, _rows(["a", "c"], 3, "three"), "upsert")
    if table_type == "MERGE_ON_READ":
        HudiTable.open(path).compact()
    _write(writer, oracle, path, table_type, _rows(["a"], 4, "four"), "upsert")
    pending = table_type == "MERGE_ON_READ" and restorer == "ours"  # Hudi's restore: see below
    if pending:
        assert HudiTable.open(path).schedule_compaction(force=True)
        _write(writer, oracle, path, table_type, _rows(["a"], 5, "five"), "upsert")
    assert _answer(oracle.read(path)) == [("a", "five" if pending else "four"), ("b", "one"), ("c", "three")]

    if restorer == "hudi":
        oracle.sql("SET hoodie.metadata.enable=false")  # the procedure's client would bootstrap one
        oracle.sql(f"CALL rollback_to_savepoint(path => '{path}', instant_time => '{saved}')")
    else:
        HudiTable.open(path).restore(saved)
    expected = [("a", "two"), ("b", "one")]
    assert _answer(oracle.read(path)) == expected
    assert _answer(HudiTable.open(path).read()) == expected

    _write("hudi", oracle, path, table_type, _rows(["b"], 6, "hudi-after"), "upsert")
    _write("ours", oracle, path, table_type, _rows(["d"], 7, "ours-after"), "upsert")
    if restorer == "hudi":
        HudiTable.open(path).delete_savepoint(saved)
    else:
        oracle.sql(f"CALL delete_savepoint(path => '{path}', instant_time => '{saved}')")
    cleaning = {**_options(table_type, "upsert"), **NO_SMALL_FILES, "hoodie.clean.automatic": "true",
                "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
                "hoodie.keep.max.commits": "3"}  # fmt: skip
    for ts in range(8, 12):
        oracle.write(path, _rows(["e"], ts, f"e{ts}"), cleaning)
    assert (Path(path) / ".hoodie" / "archived").exists()  # the active timeline now starts later
    expected = [("a", "two"), ("b", "hudi-after"), ("d", "ours-after"), ("e", "e11")]
    assert _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})) == expected
    assert _answer(HudiTable.open(path).read()) == expected


def test_hudi_restore_over_a_pending_compaction_loses_the_rows_later(hudi: Any, tmp_path: Path) -> None:
    """Apache Hudi 0.15 alone: a restore over a pending compaction that a later write appended
    to keeps that write's log (and the rollback block that cancels it) on a slice based on the
    pending compaction. Once archival moves the active timeline past that instant, Hudi takes the
    log-only slice for the file group's latest, and its cleaner deletes the restored slice: the
    savepoint's rows are gone. Our restore deletes those logs
    (``test_each_engine_restores_the_others_savepoint``, Hudi's table restored by us)."""
    oracle, path = hudi.oracle, str(tmp_path / "t")
    step = {**_options("MERGE_ON_READ", "upsert"), **NO_SMALL_FILES}
    oracle.write(path, _rows(["a", "b"], 1, "one"), {**step, "hoodie.datasource.write.operation": "insert"})
    oracle.write(path, _rows(["a"], 2, "two"), step)
    saved = HudiTable.open(path).timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    oracle.sql(f"CALL create_savepoint(path => '{path}', commit_time => '{saved}')")
    compaction = "options => 'hoodie.compact.inline.max.delta.commits=1'"
    oracle.write(path, _rows(["a", "c"], 3, "three"), step)
    oracle.sql(f"CALL run_compaction(op => 'scheduleAndExecute', path => '{path}', {compaction})")
    oracle.write(path, _rows(["a"], 4, "four"), step)
    oracle.sql(f"CALL run_compaction(op => 'schedule', path => '{path}', {compaction})")
    (pending,) = HudiTable.open(path).timeline.pending_compactions().timestamps()
    oracle.write(path, _rows(["a"], 5, "five"), step)
    oracle.sql("SET hoodie.metadata.enable=false")
    oracle.sql(f"CALL rollback_to_savepoint(path => '{path}', instant_time => '{saved}')")
    assert _answer(oracle.read(path)) == [("a", "two"), ("b", "one")]
    assert [f.name for f in (Path(path) / "p1").glob(f".*_{pending}.log.*") if not f.name.endswith(".crc")]
    oracle.write(path, _rows(["b"], 6, "after"), step)
    oracle.sql(f"CALL delete_savepoint(path => '{path}', instant_time => '{saved}')")
    cleaning = {**step, "hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "1",
                "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}  # fmt: skip
    for ts in range(8, 12):
        oracle.write(path, _rows(["e"], ts, f"e{ts}"), cleaning)
    assert _answer(oracle.read(path)) == [("e", "e11")]  # a and b went with the restored slice
