"""``AsyncCompactor``: compaction next to a Spark ingestion, pending plans retried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.compaction.runner import pending_compactions
from hudi_core.compaction.scheduler import schedule_compaction

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

OPTS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": "2",
}


def _write(spark: Any, base: str, ts: int) -> None:
    import hudi_spark

    keys = [f"k{i}" for i in range(8)]
    data = pa.table({"key": keys, "ts": [ts] * 8, "part": ["a", "b"] * 4})
    hudi_spark.write(spark.createDataFrame(data), base, operation="upsert", options=OPTS)


def test_a_pending_plan_is_run_before_a_new_one_is_scheduled(spark: Any, tmp_path: Path) -> None:
    """A plan left requested (its run failed, or the process died) is compacted by the next
    ingestion's compactor, as Hudi's async compaction service does."""
    from hudi_spark.services import AsyncCompactor

    base = str(tmp_path / "t")
    for ts in (1, 2):
        _write(spark, base, ts)
    left = schedule_compaction(HudiTable.open(base), force=True)  # planned, never run
    assert left is not None
    before = HudiTable.open(base).read(columns=["key", "ts"]).sort_by("key")

    compactor = AsyncCompactor(spark, base, every=100, options=OPTS, run_async=False)  # trigger far away
    assert compactor.maybe_schedule() == left
    table = HudiTable.open(base)
    assert compactor.completed == [left] and pending_compactions(table) == []
    assert table.timeline.completed().find(left) is not None
    assert table.read(columns=["key", "ts"]).sort_by("key").equals(before)
    assert compactor.maybe_schedule() is None  # nothing pending, trigger not reached
