"""Lock providers: serialise writers that share a table (optimistic concurrency control)."""

from __future__ import annotations

import os
import socket
import time
from types import TracebackType
from typing import Any

from hudi_core.errors import CommitConflictError
from hudi_core.storage.base import Storage

__all__ = ["FileSystemLockProvider", "NoopLockProvider"]


class NoopLockProvider:
    """Single-writer tables (the default): locking does nothing."""

    def __init__(self, storage: Storage | None = None, base_path: str = "", options: Any = None) -> None:
        pass

    def acquire(self) -> None:
        return None

    def release(self) -> None:
        return None

    def __enter__(self) -> NoopLockProvider:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class FileSystemLockProvider:
    """A lock file under ``.hoodie/lock`` created with the storage's exclusive create.

    Safe where ``create_if_absent`` is atomic (local disk, S3 conditional puts)."""

    def __init__(
        self, storage: Storage, base_path: str, options: Any = None, *, timeout_s: float = 60.0
    ) -> None:
        self.storage = storage
        self.path = f"{base_path.rstrip('/')}/.hoodie/lock"
        self.timeout_s = timeout_s
        if options is not None and hasattr(options, "get"):
            raw = options.get("hoodie.write.lock.wait_time_ms")
            if raw:
                self.timeout_s = int(raw) / 1000.0

    def acquire(self) -> None:
        owner = f"{socket.gethostname()}:{os.getpid()}:{time.time()}".encode()
        deadline = time.monotonic() + self.timeout_s
        delay = 0.01
        while not self.storage.create_if_absent(self.path, owner):
            if time.monotonic() > deadline:
                raise CommitConflictError(
                    f"could not acquire the table lock {self.path} within {self.timeout_s:.0f}s; "
                    "another writer holds it (delete the file if that writer died)"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def release(self) -> None:
        self.storage.delete(self.path)

    def __enter__(self) -> FileSystemLockProvider:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
