"""Scheduling a clustering, as Apache Hudi 0.15's size-based plan strategy does.

A plan groups the small file slices of each partition (base file under
``small.file.limit``; no file group a pending compaction or clustering holds), largest first,
into groups of at most ``max.bytes.per.group`` bytes (a slice without a base file counts
``hoodie.parquet.max.file.size``); each group is rewritten as ceil(bytes / ``target.file.max.bytes``)
new file groups. A partition's last group of a single slice is planned too unless
``single.group.clustering.enabled`` is off (and no sort columns are set). At most
``max.num.groups`` groups per plan. ``<t>.replacecommit.requested`` holds the plan
(``HoodieRequestedReplaceMetadata``, operation ``CLUSTER``), slices named by their files' full
paths.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.config.clustering import SIZE_BASED_PLAN, SORT_AND_SIZE_EXECUTION, ClusteringOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError, TimelineError
from hudi_core.fs_view.model import BaseFile, FileSlice, LogFile, io_metrics
from hudi_core.fs_view.view import FileSystemView, clustering_file_groups
from hudi_core.io.bootstrap_index import source_path
from hudi_core.timeline.avro_files import deserialize, serialize
from hudi_core.timeline.instant import Action, Instant, State

if TYPE_CHECKING:
    from hudi_core.config.property import HoodieConfig
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.timeline.timeline import Timeline

__all__ = [
    "ClusteringGroup",
    "ClusteringPlan",
    "ClusteringSlice",
    "build_plan",
    "check_supported",
    "commits_since_last_clustering",
    "pending_clusterings",
    "read_plan",
]

REQUESTED_REPLACE = "HoodieRequestedReplaceMetadata"


@dataclass(frozen=True)
class ClusteringSlice:
    """A file slice a plan rewrites (``HoodieSliceInfo``): its files by full path."""

    partition_path: str
    file_id: str
    data_file: str
    delta_files: tuple[str, ...] = ()
    #: a METADATA_ONLY bootstrap's skeleton: the source file of its data columns
    bootstrap_file: str = ""

    def to_avro(self) -> dict[str, Any]:
        return {
            "dataFilePath": self.data_file,
            "deltaFilePaths": list(self.delta_files),
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "bootstrapFilePath": self.bootstrap_file,
            "version": 1,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> ClusteringSlice:
        return cls(rec.get("partitionPath") or "", rec["fileId"], rec.get("dataFilePath") or "",
                   tuple(rec.get("deltaFilePaths") or ()), rec.get("bootstrapFilePath") or "")  # fmt: skip

    def file_slice(self, table: MetaClient) -> FileSlice:
        """This slice's files in ``table`` (found by name in the partition, sizes looked up)."""

        part_uri = table.partition_uri(self.partition_path) if self.partition_path else table.base_uri
        base = None
        if self.data_file:
            path = f"{part_uri}/{_name(self.data_file)}"
            base = BaseFile.from_path(path, table.storage.size(path))
        logs = []
        for name in map(_name, self.delta_files):
            lf = LogFile.from_path(f"{part_uri}/{name}", table.storage.size(f"{part_uri}/{name}"))
            if lf is not None:
                logs.append(lf)
        if base is None and not logs:
            raise TimelineError(f"clustering slice of file group {self.file_id}: no base or log file named")
        instant = base.instant if base is not None else logs[0].base_instant
        if base is not None and self.bootstrap_file:
            base = dataclasses.replace(base, bootstrap_source=source_path(self.bootstrap_file))
        return FileSlice(self.partition_path, self.file_id, instant, base).with_logs(tuple(logs))


@dataclass(frozen=True)
class ClusteringGroup:
    """File slices rewritten together into ``num_output_file_groups`` new file groups."""

    slices: tuple[ClusteringSlice, ...]
    num_output_file_groups: int = 1
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def partition_path(self) -> str:
        return self.slices[0].partition_path

    def to_avro(self) -> dict[str, Any]:
        return {
            "slices": [s.to_avro() for s in self.slices],
            "metrics": dict(self.metrics),
            "numOutputFileGroups": self.num_output_file_groups,
            "extraMetadata": None,
            "version": 1,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> ClusteringGroup:
        return cls(tuple(ClusteringSlice.from_avro(s) for s in rec.get("slices") or ()),
                   int(rec.get("numOutputFileGroups") or 1), dict(rec.get("metrics") or {}))  # fmt: skip


@dataclass(frozen=True)
class ClusteringPlan:
    groups: tuple[ClusteringGroup, ...]
    strategy_class: str = SORT_AND_SIZE_EXECUTION
    strategy_params: dict[str, str] = field(default_factory=dict)
    preserve_meta: bool = True

    @property
    def sort_columns(self) -> list[str]:
        raw = self.strategy_params.get(ClusteringOptions.SORT_COLUMNS.key) or ""
        return [c.strip() for c in raw.split(",") if c.strip()]

    def replaced_file_ids(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for g in self.groups:
            for s in g.slices:
                out.setdefault(s.partition_path, []).append(s.file_id)
        return out

    def to_avro(self) -> dict[str, Any]:
        return {
            "operationType": "CLUSTER",
            "clusteringPlan": {
                "inputGroups": [g.to_avro() for g in self.groups],
                "strategy": {
                    "strategyClassName": self.strategy_class,
                    "strategyParams": dict(self.strategy_params),
                    "version": 1,
                },
                "extraMetadata": {},
                "version": 1,
                "preserveHoodieMetadata": self.preserve_meta,
            },
            "extraMetadata": {},
            "version": 1,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> ClusteringPlan:
        plan = rec.get("clusteringPlan") or {}
        strategy = plan.get("strategy") or {}
        preserve = plan.get("preserveHoodieMetadata")
        return cls(tuple(ClusteringGroup.from_avro(g) for g in plan.get("inputGroups") or ()),
                   strategy.get("strategyClassName") or SORT_AND_SIZE_EXECUTION,
                   dict(strategy.get("strategyParams") or {}), True if preserve is None else bool(preserve))  # fmt: skip


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _full_path(table: MetaClient, partition: str, name: str) -> str:
    """A file's path as Hudi's plans name it: ``file:/...`` for a local table."""
    part_uri = table.partition_uri(partition) if partition else table.base_uri
    return f"{'' if '://' in part_uri else 'file:'}{part_uri}/{name}"


def check_supported(table: MetaClient, cfg: HoodieConfig) -> None:
    """Refuse what this implementation does not do (rather than plan something else)."""
    from hudi_core.config.write import IndexOptions

    checks = [
        (ClusteringOptions.PLAN_STRATEGY, SIZE_BASED_PLAN),
        (ClusteringOptions.EXECUTION_STRATEGY, SORT_AND_SIZE_EXECUTION),
        (ClusteringOptions.PARTITION_FILTER_MODE, "NONE"),
        (ClusteringOptions.LAYOUT_STRATEGY, "LINEAR"),
    ]
    for prop, supported in checks:
        value = str(cfg.get(prop))
        if value.rsplit(".", 1)[-1].upper() != supported.rsplit(".", 1)[-1].upper():
            raise ConfigError(
                f"{prop.key}={value!r} is not supported: clustering implements {supported} only"
            )
    if str(cfg.get(IndexOptions.TYPE)).upper() == "BUCKET":
        raise ConfigError(
            f"cannot cluster {table.base_uri}: its BUCKET index maps each key's bucket to a file "
            "group by file id, and a clustering writes new file groups"
        )


def pending_clusterings(table: MetaClient, timeline: Timeline | None = None) -> list[Instant]:
    """Requested or inflight clusterings (replacecommits with a clustering plan), oldest first."""
    tl = timeline if timeline is not None else table.timeline
    return [i for i in tl.pending().filter(actions=[Action.REPLACE_COMMIT]) if clustering_file_groups(tl, i)]


def read_plan(table: MetaClient, instant_time: str) -> ClusteringPlan:
    path = f"{table.meta_path}/{Instant(instant_time, Action.REPLACE_COMMIT, State.REQUESTED).file_name}"
    return ClusteringPlan.from_avro(deserialize(REQUESTED_REPLACE, table.storage.read_bytes(path)))


def plan_bytes(plan: ClusteringPlan) -> bytes:
    return serialize(REQUESTED_REPLACE, plan.to_avro())


def commits_since_last_clustering(timeline: Timeline) -> int:
    """Completed commits, delta commits and replacecommits after the last clustering (in any
    state), as Hudi's inline trigger counts them."""
    commits = timeline.filter(actions=[Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT])
    last = ""
    for inst in commits.filter(actions=[Action.REPLACE_COMMIT]):
        if clustering_file_groups(timeline, inst):
            last = max(last, inst.timestamp)
    return sum(1 for i in commits.completed() if i.timestamp > last)


def _partitions(view: FileSystemView, cfg: HoodieConfig) -> list[str]:
    selected = str(cfg.get(ClusteringOptions.PARTITION_SELECTED) or "")
    if selected:
        return [p for p in selected.split(",") if p]
    pattern = str(cfg.get(ClusteringOptions.PARTITION_REGEX) or "")
    parts = view.partitions()
    return [p for p in parts if re.fullmatch(pattern, p)] if pattern else parts


def _info(table: MetaClient, s: FileSlice) -> ClusteringSlice:
    base = _full_path(table, s.partition_path, s.base_file.name) if s.base_file is not None else ""
    logs = tuple(_full_path(table, s.partition_path, lf.name) for lf in s.log_files)
    source = s.base_file.bootstrap_source if s.base_file is not None else None
    return ClusteringSlice(s.partition_path, s.file_id, base, logs, source or "")


def _groups_of_partition(
    table: MetaClient, slices: list[FileSlice], cfg: HoodieConfig, default_size: int
) -> list[ClusteringGroup]:
    max_group = int(cfg.get(ClusteringOptions.MAX_BYTES_PER_GROUP))
    target = int(cfg.get(ClusteringOptions.TARGET_FILE_MAX_BYTES))
    max_groups = int(cfg.get(ClusteringOptions.MAX_NUM_GROUPS))
    single = bool(cfg.get(ClusteringOptions.SINGLE_GROUP)) or bool(cfg.get(ClusteringOptions.SORT_COLUMNS))

    def size(s: FileSlice) -> int:
        return s.base_file.size if s.base_file is not None else default_size

    cut: list[tuple[list[FileSlice], int]] = []
    current: list[FileSlice] = []
    total = 0
    for s in sorted(slices, key=lambda s: -size(s)):  # largest first (a stable sort, as Java's)
        if current and total + size(s) > max_group:
            cut.append((current, total))
            current, total = [], 0
            if len(cut) >= max_groups:
                break
        current.append(s)
        total += size(s)
    else:
        if current and (len(current) > 1 or single):
            cut.append((current, total))
    return [
        ClusteringGroup(
            tuple(_info(table, s) for s in g),
            max(1, -(-total // target)),
            io_metrics(g, default_base_size=default_size),
        )
        for g, total in cut
    ]


def build_plan(table: MetaClient, cfg: HoodieConfig, timeline: Timeline) -> ClusteringPlan | None:
    """The plan over the table's small file slices now, or None when no group is due."""
    view = FileSystemView(table, timeline=timeline)
    busy = {(op.partition_path, op.file_id) for op in view.pending_compaction_operations()}
    busy |= set(view.pending_clustering_file_groups())
    small = int(cfg.get(ClusteringOptions.SMALL_FILE_LIMIT))
    default_size = int(cfg.get(WriteOptions.PARQUET_MAX_FILE_SIZE))
    groups: list[ClusteringGroup] = []
    for partition in _partitions(view, cfg):
        eligible = []
        for g in view.file_groups(partition):
            s = g.latest_slice()
            if s is None or s.is_empty or (partition, g.file_id) in busy:
                continue
            if (s.base_file.size if s.base_file is not None else 0) < small:
                eligible.append(s)
        groups.extend(_groups_of_partition(table, eligible, cfg, default_size))
    groups = groups[: int(cfg.get(ClusteringOptions.MAX_NUM_GROUPS))]
    if not groups:
        return None
    sort = str(cfg.get(ClusteringOptions.SORT_COLUMNS) or "")
    params = {ClusteringOptions.SORT_COLUMNS.key: sort} if sort else {}
    return ClusteringPlan(tuple(groups), str(cfg.get(ClusteringOptions.EXECUTION_STRATEGY)), params)
