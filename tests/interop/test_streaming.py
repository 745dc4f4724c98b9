"""Structured Streaming into a table with async clustering: Apache Hudi 0.15's streaming sink
(``writeStream.format("hudi")``) and ours (``hudi_spark.write_stream``) given the same files and
options schedule their clusterings after the same commits, and each engine reads the other's
table whole.

Before, our sink had no async clustering: ``hoodie.clustering.async.enabled`` did nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from workloads import table_options

pytestmark = pytest.mark.interop

SCHEMA = "id string, p string, ts long, v string"
FILES = 6


def _source(folder: Path) -> list[tuple[str, str, int, str]]:
    """Six files of ten new keys each over two partitions, unsorted, oldest first."""
    folder.mkdir()
    rows = []
    for n in range(FILES):
        ids = [f"k{(7 * i + n) % 60:02d}-{n}" for i in range(10)]
        part = ["a", "b"] * 5
        batch = pa.table({"id": ids, "p": part, "ts": pa.array([n] * 10, pa.int64()), "v": [f"v{n}"] * 10})
        path = folder / f"part-{n:03d}.parquet"
        pq.write_table(batch, path)
        os.utime(path, ns=((1_700_000_000 + n) * 10**9,) * 2)  # Spark takes files oldest first
        rows += [(r["id"], r["p"], n, f"v{n}") for r in batch.to_pylist()]
    return sorted(rows)


def _actions(path: Path) -> list[str]:
    tl = HudiTable.open(str(path)).timeline
    assert list(tl.pending()) == [], f"left pending: {list(tl.pending())}"
    return [i.action for i in tl]


def _answer(table: pa.Table) -> list[tuple[str, str, int, str]]:
    return sorted(
        (r["id"], r["p"], r["ts"], r["v"]) for r in table.select(["id", "p", "ts", "v"]).to_pylist()
    )


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_async_clustering_in_both_streaming_sinks(
    hudi: Any, spark: Any, tmp_path: Path, table_type: str
) -> None:
    import hudi_spark

    expected = _source(tmp_path / "src")
    opts = table_options("events", table_type, "insert", {
        "hoodie.parquet.small.file.limit": "0",  # every batch writes new file groups
        "hoodie.clustering.async.enabled": "true",
        "hoodie.clustering.async.max.commits": "2",
        "hoodie.clustering.plan.strategy.sort.columns": "id",
    })  # fmt: skip
    theirs, ours = tmp_path / "hudi", tmp_path / "ours"
    hudi.oracle.stream(theirs, tmp_path / "src", SCHEMA, opts)
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(tmp_path / "src"))
    q = hudi_spark.write_stream(stream, str(ours), options=opts, checkpoint_location=str(tmp_path / "ckpt"),
                                operation="insert", trigger={"availableNow": True})  # fmt: skip
    q.awaitTermination()
    q.hudi_sink.wait()
    assert q.hudi_sink.clusterer.errors == []

    write = "commit" if table_type == "COPY_ON_WRITE" else "deltacommit"
    expected_actions = [write, write, "replacecommit"] * (FILES // 2)  # seen from Hudi 0.15, 2026-12-04
    assert _actions(theirs) == expected_actions
    assert _actions(ours) == expected_actions
    for path in (theirs, ours):
        assert _answer(hudi.oracle.read(path)) == expected
        assert _answer(HudiTable.open(str(path)).read()) == expected
        files = {
            r for r in HudiTable.open(str(path)).read(columns=["_hoodie_file_name"]).column(0).to_pylist()
        }
        assert len(files) < FILES * 2  # fewer file groups than the batches wrote


def _replay_last(checkpoint: Path, batch: int) -> None:
    """The driver "died" after the table committed ``batch`` but before Spark logged it: the next
    run of the query replays that batch."""
    (checkpoint / "commits" / str(batch)).unlink()
    (checkpoint / "commits" / f".{batch}.crc").unlink(missing_ok=True)


def test_one_query_taken_over_by_either_sink_writes_each_batch_once(
    hudi: Any, spark: Any, tmp_path: Path
) -> None:
    """A streaming query Apache Hudi's sink ran, continued by ours from the same checkpoint, then
    by Hudi's again, each start replaying the batch the last run committed: each sink skips the
    replay by the batch checkpoint the other recorded (``_hudi_streaming_sink_checkpoint``), so
    every key of the inserts is in the table once."""
    import hudi_spark

    expected = _source(tmp_path / "all")
    src, table, ckpt = tmp_path / "src", tmp_path / "t", tmp_path / "ckpt"
    src.mkdir()
    files = sorted((tmp_path / "all").iterdir())

    def arrive(*ns: int) -> None:
        for n in ns:
            os.link(files[n], src / files[n].name)  # (hard links keep the oldest-first times)

    opts = table_options("events", "COPY_ON_WRITE", "insert", {"hoodie.parquet.small.file.limit": "0"})
    arrive(0, 1, 2)
    hudi.oracle.stream(table, src, SCHEMA, opts, checkpoint=ckpt)  # batches 0-2
    _replay_last(ckpt, 2)
    arrive(3, 4)
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(src))
    q = hudi_spark.write_stream(stream, str(table), options=opts, checkpoint_location=str(ckpt),
                                operation="insert", trigger={"availableNow": True})  # fmt: skip
    q.awaitTermination()
    assert [r.skipped for r in q.hudi_sink.results] == [True, False, False]  # batch 2 again, then 3 and 4
    _replay_last(ckpt, 4)
    arrive(5)
    hudi.oracle.stream(table, src, SCHEMA, opts, checkpoint=ckpt)  # batch 4 again, then 5

    tl = HudiTable.open(str(table)).timeline
    assert [i.action for i in tl] == ["commit"] * FILES
    assert _answer(HudiTable.open(str(table)).read()) == expected
    assert _answer(hudi.oracle.read(table)) == expected
