"""Writers sharing a table: lock providers (optimistic concurrency control), instant heartbeats
and the single-writer lease."""

from __future__ import annotations

from hudi_core.lock.heartbeat import Heartbeat, heartbeat_expired
from hudi_core.lock.lease import WriterLease, hold_lease
from hudi_core.lock.providers import (
    FileSystemLockProvider,
    InProcessLockProvider,
    LockProvider,
    NoopLockProvider,
    table_lock,
)

__all__ = [
    "FileSystemLockProvider",
    "Heartbeat",
    "InProcessLockProvider",
    "LockProvider",
    "NoopLockProvider",
    "WriterLease",
    "heartbeat_expired",
    "hold_lease",
    "table_lock",
]
