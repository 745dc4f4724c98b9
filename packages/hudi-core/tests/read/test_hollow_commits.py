"""Incremental queries over a timeline with a hollow commit: a write still inflight while a
later one has completed (``hoodie.read.timeline.holes.resolution.policy``, as Apache Hudi 0.14+)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ConfigError
from hudi_core.read.hollow import HollowCommitError, latest_completion
from hudi_core.testing.hollow import hollow_table, rows

POLICY = "hoodie.read.timeline.holes.resolution.policy"


def _last_completion(table: HudiTable) -> str:
    completed = latest_completion(table.timeline, table.timeline.completed_commits())
    assert completed is not None
    return completed


def _values(data: pa.Table) -> list[str]:
    return sorted(data.column("v").to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_hollow_commit_fails_blocks_or_comes_by_completion_time(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    hollow = hollow_table(path, table_type)
    c1, c2, c3 = hollow.instants

    with pytest.raises(HollowCommitError, match=f"Found hollow commit: '{c2}'"):
        HudiTable.open(str(path)).read("incremental", start="000")
    with pytest.raises(HollowCommitError):  # past it, too: Hudi checks the whole timeline
        HudiTable.open(str(path)).read("incremental", start=c2)
    # the snapshot never reads an inflight write, and is not a range
    assert _values(HudiTable.open(str(path)).read()) == ["a1@1", "a2@1", "b1@1", "b2@3"]

    blocked = HudiTable.open(str(path), options={POLICY: "block"})
    assert _values(blocked.read("incremental", start="000")) == ["a1@1", "a2@1", "b1@1", "b2@1"]
    assert blocked.read("incremental", start=c1).num_rows == 0

    by_time = HudiTable.open(str(path), options={POLICY: "USE_TRANSITION_TIME"})
    first = by_time.read("incremental", start="000")
    assert _values(first) == ["a1@1", "a2@1", "b1@1", "b2@3"]
    seen = _last_completion(by_time)

    hollow.complete()
    by_time = HudiTable.open(str(path), options={POLICY: "USE_TRANSITION_TIME"})
    late = _last_completion(by_time)
    assert late > seen
    assert _values(by_time.read("incremental", start=seen, end=late)) == ["a1@2"], (
        "the late commit comes late"
    )
    # without an end, the range ends at the completion of the newest instant by instant time (c3),
    # as Hudi's does
    assert by_time.read("incremental", start=seen).num_rows == 0
    # by instant time, the range after c3 holds nothing, and c2's record hides in (c1, c3]
    assert HudiTable.open(str(path)).read("incremental", start=c3).num_rows == 0
    assert _values(HudiTable.open(str(path)).read("incremental", start=c1)) == ["a1@2", "b2@3"]


def test_a_failed_write_rolled_back_leaves_no_hole(tmp_path: Path) -> None:
    path = tmp_path / "t"
    hollow = hollow_table(path, "MERGE_ON_READ")
    hollow.aside.unlink()
    HudiTable.open(str(path)).upsert(rows(["a2"], "a", 4))  # rolls the failed write back first
    assert not list((path / ".hoodie").glob(f"{hollow.instants[1]}.*"))
    assert _values(HudiTable.open(str(path)).read("incremental", start="000")) == [
        "a1@1",
        "a2@4",
        "b1@1",
        "b2@3",
    ]


def test_an_unknown_policy_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t"
    hollow_table(path, "COPY_ON_WRITE")
    with pytest.raises(ConfigError, match="not one of FAIL, BLOCK, USE_TRANSITION_TIME"):
        HudiTable.open(str(path), options={POLICY: "wait"}).read("incremental", start="000")
