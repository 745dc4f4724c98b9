"""Several writers on one table: the concurrency mode, the lock, heartbeats (Hudi's keys).

``single_writer`` (the default) lets one writer in at a time: it holds the table's lease for
the length of each write and a second writer is refused at once. ``optimistic_concurrency_control``
lets writers run side by side; each commit is checked for conflicts under the table lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_core.config.property import ConfigProperty, HoodieConfig
from hudi_core.errors import ConfigError

__all__ = ["ConcurrencyOptions", "ConcurrencySettings"]


def _o(key: str, default: object, doc: str, *aliases: str, since: str = "0.8.0") -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, since=since, aliases=aliases, group="concurrency")


class ConcurrencyOptions:
    MODE = _o(
        "hoodie.write.concurrency.mode",
        "SINGLE_WRITER",
        "SINGLE_WRITER: one writer at a time (a second one is refused while the first holds the "
        "table's lease); OPTIMISTIC_CONCURRENCY_CONTROL: writers run side by side and a commit "
        "that touched the same file groups as a concurrent one fails.",
    )
    FAILED_WRITES_POLICY = _o(
        "hoodie.cleaner.policy.failed.writes",
        "EAGER",
        "EAGER: a new write first rolls back every pending write instant (single writer). LAZY: "
        "only instants whose heartbeat expired are rolled back (forced under optimistic "
        "concurrency control).",
    )
    LOCK_PROVIDER = _o(
        "hoodie.write.lock.provider",
        None,
        "Lock provider plugin under optimistic concurrency control: filesystem (the default; "
        "Hudi's FileSystemBasedLockProvider: an exclusively created .hoodie/lock, on local disk, "
        "HDFS and S3; refused on the generic fsspec storage, which cannot create a file "
        "exclusively) or in-process.",
    )
    LOCK_FILESYSTEM_PATH = _o(
        "hoodie.write.lock.filesystem.path",
        None,
        "Directory of the filesystem lock's 'lock' file; default the table's .hoodie folder.",
    )
    LOCK_FILESYSTEM_EXPIRE_MIN = _o(
        "hoodie.write.lock.filesystem.expire",
        0,
        "Minutes after which a filesystem lock left by a dead writer is broken (0: never; its "
        "file must then be deleted by hand).",
        since="0.12.0",
    )
    LOCK_WAIT_MS = _o(
        "hoodie.write.lock.wait_time_ms",
        60000,
        "How long one attempt to take the lock waits.",
    )
    LOCK_NUM_RETRIES = _o("hoodie.write.lock.num_retries", 15, "Attempts to take the lock.")
    LOCK_RETRY_WAIT_MS = _o(
        "hoodie.write.lock.wait_time_ms_between_retry",
        1000,
        "Longest pause between two tries to take the lock (tries start 10 ms apart and back off).",
    )
    RETRIES_ON_CONFLICT = _o(
        "hoodie.write.num.retries.on.conflict.failures",
        0,
        "Optimistic concurrency control: how many times a write that lost a conflict is run "
        "again (as a new instant, against the table as it is then) before WriteConflictError.",
        since="0.14.0",
    )
    HEARTBEAT_INTERVAL_MS = _o(
        "hoodie.client.heartbeat.interval_in_ms",
        60000,
        "How often a writer renews the heartbeat of its instant (and its single-writer lease).",
        since="0.7.0",
    )
    HEARTBEAT_TOLERABLE_MISSES = _o(
        "hoodie.client.heartbeat.tolerable.misses",
        2,
        "A heartbeat (or lease) not renewed for interval x misses belongs to a dead writer.",
        since="0.7.0",
    )


_MODES = {
    "SINGLE_WRITER": "SINGLE_WRITER",
    "OPTIMISTIC_CONCURRENCY_CONTROL": "OPTIMISTIC_CONCURRENCY_CONTROL",
    "OCC": "OPTIMISTIC_CONCURRENCY_CONTROL",
}


@dataclass(frozen=True)
class ConcurrencySettings:
    """The resolved concurrency options of one writer."""

    occ: bool
    lazy: bool
    lock_provider: str
    heartbeat_interval_s: float
    tolerable_misses: int
    retries_on_conflict: int = 0

    @property
    def expiry_s(self) -> float:
        """A heartbeat or lease not renewed for this long belongs to a dead writer."""
        return self.heartbeat_interval_s * max(1, self.tolerable_misses)

    @property
    def temp_age_s(self) -> float:
        """A storage temporary file older than this is a dead writer's (a rollback deletes it):
        any age under a single writer's lease; where writers run at once, one heartbeat interval
        (a live create holds its file for one write, and a writer whose heartbeat expired died at
        least expiry minus one interval ago)."""
        return self.heartbeat_interval_s if self.occ else 0.0

    @classmethod
    def of(cls, config: HoodieConfig) -> ConcurrencySettings:
        raw = str(config.get_str(ConcurrencyOptions.MODE) or "SINGLE_WRITER").strip().upper()
        mode = _MODES.get(raw)
        if mode is None:
            hint = (
                "; non-blocking concurrency control needs table version 8 (Hudi 1.x)"
                if raw == "NON_BLOCKING_CONCURRENCY_CONTROL"
                else ""
            )
            raise ConfigError(
                f"{ConcurrencyOptions.MODE.key}={raw.lower()!r} is not one of single_writer, "
                f"optimistic_concurrency_control{hint}"
            )
        occ = mode == "OPTIMISTIC_CONCURRENCY_CONTROL"
        policy = str(config.get_str(ConcurrencyOptions.FAILED_WRITES_POLICY) or "EAGER").strip().upper()
        if policy not in ("EAGER", "LAZY", "NEVER"):
            raise ConfigError(
                f"{ConcurrencyOptions.FAILED_WRITES_POLICY.key}={policy!r} is not one of EAGER, LAZY, NEVER"
            )
        interval_ms = int(config.get(ConcurrencyOptions.HEARTBEAT_INTERVAL_MS))
        if interval_ms <= 0:
            raise ConfigError(
                f"{ConcurrencyOptions.HEARTBEAT_INTERVAL_MS.key} must be positive, not {interval_ms}"
            )
        return cls(
            occ=occ,
            # a writer among several must not roll back the others' live instants: Hudi moves
            # the policy to LAZY with optimistic concurrency control
            lazy=occ or policy == "LAZY",
            lock_provider=str(config.get_str(ConcurrencyOptions.LOCK_PROVIDER) or "filesystem"),
            heartbeat_interval_s=interval_ms / 1000.0,
            tolerable_misses=int(config.get(ConcurrencyOptions.HEARTBEAT_TOLERABLE_MISSES)),
            retries_on_conflict=max(0, int(config.get(ConcurrencyOptions.RETRIES_ON_CONFLICT))) if occ else 0,
        )
