"""Upserts into tables without meta fields (``hoodie.populate.meta.fields=false``): keys come
from the key generator, so updates replace rows instead of duplicating them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable


def _rows(t: HudiTable) -> list[tuple[object, ...]]:
    out = t.read().select(["id", "p", "v"])
    return sorted(zip(*(out.column(c).to_pylist() for c in out.column_names), strict=True))


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET", "GLOBAL_SIMPLE"])
def test_upsert_without_meta_fields_updates_in_place(tmp_path: Path, ttype: str, index: str) -> None:
    opts = {
        "hoodie.populate.meta.fields": "false",
        "hoodie.index.type": index,
        "hoodie.bucket.index.num.buckets": "2",
    }
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=ttype, record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=opts)  # fmt: skip
    t.insert(pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1] * 4, "v": ["x"] * 4}))
    t.upsert(pa.table({"id": [1, 3, 9], "p": ["a", "b", "b"], "ts": [2] * 3, "v": ["y"] * 3}))
    t.upsert(pa.table({"id": [2, 9], "p": ["a", "b"], "ts": [3, 3], "v": ["z", "w"]}))
    expected = [(1, "a", "y"), (2, "a", "z"), (3, "b", "y"), (4, "b", "x"), (9, "b", "w")]
    assert _rows(t) == expected
    # and the files really hold no record keys
    for f in (tmp_path / "t").rglob("*.parquet"):
        assert (
            pq.read_table(f, columns=["_hoodie_record_key"]).column(0).null_count
            == pq.read_metadata(f).num_rows
        )


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE"])
def test_streamed_upsert_without_meta_fields_finds_keys_of_closed_files(
    tmp_path: Path, ttype: str, index: str
) -> None:
    """A stream into a virtual-key table: closed insert files have no bloom filter or min/max
    keys, so the in-instant index reads their key fields; later chunks still update in place."""
    opts = {"hoodie.populate.meta.fields": "false", "hoodie.index.type": index,
            "hoodie.write.stream.chunk.max.bytes": "400", "hoodie.write.buffer.bucket.max.bytes": "400",
            "hoodie.write.buffer.total.max.bytes": "1000", "hoodie.parquet.max.file.size": "1000"}  # fmt: skip
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=ttype, record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=opts)  # fmt: skip

    def chunk(ids: range, ts: int, v: str) -> pa.RecordBatch:
        return pa.RecordBatch.from_pydict({"id": list(ids), "p": ["a" if i % 2 else "b" for i in ids],
                                           "ts": [ts] * len(ids), "v": [v] * len(ids)})  # fmt: skip

    t.upsert(iter([chunk(range(0, 40), 1, "x"), chunk(range(40, 80), 1, "x"), chunk(range(0, 10), 2, "y"),
                   chunk(range(75, 85), 2, "y")]), options=opts)  # fmt: skip
    assert (
        len({f.name.split("_")[0] for f in (tmp_path / "t").rglob("*.parquet")}) > 2
    )  # files rolled and closed
    expected = sorted([(i, "a" if i % 2 else "b", "y" if i < 10 or i >= 75 else "x") for i in range(85)])
    assert _rows(t) == expected
