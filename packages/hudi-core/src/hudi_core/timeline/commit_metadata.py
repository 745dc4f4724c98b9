"""JSON commit metadata (``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata``), spec 3.4."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from hudi_core.errors import TimelineError

__all__ = ["CommitMetadata", "WriteStat"]

_COMPACTION_COUNTERS = (
    "totalLogRecords",
    "totalLogFilesCompacted",
    "totalLogSizeCompacted",
    "totalUpdatedRecordsCompacted",
    "totalLogBlocks",
    "totalCorruptLogBlock",
    "totalRollbackBlocks",
)


@dataclass
class WriteStat:
    """One file written by a commit (``HoodieWriteStat``; ``HoodieDeltaWriteStat`` when
    ``log_version`` is set). Field names map to Java's camelCase in :meth:`to_json_dict`."""

    file_id: str
    path: str | None
    partition_path: str | None
    prev_commit: str = "null"
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    file_size_in_bytes: int = 0
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: dict[str, int] | None = None
    # HoodieDeltaWriteStat (MOR log appends)
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: list[str] | None = None
    #: ``{CDC log file, from the base path: size}`` (``hoodie.table.cdc.enabled``)
    cdc_stats: dict[str, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "fileId": self.file_id,
            "path": self.path,
            "cdcStats": dict(self.cdc_stats) if self.cdc_stats else None,
            "prevCommit": self.prev_commit,
            "numWrites": self.num_writes,
            "numDeletes": self.num_deletes,
            "numUpdateWrites": self.num_update_writes,
            "numInserts": self.num_inserts,
            "totalWriteBytes": self.total_write_bytes,
            "totalWriteErrors": self.total_write_errors,
            "tempPath": None,
            "partitionPath": self.partition_path,
            "totalLogRecords": self.total_log_records,
            "totalLogFilesCompacted": self.total_log_files_compacted,
            "totalLogSizeCompacted": self.total_log_size_compacted,
            "totalUpdatedRecordsCompacted": self.total_updated_records_compacted,
            "totalLogBlocks": self.total_log_blocks,
            "totalCorruptLogBlock": self.total_corrupt_log_block,
            "totalRollbackBlocks": self.total_rollback_blocks,
            "fileSizeInBytes": self.file_size_in_bytes,
            "minEventTime": self.min_event_time,
            "maxEventTime": self.max_event_time,
            "runtimeStats": self.runtime_stats,
        }
        if self.log_version is not None:
            d["logVersion"] = self.log_version
            d["logOffset"] = self.log_offset or 0
            d["baseFile"] = self.base_file or ""
            d["logFiles"] = list(self.log_files or [])
            d["recordsStats"] = {"val": None}
        d.update(self.extra)
        return d

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> WriteStat:
        known = {
            "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes",
            "numUpdateWrites", "numInserts", "totalWriteBytes", "totalWriteErrors", "tempPath",
            "partitionPath", *_COMPACTION_COUNTERS, "fileSizeInBytes", "minEventTime",
            "maxEventTime", "runtimeStats", "logVersion", "logOffset", "baseFile", "logFiles",
            "recordsStats",
        }  # fmt: skip

        def n(key: str) -> int:
            v = d.get(key)
            return int(v) if v is not None else 0

        return cls(
            file_id=d.get("fileId") or "",
            path=d.get("path"),
            partition_path=d.get("partitionPath"),
            prev_commit=str(d.get("prevCommit", "null")),
            num_writes=n("numWrites"),
            num_deletes=n("numDeletes"),
            num_update_writes=n("numUpdateWrites"),
            num_inserts=n("numInserts"),
            total_write_bytes=n("totalWriteBytes"),
            total_write_errors=n("totalWriteErrors"),
            file_size_in_bytes=n("fileSizeInBytes"),
            total_log_records=n("totalLogRecords"),
            total_log_files_compacted=n("totalLogFilesCompacted"),
            total_log_size_compacted=n("totalLogSizeCompacted"),
            total_updated_records_compacted=n("totalUpdatedRecordsCompacted"),
            total_log_blocks=n("totalLogBlocks"),
            total_corrupt_log_block=n("totalCorruptLogBlock"),
            total_rollback_blocks=n("totalRollbackBlocks"),
            min_event_time=d.get("minEventTime"),
            max_event_time=d.get("maxEventTime"),
            runtime_stats=d.get("runtimeStats"),
            log_version=d.get("logVersion"),
            log_offset=d.get("logOffset"),
            base_file=d.get("baseFile"),
            log_files=d.get("logFiles"),
            cdc_stats={str(k): int(v) for k, v in d["cdcStats"].items()} if d.get("cdcStats") else None,
            extra={k: v for k, v in d.items() if k not in known},
        )


@dataclass
class CommitMetadata:
    """``HoodieCommitMetadata``; with ``partition_to_replace_file_ids`` it is the replace form."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    partition_to_replace_file_ids: dict[str, list[str]] | None = None

    # -- building --------------------------------------------------------------------------------

    def add_write_stat(self, stat: WriteStat) -> None:
        self.partition_to_write_stats.setdefault(stat.partition_path or "", []).append(stat)

    @property
    def schema(self) -> str | None:
        return self.extra_metadata.get("schema") or None

    def all_write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def file_ids(self) -> set[tuple[str, str]]:
        return {(p, s.file_id) for p, stats in self.partition_to_write_stats.items() for s in stats}

    # -- JSON ------------------------------------------------------------------------------------

    def to_json_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_json_dict() for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            d["partitionToReplaceFileIds"] = {
                p: list(ids) for p, ids in self.partition_to_replace_file_ids.items()
            }
        return d

    def to_json(self) -> str:
        """Pretty JSON in the shape Jackson gives Java's commit files."""
        return json.dumps(self.to_json_dict(), indent=2, separators=(",", " : "))

    def to_bytes(self) -> bytes:
        return self.to_json().encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes | str) -> CommitMetadata:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        if not text.strip():
            return cls()  # Java treats an empty file as empty metadata
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise TimelineError(f"commit metadata is not valid JSON: {e}") from e
        stats = {
            p: [WriteStat.from_json_dict(s) for s in (lst or [])]
            for p, lst in (d.get("partitionToWriteStats") or {}).items()
        }
        replace = d.get("partitionToReplaceFileIds")
        return cls(
            partition_to_write_stats=stats,
            compacted=bool(d.get("compacted", False)),
            extra_metadata={k: str(v) for k, v in (d.get("extraMetadata") or {}).items()},
            operation_type=str(d.get("operationType") or "UNKNOWN"),
            partition_to_replace_file_ids=(
                {p: list(v or []) for p, v in replace.items()} if replace is not None else None
            ),
        )


# keep dataclass field names discoverable for tools
WRITE_STAT_FIELDS = tuple(f.name for f in fields(WriteStat))
