"""Compaction merges a file slice batch by batch (``read.merge.CompactedSlice``): the new base file
holds the same rows in the same order, with the same footer, whatever the batch size, and the
writer is handed one batch of the old file at a time, never the slice. Each file of the slice is
read once: the log files, and the base file, whose footer's bloom filter the new file continues."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.compaction import runner as runner_mod
from hudi_core.io.base_file import BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, MAX_KEY, MIN_KEY
from hudi_core.log import reader
from hudi_core.read import files
from hudi_core.write.handles import parquet_out

#: one file group, so the log's inserts land beside its updates
OPTIONS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}
BATCH = 7
_FOOTER_KEYS = (BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, MIN_KEY, MAX_KEY)
#: k004 twice, 28 rows apart (bulk_insert keeps both copies)
FIRST = [f"k{i:03d}" for i in range(0, 120, 2)]
FIRST[30] = "k004"


def _rows(keys: list[str], ts: int, deleted: tuple[str, ...] = ()) -> pa.Table:
    return pa.table({
        "id": keys, "ts": [ts] * len(keys), "v": [f"{k}@{ts}" for k in keys], "p": ["x"] * len(keys),
        "_hoodie_is_deleted": [k in deleted for k in keys],
    })  # fmt: skip


def _compacted(
    root: Path, monkeypatch: pytest.MonkeyPatch, batch: int, *, deleted: tuple[str, ...] = ()
) -> tuple[pa.Table, dict[str, str], list[int]]:
    """A 60-row base file (the key k004 stored twice, 28 rows apart), two upserts of updates
    across it and inserts, compacted ``batch`` rows at a time: the new file's rows, its footer
    keys, and the sizes of the tables the writer was handed."""
    table = HudiTable.create(str(root), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts", options=OPTIONS)  # fmt: skip
    table.bulk_insert(_rows(FIRST, 1), options=OPTIONS)
    (old,) = (root / "x").glob("*.parquet")
    for batch_rows in (
        _rows(["k004", "k118", "k050", "k001", "a000"], 2),
        _rows(["k050", "k200", *deleted], 3, deleted),
    ):
        HudiTable.open(table.base_uri, options=OPTIONS).upsert(batch_rows, options=OPTIONS)

    sizes: list[int] = []
    write_pieces = parquet_out.write_pieces

    def recording(storage, path, data, **kw):  # type: ignore[no-untyped-def]
        def seen():  # type: ignore[no-untyped-def]
            for piece in data:
                sizes.append(piece.num_rows)
                yield piece

        return write_pieces(storage, path, seen(), **kw)

    with monkeypatch.context() as patched:
        patched.setattr(runner_mod, "COMPACT_BATCH_ROWS", batch)
        patched.setattr(parquet_out, "write_pieces", recording)
        HudiTable.open(table.base_uri, options=OPTIONS).compact(OPTIONS)
    (new,) = [p for p in (root / "x").glob("*.parquet") if p != old]
    meta = pq.ParquetFile(new).metadata.metadata
    footer = {k.decode(): v.decode() for k, v in meta.items() if k.decode() in _FOOTER_KEYS}
    return pq.read_table(new), footer, sizes


@pytest.mark.parametrize("deleted", [(), ("k010", "k100")])
def test_a_slice_compacted_in_batches_is_the_slice_compacted_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deleted: tuple[str, ...]
) -> None:
    small, small_footer, sizes = _compacted(tmp_path / "small", monkeypatch, BATCH, deleted=deleted)
    whole, whole_footer, whole_sizes = _compacted(tmp_path / "whole", monkeypatch, 1 << 16, deleted=deleted)

    # the writer got the old file a batch at a time (what is left of it), then the log's rows
    assert len(sizes) > 60 // BATCH and max(sizes[:-1]) <= BATCH
    assert len(whole_sizes) == 2
    # the same rows in the same order: the kept base rows in file order, then the log's rows in
    # log order; k004's update replaces its first copy only and the second stays as stored
    # (what a read gives, and Apache Hudi's compaction), deletes gone
    columns = ["_hoodie_record_key", "id", "ts", "v"]
    assert small.select(columns).equals(whole.select(columns))
    kept = list(FIRST)
    kept.remove("k004")  # the first copy
    logged = ["k004", "k118", "k001", "a000", "k050", "k200"]
    assert small.column("id").to_pylist() == [k for k in kept if k not in {"k118", "k050", *deleted}] + logged
    assert small.column("v").to_pylist().count("k004@1") == 1
    values = dict(zip(small.column("id").to_pylist(), small.column("v").to_pylist(), strict=True))
    assert (values["k004"], values["k050"], values["k200"], values["k002"]) == (
        "k004@2",
        "k050@3",
        "k200@3",
        "k002@1",
    )
    # the footer (bloom filter, min/max keys) does not depend on the batches
    assert small_footer == whole_footer and set(small_footer) == set(_FOOTER_KEYS)


def test_a_compaction_reads_each_file_once_and_counts_the_log_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts", options=OPTIONS)  # fmt: skip
    table.bulk_insert(_rows(FIRST, 1), options=OPTIONS)
    for ts, keys in ((2, ["k004", "a000"]), (3, ["k050"]), (4, ["k118", "k200"])):
        HudiTable.open(table.base_uri, options=OPTIONS).upsert(_rows(keys, ts), options=OPTIONS)
    logs = sorted(p.name for p in (tmp_path / "t" / "x").glob(".*.log.*"))
    assert len(logs) >= 1

    reads: list[str] = []
    read_log_file = reader.read_log_file

    def counting(storage, path):  # type: ignore[no-untyped-def]
        reads.append(Path(path).name)
        return read_log_file(storage, path)

    monkeypatch.setattr(reader, "read_log_file", counting)
    # the base file: opened to read its rows, or its footer alone
    opened: list[str] = []
    for name in ("parquet_file", "parquet_metadata"):
        monkeypatch.setattr(files, name, _recorded(getattr(files, name), name, opened))
    # footers built from every key of the file (rather than the base file's bloom filter continued)
    rebuilt: list[int] = []
    footer_of = parquet_out.footer_of

    def recording_footers(keys, *a, **kw):  # type: ignore[no-untyped-def]
        if keys is not None:
            rebuilt.append(len(keys))
        return footer_of(keys, *a, **kw)

    monkeypatch.setattr(parquet_out, "footer_of", recording_footers)
    (result,) = HudiTable.open(table.base_uri, options=OPTIONS).compact(OPTIONS)

    assert sorted(reads) == logs  # each log file of the slice read once, not again to count its blocks
    assert opened == ["parquet_file"]  # the base file once: its footer is not read again
    assert rebuilt == []  # the new file's bloom filter is the old one's, continued with the log's keys
    (commit,) = (tmp_path / "t" / ".hoodie").glob("*.commit")  # the compaction's
    stats = [s for ss in json.loads(commit.read_text())["partitionToWriteStats"].values() for s in ss]
    assert [(s["totalLogBlocks"], s["totalRollbackBlocks"], s["totalCorruptLogBlock"]) for s in stats] == [
        (3, 0, 0)
    ]
    assert commit.name == f"{result.instant_time}.commit"


def _recorded(fn, name: str, calls: list[str]):  # type: ignore[no-untyped-def]
    def recorded(*a, **kw):  # type: ignore[no-untyped-def]
        calls.append(name)
        return fn(*a, **kw)

    return recorded
