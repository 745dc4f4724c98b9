"""``HudiTable``: the entry point for creating, opening, reading and writing a table.

The facade: each method chooses what to call, in the read path, the write client or a table
service; the handle underneath (base URI, storage, config, timeline, schema) is
:class:`hudi_core.table.MetaClient`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa

from hudi_core.table.meta_client import MetaClient

if TYPE_CHECKING:
    from hudi_core.client.write_client import WriteResult
    from hudi_core.fs_view import FileSlice
    from hudi_core.savepoint import RestoreResult
    from hudi_core.write.rollback import RollbackResult

__all__ = ["HudiTable"]

#: what a write takes: a table, or a stream of record batches (or tables) written as one instant
#: with bounded memory (:mod:`hudi_core.write.stream`)
Rows: TypeAlias = "pa.Table | pa.RecordBatch | Iterable[pa.RecordBatch | pa.Table]"


class HudiTable(MetaClient):
    """A Hudi table (version 6) at a base URI.

    >>> t = HudiTable.create("/tmp/trips", name="trips", table_type="MERGE_ON_READ",
    ...                      record_key_fields="uuid", partition_fields="city",
    ...                      ordering_field="ts")  # doctest: +SKIP
    >>> HudiTable.open("/tmp/trips").read()  # doctest: +SKIP
    """

    # -- read path (hudi_core.read) --------------------------------------------------------------

    def read(
        self,
        query_type: str = "snapshot",
        *,
        as_of: str | None = None,
        start: str | None = None,
        end: str | None = None,
        columns: Sequence[str] | None = None,
        filters: Sequence[tuple[str, str, Any]] | None = None,
        merge_type: str = "payload_combine",
    ) -> pa.Table:
        """Query the table: ``snapshot`` (optionally ``as_of`` an instant), ``read_optimized``,
        or ``incremental`` over ``(start, end]``; returns a ``pyarrow.Table``, meta columns first.
        ``merge_type="skip_merge"`` (Hudi's ``hoodie.datasource.merge.type``) gives a snapshot's
        base rows as stored and its log files' records beside them, unmerged."""
        from hudi_core.read import read_table

        return read_table(self, query_type=query_type, as_of=as_of, start=start, end=end,
                          columns=columns, filters=filters, merge_type=merge_type)  # fmt: skip

    def read_changes(self, start: str = "000", end: str | None = None, *, images: str = "json") -> pa.Table:
        """The changes of the commits in ``(start, end]`` on a table with ``hoodie.table.cdc.enabled``
        (Hudi's incremental query with ``hoodie.datasource.query.incremental.format=cdc``): ``op``
        (``i``, ``u``, ``d``), ``ts_ms`` (the instant), ``before`` and ``after`` (JSON or null, as
        Hudi answers; ``images="struct"``: typed structs of the table's data fields, or null)."""
        from hudi_core.read.cdc import read_changes

        return read_changes(self, start, end, images=images)

    def read_batches(
        self,
        query_type: str = "snapshot",
        *,
        as_of: str | None = None,
        start: str | None = None,
        end: str | None = None,
        columns: Sequence[str] | None = None,
        filters: Sequence[tuple[str, str, Any]] | None = None,
        merge_type: str = "payload_combine",
    ) -> Iterator[pa.RecordBatch]:
        """Like :meth:`read`, as record batches produced one file slice at a time."""
        from hudi_core.read import iter_batches

        return iter_batches(self, query_type=query_type, as_of=as_of, start=start, end=end,
                            columns=columns, filters=filters, merge_type=merge_type)  # fmt: skip

    def file_slices(self, *, as_of: str | None = None) -> list[FileSlice]:
        """The latest file slice of every visible file group (as of an instant)."""
        from hudi_core.fs_view import FileSystemView

        return FileSystemView(self).latest_file_slices(as_of=as_of)

    # -- table services (hudi_core.compaction, hudi_core.clustering, hudi_core.clean) ----------

    def schedule_compaction(
        self, options: Mapping[str, Any] | None = None, *, force: bool = False
    ) -> str | None:
        """Schedule a compaction when the trigger fires (always with ``force``); returns its
        instant, or None when nothing was scheduled. MERGE_ON_READ only."""
        from hudi_core.compaction import schedule_compaction

        with self._writer(options):
            return schedule_compaction(self, config=dict(options or {}), force=force)

    def run_compaction(self, instant: str | None = None, options: Mapping[str, Any] | None = None) -> Any:
        """Execute and commit a pending compaction (the oldest when ``instant`` is None);
        returns a :class:`hudi_core.compaction.CompactionResult`."""
        from hudi_core.compaction import run_compaction

        with self._writer(options):
            return run_compaction(self, instant, config=dict(options or {}))

    def compact(self, options: Mapping[str, Any] | None = None) -> list[Any]:
        """Compact every file slice with log files now: schedule a plan over all of them, then
        run every pending plan oldest first."""
        from hudi_core.compaction import compact

        with self._writer(options):
            return compact(self, config=dict(options or {}))

    def schedule_clustering(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Plan a clustering of the small file slices (``hoodie.clustering.plan.strategy.*``);
        returns its instant, or None when no slice is due. Writes then leave its file groups
        alone until it runs."""
        from hudi_core.clustering import schedule_clustering

        with self._writer(options):
            return schedule_clustering(self, config=dict(options or {}))

    def run_clustering(self, instant: str | None = None, options: Mapping[str, Any] | None = None) -> Any:
        """Execute and commit a pending clustering (the oldest when ``instant`` is None);
        returns a :class:`hudi_core.clustering.ClusteringResult`."""
        from hudi_core.clustering import run_clustering

        with self._writer(options):
            return run_clustering(self, instant, config=dict(options or {}))

    def cluster(self, options: Mapping[str, Any] | None = None) -> list[Any]:
        """Run pending clusterings, then schedule one over the small file slices and run it
        (Hudi's ``run_clustering`` procedure); returns the results."""
        from hudi_core.clustering import cluster

        with self._writer(options):
            return cluster(self, config=dict(options or {}))

    def clean(self, options: Mapping[str, Any] | None = None) -> Any:
        """Delete file slices no retained query needs (``hoodie.cleaner.*``); returns the
        :class:`hudi_core.clean.CleanMetadata`, or None when nothing was due."""
        from hudi_core.clean import clean

        with self._writer(options):
            return clean(self, config=dict(options or {}))

    def archive(self, options: Mapping[str, Any] | None = None) -> Any:
        """Archive completed instants beyond ``hoodie.keep.max.commits`` (keeping
        ``hoodie.keep.min.commits``); returns the :class:`hudi_core.archival.ArchiveResult`, or
        None when nothing was due."""
        from hudi_core.archival import archive

        with self._writer(options):
            return archive(self, dict(options or {}))

    def _writer(self, options: Mapping[str, Any] | None) -> AbstractContextManager[Any]:
        """A table service is a writer: the single-writer lease (or nothing under optimistic
        concurrency control, where each service takes the table lock where Hudi does)."""
        from hudi_core.write.transaction import writer_guard

        return writer_guard(self, self.write_config(options))

    # -- write path (hudi_core.write) ------------------------------------------------------------

    def _write(
        self,
        data: Rows,
        operation: str,
        options: Mapping[str, Any] | None,
        *,
        progress: Callable[[int], Callable[[], None]] | None = None,
    ) -> WriteResult:
        from hudi_core.client.write_client import WriteClient

        return WriteClient(self, options, progress=progress).write(data, operation=operation)

    def insert(self, data: Rows, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Insert records (no index lookup; small base files are filled first)."""
        return self._write(data, "insert", options)

    def upsert(self, data: Rows, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Update records whose key exists, insert the others; ``_hoodie_is_deleted`` rows delete."""
        return self._write(data, "upsert", options)

    def bulk_insert(self, data: Rows, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Insert records sorted by partition and key into new file groups (no index lookup)."""
        return self._write(data, "bulk_insert", options)

    def insert_overwrite(self, data: Rows, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Replace the partitions ``data`` touches with ``data``."""
        return self._write(data, "insert_overwrite", options)

    def insert_overwrite_table(self, data: Rows, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Replace the whole table with ``data``."""
        return self._write(data, "insert_overwrite_table", options)

    def delete(self, keys: Rows, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Delete the records named by ``keys`` (record key fields and partition fields)."""
        from hudi_core.client.write_client import WriteClient

        return WriteClient(self, options).delete(keys)

    def delete_partition(
        self, partitions: str | Sequence[str], *, options: Mapping[str, Any] | None = None
    ) -> WriteResult:
        """Drop whole partitions (a replacecommit replacing all their file groups)."""
        from hudi_core.client.write_client import WriteClient

        parts = [partitions] if isinstance(partitions, str) else list(partitions)
        return WriteClient(self, options).delete_partitions(parts)

    def rollback(self, instant: str, options: Mapping[str, Any] | None = None) -> RollbackResult:
        """Roll back a pending or the latest completed write instant."""
        from hudi_core.config.concurrency import ConcurrencySettings
        from hudi_core.lock.providers import table_lock
        from hudi_core.write.rollback import rollback_instant

        config = self.write_config(options)
        with self._writer(options), table_lock(self, config):
            return rollback_instant(self, instant, temp_age_s=ConcurrencySettings.of(config).temp_age_s)

    # -- savepoints and restores (hudi_core.savepoint) -----------------------------------------

    def savepoint(
        self,
        instant: str | None = None,
        *,
        user: str = "",
        comments: str = "",
        options: Mapping[str, Any] | None = None,
    ) -> str:
        """Savepoint a completed commit (default: the latest), as Hudi's ``create_savepoint``:
        the cleaner and archival keep what a :meth:`restore` to it needs. Returns its instant."""
        from hudi_core.lock.providers import table_lock
        from hudi_core.savepoint import create_savepoint

        with self._writer(options), table_lock(self, self.write_config(options)):
            return create_savepoint(self, instant, user=user, comments=comments)

    def savepoints(self) -> list[str]:
        """The instants of the table's savepoints, oldest first."""
        from hudi_core.savepoint import savepoints

        return savepoints(self)

    def delete_savepoint(self, instant: str, options: Mapping[str, Any] | None = None) -> None:
        """Remove a savepoint (Hudi's ``delete_savepoint``): the cleaner may then remove its files."""
        from hudi_core.lock.providers import table_lock
        from hudi_core.savepoint import delete_savepoint

        with self._writer(options), table_lock(self, self.write_config(options)):
            delete_savepoint(self, instant)

    def restore(self, savepoint: str, options: Mapping[str, Any] | None = None) -> RestoreResult:
        """Bring the table back to a savepoint (Hudi's ``rollback_to_savepoint``): every write
        after it is rolled back, newest first, as one restore instant. Stop other writers first."""
        from hudi_core.config.concurrency import ConcurrencySettings
        from hudi_core.lock.providers import table_lock
        from hudi_core.savepoint import restore_to_savepoint

        config = self.write_config(options)
        with self._writer(options), table_lock(self, config):
            return restore_to_savepoint(self, savepoint, temp_age_s=ConcurrencySettings.of(config).temp_age_s)
