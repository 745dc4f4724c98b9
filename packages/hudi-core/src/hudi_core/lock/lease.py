"""The single-writer lease: in ``single_writer`` mode a writer holds it for the length of each
write (and the table services after it), so a second writer is refused at once instead of
rolling back the first one's instant as a failed write.

The lease is a sequence of files ``.hoodie/.aux/lease/<epoch>`` created exclusively (the only
primitive every store offers atomically: local disk, HDFS, S3 conditional puts). The highest
epoch is the lease. Its holder rewrites it every heartbeat interval and marks it released at
the end; one not rewritten for interval x tolerable misses belongs to a dead writer, and the
next writer takes over by creating the next epoch (exactly one creator wins), then rolls the
dead writer's attempt back like any failed write. Files are never deleted while they could be
the highest, so a slow writer can never mistake an old epoch for a free lease.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

from hudi_core.config.concurrency import ConcurrencyOptions
from hudi_core.errors import WriterBusyError
from hudi_core.lock.heartbeat import MTIME_SLACK_S
from hudi_core.storage.base import Storage

__all__ = ["WriterLease", "check_lease_held", "hold_lease"]

log = logging.getLogger(__name__)

_HOST = socket.gethostname()
#: how often, and how far apart, a refused writer reads the holder's record before naming it
_HOLDER_READS = 50
_HOLDER_READ_PAUSE_S = 0.01


@dataclass(frozen=True)
class _Epoch:
    number: int
    path: str


class WriterLease:
    """One process's hold on a table's lease (see the module doc)."""

    def __init__(self, storage: Storage, meta_path: str, *, interval_s: float, expiry_s: float) -> None:
        self.storage = storage
        self.folder = f"{meta_path.rstrip('/')}/.aux/lease"
        self.interval_s = interval_s
        self.expiry_s = expiry_s
        self.mine: _Epoch | None = None
        self.lost = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._content = json.dumps({
            "host": _HOST, "pid": os.getpid(),
            "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }).encode()  # fmt: skip

    def _epochs(self) -> list[_Epoch]:
        out = [_Epoch(int(f.name), f.path) for f in self.storage.list(self.folder) if f.name.isdigit()]
        return sorted(out, key=lambda e: e.number)

    def acquire(self) -> bool:
        """Take the lease; True when it was taken over from a dead writer. Raises
        :class:`WriterBusyError` when a live writer holds it."""
        epochs = self._epochs()
        top = epochs[-1] if epochs else None
        taken_over = False
        if top is not None:
            state = self._state(top)
            if state == "held":
                raise WriterBusyError(self._busy_message(top))
            taken_over = state == "expired"
        nxt = (top.number + 1) if top else 1
        path = f"{self.folder}/{nxt:010d}"
        if not self.storage.create_if_absent(path, self._content):
            raise WriterBusyError(self._busy_message(_Epoch(nxt, path)))
        newer = [e for e in self._epochs() if e.number > nxt]
        if newer:  # our listing was stale and the epoch we created was already history
            raise WriterBusyError(self._busy_message(newer[-1]))
        self.mine = _Epoch(nxt, path)
        # keep the previous holder's file for the record
        self.storage.delete_files(old.path for old in epochs[:-1])
        if taken_over:
            log.warning("took over the lease of %s from a writer that stopped renewing it", self.folder)
        self._thread = threading.Thread(target=self._renew, name="hudi-writer-lease", daemon=True)
        self._thread.start()
        return taken_over

    def adopt(self, path: str) -> None:
        """Carry on the lease another process of this writer took (the Spark data source
        starts a write in one driver-side worker and commits it in another)."""
        epochs = self._epochs()
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if not epochs or str(epochs[-1].number) != str(int(name)) or self._state(epochs[-1]) == "released":
            raise WriterBusyError(
                f"the single-writer lease {path} this write started under was taken over or released "
                f"meanwhile; the write is abandoned (it will be rolled back)"
            )
        self.mine = epochs[-1]
        self._content = self.storage.read_bytes(self.mine.path)
        self._thread = threading.Thread(target=self._renew, name="hudi-writer-lease", daemon=True)
        self._thread.start()

    def _state(self, epoch: _Epoch) -> str:
        """held, released or expired."""
        try:
            if _released(self.storage.read_bytes(epoch.path)):
                return "released"  # (its age does not matter: no second request for it)
            age = time.time() - self.storage.modified_time(epoch.path)
        except FileNotFoundError:
            return "released"
        return "expired" if age > self.expiry_s + MTIME_SLACK_S else "held"

    def _holder(self, epoch: _Epoch) -> dict[str, object] | None:
        """The record of who holds ``epoch``. A file another writer has just created, or is
        renewing, reads empty for a moment (neither write replaces the file whole), and one two
        epochs old may be deleted meanwhile: then the newest epoch's holder is the one to name."""
        for _ in range(_HOLDER_READS):
            try:
                holder = json.loads(self.storage.read_bytes(epoch.path))
                if isinstance(holder, dict) and "pid" in holder:
                    return holder
            except FileNotFoundError:
                epochs = self._epochs()
                if not epochs:
                    return None
                epoch = epochs[-1]
                continue
            except ValueError:
                pass
            time.sleep(_HOLDER_READ_PAUSE_S)
        return None

    def _busy_message(self, epoch: _Epoch) -> str:
        holder = self._holder(epoch)
        who = (
            "another writer"
            if holder is None
            else f"process {holder.get('pid')} on {holder.get('host')} since {holder.get('since')}"
        )
        return (
            f"the table at {self.folder.rsplit('/.hoodie/', 1)[0]} is being written by {who} "
            f"(single-writer lease {epoch.path}); run one writer at a time, or set "
            f"{ConcurrencyOptions.MODE.key}=optimistic_concurrency_control on every writer"
        )

    def _renew(self) -> None:
        while not self._stop.wait(self.interval_s):
            assert self.mine is not None
            try:
                if any(e.number > self.mine.number for e in self._epochs()):
                    self.lost = True  # we stalled past expiry and were taken over
                    log.error("the single-writer lease %s was taken over by another writer", self.mine.path)
                    return
                if _released(self.storage.read_bytes(self.mine.path)):
                    return  # released by the process that adopted it
                self.storage.write_bytes(self.mine.path, self._content)
            except Exception as e:  # a missed renewal is tolerated; the next one may succeed
                log.warning("lease %s not renewed: %s", self.folder, e)

    def check(self) -> None:
        """Before a commit: raise if another writer took the lease over meanwhile."""
        if self.lost:
            raise WriterBusyError(
                f"the single-writer lease of {self.folder} was taken over while this write stalled "
                "longer than the lease expiry; the write is abandoned (it will be rolled back)"
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.mine is not None and not self.lost:
            released = json.dumps({**json.loads(self._content), "released": True}).encode()
            self.storage.write_bytes(self.mine.path, released)
        self.mine = None


def _released(content: bytes) -> bool:
    try:
        return bool(json.loads(content).get("released"))
    except (ValueError, AttributeError):
        return False  # being rewritten: treat as held, its age decides


# (table meta path) -> (lease, holders in this process): nested and concurrent uses in one
# process (a write, its inline compaction, an async compaction thread) share one hold
_HELD: dict[str, tuple[WriterLease, int]] = {}
_HELD_GUARD = threading.Lock()


@contextmanager
def hold_lease(
    storage: Storage, meta_path: str, *, interval_s: float, expiry_s: float, adopt: str | None = None
) -> Iterator[WriterLease]:
    """Hold the table's single-writer lease for the ``with`` block (re-entrant in a process);
    ``adopt``: the epoch file of a lease another process of this writer took."""
    key = meta_path.rstrip("/")
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            lease, n = held
            _HELD[key] = (lease, n + 1)
        else:
            lease = WriterLease(storage, key, interval_s=interval_s, expiry_s=expiry_s)
            if adopt is not None:
                lease.adopt(adopt)
            else:
                lease.acquire()
            _HELD[key] = (lease, 1)
    try:
        yield lease
    finally:
        with _HELD_GUARD:
            lease, n = _HELD[key]
            if n > 1:
                _HELD[key] = (lease, n - 1)
            else:
                del _HELD[key]
                lease.release()


def check_lease_held(meta_path: str) -> None:
    """Before a single writer's commit: raise if its lease was taken over meanwhile."""
    with _HELD_GUARD:
        held = _HELD.get(meta_path.rstrip("/"))
    if held is not None:
        held[0].check()
