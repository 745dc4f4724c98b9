"""``HudiTable``: the entry point for creating, opening, reading and writing a table."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_core.config.property import HoodieConfig
from hudi_core.config.resolution import resolve_table_options
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError
from hudi_core.schema.avro_schema import arrow_to_avro, avro_to_arrow, to_create_schema_json
from hudi_core.storage import normalize_uri, storage_for
from hudi_core.storage.base import Storage
from hudi_core.table.config import TableConfig
from hudi_core.table.paths import join_table_path
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.timeline import ActiveTimeline

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSlice
    from hudi_core.write.client import WriteResult
    from hudi_core.write.rollback import RollbackResult

__all__ = ["META_FOLDER", "HudiTable"]

META_FOLDER = ".hoodie"
_SKELETON = (".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids", ".schema")
_TABLE_TYPES = {"COPY_ON_WRITE": "COPY_ON_WRITE", "COW": "COPY_ON_WRITE",
                "MERGE_ON_READ": "MERGE_ON_READ", "MOR": "MERGE_ON_READ"}  # fmt: skip


class HudiTable:
    """A Hudi table (version 6) at a base URI.

    >>> t = HudiTable.create("/tmp/trips", name="trips", table_type="MERGE_ON_READ",
    ...                      record_key_fields="uuid", partition_fields="city",
    ...                      ordering_field="ts")  # doctest: +SKIP
    >>> HudiTable.open("/tmp/trips").read()  # doctest: +SKIP
    """

    def __init__(
        self, base_uri: str, storage: Storage, config: TableConfig, options: Mapping[str, Any] | None = None
    ) -> None:
        self.base_uri = base_uri
        self.storage = storage
        self.config = config
        #: write/read options given when the table was opened (table config keys win)
        self.options = HoodieConfig(options or {})
        self._timeline: ActiveTimeline | None = None
        self._pinned: ActiveTimeline | None = None

    # -- create / open ---------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        base_uri: str,
        *,
        name: str,
        table_type: str = "COPY_ON_WRITE",
        record_key_fields: str | Sequence[str],
        partition_fields: str | Sequence[str] | None = None,
        ordering_field: str | None = None,
        options: Mapping[str, Any] | None = None,
        schema: pa.Schema | None = None,
    ) -> HudiTable:
        """Create a new, empty table (``hoodie.properties`` and the ``.hoodie`` skeleton)."""
        base = normalize_uri(base_uri)
        opts = dict(options or {})
        ttype = _TABLE_TYPES.get(str(table_type).upper())
        if ttype is None:
            raise ConfigError(f"table_type {table_type!r} is not COPY_ON_WRITE or MERGE_ON_READ")
        if not name or not str(name).strip():
            raise ConfigError("a table needs a name (hoodie.table.name)")
        resolved = resolve_table_options(
            record_key_fields=record_key_fields,
            partition_fields=partition_fields,
            ordering_field=ordering_field,
            options=opts,
            schema=schema,
        )
        if schema is not None:
            missing = [f for f in resolved.get_list(TableOptions.RECORDKEY_FIELDS)
                       if f.split(".")[0] not in schema.names]  # fmt: skip
            if missing:
                raise ConfigError(f"record key field(s) {missing} are not in the schema {schema.names}")
        storage = storage_for(base, resolved)
        props: dict[str, str] = {
            TableOptions.NAME.key: name,
            TableOptions.TYPE.key: ttype,
            TableOptions.VERSION.key: "6",
            TableOptions.TIMELINE_LAYOUT_VERSION.key: "1",
            TableOptions.ARCHIVELOG_FOLDER.key: "archived",
            TableOptions.HIVE_STYLE_PARTITIONING.key: "false",
            TableOptions.URL_ENCODE_PARTITIONING.key: "false",
            TableOptions.DROP_PARTITION_COLUMNS.key: "false",
            TableOptions.PAYLOAD_CLASS.key: str(resolved.get_str(WriteOptions.PAYLOAD_CLASS)),
        }
        for prop in (TableOptions.RECORDKEY_FIELDS, TableOptions.PARTITION_FIELDS,
                     TableOptions.PRECOMBINE_FIELD, TableOptions.KEYGEN_CLASS):  # fmt: skip
            value = resolved.raw(prop)
            if value:
                props[prop.key] = value
        # Table-level keys passed as options (hive style, url encoding, database, meta fields...).
        for key, value in resolved.items():
            if key.startswith(("hoodie.table.", "hoodie.datasource.write.hive_style",
                               "hoodie.datasource.write.partitionpath.urlencode",
                               "hoodie.database.", "hoodie.populate.meta.fields",
                               "hoodie.keygen.timebased.", "hoodie.compaction.payload.class")):  # fmt: skip
                if key == TableOptions.DROP_PARTITION_COLUMNS.key and value.lower() == "true":
                    raise ConfigError("hoodie.datasource.write.drop.partition.columns=true is not supported")
                props[key] = value
        if HoodieConfig(props).get(TableOptions.POPULATE_META_FIELDS):
            props.pop(TableOptions.POPULATE_META_FIELDS.key, None)  # only written when false
        if ttype == "MERGE_ON_READ":
            props.setdefault(TableOptions.MERGER_STRATEGY.key, str(TableOptions.MERGER_STRATEGY.default))
        if schema is not None:
            props[TableOptions.CREATE_SCHEMA.key] = to_create_schema_json(arrow_to_avro(schema, name))
        props[TableOptions.TYPE.key] = ttype
        props[TableOptions.VERSION.key] = "6"
        meta = f"{base}/{META_FOLDER}"
        config = TableConfig.create(storage, meta, props)
        for sub in _SKELETON:
            storage.makedirs(f"{meta}/{sub}")
        storage.makedirs(f"{meta}/{config.get_str(TableOptions.ARCHIVELOG_FOLDER)}")
        return cls(base, storage, config, resolved)

    @classmethod
    def open(cls, base_uri: str, *, options: Mapping[str, Any] | None = None) -> HudiTable:
        """Open an existing table; raises TableNotFoundError when there is none."""
        base = normalize_uri(base_uri)
        storage = storage_for(base, options or {})
        config = TableConfig.load(storage, f"{base}/{META_FOLDER}")
        return cls(base, storage, config, options)

    @classmethod
    def exists(cls, base_uri: str, *, options: Mapping[str, Any] | None = None) -> bool:
        base = normalize_uri(base_uri)
        storage = storage_for(base, options or {})
        return storage.exists(f"{base}/{META_FOLDER}/hoodie.properties") or storage.exists(
            f"{base}/{META_FOLDER}/hoodie.properties.backup"
        )

    # -- layout ----------------------------------------------------------------------------------

    @property
    def meta_path(self) -> str:
        return f"{self.base_uri}/{META_FOLDER}"

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def table_type(self) -> str:
        return self.config.table_type

    def partition_uri(self, partition_path: str) -> str:
        """Absolute path of a partition, refusing anything that escapes the base path."""
        return join_table_path(self.base_uri, partition_path)

    def write_config(self, options: Mapping[str, Any] | None = None) -> HoodieConfig:
        """Options for a write: the open options, then ``options``, then the table config."""
        merged = self.options.with_options(options or {})
        return merged.with_options(self.config.to_dict())

    def reload(self) -> HudiTable:
        self.config = TableConfig.load(self.storage, self.meta_path)
        self._timeline = None
        if self._pinned is not None:
            self._pinned = self._load_timeline()
        return self

    # -- timeline and schema ---------------------------------------------------------------------

    @property
    def timeline(self) -> ActiveTimeline:
        """The active timeline, freshly loaded from storage (or the pinned one, see
        :meth:`pinned_timeline`)."""
        if self._pinned is not None:
            return self._pinned
        self._timeline = self._load_timeline()
        return self._timeline

    def _load_timeline(self) -> ActiveTimeline:
        return ActiveTimeline(self.storage, self.meta_path, utc=self.config.utc_timeline)

    @contextmanager
    def pinned_timeline(self) -> Iterator[ActiveTimeline]:
        """Load the timeline once and hand out that object for the block: for a writer that
        holds the single-writer lease, whose every transition goes through it and keeps it
        current, so the dozen looks a write and its services take cost one listing of
        ``.hoodie`` (one LIST request on S3) instead of one each. Nested pins share the outer one."""
        if self._pinned is not None:
            yield self._pinned
            return
        self._pinned = self._load_timeline()
        try:
            yield self._pinned
        finally:
            self._pinned = None

    def commit_metadata(self, timestamp: str) -> CommitMetadata:
        tl = self._timeline or self.timeline
        inst = tl.completed().find(timestamp)
        if inst is None:
            raise ConfigError(f"no completed instant {timestamp} on the timeline of {self.base_uri}")
        return CommitMetadata.from_json(tl.read_details(inst))

    def avro_schema(
        self, as_of: str | None = None, *, timeline: ActiveTimeline | None = None
    ) -> dict[str, Any] | None:
        """The table's Avro schema (no meta fields): latest completed commit's, else creation's.

        Pass the ``timeline`` a caller already loaded to avoid listing ``.hoodie`` again."""
        tl = timeline if timeline is not None else self.timeline
        for inst in reversed(list(tl.completed_commits())):
            if as_of is not None and inst.timestamp > as_of:
                continue
            schema = CommitMetadata.from_json(tl.read_details(inst)).schema
            if schema:
                parsed: dict[str, Any] = json.loads(schema)
                return parsed
        if self.config.create_schema:
            parsed = json.loads(self.config.create_schema)
            return parsed
        return None

    def schema(self, as_of: str | None = None, *, timeline: ActiveTimeline | None = None) -> pa.Schema | None:
        """The table's Arrow schema without meta fields, or None for a table with no schema yet."""
        avro = self.avro_schema(as_of, timeline=timeline)
        return avro_to_arrow(avro) if avro is not None else None

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
    ) -> pa.Table:
        """Query the table: ``snapshot`` (optionally ``as_of`` an instant), ``read_optimized``,
        or ``incremental`` over ``(start, end]``; returns a ``pyarrow.Table``, meta columns first."""
        from hudi_core.read import read_table

        return read_table(self, query_type=query_type, as_of=as_of, start=start, end=end,
                          columns=columns, filters=filters)  # fmt: skip

    def read_batches(
        self,
        query_type: str = "snapshot",
        *,
        as_of: str | None = None,
        start: str | None = None,
        end: str | None = None,
        columns: Sequence[str] | None = None,
        filters: Sequence[tuple[str, str, Any]] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Like :meth:`read`, as record batches produced one file slice at a time."""
        from hudi_core.read import iter_batches

        return iter_batches(self, query_type=query_type, as_of=as_of, start=start, end=end,
                            columns=columns, filters=filters)  # fmt: skip

    def file_slices(self, *, as_of: str | None = None) -> list[FileSlice]:
        """The latest file slice of every visible file group (as of an instant)."""
        from hudi_core.fs_view import FileSystemView

        return FileSystemView(self).latest_file_slices(as_of=as_of)

    # -- table services (hudi_core.compaction, hudi_core.clean) ---------------------------------

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
        data: pa.Table,
        operation: str,
        options: Mapping[str, Any] | None,
        *,
        progress: Callable[[int], Callable[[], None]] | None = None,
    ) -> WriteResult:
        from hudi_core.write.client import WriteClient

        return WriteClient(self, options, progress=progress).write(data, operation=operation)

    def insert(self, data: pa.Table, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Insert records (no index lookup; small base files are filled first)."""
        return self._write(data, "insert", options)

    def upsert(self, data: pa.Table, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Update records whose key exists, insert the others; ``_hoodie_is_deleted`` rows delete."""
        return self._write(data, "upsert", options)

    def bulk_insert(self, data: pa.Table, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Insert records sorted by partition and key into new file groups (no index lookup)."""
        return self._write(data, "bulk_insert", options)

    def insert_overwrite(self, data: pa.Table, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Replace the partitions ``data`` touches with ``data``."""
        return self._write(data, "insert_overwrite", options)

    def insert_overwrite_table(
        self, data: pa.Table, *, options: Mapping[str, Any] | None = None
    ) -> WriteResult:
        """Replace the whole table with ``data``."""
        return self._write(data, "insert_overwrite_table", options)

    def delete(self, keys: pa.Table, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Delete the records named by ``keys`` (record key fields and partition fields)."""
        from hudi_core.write.client import WriteClient

        return WriteClient(self, options).delete(keys)

    def delete_partition(
        self, partitions: str | Sequence[str], *, options: Mapping[str, Any] | None = None
    ) -> WriteResult:
        """Drop whole partitions (a replacecommit replacing all their file groups)."""
        from hudi_core.write.client import WriteClient

        parts = [partitions] if isinstance(partitions, str) else list(partitions)
        return WriteClient(self, options).delete_partitions(parts)

    def rollback(self, instant: str, options: Mapping[str, Any] | None = None) -> RollbackResult:
        """Roll back a pending or the latest completed write instant."""
        from hudi_core.lock.providers import table_lock
        from hudi_core.write.rollback import rollback_instant

        with self._writer(options), table_lock(self, self.write_config(options)):
            return rollback_instant(self, instant)

    def __repr__(self) -> str:
        return f"HudiTable({self.base_uri!r}, name={self.name!r}, type={self.table_type})"
