"""``FileSystemView``: file groups and slices from listings plus the timeline (spec 8.1)."""

from __future__ import annotations

import dataclasses
import io
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_core.config.table import TableOptions
from hudi_core.errors import TimelineError, UnsupportedTableError
from hudi_core.fs_view.model import BaseFile, FileGroup, FileSlice, LogFile
from hudi_core.fs_view.partitions import is_ignored_name, partition_listings
from hudi_core.io.bootstrap_index import METADATA_BOOTSTRAP_INSTANT, bootstrap_sources
from hudi_core.table.file_names import LogFileName
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.instant import Action, Instant
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

if TYPE_CHECKING:
    from hudi_core.storage.base import FileInfo
    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "CommitSet",
    "CompactionOperation",
    "FileSystemView",
    "VisibleTimeline",
]

log = logging.getLogger(__name__)

#: the suffix of the CDC log files Apache Hudi writes beside a write on a table with
#: ``hoodie.table.cdc.enabled`` (``.<fileId>_<instant>.log.<version>_<token>.cdc``)
_CDC_SUFFIX = ".cdc"


@dataclass(frozen=True)
class CompactionOperation:
    """One file group of a pending compaction plan."""

    instant: str
    partition_path: str
    file_id: str
    base_instant: str
    data_file_path: str | None
    delta_file_paths: tuple[str, ...]


@dataclass(frozen=True)
class CommitSet:
    """A picklable snapshot of a :class:`VisibleTimeline`'s commit test, taken once per query on
    the planner so that split readers (threads, Spark tasks) never reload the timeline."""

    completed: frozenset[str]
    pending: frozenset[str]
    first: str | None
    pending_compactions: frozenset[str] = frozenset()

    def is_committed(self, ts: str) -> bool:
        if ts in self.completed:
            return True
        if ts in self.pending:
            return False
        return self.first is not None and ts < self.first


class VisibleTimeline:
    """What readers treat as committed: completed write instants (or older than the active
    timeline: archived, hence committed), never an instant that is still pending."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.completed = timeline.completed_commits()
        self._completed = set(self.completed.timestamps())
        self._pending = {i.timestamp for i in timeline.commits().pending()} - self._completed
        self.pending_compactions = {i.timestamp for i in timeline.pending_compactions()}
        first = self.completed.first()
        self._first = first.timestamp if first is not None else None

    def is_committed(self, ts: str) -> bool:
        """``containsOrBeforeTimelineStarts`` (spec 3.2), minus instants known to be pending."""
        if ts in self._completed:
            return True
        if ts in self._pending:
            return False
        return self._first is not None and ts < self._first

    def commit_set(self) -> CommitSet:
        """The same commit test as a small picklable value."""
        return CommitSet(
            frozenset(self._completed), frozenset(self._pending), self._first,
            frozenset(self.pending_compactions),
        )  # fmt: skip

    def latest(self) -> str | None:
        last = self.completed.last()
        return last.timestamp if last is not None else None


class FileSystemView:
    """File groups and slices of a table as of an instant.

    >>> view = FileSystemView(MetaClient.open("/tmp/trips"))  # doctest: +SKIP
    >>> [s.file_id for s in view.latest_file_slices()]  # doctest: +SKIP
    """

    def __init__(self, table: MetaClient, *, timeline: ActiveTimeline | Timeline | None = None) -> None:
        self.table = table
        self.timeline: Timeline = timeline if timeline is not None else table.timeline
        self.visible = VisibleTimeline(self.timeline)
        self._partitions: list[str] | None = None
        self._listing: dict[str, tuple[list[BaseFile], list[LogFile]]] = {}
        self._listed: dict[str, list[FileInfo]] = {}  # partitions' entries as listed
        self._replaced: list[tuple[str, str, str]] | None = None
        self._pending_ops: list[CompactionOperation] | None = None
        self._clustering: dict[tuple[str, str], str] | None = None
        self._sources: dict[str, str] | None = None  # a bootstrap's skeleton files' sources

    # -- listing ---------------------------------------------------------------------------------

    def partitions(self) -> list[str]:
        """Relative partition paths (``""`` for a non-partitioned table)."""
        if self._partitions is None:
            if self.table.config.is_partitioned:
                # each partition's files are then read from the listing that found it
                self._listed = partition_listings(self.table.storage, self.table.base_uri)
                self._partitions = list(self._listed)
            else:
                self._partitions = [""]
        return self._partitions

    def _list(self, partition: str) -> tuple[list[BaseFile], list[LogFile]]:
        if partition not in self._listing:
            uri = self.table.partition_uri(partition) if partition else self.table.base_uri
            bases: list[BaseFile] = []
            logs: list[LogFile] = []
            entries = self._listed.get(partition)
            if entries is None:
                entries = self._listed[partition] = self.table.storage.list(uri)
            for info in entries:
                if info.is_dir or is_ignored_name(info.name):
                    continue
                base = BaseFile.from_path(info.path, info.size)
                if base is not None:
                    bases.append(base)
                    continue
                lf = LogFile.from_path(info.path, info.size)
                if lf is not None:
                    logs.append(lf)
                    continue
                if info.name.endswith(_CDC_SUFFIX):  # Hudi's CDC log files: only CDC queries read them
                    continue
                log.warning("ignoring %s: not a Hudi base or log file name", info.path)
            self._listing[partition] = (bases, logs)
        return self._listing[partition]

    def cdc_files(self, partition: str, file_id: str, base_instant: str) -> list[str]:
        """The CDC log files of a file slice (``hoodie.table.cdc.enabled``: named by the file
        group and the instant that rewrote its base file; the cleaner deletes them with it)."""
        self._list(partition)
        names = ((info.path, LogFileName.parse(info.name)) for info in self._listed.get(partition, ()))
        return [
            path
            for path, n in names
            if n is not None and n.cdc and (n.file_id, n.base_instant) == (file_id, base_instant)
        ]

    def listed(self) -> dict[str, list[FileInfo]]:
        """The partitions this view has listed so far (finding the partitions lists each), each
        with every entry its listing found (the partition metadata file and names the view
        ignores included)."""
        return dict(self._listed)

    # -- timeline-derived facts ------------------------------------------------------------------

    def replaced_file_groups(self) -> list[tuple[str, str, str]]:
        """``(replace instant, partition, file id)`` of every completed replacecommit."""
        if self._replaced is None:
            out: list[tuple[str, str, str]] = []
            tl = self.timeline
            for inst in self.visible.completed.filter(actions=[Action.REPLACE_COMMIT]):
                meta = CommitMetadata.from_json(_read_details(tl, inst))
                for part, ids in (meta.partition_to_replace_file_ids or {}).items():
                    out.extend((inst.timestamp, part, fid) for fid in ids)
            self._replaced = out
        return self._replaced

    def pending_compaction_operations(self) -> list[CompactionOperation]:
        """Operations of every compaction plan that is requested or inflight."""
        if self._pending_ops is None:
            ops: list[CompactionOperation] = []
            for inst in self.timeline.pending_compactions():
                ops.extend(_compaction_operations(self.timeline, inst))
            self._pending_ops = ops
        return self._pending_ops

    def pending_clustering_file_groups(self) -> dict[tuple[str, str], str]:
        """``(partition, file id) -> instant`` of every file group that a requested or inflight
        clustering plan holds: Apache Hudi's writers leave them alone until the clustering
        completes (no updates, no small-file packing, no compaction)."""
        if self._clustering is None:
            out: dict[tuple[str, str], str] = {}
            for inst in self.timeline.pending().filter(actions=[Action.REPLACE_COMMIT]):
                out.update(dict.fromkeys(clustering_file_groups(self.timeline, inst), inst.timestamp))
            self._clustering = out
        return self._clustering

    # -- file groups -----------------------------------------------------------------------------

    def file_groups(self, partition: str, *, as_of: str | None = None) -> list[FileGroup]:
        """Visible file groups of a partition with their committed slices, oldest slice first."""
        bases, logs = self._list(partition)
        pending = self.visible.pending_compactions
        groups: dict[str, dict[str, tuple[BaseFile | None, list[LogFile]]]] = {}
        for b in bases:
            # Base files of failed/inflight writes and of still-pending compactions stay hidden.
            if b.instant in pending or not self.visible.is_committed(b.instant):
                continue
            if as_of is not None and b.instant > as_of:
                continue
            slices = groups.setdefault(b.file_id, {})
            prev = slices.get(b.instant)
            if prev is None or prev[0] is None or b.name > prev[0].name:
                slices[b.instant] = (b, prev[1] if prev else [])
        for op in self.pending_compaction_operations():
            if op.partition_path == partition and (as_of is None or op.instant <= as_of):
                groups.setdefault(op.file_id, {}).setdefault(op.instant, (None, []))
        for lf in logs:
            if as_of is not None and lf.base_instant > as_of:
                continue
            slices = groups.setdefault(lf.file_id, {})
            if lf.base_instant not in slices:
                # A log-only slice exists only if its base instant is committed.
                if lf.base_instant not in pending and not self.visible.is_committed(lf.base_instant):
                    continue
                slices[lf.base_instant] = (None, [])
            slices[lf.base_instant][1].append(lf)
        replaced = {(p, f) for t, p, f in self.replaced_file_groups() if as_of is None or t <= as_of}
        out: list[FileGroup] = []
        for fid in sorted(groups):
            if (partition, fid) in replaced:
                continue
            slices_ = [
                FileSlice(partition, fid, inst, base).with_logs(tuple(lfs))
                for inst, (base, lfs) in sorted(groups[fid].items())
            ]
            slices_ = [s for s in slices_ if not s.is_empty or s.base_instant in pending]
            if slices_:
                out.append(FileGroup(partition, fid, slices_))
        if self.table.config.get_str(TableOptions.BOOTSTRAP_BASE_PATH):
            out = [self._with_sources(g) for g in out]
        return out

    def _with_sources(self, group: FileGroup) -> FileGroup:
        """``group`` with its bootstrap skeleton files pointing at their source files."""
        if not any(
            s.base_file is not None and s.base_file.instant == METADATA_BOOTSTRAP_INSTANT
            for s in group.slices
        ):
            return group
        if self._sources is None:
            self._sources = bootstrap_sources(self.table)
        slices = []
        for s in group.slices:
            base = s.base_file
            if base is not None and base.instant == METADATA_BOOTSTRAP_INSTANT:
                source = self._sources.get(base.file_id)
                if source is None:
                    raise UnsupportedTableError(
                        f"{base.path} is a skeleton file of Apache Hudi's METADATA_ONLY bootstrap of "
                        f"{self.table.base_uri}, and Hudi's bootstrap index names no source file for it"
                    )
                s = dataclasses.replace(s, base_file=dataclasses.replace(base, bootstrap_source=source))
            slices.append(s)
        return FileGroup(group.partition_path, group.file_id, slices)

    def all_file_groups(
        self, *, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> list[FileGroup]:
        parts = self.partitions() if partitions is None else list(partitions)
        return [g for p in parts for g in self.file_groups(p, as_of=as_of)]

    # -- slices ----------------------------------------------------------------------------------

    def latest_file_slices(
        self, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> list[FileSlice]:
        """The latest slice of every visible file group. Under a pending compaction that is the
        compaction's slice, which holds only the logs written since (maybe none), like Java;
        readers want :meth:`latest_merged_file_slices`."""
        out = []
        for g in self.all_file_groups(as_of=as_of, partitions=partitions):
            s = g.latest_slice()
            if s is not None:
                out.append(s)
        return out

    def latest_merged_file_slices(
        self, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> list[FileSlice]:
        """Latest slices for a snapshot read: a slice opened by a pending compaction is merged with
        the slice before it (its base file plus the logs of both), spec 8.1 step 7."""
        pending = self.visible.pending_compactions
        out: list[FileSlice] = []
        for g in self.all_file_groups(as_of=as_of, partitions=partitions):
            s = g.latest_slice()
            if s is None:
                continue
            if s.base_instant in pending and len(g.slices) > 1:
                prev = g.slices[-2]
                s = FileSlice(g.partition_path, g.file_id, prev.base_instant, prev.base_file).with_logs(
                    prev.log_files + s.log_files
                )
            if not s.is_empty:
                out.append(s)
        return out

    def latest_base_files(
        self, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> list[BaseFile]:
        """The newest committed base file of every visible file group (read-optimized view)."""
        out = []
        for g in self.all_file_groups(as_of=as_of, partitions=partitions):
            for s in reversed(g.slices):
                if s.base_file is not None:
                    out.append(s.base_file)
                    break
        return out


def _read_details(timeline: Timeline, inst: Instant) -> bytes:
    if not isinstance(timeline, ActiveTimeline):
        raise TimelineError(f"cannot read the details of {inst}: the timeline has no storage")
    return timeline.read_details(inst)


def clustering_file_groups(timeline: Timeline, inst: Instant) -> set[tuple[str, str]]:
    """``(partition, file id)`` of the slices in a replacecommit's clustering plan (its requested
    file, ``HoodieRequestedReplaceMetadata.clusteringPlan.inputGroups``); empty for a
    replacecommit without one (insert_overwrite, delete_partition) or whose file is gone."""
    from hudi_core.timeline.avro_files import deserialize

    try:
        raw = _read_details(timeline, inst.with_state(inst.state.__class__.REQUESTED))
    except FileNotFoundError:
        return set()
    if not raw:
        return set()
    try:
        plan = deserialize("HoodieRequestedReplaceMetadata", raw).get("clusteringPlan") or {}
    except TimelineError:
        return set()
    return {
        (s.get("partitionPath") or "", s["fileId"])
        for group in plan.get("inputGroups") or []
        for s in group.get("slices") or []
    }


def _compaction_operations(timeline: Timeline, inst: Instant) -> list[CompactionOperation]:
    """Operations of a compaction plan (an Avro container ``HoodieCompactionPlan``)."""
    import fastavro

    requested = inst.with_state(inst.state.__class__.REQUESTED)
    try:
        raw = _read_details(timeline, requested)
    except FileNotFoundError:
        raw = _read_details(timeline, inst)
    if not raw:
        return []
    try:
        records = list(fastavro.reader(io.BytesIO(raw)))
    except Exception as e:  # fastavro raises several types for bad containers
        raise TimelineError(f"compaction plan {inst.timestamp} is not a readable Avro file: {e}") from e
    ops: list[CompactionOperation] = []
    for plan in records:
        if not isinstance(plan, dict):
            continue
        for op in plan.get("operations") or []:
            ops.append(
                CompactionOperation(
                    instant=inst.timestamp,
                    partition_path=op.get("partitionPath") or "",
                    file_id=op["fileId"],
                    base_instant=op.get("baseInstantTime") or "",
                    data_file_path=op.get("dataFilePath"),
                    delta_file_paths=tuple(op.get("deltaFilePaths") or ()),
                )
            )
    return ops
