"""``spark_session``'s settings: what every session needs, loopback only on this machine."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest
from hudi_spark.compat import MAX_BYTES_PER_BATCH, MAX_RECORDS_PER_BATCH
from hudi_spark.session import FAST_CONF, REQUIRED_CONF, is_local, session_settings


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]", "local-cluster[2,1,1024]"])
def test_local_masters_keep_the_driver_on_loopback(master: str) -> None:
    settings = session_settings(master)
    assert is_local(master)
    assert settings["spark.driver.host"] == settings["spark.driver.bindAddress"] == "127.0.0.1"


@pytest.mark.parametrize("master", ["yarn", "spark://10.0.0.5:7077", "k8s://https://api:6443", "localhost"])
def test_cluster_masters_let_executors_reach_the_driver(master: str) -> None:
    """A driver bound to loopback is unreachable from executors on other machines."""
    for fast in (True, False):
        settings = session_settings(master, fast=fast)
        assert not is_local(master)
        assert "spark.driver.host" not in settings and "spark.driver.bindAddress" not in settings
        assert all(settings[k] == v for k, v in REQUIRED_CONF.items())


def test_fast_settings_are_optional_and_given_settings_win() -> None:
    quick = session_settings("local[2]")
    assert quick["spark.driver.extraJavaOptions"] == FAST_CONF["spark.driver.extraJavaOptions"]
    assert "TieredStopAtLevel=1" in quick["spark.executor.extraJavaOptions"]  # local-cluster executors
    full = session_settings("local[2]", {"spark.driver.memory": "6g"}, fast=False)
    assert "spark.driver.extraJavaOptions" not in full  # the JVM's full JIT for real jobs
    assert "spark.executor.extraJavaOptions" not in full
    assert full["spark.driver.memory"] == "6g"
    assert full["spark.sql.session.timeZone"] == "UTC"
    # a default-parallelism of our own would cap a bigger local machine's write tasks
    assert "spark.default.parallelism" not in quick


def _worker_setting(spark: Any) -> str | None:
    """``JE_ARROW_MALLOC_CONF`` in the environment of a Python worker of ``spark``."""

    def task(batches: Any) -> Any:
        import os

        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"conf": [os.environ.get("JE_ARROW_MALLOC_CONF")]})

    (row,) = spark.range(0, 1, 1, 1).mapInArrow(task, "conf string").collect()
    return row.conf


def test_python_workers_run_with_the_jemalloc_settings_of_their_environment(
    spark: Any, tmp_path: Any
) -> None:
    """Neither hudi_core's import nor a read sets jemalloc's decay: a worker serves task after task,
    and with every freed page kept its peak RSS rose query after query (457 -> 699 MB over ten
    reads of a 3.75M-row table). Its jemalloc runs with Arrow's settings, or the environment's."""
    import hudi_spark
    from hudi_core import HudiTable

    table = HudiTable.create(str(tmp_path / "t"), name="t", record_key_fields="uuid", partition_fields="city",
                             ordering_field="ts")  # fmt: skip
    table.upsert(pa.table({"uuid": ["a"], "ts": [1], "city": ["x"]}))
    assert [r.uuid for r in hudi_spark.read(spark, table.base_uri).collect()] == ["a"]
    assert not [k for k in session_settings("local[2]") if k.endswith("JE_ARROW_MALLOC_CONF")]
    assert _worker_setting(spark) == os.environ.get("JE_ARROW_MALLOC_CONF")


def _batch_rows(df: Any) -> tuple[str | None, list[int]]:
    """The byte bound a mapInArrow task of ``df`` ran under, and the rows of each batch it got."""

    def task(batches: Any) -> Any:
        from pyspark import TaskContext

        rows = [b.num_rows for b in batches]
        bound = TaskContext.get().getLocalProperty(MAX_BYTES_PER_BATCH)
        yield pa.RecordBatch.from_pydict({"bound": [bound], "rows": [rows]})

    (row,) = df.mapInArrow(task, "bound string, rows array<long>").collect()
    return row.bound, list(row.rows)


def test_writes_bound_arrow_batches_by_rows_and_give_the_settings_back(spark: Any, tmp_path: Any) -> None:
    """Spark 4 measures every batch it sends to Python after each row unless the byte bound is
    Int.MaxValue: inside the block it is, and rows are capped where Spark's row width estimate
    (100 bytes a binary value) would pass 64 MB; the session's own settings come back after."""
    import hudi_spark
    from hudi_spark.compat import batches_bounded_by_rows

    def settings() -> tuple[str | None, str | None]:
        return spark.conf.get(MAX_BYTES_PER_BATCH, None), spark.conf.get(MAX_RECORDS_PER_BATCH, None)

    before = settings()
    assert before[0] is None
    binary = [f"cast('x' AS binary) AS b{i}" for i in range(100)]
    wide = spark.range(0, 20_000, 1, 1).selectExpr("id", *binary)
    assert _batch_rows(wide) == (None, [20_000])  # 10 MB of Arrow: under both bounds
    with batches_bounded_by_rows(wide):
        fit = (64 << 20) // (8 + 100 * 100)
        assert _batch_rows(wide) == (str(2**31 - 1), [fit, fit, 20_000 - 2 * fit])
        with batches_bounded_by_rows(spark.range(3)):  # a concurrent write: nothing raised
            assert spark.conf.get(MAX_RECORDS_PER_BATCH) == str(fit)
        assert spark.conf.get(MAX_BYTES_PER_BATCH) == str(2**31 - 1)
    assert settings() == before

    df = spark.createDataFrame(pa.table({"uuid": ["a", "b"], "ts": [1, 2], "city": ["x", "y"]}))
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "uuid",
               "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts"}  # fmt: skip
    hudi_spark.write(df, str(tmp_path / "t"), operation="bulk_insert", options=options)
    assert settings() == before

    spark.conf.set(MAX_BYTES_PER_BATCH, "1m")  # the session's own byte bound is kept
    try:
        with batches_bounded_by_rows(wide):
            bound, rows = _batch_rows(wide)
        assert bound == "1m" and len(rows) > 5 and sum(rows) == 20_000  # ~2,000 rows a MB
        hudi_spark.write(df, str(tmp_path / "t"), operation="upsert", options=options)
        assert spark.conf.get(MAX_BYTES_PER_BATCH) == "1m"
    finally:
        spark.conf.unset(MAX_BYTES_PER_BATCH)
    assert sorted(r.uuid for r in hudi_spark.read(spark, str(tmp_path / "t")).collect()) == ["a", "b"]


def test_the_tagged_records_are_cached_uncompressed_unless_the_session_says_otherwise(spark: Any) -> None:
    """The write caches its tagged records for two jobs; Spark's default compression of that
    cache costs more CPU than it saves. The session's own setting wins and is left as it was."""
    from hudi_spark.writer import CACHE_COMPRESSED, _persisted

    rows = spark.range(0, 200_000, 1, 2).selectExpr("id", "concat('city-', CAST(id % 3 AS string)) AS city")

    def cached_bytes(persist: Any) -> int:
        cached = persist(rows)
        try:
            cached.count()
            return sum(int(info.memSize()) for info in spark.sparkContext._jsc.sc().getRDDStorageInfo())
        finally:
            cached.unpersist(True)

    assert spark.conf.get(CACHE_COMPRESSED, None) is None
    compressed = cached_bytes(lambda df: df.persist())
    plain = cached_bytes(_persisted)
    assert plain > 3 * compressed > 0  # a dictionary of three cities against 200,000 strings
    assert spark.conf.get(CACHE_COMPRESSED, None) is None
    spark.conf.set(CACHE_COMPRESSED, "true")
    try:
        assert cached_bytes(_persisted) == compressed
        assert spark.conf.get(CACHE_COMPRESSED) == "true"
    finally:
        spark.conf.unset(CACHE_COMPRESSED)
