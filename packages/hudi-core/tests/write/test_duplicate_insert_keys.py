"""``insert`` keeps duplicate keys (hoodie.combine.before.insert=false); a later upsert of such a
key updates every copy in its file group, as Java's merge handle does, and adds no extra row."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable


def _rows(table: pa.Table) -> list[tuple[str, int]]:
    return sorted((r["id"], r["v"]) for r in table.select(["id", "v"]).to_pylist())


@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE"])
def test_upsert_of_a_key_inserted_twice_updates_both_copies(tmp_path: Path, index: str) -> None:
    import hudi

    t = HudiTable.create(str(tmp_path), name="d", table_type="COPY_ON_WRITE", record_key_fields="id",
                         ordering_field="ts", options={"hoodie.index.type": index})  # fmt: skip
    t.insert(pa.table({"id": ["a", "a", "b"], "ts": [1, 2, 3], "v": [1, 2, 3]}))
    result = t.upsert(pa.table({"id": ["a", "c"], "ts": [5, 6], "v": [10, 20]}))
    assert (result.inserted, result.updated) == (1, 2)
    expected = [("a", 10), ("a", 10), ("b", 3), ("c", 20)]
    assert _rows(t.read()) == expected
    rs = hudi.HudiTableBuilder.from_base_uri(str(tmp_path)).build()
    assert _rows(pa.Table.from_batches(rs.read())) == expected
