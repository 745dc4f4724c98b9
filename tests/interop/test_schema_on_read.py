"""Hudi's schema on read (``hoodie.schema.on.read.enable``, ``ALTER TABLE`` in Spark SQL): every
commit carries the table's internal schema (``latest_schema``, field ids) and Hudi's readers match
columns by id. Columns added, dropped and moved read the same by name, so we read and write such
a table, carrying its internal schema on as Hudi's writers do; Hudi renames a column after our
writes and still reads every row (our commits without it broke Hudi's read: a
NullPointerException). A rename makes matching by name wrong: we refuse the table, and a write
that would change the schema behind Hudi's internal schema."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import SchemaMismatchError
from hudi_spark.table_ops import open_or_create
from workloads import table_options

pytestmark = pytest.mark.interop

ON = {"hoodie.schema.on.read.enable": "true"}


@pytest.fixture
def sql(hudi) -> Iterator:
    """Spark SQL in Hudi's session with the schema on read on, off again after the test."""
    hudi.oracle.sql("SET hoodie.schema.on.read.enable=true")
    try:
        yield hudi.oracle.sql
    finally:
        hudi.oracle.sql("SET hoodie.schema.on.read.enable=false")


def _rows(ids: str, v: str, ts: int, **more: list) -> pa.Table:
    n = len(ids)
    cols = {"id": list(ids), "p": ["p1"] * n, "v": [v] * n, "ts": pa.array([ts] * n, pa.int64())}
    return pa.table({**cols, **more})


def _answers(hudi, path: Path) -> list[list[tuple]]:
    out = []
    for table in (hudi.oracle.read(path, ON), HudiTable.open(str(path)).read()):
        data = [n for n in table.column_names if not n.startswith("_hoodie_")]
        out.append(sorted(tuple(r.values()) for r in table.select(data).to_pylist()))
    return out


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_table_whose_schema_hudi_keeps_by_id(hudi, sql, tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    options = table_options("t", table_type, "upsert", {**ON, "hoodie.parquet.small.file.limit": "0"})
    hudi.oracle.write(path, _rows("ab", "v1", 1, x=[1, 2]), options)
    name = f"t_{uuid.uuid4().hex[:8]}"
    sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    sql(f"ALTER TABLE {name} ADD COLUMNS (z string)")
    sql(f"ALTER TABLE {name} DROP COLUMN x")
    sql(f"ALTER TABLE {name} ALTER COLUMN ts AFTER id")
    hudi.oracle.write(path, _rows("ac", "v2", 2, z=["z2", "z2"]), options)
    # our upsert keeps the schema: fine, and its commit carries the internal schema on
    batch = _rows("bd", "v3", 3, z=["z3", "z3"])
    open_or_create(str(path), options, batch.schema)[0].upsert(batch, options=options)
    last = list(HudiTable.open(str(path)).timeline.completed_commits())[-1]
    extra = json.loads((path / ".hoodie" / f"{last.timestamp}.{last.action}").read_text())["extraMetadata"]
    assert json.loads(extra["latest_schema"])["max_column_id"] >= 9
    # a write that changes the schema behind the internal schema is refused, nothing written
    with pytest.raises(SchemaMismatchError, match="ALTER TABLE"):
        HudiTable.open(str(path)).upsert(_rows("e", "v4", 4, z=["z4"], extra=[1]), options=options)
    if table_type == "MERGE_ON_READ":
        HudiTable.open(str(path)).compact()
    hudi_answer, our_answer = _answers(hudi, path)
    expected = [("a", 2, "p1", "v2", "z2"), ("b", 3, "p1", "v3", "z3"), ("c", 2, "p1", "v2", "z2"),
                ("d", 3, "p1", "v3", "z3")]  # fmt: skip
    assert hudi_answer == our_answer == expected

    # Hudi renames a column after our writes: its reader still maps every file by id
    sql(f"ALTER TABLE {name} RENAME COLUMN v TO w")
    renamed = hudi.oracle.read(path, ON)
    assert sorted(zip(renamed.column("id").to_pylist(), renamed.column("w").to_pylist(), strict=True)) == [
        ("a", "v2"),
        ("b", "v3"),
        ("c", "v2"),
        ("d", "v3"),
    ]
    # ours would read the files written before the rename as nulls in w: refused, for writes too
    with pytest.raises(SchemaMismatchError, match="v -> w"):
        HudiTable.open(str(path)).read()
    with pytest.raises(SchemaMismatchError, match="v -> w"):
        HudiTable.open(str(path)).upsert(
            pa.table({"id": ["a"], "ts": [5], "p": ["p1"], "w": ["x"], "z": ["y"]})
        )
    sql(f"DROP TABLE {name}")
