"""Archival: the active timeline stays within hoodie.keep.min/max.commits, archived instants stay
readable, Hudi's guards hold, and a crash half-way never loses or double counts an instant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.archival import archive, archived_instants, maybe_archive
from hudi_core.errors import ConfigError, LockTimeoutError
from hudi_core.lock import FileSystemLockProvider

SMALL = {"hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "6", "hoodie.cleaner.commits.retained": "3",
         "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}  # fmt: skip


def _table(tmp_path: Path, table_type: str = "MERGE_ON_READ") -> HudiTable:
    return HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="k",
                            partition_fields="p", ordering_field="ts")  # fmt: skip


def _upsert(t: HudiTable, i: int, options: dict[str, str]) -> str:
    data = pa.table({"k": [f"k{i % 5}", f"n{i}"], "ts": [i, i], "v": [i, i], "p": ["a", "b"]})
    return t.upsert(data, options=options).instant


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_automatic_archival_keeps_the_active_timeline_short_and_every_row(
    tmp_path: Path, table_type: str
) -> None:
    t = _table(tmp_path, table_type)
    instants = [_upsert(t, i, SMALL) for i in range(25)]
    t = HudiTable.open(t.base_uri)
    active = t.timeline.completed_commits()
    assert 4 <= len(active) <= 6
    archived = [
        a.instant.timestamp for a in archived_instants(t) if a.instant.action in ("commit", "deltacommit")
    ]
    assert set(instants) <= set(archived) | set(active.timestamps())
    assert not set(archived) & {i.timestamp for i in t.timeline}, (
        "an instant is archived or active, never both"
    )
    assert any(f.name.startswith(".commits_.archive.") for f in t.storage.list(f"{t.meta_path}/archived"))
    assert len([f for f in t.storage.list(t.meta_path) if not f.is_dir]) < 40, ".hoodie stays bounded"
    rows = sorted((r["k"], r["v"]) for r in t.read(columns=["k", "v"]).to_pylist())
    assert rows == sorted([(f"k{k}", max(i for i in range(25) if i % 5 == k)) for k in range(5)] +
                          [(f"n{i}", i) for i in range(25)])  # fmt: skip
    assert t.read(as_of=active.timestamps()[-2]).num_rows == 29  # time travel inside the active timeline


def test_archival_never_passes_a_pending_compaction(tmp_path: Path) -> None:
    t = _table(tmp_path)
    opts = {**SMALL, "hoodie.compact.inline": "false", "hoodie.archive.automatic": "false"}
    for i in range(7):  # k0 and k1 come back: their updates go to log files
        _upsert(t, i, opts)
    pending = t.schedule_compaction(opts, force=True)
    assert pending is not None
    for i in range(7, 16):
        _upsert(t, i, opts)
    result = archive(HudiTable.open(t.base_uri), opts)
    assert result is not None
    assert all(i.timestamp < pending for i in result.instants)
    assert pending in HudiTable.open(t.base_uri).timeline.pending_compactions().timestamps()


def test_a_crash_between_archive_and_delete_counts_each_instant_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    t = _table(tmp_path)
    opts = {**SMALL, "hoodie.archive.automatic": "false"}
    for i in range(10):
        _upsert(t, i, opts)
    before = sorted(i.timestamp for i in t.timeline.completed())
    calls = {"n": 0}
    real_delete = type(t.storage).delete

    def crashing_delete(self, path):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] > 4:
            raise OSError("killed")
        return real_delete(self, path)

    monkeypatch.setattr(type(t.storage), "delete", crashing_delete)
    with pytest.raises(OSError):
        archive(HudiTable.open(t.base_uri), opts)
    monkeypatch.undo()
    t = HudiTable.open(t.base_uri)
    active = {i.timestamp for i in t.timeline.completed()}
    archived = [a.instant.timestamp for a in archived_instants(t)]
    assert sorted(active | set(archived)) == before, "no instant lost"
    assert not active & set(archived) and len(archived) == len(set(archived)), "none counted twice"
    assert not t.timeline.pending(), "pending states went first: nothing looks like a failed write"
    archive(t, opts)  # the next run finishes the job
    assert sorted({i.timestamp for i in HudiTable.open(t.base_uri).timeline.completed()} |
                  {a.instant.timestamp for a in archived_instants(t)}) == before  # fmt: skip


def test_archival_leaves_another_action_at_the_same_instant_time(tmp_path: Path) -> None:
    # writers of two processes can pick one instant time for different actions
    t = _table(tmp_path)
    opts = {**SMALL, "hoodie.archive.automatic": "false"}
    for i in range(10):
        _upsert(t, i, opts)
    oldest = t.timeline.completed_commits().timestamps()[0]
    other = tmp_path / "t" / ".hoodie" / f"{oldest}.clean.requested"
    other.write_bytes(b"")  # another writer's clean, just requested
    result = archive(HudiTable.open(t.base_uri), opts)
    assert result is not None and oldest in [i.timestamp for i in result.instants]
    assert other.exists()
    archived = [
        (a.instant.timestamp, a.instant.action) for a in archived_instants(HudiTable.open(t.base_uri))
    ]
    assert (oldest, "deltacommit") in archived and (oldest, "clean") not in archived


def test_keep_bounds_are_checked_as_hudi_checks_them(tmp_path: Path) -> None:
    t = _table(tmp_path)
    bad = {
        "hoodie.keep.min.commits": "5",
        "hoodie.keep.max.commits": "6",
        "hoodie.cleaner.commits.retained": "5",
    }
    with pytest.raises(ConfigError, match=r"greater than hoodie\.cleaner\.commits\.retained"):
        archive(t, bad)
    with pytest.raises(ConfigError, match=r"hoodie\.keep\.max\.commits"):
        archive(t, {"hoodie.keep.min.commits": "8", "hoodie.keep.max.commits": "8"})
    _upsert(t, 0, bad)  # automatic archival warns and skips: the committed write does not fail
    assert HudiTable.open(t.base_uri).read().num_rows == 2


def test_automatic_archival_takes_the_table_lock_only_when_something_is_due(tmp_path: Path) -> None:
    """Under optimistic concurrency control a commit's archival waits for the table lock only
    when it has instants to archive: with another writer holding the lock, archival with nothing
    due returns at once (before, every commit queued for the lock), archival with instants due
    waits for it."""
    occ = {**SMALL, "hoodie.compact.inline": "false", "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
           "hoodie.write.lock.wait_time_ms": "300"}  # fmt: skip
    writes = {**occ, "hoodie.archive.automatic": "false"}  # the writes leave archival to the test
    t = _table(tmp_path)

    def while_another_writer_holds_the_lock() -> Any:
        table = HudiTable.open(t.base_uri)
        holder = FileSystemLockProvider(table.storage, table.base_uri, occ)
        holder.acquire()
        try:
            return maybe_archive(table, occ)
        finally:
            holder.release()

    for i in range(6):  # keep.max.commits: nothing is due yet
        _upsert(t, i, writes)
    assert while_another_writer_holds_the_lock() is None
    _upsert(t, 6, writes)  # the seventh commit: instants are due
    with pytest.raises(LockTimeoutError):
        while_another_writer_holds_the_lock()
    result = maybe_archive(HudiTable.open(t.base_uri), occ)
    assert result is not None and len(result.instants) == 3  # down to keep.min.commits
    assert len(HudiTable.open(t.base_uri).timeline.completed_commits()) == 4
