"""Lock providers: the table lock that optimistic concurrency control holds around a commit's
conflict check and timeline transition (and around scheduling table services).

``filesystem`` is Hudi's ``FileSystemBasedLockProvider``: the lock is the file
``<hoodie.write.lock.filesystem.path or .hoodie>/lock``, created exclusively and deleted on
release, so Apache Hudi writers configured with that provider and our writers exclude each other.
It is safe where the storage creates files atomically: local disk, HDFS, S3 (conditional puts);
on a storage that does not (:attr:`~hudi_core.storage.base.Storage.atomic_create` False: the
generic fsspec storage of ``gs://``, ``abfs://``, ``viewfs://``) two writers could both create the
lock and one's commit be lost, so the provider refuses such a storage.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import socket
import threading
import time
from datetime import datetime, timezone
from types import TracebackType
from typing import TYPE_CHECKING, Any

from hudi_core.config.concurrency import ConcurrencyOptions, ConcurrencySettings
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError, LockTimeoutError
from hudi_core.storage.base import Storage

__all__ = [
    "FileSystemLockProvider",
    "InProcessLockProvider",
    "LockProvider",
    "NoopLockProvider",
    "table_lock",
]

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

_HOST = socket.gethostname()
#: how often a writer waiting on a lock file looks whether its holder is gone
_LOOK_INTERVAL_S = 1.0
#: a claim to break an abandoned lock this old, with that lock still there, is a breaker that died
_BREAK_CLAIM_S = 30.0
#: claims to break a lock are deleted by a later breaker once this old
_STALE_CLAIM_S = 86_400.0


class LockProvider:
    """``acquire`` waits up to ``hoodie.write.lock.wait_time_ms`` then raises
    :class:`LockTimeoutError`; ``release`` lets the next writer in. Used as a context manager."""

    def __init__(self, storage: Storage | None, base_path: str, options: Any = None) -> None:
        cfg = options if isinstance(options, HoodieConfig) else HoodieConfig(dict(options or {}))
        self.base_path = base_path.rstrip("/")
        self.wait_s = int(cfg.get(ConcurrencyOptions.LOCK_WAIT_MS)) / 1000.0
        self.max_pause_s = max(0.01, int(cfg.get(ConcurrencyOptions.LOCK_RETRY_WAIT_MS)) / 1000.0)

    def try_acquire(self) -> bool:
        raise NotImplementedError

    def holder(self) -> str:
        """Who holds the lock now, for error messages."""
        return "another writer"

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_s
        pause = 0.005
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise LockTimeoutError(
                    f"the table lock of {self.base_path} was not acquired within {self.wait_s:g} s: "
                    f"{self.holder()} holds it ({ConcurrencyOptions.LOCK_WAIT_MS.key} sets the wait)"
                )
            time.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, self.max_pause_s)

    def release(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> LockProvider:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class NoopLockProvider(LockProvider):
    """Locking that does nothing (a single writer needs none: it holds the table's lease)."""

    def try_acquire(self) -> bool:
        return True

    def release(self) -> None:
        return None


class InProcessLockProvider(LockProvider):
    """Hudi's ``InProcessLockProvider``: one lock per table path shared by every writer of this
    process (threads of one application); it does not exclude other processes."""

    _locks: dict[str, threading.Lock] = {}
    _guard = threading.Lock()

    def __init__(self, storage: Storage | None, base_path: str, options: Any = None) -> None:
        super().__init__(storage, base_path, options)
        with self._guard:
            self._lock = self._locks.setdefault(self.base_path, threading.Lock())

    def try_acquire(self) -> bool:
        return self._lock.acquire(blocking=False)

    def acquire(self) -> None:
        if not self._lock.acquire(timeout=self.wait_s):
            raise LockTimeoutError(
                f"the in-process lock of {self.base_path} was not acquired within {self.wait_s:g} s"
            )

    def release(self) -> None:
        self._lock.release()


class FileSystemLockProvider(LockProvider):
    """Hudi's ``FileSystemBasedLockProvider``: the file ``.hoodie/lock`` (or
    ``hoodie.write.lock.filesystem.path``/lock), created exclusively, deleted on release.

    A lock left by a dead writer is broken when it is older than
    ``hoodie.write.lock.filesystem.expire`` minutes (0, the default, never) or, sooner, when
    its holder was a process of this host that no longer runs; of the writers waiting on it,
    exactly one deletes it (Hudi's provider lets each of them delete it, and one that does so
    late deletes the lock another has just taken)."""

    def __init__(self, storage: Storage, base_path: str, options: Any = None) -> None:
        super().__init__(storage, base_path, options)
        if not storage.atomic_create:
            raise ConfigError(
                f"hoodie.write.lock.provider=filesystem needs a storage that creates files exclusively, "
                f"and {storage!r} (the table at {base_path}) does not: two writers could both take the "
                "lock and one's commit be lost. Write from one process at a time, or from threads of "
                "one process with hoodie.write.lock.provider=in-process"
            )
        cfg = options if isinstance(options, HoodieConfig) else HoodieConfig(dict(options or {}))
        folder = cfg.get_str(ConcurrencyOptions.LOCK_FILESYSTEM_PATH) or f"{self.base_path}/.hoodie"
        self.storage = storage
        self.path = f"{folder.rstrip('/')}/lock"
        self.expire_s = int(cfg.get(ConcurrencyOptions.LOCK_FILESYSTEM_EXPIRE_MIN)) * 60.0
        self._owned = False
        self._next_look = 0.0  # when a failed try may next look whether the holder is gone

    def try_acquire(self) -> bool:
        # Hudi's LockInfo fields, plus who we are (Hudi only logs the content)
        info = {
            "lockCreateTime": datetime.now(timezone.utc).strftime("%Y%m%d%H%M%S%f")[:17],
            "lockThreadName": threading.current_thread().name,
            "lockStacksInfo": [],
            "owner": {"host": _HOST, "pid": os.getpid()},
        }
        if self.storage.create_if_absent(self.path, json.dumps(info).encode()):
            self._owned = True
            return True
        # Looking costs two requests (the file's age and its content) and can only find a lock
        # older than a second abandoned: once a second, not on every try of a waiting writer.
        now = time.monotonic()
        if now >= self._next_look:
            self._next_look = now + _LOOK_INTERVAL_S
            dead = self._abandoned()
            if dead is not None:
                self._break(dead)  # the next try creates it (or loses to another writer)
        return False

    def _abandoned(self) -> bytes | None:
        """The lock file's content when its holder is gone, else None."""
        try:
            age = time.time() - self.storage.modified_time(self.path)
            content = self.storage.read_bytes(self.path)
        except FileNotFoundError:
            return None
        if self.expire_s > 0 and age > self.expire_s:
            return content
        owner = _owner_of(content)
        # a holder on this host whose process is gone died holding the lock (a just-created
        # file is left alone: its content may not be readable yet on every store)
        if owner is not None and owner[0] == _HOST and age > 1.0 and not _pid_alive(owner[1]):
            return content
        return None

    def _break(self, dead: bytes) -> None:
        """Delete the abandoned lock ``dead``, once. Every writer waiting on it finds it
        abandoned; one that deleted it after another had broken it and taken the lock would
        delete the live lock (two holders). So a breaker first claims that lock's breaking, by
        creating ``.lock-broken/<its content's digest>.<n>`` exclusively: one claimant per lock
        file. A claim older than :data:`_BREAK_CLAIM_S` on a lock still there is a breaker that
        died in between, and the next claim (``n + 1``) is free to take."""
        digest = hashlib.sha256(dead).hexdigest()[:32]
        folder = f"{self.path.rsplit('/', 1)[0]}/.lock-broken"
        now = time.time()
        listed = self.storage.list(folder)
        claims = {int(f.name.rsplit(".", 1)[1]): f for f in listed if f.name.startswith(f"{digest}.")}
        n = max(claims, default=-1) + 1
        if claims and not claims[n - 1].stale(_BREAK_CLAIM_S, now):
            return  # another writer is breaking it
        owner = json.dumps({"host": _HOST, "pid": os.getpid()}).encode()
        if not self.storage.create_if_absent(f"{folder}/{digest}.{n}", owner):
            return
        try:
            if self.storage.read_bytes(self.path) != dead:
                return  # broken and taken meanwhile by the holder of an older claim
        except FileNotFoundError:
            return
        self.storage.discard(self.path)
        # the claims on locks broken long ago (each one a crash) go; a recent one may still be read
        self.storage.delete_files(f.path for f in listed if f.stale(_STALE_CLAIM_S, now))

    def holder(self) -> str:
        try:
            owner = _owner_of(self.storage.read_bytes(self.path))
        except FileNotFoundError:
            return "another writer"
        where = f"process {owner[1]} on {owner[0]}" if owner else "a writer"
        return f"{where} (lock file {self.path})"

    def release(self) -> None:
        if self._owned:
            self._owned = False
            self.storage.discard(self.path)


def _owner_of(content: bytes) -> tuple[str, int] | None:
    try:
        owner = json.loads(content.decode("utf-8")).get("owner") or {}
        return str(owner["host"]), int(owner["pid"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def table_lock(table: MetaClient, config: HoodieConfig | Any = None) -> LockProvider:
    """The lock to hold around timeline changes: the configured provider under optimistic
    concurrency control, nothing for a single writer (its lease already excludes others)."""
    cfg = config if isinstance(config, HoodieConfig) else table.write_config(dict(config or {}))
    s = ConcurrencySettings.of(cfg)
    if not s.occ:
        return NoopLockProvider(table.storage, table.base_uri, cfg)
    from hudi_core.plugins.manager import get_plugin_manager

    provider: LockProvider = get_plugin_manager().create(
        "lock_provider", s.lock_provider, table.storage, table.base_uri, cfg
    )
    return provider
