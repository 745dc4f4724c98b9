"""Base files, log files, file slices and file groups (spec 4 and 8.1)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_core.table.file_names import BaseFileName, LogFileName

__all__ = ["BaseFile", "FileGroup", "FileSlice", "LogFile"]


@dataclass(frozen=True)
class BaseFile:
    """A parquet base file ``<fileId>_<writeToken>_<instant>.parquet``."""

    path: str
    name: str
    file_id: str
    write_token: str
    instant: str
    size: int = 0

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
