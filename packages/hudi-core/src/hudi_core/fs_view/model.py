"""Base files, log files, file slices and file groups (spec 4 and 8.1)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hudi_core.table.file_names import BaseFileName, LogFileName

__all__ = ["BaseFile", "FileGroup", "FileSlice", "LogFile", "io_metrics"]

# the metrics Hudi's compaction and clustering plans record (Java's FileSliceMetricUtils)
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
TOTAL_IO_MB = "TOTAL_IO_MB"
_MB = 1024 * 1024


@dataclass(frozen=True)
class BaseFile:
    """A parquet base file ``<fileId>_<writeToken>_<instant>.parquet``."""

    path: str
    name: str
    file_id: str
    write_token: str
    instant: str
    size: int = 0
    #: a METADATA_ONLY bootstrap's skeleton file (meta columns only): the source table's file
    #: that holds its rows' data columns, row for row (``io.bootstrap_index``)
    bootstrap_source: str | None = None

    @classmethod
    def from_path(cls, path: str, size: int = 0) -> BaseFile | None:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        parsed = BaseFileName.parse(name)
        if parsed is None:
            return None
        return cls(path, name, parsed.file_id, parsed.write_token, parsed.instant_time, size)


@dataclass(frozen=True)
class LogFile:
    """A log file ``.<fileId>_<baseInstant>.log.<version>_<writeToken>``."""

    path: str
    name: str
    file_id: str
    base_instant: str
    version: int
    write_token: str | None
    size: int = 0

    @classmethod
    def from_path(cls, path: str, size: int = 0) -> LogFile | None:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        parsed = LogFileName.parse(name)
        if parsed is None or parsed.extension != "log" or parsed.cdc:
            return None
        return cls(path, name, parsed.file_id, parsed.base_instant, parsed.version, parsed.write_token, size)

    def sort_key(self) -> tuple[str, int, str]:
        """Reader order (Java's ``HoodieLogFile`` comparator): base instant, version, token."""
        return (self.base_instant, self.version, self.write_token or "")


@dataclass(frozen=True)
class FileSlice:
    """A base file (optional) and the log files written on top of it, in reader order."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()

    @property
    def is_empty(self) -> bool:
        return self.base_file is None and not self.log_files

    @property
    def latest_instant(self) -> str:
        """Newest instant named by any file of the slice (logs: their base instant)."""
        return max([self.base_instant] + [lf.base_instant for lf in self.log_files])

    def with_logs(self, logs: tuple[LogFile, ...]) -> FileSlice:
        ordered = tuple(sorted(logs, key=LogFile.sort_key))
        return FileSlice(self.partition_path, self.file_id, self.base_instant, self.base_file, ordered)


@dataclass
class FileGroup:
    """All slices of one file id in one partition, oldest first."""

    partition_path: str
    file_id: str
    slices: list[FileSlice] = field(default_factory=list)

    def latest_slice(self) -> FileSlice | None:
        return self.slices[-1] if self.slices else None


def io_metrics(slices: Iterable[FileSlice], *, default_base_size: int) -> dict[str, float]:
    """What rewriting ``slices`` reads and writes, as Hudi's compaction and clustering plans
    record it: their log files and log bytes, and the IO in whole MB (bytes summed over the
    slices first, a slice without a base file assumed to write a full-size one)."""
    logs = log_size = read = write = 0
    for s in slices:
        logs += len(s.log_files)
        log_size += sum(max(lf.size, 0) for lf in s.log_files)
        base = s.base_file.size if s.base_file is not None else 0
        read += base
        write += base if s.base_file is not None else default_base_size
    read_mb, write_mb = (read + log_size) // _MB, write // _MB
    return {
        TOTAL_LOG_FILES: float(logs),
        TOTAL_LOG_FILES_SIZE: float(log_size),
        TOTAL_IO_READ_MB: float(read_mb),
        TOTAL_IO_WRITE_MB: float(write_mb),
        TOTAL_IO_MB: float(read_mb + write_mb),
    }
