"""Two writers on one table: the single-writer lease refuses the second one, optimistic
concurrency control lets both run and fails the later of two that touched the same file group
(or inserted the same key), and a dead writer's instant is rolled back once its heartbeat expired.

The interleavings are made deterministic with two threads of this process: the first writer
is stopped just before its commit until the second has committed (a lock provider shared by
processes behaves the same; the stress test in tests/concurrency runs real processes).
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import LockTimeoutError, WriteConflictError, WriterBusyError
from hudi_core.lock import FileSystemLockProvider
from hudi_core.lock.lease import WriterLease
from hudi_core.storage import storage_for
from hudi_core.write import transaction as transaction_mod

OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.client.heartbeat.interval_in_ms": "1000",
    "hoodie.compact.inline": "false",
}
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}


def _table(tmp_path: Path, table_type: str = "MERGE_ON_READ", **options: str) -> HudiTable:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                             partition_fields="p", ordering_field="ts", options=options)  # fmt: skip
    table.upsert(_rows(["a", "b", "c", "d"], 1, "v1"), options={**OCC, **options})
    return HudiTable.open(table.base_uri)


def _rows(keys: list[str], ts: int, value: str) -> pa.Table:
    return pa.table({"id": keys, "ts": [ts] * len(keys), "v": [value] * len(keys), "p": ["x"] * len(keys)})


def _snapshot(table: HudiTable) -> dict[str, tuple[str, str]]:
    data = HudiTable.open(table.base_uri).read(columns=["_hoodie_commit_time", "id", "v"]).to_pydict()
    assert len(data["id"]) == len(set(data["id"])), f"duplicated keys: {sorted(data['id'])}"
    return {k: (v, t) for t, k, v in zip(data["_hoodie_commit_time"], data["id"], data["v"], strict=True)}


def _pending(table: HudiTable) -> list[str]:
    return [f"{i.timestamp}.{i.action}" for i in HudiTable.open(table.base_uri).timeline.pending()]


def _held_before_commit(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """The first thread to reach a commit waits there (``arrived`` set) until ``go`` is set."""
    arrived, go = threading.Event(), threading.Event()
    real = transaction_mod.WriteTransaction.commit
    first = threading.Lock()

    def commit(self: Any, *args: Any, **kwargs: Any) -> Any:
        if first.acquire(blocking=False):
            arrived.set()
            assert go.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(transaction_mod.WriteTransaction, "commit", commit)
    return arrived, go


def _interleave(
    monkeypatch: pytest.MonkeyPatch, first: Callable[[], Any], second: Callable[[], Any]
) -> tuple[Any, Any]:
    """Run ``first`` up to its commit, all of ``second``, then the rest of ``first``; returns
    each one's result or raised exception."""
    arrived, go = _held_before_commit(monkeypatch)
    out: dict[str, Any] = {}

    def run_first() -> None:
        try:
            out["first"] = first()
        except Exception as e:
            out["first"] = e

    t = threading.Thread(target=run_first)
    t.start()
    assert arrived.wait(30)
    try:
        out["second"] = second()
    except Exception as e:
        out["second"] = e
    go.set()
    t.join(60)
    return out["first"], out["second"]


IN_PROCESS = {"hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}


@pytest.mark.parametrize("options", [{}, BUCKET, IN_PROCESS], ids=["simple", "bucket", "in-process-lock"])
def test_the_later_of_two_writes_to_one_file_group_fails_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, str]
) -> None:
    table = _table(tmp_path, **options)
    opts = {**OCC, **options}
    first, second = _interleave(
        monkeypatch,
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["a"], 2, "first"), options=opts),
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["a"], 3, "second"), options=opts),
    )
    assert isinstance(first, WriteConflictError), first
    assert "conflicts with deltacommit" in str(first) and "nothing of it is visible" in str(first)
    snap = _snapshot(table)
    assert snap["a"] == ("second", second.instant)
    assert {k: v for k, (v, _) in snap.items()} == {"a": "second", "b": "v1", "c": "v1", "d": "v1"}
    assert _pending(table) == []  # the loser was rolled back at once
    rolled = [i for i in HudiTable.open(table.base_uri).timeline if i.action == "rollback"]
    assert len(rolled) == 1
    assert not os.listdir(tmp_path / "t" / ".hoodie" / ".heartbeat")


def test_writes_to_different_file_groups_both_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path, **BUCKET)
    opts = {**OCC, **BUCKET}
    # keys whose buckets differ (BUCKET hashes the key: pick two that land apart)
    from hudi_core.write.index import BucketIndex

    index = BucketIndex(4, ("id",), ("id",))
    keys = [f"k{i}" for i in range(40)]
    buckets = list(index.bucket_ids(pa.array(keys)))
    k1 = keys[0]
    k2 = next(k for k, b in zip(keys, buckets, strict=True) if b != buckets[0])
    first, second = _interleave(
        monkeypatch,
        lambda: HudiTable.open(table.base_uri).upsert(_rows([k1], 2, "first"), options=opts),
        lambda: HudiTable.open(table.base_uri).upsert(_rows([k2], 2, "second"), options=opts),
    )
    snap = _snapshot(table)
    assert snap[k1] == ("first", first.instant)
    assert snap[k2] == ("second", second.instant)
    assert first.instant < second.instant  # instants are unique and ordered by their start
    assert _pending(table) == []


def test_two_writers_inserting_one_new_key_do_not_duplicate_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hudi's file-group check alone lets both commit (each makes its own new file group)."""
    table = _table(tmp_path, **{"hoodie.parquet.small.file.limit": "0"})
    opts = {**OCC, "hoodie.parquet.small.file.limit": "0"}
    first, second = _interleave(
        monkeypatch,
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["new"], 2, "first"), options=opts),
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["new"], 2, "second"), options=opts),
    )
    assert isinstance(first, WriteConflictError) and "both inserted the key 'new'" in str(first)
    assert _snapshot(table)["new"] == ("second", second.instant)
    assert _pending(table) == []


def test_a_dead_writers_instant_is_rolled_back_once_its_heartbeat_expired(tmp_path: Path) -> None:
    table = _table(tmp_path)
    # a writer that died after writing its files: pending instant, heartbeat left behind
    import hudi_core.write.transaction as tx

    txn = tx.WriteTransaction(table, table.write_config(OCC))
    dead = txn.start("upsert").timestamp
    txn._heartbeat._stop.set()  # the process "dies": no more beats, the file stays
    txn._heartbeat = None
    beat = tmp_path / "t" / ".hoodie" / ".heartbeat" / dead
    assert beat.exists()
    # Apache Hudi's writer (Hadoop's local file system) keeps a checksum beside it
    crc = beat.with_name(f".{dead}.crc")
    crc.write_bytes(b"crc\x00\x00\x02\x00")

    HudiTable.open(table.base_uri).upsert(_rows(["b"], 2, "live"), options=OCC)
    assert any(p.startswith(dead) for p in _pending(table))  # fresh heartbeat: left alone

    old = time.time() - 10
    os.utime(beat, (old, old))
    HudiTable.open(table.base_uri).upsert(_rows(["c"], 2, "later"), options=OCC)
    assert _pending(table) == []
    assert not beat.exists() and not crc.exists()
    timeline = HudiTable.open(table.base_uri).timeline
    assert dead not in [i.timestamp for i in timeline if i.action == "deltacommit"]
    assert {k: v for k, (v, _) in _snapshot(table).items()} == {
        "a": "v1",
        "b": "live",
        "c": "later",
        "d": "v1",
    }


def test_a_stale_heartbeat_left_for_a_finished_instant_is_deleted_by_the_next_writer(tmp_path: Path) -> None:
    # Apache Hudi's heartbeat timer can renew the file while its writer deletes it at commit
    table = _table(tmp_path)
    done = [i.timestamp for i in table.timeline.completed() if i.action == "deltacommit"][-1]
    folder = tmp_path / "t" / ".hoodie" / ".heartbeat"
    (folder / done).write_bytes(b"")
    (folder / f".{done}.crc").write_bytes(b"crc\x00\x00\x02\x00")
    import hudi_core.write.transaction as tx

    live = tx.WriteTransaction(table, table.write_config(OCC))
    running = live.start("upsert").timestamp  # a writer still at work: its heartbeat beats on
    try:
        # not stale yet (instant times of two writers can collide): left alone
        HudiTable.open(table.base_uri).upsert(_rows(["b"], 2, "next"), options=OCC)
        assert sorted(os.listdir(folder)) == sorted([f".{done}.crc", done, running])
        old = time.time() - 10
        os.utime(folder / done, (old, old))
        # the race can leave Hadoop's checksum file alone
        timeline = HudiTable.open(table.base_uri).timeline
        second = [i.timestamp for i in timeline.completed() if i.action == "deltacommit"][-1]
        orphan = folder / f".{second}.crc"
        orphan.write_bytes(b"crc\x00\x00\x02\x00")
        os.utime(orphan, (old, old))
        # and a rolled-back (or archived) instant's: no longer on the active timeline at all
        gone = folder / f".{int(done) - 1}.crc"
        gone.write_bytes(b"crc\x00\x00\x02\x00")
        os.utime(gone, (old, old))
        HudiTable.open(table.base_uri).upsert(_rows(["c"], 2, "later"), options=OCC)
        assert sorted(os.listdir(folder)) == [running]
    finally:
        live.abort()
    assert {k: v for k, (v, _) in _snapshot(table).items()} == {
        "a": "v1",
        "b": "next",
        "c": "later",
        "d": "v1",
    }


def _fake_lease(table: HudiTable, *, pid: int, age_s: float = 0.0) -> Path:
    folder = Path(table.base_uri) / ".hoodie" / ".aux" / "lease"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{1 + max((int(n) for n in os.listdir(folder)), default=0):010d}"
    path.write_text(json.dumps({"host": "elsewhere", "pid": pid, "since": "2026-11-25T00:00:00+00:00"}))
    if age_s:
        old = time.time() - age_s
        os.utime(path, (old, old))
    return path


def test_single_writer_mode_refuses_a_second_writer_and_takes_over_a_dead_one(tmp_path: Path) -> None:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts")  # fmt: skip
    opts = {"hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.compact.inline": "false"}
    table.upsert(_rows(["a", "b"], 1, "v1"), options=opts)
    # the other writer started an instant, then holds the lease (renewed: fresh)
    from hudi_core.write.transaction import WriteTransaction, writer_guard

    with writer_guard(table, table.write_config(opts)):
        dead = WriteTransaction(table, table.write_config(opts)).start("upsert").timestamp
    lease = _fake_lease(table, pid=4242)
    with pytest.raises(WriterBusyError) as refused:
        HudiTable.open(table.base_uri).upsert(_rows(["a"], 2, "second"), options=opts)
    message = str(refused.value)
    assert "process 4242 on elsewhere" in message
    assert "hoodie.write.concurrency.mode=optimistic_concurrency_control" in message
    assert "\n" not in message
    assert any(p.startswith(dead) for p in _pending(table))  # nothing touched

    old = time.time() - 5  # not renewed for longer than 1 s x 2 misses: its holder died
    os.utime(lease, (old, old))
    result = HudiTable.open(table.base_uri).upsert(_rows(["a"], 3, "third"), options=opts)
    assert _pending(table) == []  # the dead writer's attempt was rolled back
    assert _snapshot(table)["a"] == ("third", result.instant)
    n = int(lease.name)
    assert sorted(os.listdir(lease.parent)) == [f"{n:010d}", f"{n + 1:010d}"]  # older epochs deleted
    assert json.loads((lease.parent / f"{n + 1:010d}").read_text())["released"] is True
    # released: the next writer goes straight in
    HudiTable.open(table.base_uri).upsert(_rows(["b"], 4, "fourth"), options=opts)
    assert sorted(os.listdir(lease.parent)) == [f"{n + 1:010d}", f"{n + 2:010d}"]


def test_a_refusal_names_a_holder_whose_lease_file_is_still_being_written(tmp_path: Path) -> None:
    """The writer that won the race for the next epoch has created its file but not yet written
    its record (the create and the write are two steps): the refused writer waits for the record
    instead of naming "another writer"."""
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts")  # fmt: skip
    folder = Path(table.base_uri) / ".hoodie" / ".aux" / "lease"
    folder.mkdir(parents=True)
    lease = folder / f"{1:010d}"
    lease.write_bytes(b"")
    record = json.dumps({"host": "elsewhere", "pid": 4343, "since": "2026-11-27T00:00:00+00:00"})
    later = threading.Timer(0.2, lambda: lease.write_text(record))
    later.start()
    try:
        with pytest.raises(WriterBusyError, match="process 4343 on elsewhere"):
            WriterLease(storage_for(table.base_uri), table.meta_path, interval_s=1.0, expiry_s=2.0).acquire()
    finally:
        later.join()
    assert os.listdir(folder) == [lease.name]  # refused: no epoch of its own


def test_filesystem_lock_is_exclusive_and_names_its_holder(tmp_path: Path) -> None:
    storage = storage_for(str(tmp_path))
    opts = {"hoodie.write.lock.wait_time_ms": "300"}
    one = FileSystemLockProvider(storage, str(tmp_path), opts)
    two = FileSystemLockProvider(storage, str(tmp_path), opts)
    one.acquire()
    assert (tmp_path / ".hoodie" / "lock").exists()  # Hudi's FileSystemBasedLockProvider file
    with pytest.raises(LockTimeoutError, match=f"process {os.getpid()}"):
        two.acquire()
    one.release()
    two.acquire()
    two.release()
    assert not (tmp_path / ".hoodie" / "lock").exists()


def test_the_filesystem_lock_refuses_a_storage_that_cannot_create_a_file_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generic fsspec storage (gs://, abfs://, viewfs://) writes a file whether or not it
    exists: two writers would both take the lock. An OCC write there is refused before it writes
    anything, and the table keeps its rows."""
    from hudi_core.errors import ConfigError
    from hudi_core.lock import InProcessLockProvider
    from hudi_core.storage import FsspecStorage
    from hudi_core.table import meta_client

    generic = FsspecStorage(f"file://{tmp_path}")
    assert not generic.atomic_create
    with pytest.raises(ConfigError, match="creates files exclusively"):
        FileSystemLockProvider(generic, str(tmp_path), OCC)
    in_process = InProcessLockProvider(generic, str(tmp_path), OCC)  # threads of one process: no file
    in_process.acquire()
    in_process.release()

    table = _table(tmp_path)
    before = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    monkeypatch.setattr(meta_client, "storage_for", lambda uri, options=None: FsspecStorage(uri))
    with pytest.raises(ConfigError, match=r"hoodie\.write\.lock\.provider=in-process"):
        HudiTable.open(table.base_uri).upsert(_rows(["a", "e"], 2, "v2"), options=OCC)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == before
    monkeypatch.undo()
    assert _snapshot(HudiTable.open(table.base_uri)) == _snapshot(table)


def test_a_writer_waiting_on_the_lock_looks_at_its_holder_once_a_second(tmp_path: Path) -> None:
    """Each look is two requests on S3 (the lock file's age and content): four writers waiting
    on one lock sent three requests a try instead of one."""
    storage = storage_for(str(tmp_path))
    tries, looks = [], []

    class Counted(FileSystemLockProvider):
        def try_acquire(self) -> bool:
            tries.append(time.monotonic())
            return super().try_acquire()

        def _abandoned(self) -> bytes | None:
            looks.append(time.monotonic())
            return super()._abandoned()

    holder = FileSystemLockProvider(storage, str(tmp_path), {})
    holder.acquire()
    waiter = Counted(storage, str(tmp_path), {"hoodie.write.lock.wait_time_ms": "2500"})
    with pytest.raises(LockTimeoutError):
        waiter.acquire()
    holder.release()
    assert len(tries) >= 6  # its pauses start at 5 ms and double
    assert tries[0] <= looks[0] < tries[1]  # the first failed try looks at once
    # then once a second: at 0, 1 and 2 s of the 2.5 s wait (a loaded box stretches the wait, not
    # the pace: one make test run beside other work looked at 0, 1.3, 2.4 and 3.9 s)
    assert len(looks) <= 1 + (tries[-1] - tries[0]) / 0.9
    assert all(b - a >= 0.9 for a, b in itertools.pairwise(looks))


def _dead_holders_lock(table: Path) -> Path:
    """``.hoodie/lock`` as a process of this host that has exited left it, 5 s ago."""
    import socket
    import subprocess
    import sys

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    lock = table / ".hoodie" / "lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"owner": {"host": socket.gethostname(), "pid": int(gone.stdout)}}))
    old = time.time() - 5
    os.utime(lock, (old, old))
    return lock


def test_a_lock_left_by_a_dead_process_of_this_host_is_broken(tmp_path: Path) -> None:
    lock = _dead_holders_lock(tmp_path)
    provider = FileSystemLockProvider(
        storage_for(str(tmp_path)), str(tmp_path), {"hoodie.write.lock.wait_time_ms": "5000"}
    )
    provider.acquire()
    assert json.loads(lock.read_text())["owner"]["pid"] == os.getpid()
    provider.release()


def test_two_writers_that_find_one_dead_lock_break_it_once(tmp_path: Path) -> None:
    """Both judge the dead holder's lock abandoned; the first breaks it and takes the lock while
    the second stalls. The second must not then delete the first one's lock (two holders)."""
    lock = _dead_holders_lock(tmp_path)
    storage = storage_for(str(tmp_path))
    first = FileSystemLockProvider(storage, str(tmp_path), {"hoodie.write.lock.wait_time_ms": "5000"})

    class Stalls(FileSystemLockProvider):
        def _abandoned(self) -> bytes | None:
            dead = super()._abandoned()
            if dead is not None and not first._owned:
                first.acquire()  # meanwhile
            return dead

    second = Stalls(storage, str(tmp_path), {"hoodie.write.lock.wait_time_ms": "1500"})
    with pytest.raises(LockTimeoutError):
        second.acquire()
    assert first._owned
    assert json.loads(lock.read_text())["owner"]["pid"] == os.getpid()  # the first one's lock
    first.release()
    second.acquire()  # and once it is released, the lock is the second one's to take
    second.release()
    assert not lock.exists()


def test_a_writer_that_died_breaking_a_dead_lock_does_not_block_the_next(tmp_path: Path) -> None:
    """A claim to break the lock (``.hoodie/.lock-broken/<digest>.<n>``) stops the other writers
    from breaking it too while it is fresh; one 30 s old on a lock still there is a dead breaker's."""
    import hashlib

    lock = _dead_holders_lock(tmp_path)
    claim = tmp_path / ".hoodie" / ".lock-broken" / f"{hashlib.sha256(lock.read_bytes()).hexdigest()[:32]}.0"
    claim.parent.mkdir()
    claim.write_text("{}")
    storage = storage_for(str(tmp_path))
    with pytest.raises(LockTimeoutError):  # being broken by a live writer
        FileSystemLockProvider(storage, str(tmp_path), {"hoodie.write.lock.wait_time_ms": "1200"}).acquire()
    old = time.time() - 31
    os.utime(claim, (old, old))
    provider = FileSystemLockProvider(storage, str(tmp_path), {"hoodie.write.lock.wait_time_ms": "5000"})
    provider.acquire()
    assert json.loads(lock.read_text())["owner"]["pid"] == os.getpid()
    assert sorted(p.name for p in claim.parent.iterdir()) == [claim.name, claim.name[:-1] + "1"]
    provider.release()


def test_a_write_that_lost_a_conflict_is_retried_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(tmp_path)
    retry = {**OCC, "hoodie.write.num.retries.on.conflict.failures": "1"}
    first, second = _interleave(
        monkeypatch,
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["a"], 4, "first"), options=retry),
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["a"], 3, "second"), options=OCC),
    )
    assert first.instant > second.instant  # the retry is a new instant, after the winner
    assert _snapshot(table)["a"] == ("first", first.instant)
    timeline = HudiTable.open(table.base_uri).timeline
    assert [i.action for i in timeline if i.action == "rollback"] == ["rollback"]  # the lost attempt
    assert _pending(table) == []


def test_a_rolled_back_writes_log_blocks_stay_cancelled_once_it_is_older_than_the_timeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loser's blocks sit before the winner's in the log, its rollback block after both.
    Hudi's scanner drops every earlier block of the rollback's target; readers must too, or the
    loser comes back once archival moves the timeline's start past it (and the instant then
    reads as archived, hence committed)."""
    from hudi_core.fs_view import CommitSet, FileSystemView
    from hudi_core.read.merge import valid_log_blocks

    table = _table(tmp_path, **BUCKET)
    opts = {**OCC, **BUCKET}
    first, second = _interleave(
        monkeypatch,
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["a"], 2, "first"), options=opts),
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["a"], 3, "second"), options=opts),
    )
    assert isinstance(first, WriteConflictError)
    loser = str(first).split()[1]
    fresh = HudiTable.open(table.base_uri)
    (group,) = [
        s for s in FileSystemView(fresh).latest_file_slices() if s.log_files and "a" in _keys(fresh, s)
    ]
    # as if archived: every instant up to the winner is before the active timeline
    archived = CommitSet(frozenset(), frozenset(), first=second.instant + "1")
    blocks = valid_log_blocks(fresh, group, as_of=None, visible=archived)
    assert loser not in {b.instant_time for b in blocks}
    assert second.instant in {b.instant_time for b in blocks}


def _keys(table: HudiTable, file_slice: Any) -> set[str]:
    from hudi_core.log.reader import read_log_file

    out: set[str] = set()
    for lf in file_slice.log_files:
        for block in read_log_file(table.storage, lf.path):
            if block.is_data:
                out |= set(block.records().column("id").to_pylist())
    return out


@pytest.mark.parametrize(("mode", "fails_in"), [("occ", "commit"), ("occ", "handle"), ("single", "commit")])
def test_a_write_rolled_back_by_another_while_it_stalled_deletes_what_it_wrote_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, fails_in: str
) -> None:
    """Another writer took this one for dead and rolled its instant back while its handles ran
    (as after a stall past the heartbeat or lease expiry). The handles then finish, writing base
    and log files of an instant no longer on the timeline: the write deletes them, with its
    markers, and raises WriteConflictError; the table is as before, also once the instant is
    older than the timeline's start."""
    from hudi_core.client import write_client as client_mod
    from hudi_core.log.reader import first_block_instant
    from hudi_core.write.rollback import rollback_instant

    opts = OCC if mode == "occ" else {"hoodie.compact.inline": "false"}
    table = _table(tmp_path)
    before = _snapshot(table)
    real = client_mod._write_task
    once, seen = threading.Lock(), {}

    def task(args: Any) -> Any:
        ctx = args[0]
        first = once.acquire(blocking=False)
        if first:  # the first task finds its instant rolled back under it
            seen["instant"] = ctx.instant
            rollback_instant(HudiTable.open(table.base_uri), ctx.instant)
        out = real(args)
        if first and fails_in == "handle":
            raise FileNotFoundError("a file of the rolled-back instant vanished under the handle")
        return out

    monkeypatch.setattr(client_mod, "_write_task", task)
    rows = _rows(["a", "b", "new1", "new2"], 2, "stalled")  # updates (a log file) and inserts (a base file)
    with pytest.raises(WriteConflictError, match="rolled back by another writer"):
        HudiTable.open(table.base_uri).upsert(
            rows, options={**opts, "hoodie.write.num.retries.on.conflict.failures": "0"}
        )
    instant = seen["instant"]
    assert _snapshot(table) == before
    data_files = [p for p in (tmp_path / "t" / "x").iterdir() if not p.name.startswith(".")]
    assert not [p.name for p in data_files if p.suffix == ".parquet" and instant in p.name]
    assert not [
        p.name
        for p in data_files
        if ".log." in p.name and first_block_instant(table.storage, str(p)) == instant
    ]
    assert not (tmp_path / "t" / ".hoodie" / ".temp" / instant).exists()
    assert not (tmp_path / "t" / ".hoodie" / ".heartbeat" / instant).exists()
    assert _pending(table) == []
    HudiTable.open(table.base_uri).upsert(_rows(["c"], 3, "after"), options=opts)  # the table goes on
    assert _snapshot(table)["c"][0] == "after"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_write_racing_a_clustering_of_its_file_group_fails_and_nothing_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_type: str
) -> None:
    """An update that looked its keys up before a clustering was scheduled over their file
    group, and reaches its commit after the clustering completed: had it committed, the
    clustering's replacecommit would hide it. It fails its conflict check (the plan was
    scheduled while it ran, as Hudi's resolution counts pending and completed clusterings)."""
    table = _table(tmp_path, table_type)
    table.upsert(_rows(["e"], 1, "v1"), options={**OCC, "hoodie.parquet.small.file.limit": "0"})
    first, second = _interleave(
        monkeypatch,
        lambda: HudiTable.open(table.base_uri).upsert(_rows(["a"], 2, "lost?"), options=OCC),
        lambda: HudiTable.open(table.base_uri).cluster(OCC),
    )
    assert isinstance(first, WriteConflictError), first
    assert len(second) == 1 and sum(map(len, second[0].replaced_file_ids.values())) == 2
    snap = _snapshot(table)
    assert {k: v for k, (v, _) in snap.items()} == {"a": "v1", "b": "v1", "c": "v1", "d": "v1", "e": "v1"}
    assert _pending(table) == []
    # the update again, now in the clustering's file group
    HudiTable.open(table.base_uri).upsert(_rows(["a"], 3, "after"), options=OCC)
    assert _snapshot(table)["a"][0] == "after"
