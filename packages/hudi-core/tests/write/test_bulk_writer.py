"""bulk_insert as a stream (``BulkInsertWriter``, the Spark bulk_insert's writer): one file per
partition holding its rows in input order, several row groups per file, rolled over where the
file reaches ``hoodie.parquet.max.file.size``; footers equal to a build over each file's keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.config.property import HoodieConfig
from hudi_core.io.base_file import BLOOM_FILTER_KEY, MAX_KEY, MIN_KEY
from hudi_core.keygen import key_generator_for
from hudi_core.schema.avro_schema import arrow_to_avro
from hudi_core.testing.files import parquet_data_bytes
from hudi_core.write.handles import WriteContext
from hudi_core.write.handles.bulk import BulkInsertWriter
from hudi_core.write.handles.context import TaskAttempt
from hudi_core.write.handles.parquet_out import footer_of
from hudi_core.write.records import prepare

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("p", pa.string()), ("v", pa.string())])
INSTANT = "20261126120000000"


def _context(tmp_path: Path, **options: str) -> tuple[WriteContext, HoodieConfig]:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts", options=options)  # fmt: skip
    cfg = HoodieConfig({**table.config.to_dict(), **options})
    ctx = WriteContext(base_uri=table.base_uri, instant=INSTANT, is_mor=True, avro_schema=arrow_to_avro(SCHEMA, "t"),
                       schema=SCHEMA, options=cfg.to_dict(), ordering_field="ts")  # fmt: skip
    return ctx, cfg


def _batches(cfg: HoodieConfig, n: int, parts: list[str], size: int) -> list[pa.Table]:
    """``n`` rows whose partitions take turns row by row, prepared (keys, partition paths)."""
    keygen = key_generator_for(cfg)
    noise = np.random.default_rng(5).integers(0, 2**63, n)  # incompressible: files of a known size
    data = pa.table({
        "id": [f"k{i:06d}" for i in range(n)], "ts": list(range(n)),
        "p": [parts[i % len(parts)] for i in range(n)], "v": [f"{x:016x}" for x in noise.tolist()],
    }, schema=SCHEMA)  # fmt: skip
    return [prepare(data.slice(s, size), keygen, cfg) for s in range(0, n, size)]


def _files(tmp_path: Path, partition: str) -> list[Path]:
    return sorted((tmp_path / "t" / partition).glob("*.parquet"))


def test_each_partition_is_one_file_in_input_order_written_row_group_by_row_group(tmp_path: Path) -> None:
    ctx, cfg = _context(tmp_path)
    parts = ["a", "b", "c"]
    with BulkInsertWriter(ctx, attempt=TaskAttempt(3, 7, 11), flush_bytes=64 * 1024) as writer:
        writer.add_all(_batches(cfg, 30_000, parts, 1000))
        statuses = writer.close()
    assert sorted(s.stat.partition_path for s in statuses) == parts
    assert sum(s.stat.num_inserts for s in statuses) == 30_000
    for i, part in enumerate(parts):
        (path,) = _files(tmp_path, part)
        pf = pq.ParquetFile(path)
        assert pf.metadata.num_row_groups > 1  # written while rows arrived, not gathered whole
        got = pf.read(columns=["_hoodie_commit_seqno", "_hoodie_record_key", "ts", "_hoodie_file_name"])
        # every row of the partition, in input order, numbered in that order by the task's seqnos
        assert got.column("ts").to_pylist() == list(range(i, 30_000, 3))
        assert got.column("_hoodie_commit_seqno").to_pylist() == [f"{INSTANT}_3_{n}" for n in range(10_000)]
        assert set(got.column("_hoodie_file_name").to_pylist()) == {path.name}
        assert path.name.split("_")[1] == "3-7-11"  # the write token of the task attempt
        # the filter built key by key as row groups were written is the one a build over all gives
        meta = {k.decode(): v.decode() for k, v in pf.metadata.metadata.items()}
        fresh = footer_of(
            got.column("_hoodie_record_key"), {"type": "record", "name": "x", "fields": []}, cfg
        )
        for key in (BLOOM_FILTER_KEY, MIN_KEY, MAX_KEY):
            assert meta[key] == fresh[key]


def test_a_file_is_cut_where_it_reaches_the_max_file_size(tmp_path: Path) -> None:
    """As Apache Hudi's bulk_insert checks the file size before each record, a file stops where
    it is full, whatever the size of the row group that reaches the limit."""
    limit = 200_000
    ctx, cfg = _context(tmp_path, **{"hoodie.parquet.max.file.size": str(limit)})
    with BulkInsertWriter(ctx, attempt=TaskAttempt(0, 1, 0), flush_bytes=1 << 30) as writer:
        writer.add_all(_batches(cfg, 40_000, ["a"], 40_000))  # one row group's worth of rows at once
        statuses = writer.close()
    files = _files(tmp_path, "a")
    assert len(files) == len(statuses) >= 3
    data_bytes = [parquet_data_bytes(f) for f in files]
    assert all(b <= limit for b in data_bytes), data_bytes
    assert all(b > limit * 0.8 for b in sorted(data_bytes)[1:]), data_bytes  # full, but the last
    seen = [k for f in files for k in pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()]
    assert sorted(seen) == [f"k{i:06d}" for i in range(40_000)]


def test_an_error_closes_the_open_files_and_leaves_their_markers_for_the_rollback(tmp_path: Path) -> None:
    ctx, cfg = _context(tmp_path)
    batches = _batches(cfg, 3000, ["a"], 1000)

    def failing() -> Iterator[pa.Table]:
        yield batches[0]
        raise RuntimeError("the input failed")

    with pytest.raises(RuntimeError, match="the input failed"):
        with BulkInsertWriter(ctx, attempt=TaskAttempt(0, 1, 0), flush_bytes=1) as writer:
            writer.add_all(failing())
    (path,) = _files(tmp_path, "a")
    meta = pq.ParquetFile(path).metadata  # closed: a whole parquet file, but not a Hudi base file
    assert b"org.apache.hudi.bloomfilter" not in (meta.metadata or {})
    markers = [m.name for m in (tmp_path / "t" / ".hoodie" / ".temp" / INSTANT).rglob("*.marker.*")]
    assert markers == [f"{path.name}.marker.CREATE"]
