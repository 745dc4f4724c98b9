"""The exception hierarchy: one root, one subclass per concept.

Messages name the offending value and say what to do about it.
"""

from __future__ import annotations

__all__ = [
    "ClusteringUpdateError",
    "CommitConflictError",
    "ConfigError",
    "CorruptedLogBlockError",
    "HudiError",
    "InvalidRecordError",
    "InvalidRecordKeyError",
    "LockTimeoutError",
    "SchemaMismatchError",
    "StorageError",
    "TableNotFoundError",
    "TimelineError",
    "UnknownComponentError",
    "UnsafePathError",
    "UnsupportedTableError",
    "UnsupportedTableVersionError",
    "WriteConflictError",
    "WriterBusyError",
]


class HudiError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigError(HudiError):
    """A configuration value is missing, malformed or contradicts the table's config."""


class TableNotFoundError(HudiError):
    """No Hudi table (no readable ``.hoodie/hoodie.properties``) at the given base path."""


class UnsupportedTableVersionError(HudiError):
    """The table was written in a table version this library cannot handle."""


class UnsupportedTableError(HudiError):
    """The table uses an Apache Hudi feature this library does not read or write (and would
    answer wrongly for), or Hudi's record of it cannot be read (a bootstrap index)."""


class TimelineError(HudiError):
    """An illegal timeline operation: a bad instant name or a forbidden state transition."""


class CommitConflictError(TimelineError):
    """Another writer is in the way: it created the same timeline file first, or one of the
    subclasses below."""


class WriteConflictError(CommitConflictError):
    """Optimistic concurrency control: a commit that completed (or a compaction or clustering
    scheduled) while this write ran touched the same file groups or inserted the same keys.
    The write is rolled back; nothing of it is visible."""


class WriterBusyError(CommitConflictError):
    """Single-writer mode: another writer holds the table's lease."""


class LockTimeoutError(CommitConflictError):
    """The table lock was not acquired within ``hoodie.write.lock.wait_time_ms``."""


class StorageError(HudiError):
    """A storage operation failed."""


class UnsafePathError(HudiError):
    """A partition value or file name would escape the table's base path."""


class CorruptedLogBlockError(HudiError):
    """A log block failed its size/trailer invariants or could not be decoded."""


class SchemaMismatchError(HudiError):
    """Input data does not fit the table's schema."""


class InvalidRecordError(HudiError):
    """A record the write cannot take as it is (nothing is written)."""


class InvalidRecordKeyError(InvalidRecordError):
    """A record key is null or empty (or otherwise unusable)."""


class ClusteringUpdateError(HudiError):
    """A write would update (or delete from) a file group that a pending clustering plan holds.
    Apache Hudi's default ``hoodie.clustering.updates.strategy`` refuses such writes: the
    clustering, once it completes, replaces the file group with what it read at planning time.
    The write is rolled back; nothing of it is visible."""


class UnknownComponentError(HudiError):
    """A component (key generator, executor, strategy, engine, storage) was asked for by a
    name that no installed plugin provides."""
