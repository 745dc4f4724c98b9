"""Checkpoints survive archival: the streamer's checkpoint and write_stream's committed batch
ids are found in the archived timeline once every active commit comes from other writers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.archival import archived_instants
from hudi_core.config.property import HoodieConfig

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "4",
    "hoodie.cleaner.commits.retained": "2",
}


def _rows(i: int) -> pa.Table:
    return pa.table({"k": [f"k{i}"], "ts": [i], "p": ["a"]})


def test_checkpoints_are_found_after_their_commits_were_archived(spark: Any, tmp_path: Path) -> None:
    import hudi_spark
    from hudi_spark.commit import BATCH_KEY, QUERY_KEY, SparkCommit
    from hudi_spark.streamer import CHECKPOINT_KEY, last_checkpoint

    base = str(tmp_path / "t")
    extra = {CHECKPOINT_KEY: "1732500000000", QUERY_KEY: "q1", BATCH_KEY: "7"}
    first = hudi_spark.write(spark.createDataFrame(_rows(0)), base, operation="upsert", options=OPTS,
                             extra_metadata=extra).instant  # fmt: skip
    for i in range(1, 8):  # another writer's commits push the checkpoint's commit out
        HudiTable.open(base, options=OPTS).upsert(_rows(i), options=OPTS)
    table = HudiTable.open(base, options=OPTS)
    assert first not in table.timeline.timestamps()
    assert first in [a.instant.timestamp for a in archived_instants(table)]
    checkpoint = last_checkpoint(base, OPTS)
    assert checkpoint is not None and checkpoint.hudi == "1732500000000"
    schema = _rows(0).schema
    replay = SparkCommit(table, HoodieConfig(OPTS), "upsert", schema, {QUERY_KEY: "q1", BATCH_KEY: "7"})
    assert replay.already_committed(), "a replay of an archived batch is not written twice"
    nxt = SparkCommit(table, HoodieConfig(OPTS), "upsert", schema, {QUERY_KEY: "q1", BATCH_KEY: "8"})
    assert not nxt.already_committed()
