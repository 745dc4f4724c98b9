"""``merge_type="skip_merge"`` (Hudi's ``hoodie.datasource.merge.type``): a merge-on-read snapshot
gives each base file's rows as stored and its log files' records, merged with each other only."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.read.query import QueryError


def _batch(ids: str, ts: int, v: str) -> pa.Table:
    return pa.table({"id": list(ids), "p": ["p1"] * len(ids), "ts": [ts] * len(ids), "v": [v] * len(ids)})


@pytest.fixture
def table(tmp_path: Path) -> HudiTable:
    options = {"hoodie.parquet.small.file.limit": "0", "hoodie.compact.inline": "false"}
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=options)  # fmt: skip
    t.upsert(_batch("abc", 1, "v1"))
    HudiTable.open(t.base_uri).upsert(_batch("ab", 2, "v2"))
    HudiTable.open(t.base_uri).upsert(_batch("ad", 3, "v3"))  # d: a new base file
    HudiTable.open(t.base_uri).delete(_batch("b", 0, "x"))
    return HudiTable.open(t.base_uri)


def _values(rows: pa.Table) -> list[tuple[str, int, str]]:
    return sorted(tuple(r.values()) for r in rows.select(["id", "ts", "v"]).to_pylist())


def test_base_rows_as_stored_and_the_logs_merged_records_beside_them(table: HudiTable) -> None:
    assert _values(table.read()) == [("a", 3, "v3"), ("c", 1, "v1"), ("d", 3, "v3")]
    expected = [("a", 1, "v1"), ("a", 3, "v3"), ("b", 1, "v1"), ("c", 1, "v1"), ("d", 3, "v3")]
    assert _values(table.read(merge_type="skip_merge")) == expected
    batches = list(table.read_batches(merge_type="skip_merge"))
    assert _values(pa.Table.from_batches(batches)) == expected
    # read_optimized is the base rows either way
    assert _values(table.read("read_optimized")) == [
        ("a", 1, "v1"),
        ("b", 1, "v1"),
        ("c", 1, "v1"),
        ("d", 3, "v3"),
    ]


def test_an_unknown_merge_type_is_refused(table: HudiTable) -> None:
    with pytest.raises(QueryError, match=r"merge\.type"):
        table.read(merge_type="combine")
