"""Streamed writes (an iterator of record batches): chunks of stages 1-3 into one instant, the
write buffer flushing buckets, hudi-rs and our reader agreeing with a dict model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.errors import SchemaMismatchError
from hudi_core.log.reader import read_log_file

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.int64()), ("part", pa.string())])
#: tiny limits so a few hundred rows make several chunks and flushes
SMALL = {
    "hoodie.write.stream.chunk.max.bytes": "2000",
    "hoodie.write.buffer.bucket.max.bytes": "3000",
    "hoodie.write.buffer.total.max.bytes": "6000",
    "hoodie.write.buffer.record.size.sample.rate": "1",
}


def batch(ids: range, ts: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"id": [f"k{i:05d}" for i in ids], "ts": [ts] * len(ids),
                                       "val": [ts * 100000 + i for i in ids],
                                       "part": [f"p{i % 3}" for i in ids]}, schema=SCHEMA)  # fmt: skip


def make(tmp_path: Path, table_type: str) -> HudiTable:
    return HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                            partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip


def rows(t: HudiTable) -> list[tuple[str, int]]:
    d = t.read(columns=["id", "val"]).to_pydict()
    return sorted(zip(d["id"], d["val"], strict=True))


def stream(spec: list[tuple[range, int]], model: dict[str, int]) -> Iterator[pa.RecordBatch]:
    for ids, ts in spec:
        model.update({f"k{i:05d}": ts * 100000 + i for i in ids})
        yield batch(ids, ts)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET", "GLOBAL_SIMPLE"])
def test_streamed_upserts_match_model_and_hudi_rs(tmp_path: Path, table_type: str, index: str) -> None:
    t = make(tmp_path, table_type)
    opts = {**SMALL, "hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "2"}
    model: dict[str, int] = {}
    # keys repeat across batches (so across chunks of the same instant)
    r1 = t.upsert(stream([(range(0, 100), 1), (range(50, 150), 2), (range(0, 30), 3)], model), options=opts)
    assert rows(t) == sorted(model.items())
    r2 = t.upsert(stream([(range(100, 200), 4), (range(140, 160), 5)], model), options=opts)
    assert rows(t) == sorted(model.items())
    assert len(t.timeline.completed_commits()) == 2 and r1.instant != r2.instant
    hudi = pytest.importorskip("hudi")
    out = hudi.HudiTableBuilder.from_base_uri(t.base_uri).build().read()
    rs = pa.Table.from_batches(out) if isinstance(out, list) else out
    assert sorted(zip(rs["id"].to_pylist(), rs["val"].to_pylist(), strict=True)) == sorted(model.items())
    # time travel to the first streamed commit
    d = t.read(columns=["id"], as_of=r1.instant).to_pydict()
    assert sorted(d["id"]) == [f"k{i:05d}" for i in range(150)]


def test_insert_flushes_continue_one_file_and_roll_at_max_size(tmp_path: Path) -> None:
    t = make(tmp_path, "COPY_ON_WRITE")
    model: dict[str, int] = {}
    t.insert(stream([(range(i, i + 60), 1) for i in range(0, 600, 60)], model), options=SMALL)
    files = sorted((tmp_path / "t" / "p0").glob("*.parquet"))
    assert len(files) == 1  # every flush of partition p0's inserts went into one file group
    assert pq.ParquetFile(files[0]).metadata.num_row_groups > 1  # one row group per flush
    assert rows(t) == sorted(model.items())
    t2 = HudiTable.create(str(tmp_path / "t2"), name="t2", table_type="COPY_ON_WRITE", record_key_fields="id",
                          partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    t2.insert(stream([(range(i, i + 60), 1) for i in range(0, 600, 60)], {}),
              options={**SMALL, "hoodie.parquet.max.file.size": "1500"})  # fmt: skip
    rolled = sorted((tmp_path / "t2" / "p0").glob("*.parquet"))
    assert len({f.name.split("_")[0] for f in rolled}) > 1  # new file groups past the max size
    assert sorted(t2.read(columns=["id"]).column("id").to_pylist()) == sorted(model)


def test_mor_update_flushes_append_log_blocks(tmp_path: Path) -> None:
    t = make(tmp_path, "MERGE_ON_READ")
    t.insert(pa.Table.from_batches([batch(range(300), 1)]))
    model = {f"k{i:05d}": 100000 + i for i in range(300)}
    r = t.upsert(stream([(range(i, i + 50), 2) for i in range(0, 300, 50)], model), options=SMALL)
    assert r.updated == 300 and r.inserted == 0
    logs = sorted((tmp_path / "t" / "p0").glob(".*.log.*"))
    blocks = [b for p in logs for b in read_log_file(t.storage, str(p))]
    assert len(blocks) > 1 and {b.instant_time for b in blocks} == {r.instant}
    assert rows(t) == sorted(model.items())


def test_schema_change_mid_stream_rolls_back(tmp_path: Path) -> None:
    t = make(tmp_path, "COPY_ON_WRITE")
    t.insert(pa.Table.from_batches([batch(range(10), 1)]))
    before = rows(t)
    wider = pa.RecordBatch.from_pydict(
        {"id": ["k00001"], "ts": [9], "val": [9], "part": ["p1"], "extra": [1]}
    )
    chunks = [batch(range(5), 2)] * 20 + [wider]
    with pytest.raises(SchemaMismatchError, match="chunk"):
        t.upsert(iter(chunks), options=SMALL)
    assert rows(t) == before
    assert not list(t.timeline.commits().pending())
