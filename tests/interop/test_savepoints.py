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
