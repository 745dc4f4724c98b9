"""Upserts into tables without meta fields (``hoodie.populate.meta.fields=false``): keys come
from the key generator, so updates replace rows instead of duplicating them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core.table.hudi_table import HudiTable


def _rows(t: HudiTable) -> list[tuple[object, ...]]:
    out = t.read().select(["id", "p", "v"])
    return sorted(zip(*(out.column(c).to_pylist() for c in out.column_names), strict=True))


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET", "GLOBAL_SIMPLE"])
def test_upsert_without_meta_fields_updates_in_place(tmp_path: Path, ttype: str, index: str) -> None:
    opts = {"hoodie.populate.meta.fields": "false", "hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "2"}
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=ttype, record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=opts)  # fmt: skip
    t.insert(pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1] * 4, "v": ["x"] * 4}))
    t.upsert(pa.table({"id": [1, 3, 9], "p": ["a", "b", "b"], "ts": [2] * 3, "v": ["y"] * 3}))
    t.upsert(pa.table({"id": [2, 9], "p": ["a", "b"], "ts": [3, 3], "v": ["z", "w"]}))
    expected = [(1, "a", "y"), (2, "a", "z"), (3, "b", "y"), (4, "b", "x"), (9, "b", "w")]
    assert _rows(t) == expected
    # and the files really hold no record keys
    for f in (tmp_path / "t").rglob("*.parquet"):
        assert pq.read_table(f, columns=["_hoodie_record_key"]).column(0).null_count == pq.read_metadata(f).num_rows
