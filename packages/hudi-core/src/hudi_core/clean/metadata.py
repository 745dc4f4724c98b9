"""Clean instants' Avro records (spec 11.2): ``HoodieCleanerPlan`` and ``HoodieCleanMetadata``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import TimelineError
from hudi_core.timeline.avro_files import CLEAN_METADATA, CLEANER_PLAN, deserialize, serialize

__all__ = ["CLEAN_METADATA_VERSION", "CleanMetadata", "CleanerPlan", "PartitionCleanStat"]

CLEAN_PLAN_VERSION = 2
CLEAN_METADATA_VERSION = 2


def _read(name: str, data: bytes, what: str) -> dict[str, Any]:
    try:
        return deserialize(name, data)
    except TimelineError as e:
        raise TimelineError(f"{what}: {e}") from e


@dataclass
class CleanerPlan:
    """Files a clean deletes, per partition (full paths), and why (policy, earliest retained)."""

    policy: str
    files_per_partition: dict[str, list[str]] = field(default_factory=dict)
    earliest_instant_to_retain: tuple[str, str] | None = None  # (timestamp, action)
    last_completed_commit: str = ""
    partitions_to_delete: list[str] = field(default_factory=list)

    @property
    def total_files(self) -> int:
        return sum(len(v) for v in self.files_per_partition.values())

    def to_bytes(self) -> bytes:
        eitr = None
        if self.earliest_instant_to_retain is not None:
            ts, action = self.earliest_instant_to_retain
            eitr = {"timestamp": ts, "action": action, "state": "COMPLETED"}
        rec: dict[str, Any] = {
            "earliestInstantToRetain": eitr,
            "lastCompletedCommitTimestamp": self.last_completed_commit,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {},  # deprecated, kept empty as Java does
            "version": CLEAN_PLAN_VERSION,
            "filePathsToBeDeletedPerPartition": {
                p: [{"filePath": f, "isBootstrapBaseFile": False} for f in files]
                for p, files in self.files_per_partition.items()
            },
            "partitionsToBeDeleted": list(self.partitions_to_delete),
        }
        return serialize(CLEANER_PLAN, rec)

    @classmethod
    def from_bytes(cls, data: bytes, *, what: str = "cleaner plan") -> CleanerPlan:
        rec = _read(CLEANER_PLAN, data, what)
        files: dict[str, list[str]] = {}
        for p, infos in (rec.get("filePathsToBeDeletedPerPartition") or {}).items():
            files[p] = [i["filePath"] for i in infos or () if i.get("filePath")]
        # version 1 plans only have file names per partition
        for p, names in (rec.get("filesToBeDeletedPerPartition") or {}).items():
            files.setdefault(p, []).extend(n for n in names or () if n not in files.get(p, []))
        eitr = rec.get("earliestInstantToRetain")
        return cls(
            policy=rec.get("policy") or "",
            files_per_partition=files,
            earliest_instant_to_retain=(eitr["timestamp"], eitr["action"]) if eitr else None,
            last_completed_commit=rec.get("lastCompletedCommitTimestamp") or "",
            partitions_to_delete=list(rec.get("partitionsToBeDeleted") or ()),
        )


@dataclass
class PartitionCleanStat:
    partition_path: str
    policy: str
    delete_path_patterns: list[str] = field(default_factory=list)
    success_delete_files: list[str] = field(default_factory=list)
    failed_delete_files: list[str] = field(default_factory=list)

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "policy": self.policy,
            "deletePathPatterns": list(self.delete_path_patterns),
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "isPartitionDeleted": False,
        }


@dataclass
class CleanMetadata:
    start_clean_time: str
    time_taken_ms: int
    earliest_commit_to_retain: str
    last_completed_commit: str
    partitions: dict[str, PartitionCleanStat] = field(default_factory=dict)

    @property
    def total_files_deleted(self) -> int:
        return sum(len(s.success_delete_files) for s in self.partitions.values())

    def to_bytes(self) -> bytes:
        rec = {
            "startCleanTime": self.start_clean_time,
            "timeTakenInMillis": self.time_taken_ms,
            "totalFilesDeleted": self.total_files_deleted,
            "earliestCommitToRetain": self.earliest_commit_to_retain,
            "lastCompletedCommitTimestamp": self.last_completed_commit,
            "partitionMetadata": {p: s.to_avro() for p, s in self.partitions.items()},
            "version": CLEAN_METADATA_VERSION,
            "bootstrapPartitionMetadata": {},
        }
        return serialize(CLEAN_METADATA, rec)

    @classmethod
    def from_bytes(cls, data: bytes, *, what: str = "clean metadata") -> CleanMetadata:
        rec = _read(CLEAN_METADATA, data, what)
        parts = {
            p: PartitionCleanStat(
                m["partitionPath"],
                m["policy"],
                list(m["deletePathPatterns"]),
                list(m["successDeleteFiles"]),
                list(m["failedDeleteFiles"]),
            )
            for p, m in (rec.get("partitionMetadata") or {}).items()
        }
        return cls(rec["startCleanTime"], int(rec["timeTakenInMillis"]), rec["earliestCommitToRetain"],
                   rec.get("lastCompletedCommitTimestamp") or "", parts)  # fmt: skip
