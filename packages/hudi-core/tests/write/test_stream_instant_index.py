"""A streamed write whose later chunks update and delete keys that earlier chunks inserted into
files already closed (rolled at a tiny max file size): the in-instant index finds them through
the closed files' footers (min/max, bloom) and key columns. Snapshot = dict model = hudi-rs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.int64()), ("part", pa.string()),
                    ("_hoodie_is_deleted", pa.bool_())])  # fmt: skip
#: tiny chunks, buffers and files: files roll and close long before the stream ends
SMALL = {
    "hoodie.write.stream.chunk.max.bytes": "600",
    "hoodie.write.buffer.bucket.max.bytes": "600",
    "hoodie.write.buffer.total.max.bytes": "1500",
    "hoodie.write.buffer.record.size.sample.rate": "1",
    "hoodie.parquet.max.file.size": "1200",
}

Model = dict[str, tuple[str, int]]


def batch(
    ids: list[int], ts: int, model: Model, *, part: str | None = None, deleted: bool = False
) -> pa.RecordBatch:
    keys = [f"k{i:05d}" for i in ids]
    parts = [part or f"p{(i // 2) % 2}" for i in ids]
    vals = [ts * 100000 + i for i in ids]
    for k, p, v in zip(keys, parts, vals, strict=True):
        if deleted:
            model.pop(k, None)
        else:
            model[k] = (p, v)
    return pa.RecordBatch.from_pydict({"id": keys, "ts": [ts] * len(ids), "val": vals, "part": parts,
                                       "_hoodie_is_deleted": [deleted] * len(ids)}, schema=SCHEMA)  # fmt: skip


def snapshot(t: HudiTable) -> Model:
    d = t.read(columns=["id", "part", "val"]).to_pydict()
    assert len(d["id"]) == len(set(d["id"])), "a key is stored twice"
    return {k: (p, v) for k, p, v in zip(d["id"], d["part"], d["val"], strict=True)}


def hudi_rs_rows(t: HudiTable) -> Model:
    hudi = pytest.importorskip("hudi")
    out = hudi.HudiTableBuilder.from_base_uri(t.base_uri).build().read()
    rs = pa.Table.from_batches(out) if isinstance(out, list) else out
    ids = rs["id"].to_pylist()
    assert len(ids) == len(set(ids))
    return dict(zip(ids, zip(rs["part"].to_pylist(), rs["val"].to_pylist(), strict=True), strict=True))


def file_groups(root: Path) -> set[str]:
    return {f.name.split("_")[0] for f in root.glob("p*/*.parquet")}


def updates_of_closed_files(model: Model, *, move: bool) -> Iterator[pa.RecordBatch]:
    yield batch(list(range(0, 200, 2)), 1, model)  # even keys: several files per partition
    yield batch(list(range(200, 300)), 1, model)
    yield batch(list(range(0, 60, 2)), 2, model)  # updates of the earliest (closed) files
    yield batch(list(range(1, 100, 2)), 2, model)  # new keys inside the closed files' key ranges
    yield batch(list(range(60, 90, 2)), 3, model, deleted=True)
    yield batch(list(range(250, 260)), 3, model, deleted=True)  # recent inserts, maybe still open
    if move:  # global index: keys change partition across chunks, one moves back
        yield batch(list(range(100, 140, 2)), 4, model, part="p9")
        yield batch(list(range(100, 110, 2)), 5, model, part="p0")
    yield batch(list(range(0, 20, 2)) + list(range(1, 21, 2)), 6, model)  # keys updated before
    yield batch(list(range(60, 70, 2)), 7, model)  # deleted earlier in the stream: inserted again


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE"])
def test_later_chunks_update_and_delete_keys_in_closed_files(
    tmp_path: Path, table_type: str, index: str
) -> None:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    model: Model = {}
    opts = {**SMALL, "hoodie.index.type": index}
    t.upsert(updates_of_closed_files(model, move=index == "GLOBAL_SIMPLE"), options=opts)
    assert len(file_groups(tmp_path / "t")) > 4  # files rolled: earlier chunks' files were closed
    assert snapshot(t) == model
    assert hudi_rs_rows(t) == model
    # a second streamed write into the table: the table's index and the in-instant index together
    t.upsert(updates_of_closed_files(model, move=index == "GLOBAL_SIMPLE"), options=opts)
    assert snapshot(t) == model
    assert hudi_rs_rows(t) == model


#: one chunk per batch; buffers big enough that nothing flushes before the stream ends
ONE_BATCH_CHUNKS = {"hoodie.write.stream.chunk.max.bytes": "1", "hoodie.index.type": "GLOBAL_SIMPLE"}
#: ... or so small that every chunk's records are written before the next chunk comes
FLUSH_EVERY_CHUNK = {**ONE_BATCH_CHUNKS, "hoodie.write.buffer.bucket.max.bytes": "1"}


@pytest.mark.parametrize("buffering", ["buffered", "flushed"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("in_table", [True, False], ids=["table-key", "new-key"])
def test_global_index_stream_moves_a_key_away_and_back(
    tmp_path: Path, table_type: str, buffering: str, in_table: bool
) -> None:
    """The table holds k00003 in p9 (or not at all; p0 and p9 hold small files); one streamed
    write moves it to p0 (a new file group or a packed small file of this instant, its records
    still buffered or already written) and then back to p9: it ends once, in p9."""
    root = tmp_path / "t"
    t = HudiTable.create(str(root), name="t", table_type=table_type, record_key_fields="id",
                         partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    model: Model = {}
    opts = ONE_BATCH_CHUNKS if buffering == "buffered" else FLUSH_EVERY_CHUNK
    first = [batch([1, 2] + ([3] if in_table else []), 1, model, part="p9"), batch([6], 1, model, part="p0")]
    t.upsert(pa.Table.from_batches(first), options=opts)

    def stream() -> Iterator[pa.RecordBatch]:
        yield batch([3, 4], 2, model, part="p0")  # p9 -> p0 (or a new key in p0)
        yield batch([3], 3, model, part="p9")  # p0 -> p9: its p0 copy must be deleted
        yield batch([5], 4, model, part="p0")  # more inserts into p0 after the move back

    t.upsert(stream(), options=opts)
    assert model["k00003"] == ("p9", 300003)
    assert snapshot(t) == model
    assert hudi_rs_rows(t) == model
    # a third write sees k00003 in p9 only: updating it leaves one copy
    t.upsert(pa.Table.from_batches([batch([3], 5, model, part="p9")]), options=opts)
    assert snapshot(t) == model
    assert hudi_rs_rows(t) == model
