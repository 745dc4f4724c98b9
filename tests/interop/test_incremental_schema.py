"""The schema of an incremental query whose range ends before a column was added, against Apache
Hudi 0.15's answers on the same table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.hollow import rows

pytestmark = pytest.mark.interop

END_SCHEMA = "hoodie.datasource.read.schema.use.end.instanttime"


@pytest.mark.parametrize("use_end", [None, "true"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_an_incremental_query_before_a_new_column_has_hudis_columns(
    hudi: Any, tmp_path: Path, table_type: str, use_end: str | None
) -> None:
    path = tmp_path / "t"
    HudiTable.create(str(path), name="t", record_key_fields="id", partition_fields="part",
                     ordering_field="ts", table_type=table_type)  # fmt: skip
    c1 = HudiTable.open(str(path)).insert(
        pa.concat_tables([rows(["a1", "a2"], "a", 1), rows(["b1"], "b", 1)])
    )
    c2 = HudiTable.open(str(path)).upsert(
        rows(["a1", "b2"], "a", 2).append_column("note", pa.array(["n", None]))
    )
    HudiTable.open(str(path)).upsert(rows(["a2"], "a", 3).append_column("note", pa.array(["m"])))
    opts = {END_SCHEMA: use_end} if use_end else {}
    for start, end in (("000", c1.instant), (c1.instant, c2.instant), ("000", None)):
        q = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": start,
             **({"hoodie.datasource.read.end.instanttime": end} if end else {}), **opts}  # fmt: skip
        theirs = hudi.oracle.read(path, q)
        mine = HudiTable.open(str(path), options=opts).read("incremental", start=start, end=end)
        assert mine.column_names == theirs.column_names, (start, end)
        assert sorted(mine.to_pylist(), key=lambda r: r["id"]) == sorted(
            theirs.to_pylist(), key=lambda r: r["id"]
        ), (start, end)
