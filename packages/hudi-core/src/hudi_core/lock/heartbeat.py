"""Heartbeats of write instants, as Hudi keeps them: the empty file ``.hoodie/.heartbeat/<instant>``
rewritten every ``hoodie.client.heartbeat.interval_in_ms`` while the instant's writer lives. A
pending instant whose heartbeat is older than interval x ``tolerable.misses`` (or missing)
belongs to a dead writer: LAZY failed-writes cleaning rolls it back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection

from hudi_core.storage.base import Storage

__all__ = [
    "Heartbeat",
    "delete_heartbeats_of",
    "heartbeat_expired",
    "heartbeat_path",
    "inflight_abandoned",
    "older_than",
]

log = logging.getLogger(__name__)


def heartbeat_path(meta_path: str, instant_time: str) -> str:
    return f"{meta_path.rstrip('/')}/.heartbeat/{instant_time}"


def older_than(storage: Storage, path: str, seconds: float) -> bool | None:
    """Whether ``path`` was last written more than ``seconds`` ago (None: it does not exist)."""
    try:
        return time.time() - storage.modified_time(path) > seconds + MTIME_SLACK_S
    except FileNotFoundError:
        return None


def heartbeat_expired(storage: Storage, meta_path: str, instant_time: str, expiry_s: float) -> bool:
    """True when the instant's writer stopped beating for longer than ``expiry_s`` (a missing
    heartbeat counts as expired, as in Hudi)."""
    return older_than(storage, heartbeat_path(meta_path, instant_time), expiry_s) is not False


def inflight_abandoned(
    storage: Storage, meta_path: str, instant_time: str, inflight_file: str, expiry_s: float
) -> bool:
    """An inflight table service (compaction, clustering) whose runner died: its heartbeat (or,
    when it has none, its inflight file, written just before the heartbeat starts) is older than
    ``expiry_s``."""
    beat = older_than(storage, heartbeat_path(meta_path, instant_time), expiry_s)
    if beat is None:
        beat = older_than(storage, inflight_file, expiry_s)
    return beat is not False


def delete_heartbeats_of(
    storage: Storage, meta_path: str, pending: Callable[[], Collection[str]], expiry_s: float
) -> list[str]:
    """Delete the stale heartbeat files (older than ``expiry_s``) of instants that are no longer
    pending: completed, rolled back or archived. ``pending()`` gives the times of the pending
    instants and is asked only when a heartbeat file is there. Returns the instant times whose
    heartbeat was deleted.

    A writer deletes its heartbeat when its instant completes, but Apache Hudi's timer can renew
    the file while it is being deleted (``Timer.cancel`` does not wait for a running beat), so a
    finished instant's heartbeat may stay behind, after a commit as after a rollback; Hudi
    itself never removes it. Only stale files go, so no live writer's heartbeat is touched: a
    writer beats before its requested instant exists, and instant times of different writers
    can collide (a clean of one and a commit of another in the same millisecond). A pending
    instant's stale heartbeat is the evidence of a dead writer that rollback acts on: kept."""
    folder = f"{meta_path.rstrip('/')}/.heartbeat"
    # each instant's file, or the checksum Hadoop's local file system wrote beside it (the race
    # can leave the checksum alone): the file whose age tells
    beats: dict[str, str] = {}
    checksums: dict[str, str] = {}
    for f in storage.list(folder):
        if f.is_dir:
            continue
        if not f.name.startswith("."):
            beats[f.name] = f.path
        elif f.name.endswith(".crc"):
            checksums[f.name[1:-4]] = f.path
    files = {**checksums, **beats}
    if not files:
        return []
    live = set(pending())
    stale = [
        name
        for name, path in sorted(files.items())
        if name not in live and older_than(storage, path, expiry_s)
    ]
    # (and their checksums); one left behind is deleted by the next writer's look
    for path, e in storage.delete_files(heartbeat_path(meta_path, name) for name in stale).items():
        log.warning("stale heartbeat %s not deleted: %s", path, e)
    return stale


#: S3 reports Last-Modified in whole seconds: a beat written 0.3 s ago can read 1.2 s old
MTIME_SLACK_S = 1.0


class Heartbeat:
    """Beats for one instant from a daemon thread until :meth:`stop` (which deletes the file)."""

    def __init__(self, storage: Storage, meta_path: str, instant_time: str, interval_s: float) -> None:
        self.storage = storage
        self.path = heartbeat_path(meta_path, instant_time)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Heartbeat:
        self.storage.write_bytes(self.path, b"")
        self._thread = threading.Thread(
            target=self._run, name=f"hudi-heartbeat-{self.path[-17:]}", daemon=True
        )
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                # gone: the instant was committed or rolled back by a process that took it over
                # (a Spark data source commits from another worker); beating would revive it
                if not self.storage.exists(self.path):
                    return
                self.storage.write_bytes(self.path, b"")
            except Exception as e:  # a missed beat is tolerated; the next one may succeed
                log.warning("heartbeat %s not renewed: %s", self.path, e)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.storage.discard(self.path)
