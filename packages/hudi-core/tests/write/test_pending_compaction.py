"""Writes while a compaction is pending: keys are found in the slice before the compaction,
updates go to logs on top of the compaction instant, no new records go into such file groups."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.compaction import run_compaction, schedule_compaction

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.int64()), ("part", pa.string())])


def batch(ids: range, ts: int, val: int) -> pa.Table:
    n = len(ids)
    return pa.table({"id": [f"k{i:04d}" for i in ids], "ts": [ts] * n, "val": [val + i for i in ids],
                     "part": ["a"] * n}, schema=SCHEMA)  # fmt: skip


def values(t: HudiTable) -> dict[str, int]:
    d = t.read(columns=["id", "val"]).to_pydict()
    return dict(zip(d["id"], d["val"], strict=True))


@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET", "GLOBAL_SIMPLE"])
def test_upsert_under_pending_compaction(tmp_path: Path, index: str) -> None:
    opts = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "2"}
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    t.insert(batch(range(20), 1, 0), options=opts)
    t.upsert(batch(range(5), 2, 100), options=opts)
    groups_before = {s.file_id for s in t.file_slices()}
    tc = schedule_compaction(t, force=True)
    assert tc is not None
    t.upsert(batch(range(3, 25), 3, 1000), options=opts)  # 17 updates, 5 inserts
    expected = {f"k{i:04d}": 1000 + i if i >= 3 else 100 + i for i in range(25)}
    assert values(t) == expected
    assert t.read(columns=["id"]).num_rows == 25  # no duplicates
    slices = t.file_slices()
    # updates: logs named with the compaction instant in the old file groups
    updated = {s.file_id for s in slices for lf in s.log_files if lf.base_instant == tc}
    assert updated and updated <= groups_before
    # inserts were not packed into file groups under compaction (their base file is not rewritten)
    if index != "BUCKET":
        new_groups = {s.file_id for s in slices} - groups_before
        assert new_groups
    run_compaction(t, tc)
    assert values(t) == expected
