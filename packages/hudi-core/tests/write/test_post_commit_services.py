"""Services the write client runs after a commit: inline compaction and the automatic clean."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from hudi_core import HudiTable
from hudi_core.compaction import pending_compactions
from hudi_core.timeline.instant import Action

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.int64()), ("part", pa.string())])


def batch(ids: range, ts: int) -> pa.Table:
    n = len(ids)
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * n, "val": [ts * 100 + i for i in ids],
                     "part": ["a"] * n}, schema=SCHEMA)  # fmt: skip


def make(tmp_path: Path, table_type: str) -> HudiTable:
    return HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                            partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip


def completed_actions(t: HudiTable) -> list[str]:
    return [i.action for i in t.timeline.completed()]


def test_inline_compaction_after_delta_commit(tmp_path: Path) -> None:
    t = make(tmp_path, "MERGE_ON_READ")
    opts = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    t.insert(batch(range(10), 1), options=opts)
    assert completed_actions(t) == [Action.DELTA_COMMIT]
    t.upsert(batch(range(5), 2), options=opts)  # 2nd delta commit: the trigger fires
    assert completed_actions(t) == [Action.DELTA_COMMIT, Action.DELTA_COMMIT, Action.COMPACTION]
    assert pending_compactions(t) == []
    assert all(s.base_instant == t.timeline.completed().last().timestamp for s in t.file_slices())
    assert all(not s.log_files for s in t.file_slices())
    d = t.read(columns=["id", "val"]).to_pydict()
    assert dict(zip(d["id"], d["val"], strict=True)) == {
        f"k{i}": (200 + i if i < 5 else 100 + i) for i in range(10)
    }


def test_schedule_inline_leaves_plan_pending(tmp_path: Path) -> None:
    t = make(tmp_path, "MERGE_ON_READ")
    opts = {"hoodie.compact.schedule.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    t.insert(batch(range(10), 1), options=opts)
    t.upsert(batch(range(5), 2), options=opts)
    assert len(pending_compactions(t)) == 1


def test_no_inline_compaction_by_default(tmp_path: Path) -> None:
    t = make(tmp_path, "MERGE_ON_READ")
    for ts in range(1, 8):
        t.upsert(batch(range(5), ts))
    assert set(completed_actions(t)) == {Action.DELTA_COMMIT}


def _base_files(t: HudiTable) -> list[str]:
    return sorted(p.name for p in Path(t.base_uri, "part=a").glob("*.parquet")) or sorted(
        p.name for p in Path(t.base_uri, "a").glob("*.parquet")
    )


def test_automatic_clean_keeps_retained_commits(tmp_path: Path) -> None:
    t = make(tmp_path, "COPY_ON_WRITE")
    opts = {"hoodie.cleaner.commits.retained": "2"}
    for ts in range(1, 6):
        t.upsert(batch(range(5), ts), options=opts)
    cleans = [i for i in t.timeline.completed() if i.action == Action.CLEAN]
    assert cleans
    # COW: one base file version per commit; a clean keeps the versions the 2 latest commits read
    assert len(_base_files(t)) == 3
    commits = [i.timestamp for i in t.timeline.completed_commits()]
    for ts, as_of in zip((4, 5), commits[-2:], strict=True):
        d = t.read(columns=["id", "val"], as_of=as_of).to_pydict()
        assert sorted(d["val"]) == [ts * 100 + i for i in range(5)]


def test_automatic_clean_off_keeps_everything(tmp_path: Path) -> None:
    t = make(tmp_path, "COPY_ON_WRITE")
    opts = {"hoodie.cleaner.commits.retained": "2", "hoodie.clean.automatic": "false"}
    for ts in range(1, 6):
        t.upsert(batch(range(5), ts), options=opts)
    assert not [i for i in t.timeline.completed() if i.action == Action.CLEAN]
    assert len(_base_files(t)) == 5


def test_default_retains_ten_commits(tmp_path: Path) -> None:
    t = make(tmp_path, "COPY_ON_WRITE")
    for ts in range(1, 14):
        t.upsert(batch(range(3), ts))
    first_kept = [i.timestamp for i in t.timeline.completed_commits()][-10]
    d = t.read(columns=["val"], as_of=first_kept).to_pydict()
    assert sorted(d["val"]) == [400 + i for i in range(3)]  # commits 4..13 are retained
    assert len(_base_files(t)) == 11  # 10 retained + the one time travel to the oldest reads
