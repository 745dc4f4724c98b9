"""A streamed insert/upsert packs new records into the partition's small base files first (room =
(max file size - file size) / average record size, as a one-table write), then opens new file
groups; later chunks find the packed keys (in-instant index). Snapshot = model = hudi-rs."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.int64()), ("part", pa.string())])
MAX_FILE = 10_000_000
RECORD_SIZE = 20_000  # the estimate (the first commit is far under the estimation threshold)
OPTS = {
    "hoodie.write.stream.chunk.max.bytes": "2000",
    "hoodie.write.buffer.bucket.max.bytes": "3000",
    "hoodie.write.buffer.total.max.bytes": "6000",
    "hoodie.write.buffer.record.size.sample.rate": "1",
    "hoodie.parquet.max.file.size": str(MAX_FILE),
    "hoodie.parquet.small.file.limit": str(MAX_FILE // 2),
    "hoodie.copyonwrite.record.size.estimate": str(RECORD_SIZE),
}


def batch(ids: range, ts: int, model: dict[str, int]) -> pa.RecordBatch:
    model.update({f"k{i:05d}": ts * 100000 + i for i in ids})
    return pa.RecordBatch.from_pydict({"id": [f"k{i:05d}" for i in ids], "ts": [ts] * len(ids),
                                       "val": [ts * 100000 + i for i in ids], "part": ["p0"] * len(ids)},
                                      schema=SCHEMA)  # fmt: skip


def rows_per_group(t: HudiTable) -> dict[str, int]:
    d = t.read(columns=["id", "_hoodie_file_name"]).to_pydict()
    assert len(d["id"]) == len(set(d["id"])), "a key is stored twice"
    return dict(collections.Counter(n.split("_")[0] for n in d["_hoodie_file_name"]))


def values(t: HudiTable) -> dict[str, int]:
    d = t.read(columns=["id", "val"]).to_pydict()
    return dict(zip(d["id"], d["val"], strict=True))


def hudi_rs_values(t: HudiTable) -> dict[str, int]:
    hudi = pytest.importorskip("hudi")
    out = hudi.HudiTableBuilder.from_base_uri(t.base_uri).build().read()
    rs = pa.Table.from_batches(out) if isinstance(out, list) else out
    return dict(zip(rs["id"].to_pylist(), rs["val"].to_pylist(), strict=True))


@pytest.mark.parametrize("operation", ["insert", "upsert"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_streamed_inserts_fill_the_small_file_before_new_file_groups(
    tmp_path: Path, table_type: str, operation: str
) -> None:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    model: dict[str, int] = {}
    t.insert(pa.Table.from_batches([batch(range(50), 1, model)]), options=OPTS)
    (small,) = (tmp_path / "t" / "p0").glob("*.parquet")
    small_fid = small.name.split("_")[0]
    room = (MAX_FILE - small.stat().st_size) // RECORD_SIZE
    assert 0 < room < 900

    def stream() -> Iterator[pa.RecordBatch]:
        for start in range(50, 1000, 50):
            yield batch(range(start, start + 50), 2, model)
        if operation == "upsert":  # keys packed into the small file by earlier flushes
            yield batch(range(60, 120), 3, model)

    r = getattr(t, operation)(stream(), options=OPTS)
    groups = rows_per_group(t)
    assert groups[small_fid] == 50 + room  # filled to its room first, not a row more
    assert sum(groups.values()) == 1000 and len(groups) >= 2
    # the small group got a new base file (a new slice) at the streamed instant
    assert any(f.name.startswith(small_fid) and f.name.endswith(f"_{r.instant}.parquet")
               for f in (tmp_path / "t" / "p0").glob("*.parquet"))  # fmt: skip
    assert values(t) == model
    assert hudi_rs_values(t) == model


def test_no_packing_into_small_files_with_the_bucket_index(tmp_path: Path) -> None:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                         partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    model: dict[str, int] = {}
    opts = {**OPTS, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}
    t.upsert(pa.Table.from_batches([batch(range(50), 1, model)]), options=opts)
    before = rows_per_group(t)
    t.upsert(iter([batch(range(50, 400), 2, model)]), options=opts)
    after = rows_per_group(t)
    assert set(after) == set(before)  # fixed hash buckets: no packing, no new groups either
    assert values(t) == model
