"""What a write task needs: a small, picklable context (storage and caches are made where it is
used, never shipped)."""

from __future__ import annotations

import datetime as _dt
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.schema.avro_schema import META_FIELDS, add_meta_fields
from hudi_core.schema.internal import SchemaHistory
from hudi_core.storage.base import FileInfo, Storage
from hudi_core.table.file_names import PARTITION_METAFILE_PREFIX, write_token
from hudi_core.table.paths import join_table_path
from hudi_core.timeline.commit_metadata import WriteStat
from hudi_core.write.markers import MarkerFiles
from hudi_core.write.records import DELETE_FLAG

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView

__all__ = [
    "TaskAttempt",
    "WriteContext",
    "WriteStatus",
    "constant_strings",
    "ensure_partition_metadata",
    "live_records",
    "meta_columns",
]


@dataclass(frozen=True)
class TaskAttempt:
    """Where a handle runs, as Spark names it: the write token of its files is
    ``<partitionId>-<stageId>-<attemptId>`` and its records' seqnos are
    ``<instant>_<partitionId>_<n>``. The attempt id must be unique per task attempt (Spark's
    ``taskAttemptId``), so a retried attempt never writes a file name another attempt used."""

    partition_id: int
    stage_id: int = 1
    attempt_id: int = 0

    @property
    def token(self) -> str:
        return write_token(self.partition_id, self.stage_id, self.attempt_id)


def live_records(records: pa.Table) -> pa.Table:
    """``records`` without those flagged deleted; the same table when none is (the filter would
    copy every column)."""
    flag = records.column(DELETE_FLAG)
    return records if flag.null_count == 0 and not pc.any(flag).as_py() else records.filter(pc.invert(flag))


def as_attempt(task: TaskAttempt | int, stage_id: int = 1) -> TaskAttempt:
    """An ``int`` task id (local engine) is its own partition and attempt id."""
    return task if isinstance(task, TaskAttempt) else TaskAttempt(task, stage_id, task)


class PartitionListings:
    """One listing per partition folder and write, shared by the handles of that write in this
    process. Valid for finding a file group's latest log version because only this write's
    handles add to a group's log and each tells the listing what it made (:meth:`created`; a
    concurrent writer doing so too conflicts at commit). Never shipped: a task that unpickles
    its context lists afresh."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._lock = threading.Lock()
        self._cache: dict[str, dict[str, int]] = {}  # partition -> {file name: listed size}
        self._with_metafile: set[str] = set()  # partitions known to hold their metadata file

    def __reduce__(self) -> tuple[Any, ...]:
        return (PartitionListings, (self._storage,))

    def seed(self, partition_uri: str, entries: list[FileInfo]) -> None:
        """Take a listing of the partition this write made already (its file-system view's,
        after the instant was created) instead of listing it again."""
        with self._lock:
            self._cache.setdefault(partition_uri, {f.name: f.size for f in entries})

    def names(self, partition_uri: str) -> list[str]:
        with self._lock:
            if partition_uri not in self._cache:
                self._cache[partition_uri] = {f.name: f.size for f in self._storage.list(partition_uri)}
            return list(self._cache[partition_uri])

    def size(self, partition_uri: str, name: str) -> int:
        """The listed size of a file of the partition (0: not listed here)."""
        with self._lock:
            return self._cache.get(partition_uri, {}).get(name, 0)

    def holds_metafile(self, partition_uri: str) -> bool:
        """Whether this write knows ``.hoodie_partition_metadata`` to be in the partition (from
        its listing, or found or made by a handle): no request asks again."""
        with self._lock:
            if partition_uri in self._with_metafile:
                return True
            return PARTITION_METAFILE_PREFIX in self._cache.get(partition_uri, ())

    def metafile_present(self, partition_uri: str) -> None:
        with self._lock:
            self._with_metafile.add(partition_uri)

    def created(self, partition_uri: str, name: str) -> None:
        """A handle of this write made ``name`` (a streamed write writes one file group at
        several flushes: the next flush must see the log version or base file the last one
        made)."""
        with self._lock:
            if partition_uri in self._cache:
                self._cache[partition_uri][name] = 0


@dataclass(frozen=True)
class WriteContext:
    """Everything a handle needs, shipped to tasks by value."""

    base_uri: str
    instant: str
    is_mor: bool
    #: the commit's Avro schema without meta fields
    avro_schema: dict[str, Any]
    #: the commit's Arrow schema without meta fields
    schema: pa.Schema
    options: dict[str, str] = field(default_factory=dict)
    ordering_field: str | None = None
    payload: str = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    #: the stage id in write tokens of local tasks (Spark passes its own with TaskAttempt)
    stage_id: int = 1
    #: (partition, file id) of the file groups pending clustering plans hold, which this write
    #: may not update (:mod:`hudi_core.write.clustering`)
    clustered: frozenset[tuple[str, str]] = frozenset()
    #: the write's operation: an ``insert`` into a file group with records keeps them beside the
    #: new ones (``hoodie.merge.allow.duplicate.on.inserts``, the merge handle)
    operation: str = "upsert"
    #: how the table's files hold its columns where Hudi's schema on read renamed one (a merge
    #: reads an old base file by id): ``MetaClient.schema_history``
    history: SchemaHistory | None = None
    #: ``{file id: source file}`` of a METADATA_ONLY bootstrap's skeleton files (a merge reads
    #: their data columns there): ``io.bootstrap_index.bootstrap_sources``
    bootstrap_sources: dict[str, str] = field(default_factory=dict)

    @cached_property
    def config(self) -> HoodieConfig:
        return HoodieConfig(self.options)

    @cached_property
    def storage(self) -> Storage:
        from hudi_core.storage import storage_for

        return storage_for(self.base_uri, self.options)

    @cached_property
    def listings(self) -> PartitionListings:
        return PartitionListings(self.storage)

    @cached_property
    def populate_meta_fields(self) -> bool:
        from hudi_core.config.table import TableOptions

        return bool(self.config.get(TableOptions.POPULATE_META_FIELDS))

    @property
    def meta_path(self) -> str:
        return f"{self.base_uri}/.hoodie"

    @cached_property
    def avro_schema_with_meta(self) -> dict[str, Any]:
        return add_meta_fields(self.avro_schema)

    @property
    def markers(self) -> MarkerFiles:
        return MarkerFiles(self.storage, self.meta_path, self.instant)

    def partition_uri(self, partition: str) -> str:
        return join_table_path(self.base_uri, partition) if partition else self.base_uri

    def take_listings(self, view: FileSystemView | None) -> None:
        """Let the handles find files in the listings the write's file-system view made of its
        partitions (after the instant was created, as theirs) instead of listing them again (a
        LIST request each on S3). A partition the handles listed already keeps their listing."""
        if view is not None:
            for part, entries in view.listed().items():
                self.listings.seed(self.partition_uri(part), entries)

    def relative(self, partition: str, name: str) -> str:
        return f"{partition}/{name}" if partition else name


@dataclass
class WriteStatus:
    """The outcome of one handle: the write stat plus the counts users see."""

    stat: WriteStat
    io_type: str
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    #: a merge's change records on a table with CDC, where its caller asked to keep them (a
    #: streamed write merges a group again: :func:`~hudi_core.write.handles.cdc.combine_changes`)
    changes: pa.Table | None = None


def meta_columns(
    n: int,
    *,
    instant: str,
    task_id: int,
    record_keys: pa.Array,
    partitions: pa.Array,
    file_name: str,
    seqno_start: int = 0,
    constants_as_dictionary: bool = False,
) -> list[pa.Array]:
    """The five meta columns of ``n`` newly written records (vectorised). With
    ``constants_as_dictionary`` the commit time and file name, one value each, come as
    :func:`constant_strings` (for a parquet file: written the same, never spelled out)."""
    counter = pa.array(np.arange(seqno_start, seqno_start + n, dtype=np.int64)).cast(pa.string())
    seqno = pc.binary_join_element_wise(pa.scalar(f"{instant}_{task_id}"), counter, "_")
    constant = constant_strings if constants_as_dictionary else _repeated
    return [constant(instant, n), seqno, record_keys, partitions, constant(file_name, n)]


def constant_strings(value: str, n: int) -> pa.DictionaryArray:
    """``n`` times ``value`` as a dictionary array of one entry. Parquet stores a column of one
    value dictionary-encoded either way, byte for byte the same (a one-entry dictionary page, a
    run of zeros), but the strings are never spelled out: a file name is ~75 bytes a row, 75 MB
    of fresh memory and a hash of every row for a million rows."""
    return pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(n, dtype=np.int32)), pa.array([value], pa.string())
    )


def _repeated(value: str, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, pa.string()), n)


def with_meta(data: pa.Table, metas: list[pa.Array], schema: pa.Schema) -> pa.Table:
    """Meta columns first, then ``schema``'s columns of ``data``."""
    arrays = [*metas, *(data.column(f.name) for f in schema)]
    names = [*META_FIELDS, *schema.names]
    return pa.Table.from_arrays(arrays, names=names)


def ensure_partition_metadata(ctx: WriteContext, partition: str) -> None:
    """``.hoodie_partition_metadata`` of a partition written once (spec 1.3): looked for once
    per partition and write in a process (a request on S3 for each file group's handle
    otherwise), not at all where the write listed the partition already."""
    uri = ctx.partition_uri(partition)
    if ctx.listings.holds_metafile(uri):
        return
    path = f"{uri}/{PARTITION_METAFILE_PREFIX}"
    storage = ctx.storage
    if storage.exists(path):
        ctx.listings.metafile_present(uri)
        return
    depth = 0 if not partition else len(partition.split("/"))
    now = _dt.datetime.now().astimezone()
    stamp = now.strftime("%a %b %d %H:%M:%S ") + (now.tzname() or "UTC") + now.strftime(" %Y")
    text = f"#partition metadata\n#{stamp}\ncommitTime={ctx.instant}\npartitionDepth={depth}\n"
    storage.create_if_absent(path, text.encode("latin-1"))
    ctx.listings.metafile_present(uri)
