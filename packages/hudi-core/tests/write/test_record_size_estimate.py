"""The average record size that sizes small-file packing comes from the newest commit that wrote
enough base-file bytes (Hudi's AverageRecordSizeUtils), and the older commits are not read once
one qualifies: each read is a request on S3."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.config.property import HoodieConfig
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.timeline import ActiveTimeline
from hudi_core.write.bucket_assigner import average_record_size, recent_record_sizes


def _rows(start: int, n: int, width: int) -> pa.Table:
    return pa.table({"id": [f"k{i:05d}" for i in range(start, start + n)], "ts": [1] * n,
                     "val": ["x" * width] * n, "part": ["p0"] * n})  # fmt: skip


def test_the_newest_qualifying_commit_decides_and_older_ones_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opts = {"hoodie.parquet.small.file.limit": "1000"}  # every commit below writes more than that
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                             partition_fields="part", ordering_field="ts", options=opts)  # fmt: skip
    for n, width in enumerate((10, 100, 1000)):
        HudiTable.open(table.base_uri).insert(_rows(n * 200, 200, width), options=opts)
    newest = table.timeline.completed_commits().last()
    assert newest is not None
    stats = [s for s in CommitMetadata.from_json(table.timeline.read_details(newest)).all_write_stats()
             if (s.path or "").endswith(".parquet")]  # fmt: skip
    expected = sum(s.total_write_bytes for s in stats) // sum(s.num_writes for s in stats)

    reads: list[str] = []
    original = ActiveTimeline.read_details

    def counting(self: ActiveTimeline, instant: object) -> bytes:
        reads.append(str(instant))
        return original(self, instant)  # type: ignore[arg-type]

    monkeypatch.setattr(ActiveTimeline, "read_details", counting)
    cfg = HoodieConfig(table.write_config(opts))
    size = average_record_size(recent_record_sizes(HudiTable.open(table.base_uri).timeline), cfg)
    assert size == expected > 1000  # the 1000-character rows, not the older narrower ones
    assert len(reads) == 1
