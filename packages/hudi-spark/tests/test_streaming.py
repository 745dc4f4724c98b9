"""``hudi_spark.write_stream``: one deltacommit per micro-batch, exactly once across restarts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.timeline.commit_metadata import CommitMetadata

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

OPTS = {
    "hoodie.table.name": "events",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.compact.inline.max.delta.commits": "2",
}


def _file(src: Path, n: int) -> None:
    keys = [f"f{n % 3}-{i}" for i in range(10)]  # files 3 and 4 update the keys of files 0 and 1
    pq.write_table(
        pa.table({"key": keys, "ts": [n] * 10, "part": ["a", "b"] * 5}), src / f"part-{n:03d}.parquet"
    )


def _run(spark: Any, src: Path, table: str, ckpt: str, options: dict[str, str] = OPTS) -> Any:
    import hudi_spark

    stream = (
        spark.readStream.schema("key string, ts long, part string")
        .option("maxFilesPerTrigger", 1)
        .parquet(str(src))
    )
    q = hudi_spark.write_stream(stream, table, options=options, checkpoint_location=ckpt, operation="upsert",
                                trigger={"availableNow": True})  # fmt: skip
    q.awaitTermination()
    q.hudi_sink.wait()
    return q


def test_restart_replays_without_duplicates_or_loss(spark: Any, tmp_path: Path) -> None:
    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), tmp_path / "ckpt"
    src.mkdir()
    for n in range(3):
        _file(src, n)
    _run(spark, src, table, str(ckpt))
    # the driver "dies" after committing batch 2 to the table but before Spark logged it
    (ckpt / "commits" / "2").unlink()
    (ckpt / "commits" / ".2.crc").unlink(missing_ok=True)
    for n in range(3, 5):
        _file(src, n)
    q = _run(spark, src, table, str(ckpt))
    assert q.hudi_sink.results[0].skipped  # batch 2 replayed and recognised

    t = HudiTable.open(table)
    rows = t.read(columns=["key", "ts"])
    keys = rows.column("key").to_pylist()
    assert len(keys) == len(set(keys)) == 30
    latest = dict(zip(keys, rows.column("ts").to_pylist(), strict=True))
    assert latest["f0-1"] == 3 and latest["f1-1"] == 4 and latest["f2-1"] == 2
    tl = t.timeline
    batches = [
        CommitMetadata.from_json(tl.read_details(i)).extra_metadata.get("hoodie.spark.streaming.batch.id")
        for i in tl.completed_commits() if i.action == "deltacommit"
    ]  # fmt: skip
    assert batches == ["0", "1", "2", "3", "4"]
    assert any(i.action == "compaction" for i in tl.completed())  # an async compaction finished


def test_disable_compaction_leaves_compaction_to_another_job(spark: Any, tmp_path: Path) -> None:
    """``hoodie.datasource.write.streaming.disable.compaction``: the sink schedules no compaction
    (nor compacts inline) however many deltacommits pass; the user's compaction job runs later."""
    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), str(tmp_path / "ckpt")
    src.mkdir()
    for n in range(5):
        _file(src, n)
    q = _run(spark, src, table, ckpt, {**OPTS, "hoodie.datasource.write.streaming.disable.compaction": "true",
                                       "hoodie.compact.inline": "true"})  # fmt: skip
    assert q.hudi_sink.compactor is None
    t = HudiTable.open(table)
    assert [i.action for i in t.timeline] == ["deltacommit"] * 5  # 5 deltacommits, max.delta.commits 2
    before = t.read(columns=["key", "ts"]).sort_by("key")
    assert t.compact() is not None  # the other job
    assert HudiTable.open(table).read(columns=["key", "ts"]).sort_by("key").equals(before)


def test_failed_batch_rolls_back_and_restart_writes_it_once(spark: Any, tmp_path: Path) -> None:
    from hudi_core.log.reader import read_log_file
    from hudi_core.table.file_names import BaseFileName, LogFileName
    from pyspark.errors import StreamingQueryException

    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), str(tmp_path / "ckpt")
    src.mkdir()
    flag = tmp_path / "fail-now"
    opts = {**OPTS, "hoodie.compact.inline.max.delta.commits": "100"}

    def run() -> Any:
        import hudi_spark

        stream = (
            spark.readStream.schema("key string, ts long, part string")
            .option("maxFilesPerTrigger", 1)
            .parquet(str(src))
        )
        failing = {**opts, "hoodie.spark.testing.fail.write.while.exists": str(flag),
                   "hoodie.datasource.write.streaming.retry.count": "1"}  # fmt: skip
        q = hudi_spark.write_stream(stream, table, options=failing, checkpoint_location=ckpt, operation="upsert",
                                    trigger={"availableNow": True})  # fmt: skip
        q.awaitTermination()
        return q

    _file(src, 0)
    run()
    _file(src, 1)
    flag.touch()  # every attempt of batch 1's write tasks dies after writing its files
    with pytest.raises(StreamingQueryException, match="injected failure"):
        run()
    t = HudiTable.open(table)
    assert list(t.timeline.pending()) == []  # the failed batch's instant was rolled back, not left pending
    rollbacks = [i for i in t.timeline.completed() if i.action == "rollback"]
    assert len(rollbacks) == 1
    flag.unlink()
    run()  # restart: Spark replays batch 1

    t = HudiTable.open(table)
    rows = t.read(columns=["key", "ts"])
    keys = rows.column("key").to_pylist()
    assert sorted(keys) == sorted({f"f0-{i}" for i in range(10)} | {f"f1-{i}" for i in range(10)})
    commits = {i.timestamp for i in t.timeline.completed_commits()}
    batches = [CommitMetadata.from_json(t.timeline.read_details(i)).extra_metadata.get("hoodie.spark.streaming.batch.id")
               for i in t.timeline.completed_commits()]  # fmt: skip
    assert batches == ["0", "1"]
    for f in Path(table).glob("[ab]/*"):
        if f.name.startswith(".hoodie_partition"):
            continue
        base = BaseFileName.parse(f.name)
        if base is not None:
            assert base.instant_time in commits, f"leftover file {f.name} of an uncommitted instant"
        else:
            assert LogFileName.parse(f.name) is not None
            blocks = read_log_file(t.storage, str(f))
            assert {b.instant_time for b in blocks} <= commits, f"leftover log file {f.name}"
    assert not any(Path(table, ".hoodie", ".temp").glob("*/*"))  # no markers left


def test_write_stream_under_occ_beside_another_writer_loses_nothing(spark: Any, tmp_path: Path) -> None:
    """Issue #20: the streaming job and a backfill on one table, both with optimistic
    concurrency control; the stream's async compaction runs beside both."""
    import threading

    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), tmp_path / "ckpt"
    src.mkdir()
    for n in range(5):
        _file(src, n)
    occ = {
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.client.heartbeat.interval_in_ms": "1000",
        "hoodie.write.num.retries.on.conflict.failures": "5",
    }
    _run(spark, src, table, str(ckpt), {**OPTS, **occ})  # the first batches create the table
    done: list[str] = []

    def backfill() -> None:  # keys of partition "c", which the stream never writes
        for n in range(8):
            rows = pa.table({"key": [f"b-{n}-{i}" for i in range(5)], "ts": [n] * 5, "part": ["c"] * 5})
            done.append(HudiTable.open(table).upsert(rows, options=occ).instant)

    thread = threading.Thread(target=backfill)
    thread.start()
    for n in range(5, 9):
        _file(src, n)
    _run(spark, src, table, str(ckpt), {**OPTS, **occ})
    thread.join(120)
    rows = HudiTable.open(table).read(columns=["_hoodie_commit_time", "key", "ts"]).to_pylist()
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)) == 30 + 40
    latest = {r["key"]: r["ts"] for r in rows}
    assert latest["f0-1"] == 6 and latest["f1-1"] == 7 and latest["f2-1"] == 8
    assert {r["_hoodie_commit_time"] for r in rows if r["key"].startswith("b-")} <= set(done)
    assert len(done) == 8
    assert [i for i in HudiTable.open(table).timeline.pending() if i.action != "compaction"] == []


def _stream(
    spark: Any, src: Path, table: str, ckpt: str, options: dict[str, str], operation: str = "upsert"
) -> Any:
    import hudi_spark

    stream = spark.readStream.schema("key string, ts long, part string").option("maxFilesPerTrigger", 1)
    q = hudi_spark.write_stream(stream.parquet(str(src)), table, options=options, checkpoint_location=ckpt,
                                operation=operation, trigger={"availableNow": True})  # fmt: skip
    return q


def test_a_failing_batch_is_rolled_back_and_retried_and_the_query_goes_on(spark: Any, tmp_path: Path) -> None:
    """As Hudi's streaming sink: a micro-batch whose write fails is tried again after
    ``retry.interval.ms`` (three attempts by default); here batch 1's first attempt dies after
    writing its files, the second lands, and the query goes on to batch 2."""
    import threading
    import time

    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), str(tmp_path / "ckpt")
    src.mkdir()
    flag = tmp_path / "fail-now"
    opts = {**OPTS, "hoodie.compact.inline.max.delta.commits": "100",
            "hoodie.spark.testing.fail.write.while.exists": str(flag),
            "hoodie.datasource.write.streaming.retry.interval.ms": "1500"}  # fmt: skip
    _file(src, 0)
    _stream(spark, src, table, ckpt, opts).awaitTermination()  # batch 0 creates the table
    for n in (1, 2):
        _file(src, n)
    flag.touch()
    rollbacks = Path(table, ".hoodie")

    def clear_after_the_first_rollback() -> None:  # the sink waits 1.5 s before its next attempt
        deadline = time.monotonic() + 120
        while not any(rollbacks.glob("*.rollback")) and time.monotonic() < deadline:
            time.sleep(0.02)
        flag.unlink()

    clearer = threading.Thread(target=clear_after_the_first_rollback)
    clearer.start()
    q = _stream(spark, src, table, ckpt, opts)
    q.awaitTermination()
    clearer.join()
    assert q.exception() is None
    t = HudiTable.open(table)
    assert len([i for i in t.timeline.completed() if i.action == "rollback"]) == 1
    assert list(t.timeline.pending()) == []
    batches = [CommitMetadata.from_json(t.timeline.read_details(i)).extra_metadata.get("hoodie.spark.streaming.batch.id")
               for i in t.timeline.completed_commits()]  # fmt: skip
    assert batches == ["0", "1", "2"]
    keys = t.read(columns=["key"]).column("key").to_pylist()
    assert sorted(keys) == sorted(f"f{n}-{i}" for n in range(3) for i in range(10))


def test_a_batch_failing_every_attempt_is_dropped_with_ignore_failed_batch(
    spark: Any, tmp_path: Path
) -> None:
    """``hoodie.datasource.write.streaming.ignore.failed.batch``: a batch that fails every attempt
    (a null record key) is dropped, nothing of it is left, and the batches after it land."""
    from pyspark.errors import StreamingQueryException

    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), str(tmp_path / "ckpt")
    src.mkdir()
    _file(src, 0)
    pq.write_table(pa.table({"key": pa.array(["n-1", None], pa.string()), "ts": [1, 1], "part": ["a", "b"]}),
                   src / "part-001.parquet")  # fmt: skip
    _file(src, 2)
    for n, f in enumerate(sorted(src.iterdir())):  # Spark takes files oldest first: one batch each, in order
        os.utime(f, ns=((1_700_000_000 + n) * 10**9,) * 2)
    opts = {**OPTS, "hoodie.datasource.write.streaming.retry.count": "2",
            "hoodie.datasource.write.streaming.retry.interval.ms": "100"}  # fmt: skip
    q = _stream(spark, src, table, str(tmp_path / "ckpt-strict"), opts)
    with pytest.raises(StreamingQueryException, match="null"):  # the default: the query fails on it
        q.awaitTermination()
    q = _stream(
        spark,
        src,
        str(tmp_path / "t2"),
        ckpt,
        {**opts, "hoodie.datasource.write.streaming.ignore.failed.batch": "true"},
    )
    q.awaitTermination()
    assert q.exception() is None and q.hudi_sink.dropped == [1]
    t = HudiTable.open(str(tmp_path / "t2"))
    keys = t.read(columns=["key"]).column("key").to_pylist()
    assert sorted(keys) == sorted(f"f{n}-{i}" for n in (0, 2) for i in range(10))
    assert list(t.timeline.pending()) == []


def test_async_clustering_runs_beside_the_stream(spark: Any, tmp_path: Path) -> None:
    """``hoodie.clustering.async.enabled``: once ``async.max.commits`` commits completed since the
    last clustering, the sink schedules one after its commit and runs it in the background while
    the next batches write around its file groups (Hudi's streaming sink); every row stays, once,
    and the small files of the inserts end up sorted in fewer file groups."""
    src, table, ckpt = tmp_path / "src", str(tmp_path / "t"), str(tmp_path / "ckpt")
    src.mkdir()
    for n in range(6):
        keys = [f"k{(7 * i + n) % 60:02d}-{n}" for i in range(10)]  # unsorted within a file
        pq.write_table(
            pa.table({"key": keys, "ts": [n] * 10, "part": ["a", "b"] * 5}), src / f"part-{n:03d}.parquet"
        )
    opts = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
            "hoodie.parquet.small.file.limit": "0",  # every batch its own file groups
            "hoodie.clustering.async.enabled": "true", "hoodie.clustering.async.max.commits": "2",
            "hoodie.clustering.plan.strategy.sort.columns": "key"}  # fmt: skip
    q = _stream(spark, src, table, ckpt, opts, operation="insert")
    q.awaitTermination()
    q.hudi_sink.wait()
    assert q.exception() is None and q.hudi_sink.clusterer.errors == []
    t = HudiTable.open(table)
    clusterings = [i for i in t.timeline.completed() if i.action == "replacecommit"]
    assert len(clusterings) >= 2 and q.hudi_sink.clusterer.completed == [i.timestamp for i in clusterings]
    for i in clusterings:
        assert CommitMetadata.from_json(t.timeline.read_details(i)).operation_type == "CLUSTER"
    assert list(t.timeline.pending()) == []
    rows = t.read(columns=["_hoodie_file_name", "key"])
    keys = rows.column("key").to_pylist()
    assert sorted(keys) == sorted(f"k{(7 * i + n) % 60:02d}-{n}" for n in range(6) for i in range(10))
    by_file = rows.group_by("_hoodie_file_name").aggregate([("key", "count")])
    assert by_file.num_rows < 6 * 2  # 12 file groups written, fewer left
    clustered = {i.timestamp for i in clusterings}
    outputs = [name for name in by_file.column("_hoodie_file_name").to_pylist()
               if name.removesuffix(".parquet").split("_")[-1] in clustered]  # fmt: skip
    assert outputs
    for name in outputs:  # each clustering output sorted by the sort column
        (path,) = Path(table).glob(f"[ab]/{name}")
        written = pq.read_table(path, columns=["key"]).column("key").to_pylist()
        assert written == sorted(written)
