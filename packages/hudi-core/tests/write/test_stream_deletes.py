"""A streamed upsert that deletes (``_hoodie_is_deleted``) keys inserted earlier in the same
stream: the delete wins whether the insert is still buffered or already flushed to a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("part", pa.string()), ("_hoodie_is_deleted", pa.bool_())]
)
#: tiny limits: several chunks and flushes, so some inserts are flushed before their delete arrives
SMALL = {
    "hoodie.write.stream.chunk.max.bytes": "1500",
    "hoodie.write.buffer.bucket.max.bytes": "2500",
    "hoodie.write.buffer.total.max.bytes": "5000",
    "hoodie.write.buffer.record.size.sample.rate": "1",
}

LIMITS = {
    "small": SMALL,
    # many chunks, nothing flushed before the end: every insert is still buffered at its delete
    "chunks": {"hoodie.write.stream.chunk.max.bytes": "1500"},
    "default": {},
}


def batch(ids: range, ts: int, deleted: bool) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"id": [f"k{i:04d}" for i in ids], "ts": [ts] * len(ids),
                                       "part": [f"p{i % 2}" for i in ids],
                                       "_hoodie_is_deleted": [deleted] * len(ids)}, schema=SCHEMA)  # fmt: skip


def stream() -> Iterator[pa.RecordBatch]:
    yield batch(range(0, 120), 1, False)
    yield batch(range(120, 200), 1, False)
    yield batch(range(0, 40), 2, True)  # early inserts: flushed by now with SMALL limits
    yield batch(range(180, 200), 2, True)  # the latest inserts: still buffered


@pytest.mark.parametrize("limits", ["small", "chunks", "default"])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET", "GLOBAL_SIMPLE"])
def test_delete_of_key_inserted_earlier_in_the_stream_wins(
    tmp_path: Path, table_type: str, index: str, limits: str
) -> None:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="part", ordering_field="ts")  # fmt: skip
    opts = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "2", **LIMITS[limits]}
    t.upsert(stream(), options=opts)
    got = sorted(t.read(columns=["id"]).column("id").to_pylist())
    assert got == [f"k{i:04d}" for i in range(40, 180)]


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_the_delete_operation_takes_a_stream_of_key_batches(tmp_path: Path, table_type: str) -> None:
    """``HudiTable.delete`` takes an iterator of batches as every write does (it raised
    AttributeError on the iterator before), one instant for the whole stream."""
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="part", ordering_field="ts")  # fmt: skip
    t.insert(pa.Table.from_batches([batch(range(0, 100), 1, False)]))
    keys = pa.table(
        {"id": [f"k{i:04d}" for i in range(10, 90)], "part": [f"p{i % 2}" for i in range(10, 90)]}
    )
    result = HudiTable.open(str(tmp_path / "t")).delete(iter(keys.to_batches(max_chunksize=7)), options=SMALL)
    assert result.deleted == 80
    t = HudiTable.open(str(tmp_path / "t"))
    assert len(t.timeline.completed_commits()) == 2
    assert sorted(t.read(columns=["id"]).column("id").to_pylist()) == [
        f"k{i:04d}" for i in [*range(10), *range(90, 100)]
    ]
