"""What one OCC upsert lists, and which commit files it reads: each is a request on S3, priced
and slow, and the timeline's listing grows with the table. The write reads the table's schema and
looks for failed writes in one load, its planning reads the timeline its instant was created on,
the clean plans and runs on one load under the lock, and the files of a partition are listed once
per file system view (finding the partitions lists them already). A rollback lists each partition
once too. A process reads a completed commit's file once for the things it looks up there, and the
handles of a write find files in the listings its planning made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.storage.local import LocalStorage

OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.cleaner.commits.retained": "2",  # every commit from the fourth on cleans
    "hoodie.parquet.small.file.limit": str(100 * 1024 * 1024),  # inserts merge into base files
}
PARTITIONS = ("p0", "p1", "p2")


def _rows(i: int) -> pa.Table:
    keys = [f"k{(i * 5 + j) % 40:03d}" for j in range(9)]
    return pa.table({"id": keys, "ts": [i] * 9, "part": [PARTITIONS[j % 3] for j in range(9)]})


def _counted(monkeypatch: pytest.MonkeyPatch, method: str, key: Callable[[str], str]) -> Counter[str]:
    """Calls of ``LocalStorage.<method>``, counted by ``key`` of the path they were given."""
    calls: Counter[str] = Counter()
    original = getattr(LocalStorage, method)

    def counting(self: LocalStorage, path: str, *args: Any, **kwargs: Any) -> Any:
        calls[key(path)] += 1
        return original(self, path, *args, **kwargs)

    monkeypatch.setattr(LocalStorage, method, counting)
    return calls


def _listings(monkeypatch: pytest.MonkeyPatch, base: str) -> Counter[str]:
    """Listings by folder, relative to the table's base path."""
    return _counted(monkeypatch, "list", lambda path: path.rstrip("/")[len(base) + 1 :])


def _listings_of_an_upsert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, after: int
) -> tuple[str, Counter[str]]:
    """The listings of one OCC upsert into a table that had ``after`` upserts before it."""
    base = str(tmp_path / "t")
    HudiTable.create(base, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                     partition_fields="part", ordering_field="ts", options=OCC)  # fmt: skip
    for i in range(after):
        HudiTable.open(base, options=OCC).upsert(_rows(i), options=OCC)
    listed = _listings(monkeypatch, base)
    HudiTable.open(base, options=OCC).upsert(_rows(after), options=OCC)
    monkeypatch.undo()
    return base, listed


def test_an_upsert_that_cleans_lists_the_timeline_and_each_partition_less(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, listed = _listings_of_an_upsert(tmp_path, monkeypatch, after=6)
    timeline = HudiTable.open(base).timeline
    assert timeline.completed().last().action == "clean"  # type: ignore[union-attr]
    # the schema and the look for failed writes, the instant's creation, the commit under the
    # lock, the clean's plan under the lock, archival's check after the clean (11 before: the
    # look for failed writes, the planning, the clean's look for pending cleans, its plan's look
    # for savepoints and its run each loaded the timeline again; 6 before the clean's check read
    # the commit's load)
    assert listed[".hoodie"] == 5
    # the planning's view (the index look-up and small files; the merge of the inserts into a
    # small base file finds it in that listing), the clean's plan (4 each before: the view listed
    # each partition again after finding it; 3 before the merge took the view's listing)
    assert {p: listed[p] for p in PARTITIONS} == {p: 2 for p in PARTITIONS}


def test_an_upsert_with_nothing_to_clean_or_archive_lists_the_timeline_three_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The services' checks read the load the commit was made on, which holds the commit."""
    base, listed = _listings_of_an_upsert(tmp_path, monkeypatch, after=1)
    assert [i.action for i in HudiTable.open(base).timeline.completed()] == ["deltacommit"] * 2
    # the schema and the look for failed writes, the instant's creation, the commit under the
    # lock (5 before: the clean's check and archival's each loaded the timeline again)
    assert listed[".hoodie"] == 3


def test_rolling_back_a_failed_write_lists_each_partition_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hudi_core.write import transaction
    from hudi_core.write.rollback import rollback_failed_writes

    base = str(tmp_path / "t")
    table = HudiTable.create(base, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="part", ordering_field="ts")  # fmt: skip
    for i in range(3):
        HudiTable.open(base).upsert(_rows(i))

    def fails(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the writer dies before its commit file")

    with monkeypatch.context() as m:
        m.setattr(transaction, "commit", fails)
        with pytest.raises(RuntimeError, match="dies before"):
            HudiTable.open(base).upsert(_rows(3))
    (failed,) = table.timeline.pending().timestamps()
    listed = _listings(monkeypatch, base)
    rolled_back = rollback_failed_writes(HudiTable.open(base))
    monkeypatch.undo()

    assert [r.rolled_back for r in rolled_back] == [failed]
    assert not HudiTable.open(base).timeline.pending()
    # finding the partitions lists them; the dead writer's leftovers are looked for in those
    # listings (twice each before)
    assert {p: listed[p] for p in PARTITIONS} == {p: 1 for p in PARTITIONS}


def test_an_upsert_merging_several_file_groups_of_a_partition_lists_it_once_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each merged file group looked its base file up in a listing of its own: on S3 a LIST of
    the whole partition per group. The merges share the write's listing now."""
    base = str(tmp_path / "t")
    HudiTable.create(base, name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                     partition_fields="part", ordering_field="ts")  # fmt: skip
    keys = [f"k{i:03d}" for i in range(30)]
    no_small_files = {"hoodie.parquet.small.file.limit": "0"}
    for g in range(3):  # three inserts, three file groups
        batch = pa.table({"id": keys[g * 10 : g * 10 + 10], "ts": [0] * 10, "part": ["p0"] * 10})
        HudiTable.open(base).insert(batch, options=no_small_files)
    listed = _listings(monkeypatch, base)
    HudiTable.open(base).upsert(pa.table({"id": keys, "ts": [1] * 30, "part": ["p0"] * 30}))
    monkeypatch.undo()

    rows = HudiTable.open(base).read(columns=["id", "ts", "_hoodie_file_name"])
    assert sorted(rows.column("id").to_pylist()) == keys and set(rows.column("ts").to_pylist()) == {1}
    assert len({name.split("_")[0] for name in rows.column("_hoodie_file_name").to_pylist()}) == 3
    # the planning's view, whose listing the three merges use (one listing each before, then one
    # for the three)
    assert listed["p0"] == 1


def test_a_process_reads_each_completed_commit_once_for_the_writes_that_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each write looked for the table's schema in the latest commit and for the average record
    size in up to ten recent ones (small commits, a stream's micro-batches, never write enough
    bytes for one to settle it), reading them again at every write: a GET request each on S3.
    A completed instant's file never changes: a process reads each once for those looks (and the
    clean's)."""
    base = str(tmp_path / "t")
    HudiTable.create(base, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                     partition_fields="part", ordering_field="ts", options=OCC)  # fmt: skip
    for i in range(5):
        HudiTable.open(base, options=OCC).upsert(_rows(i), options=OCC)
    read = _counted(monkeypatch, "read_bytes", lambda path: path.rsplit("/", 1)[-1])
    HudiTable.open(base, options=OCC).upsert(_rows(5), options=OCC)
    monkeypatch.undo()

    commits = [f"{i.timestamp}.deltacommit" for i in HudiTable.open(base).timeline.completed_commits()]
    assert len(commits) == 6 and read[commits[-1]] == 0  # (the upsert's own commit, written not read)
    # the commit before it, new to this process's looks: once, for the schema, the sizes and the
    # clean's plan; the others not at all: the clean's plan finds the one before it (the commit
    # leaving the retained window) in the bytes the last write's looks read (before: [1, 1, 1, 2,
    # 2], every write read each for the sizes, the latest for the schema too; then [0, 0, 0, 1, 2],
    # each look reading a file once for itself)
    assert [read[c] for c in commits[:-1]] == [0, 0, 0, 0, 1]
    # every record of the six upserts is there (a key lives once per partition it was written to)
    stored = HudiTable.open(base).read(columns=["id", "part"]).to_pylist()
    written = {(r["id"], r["part"]) for i in range(6) for r in _rows(i).to_pylist()}
    assert len(stored) == len(written) and {(r["id"], r["part"]) for r in stored} == written
