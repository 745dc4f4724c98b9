"""Writing log files: whole blocks in one go, a new log version per append on storage without
append (local disk, object stores), roll-over past ``hoodie.logfile.max.size`` (spec 4, 5.8)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hudi_core.errors import StorageError
from hudi_core.storage.base import Storage
from hudi_core.table.file_names import LogFileName

__all__ = ["DEFAULT_MAX_LOG_SIZE", "LogAppendResult", "LogWriter", "latest_log_version"]

DEFAULT_MAX_LOG_SIZE = 1024 * 1024 * 1024


@dataclass(frozen=True)
class LogAppendResult:
    """Where an append landed: ``offset`` of the first written byte in the file, bytes written
    and the file's size afterwards (for write stats)."""

    path: str
    file_name: str
    version: int
    offset: int
    size_written: int
    file_size: int


def latest_log_version(
    storage: Storage, partition_uri: str, file_id: str, base_instant: str
) -> LogFileName | None:
    """The highest-version log file of a file slice (``None`` when there is none)."""
    return latest_log_version_in((f.name for f in storage.list(partition_uri)), file_id, base_instant)


def latest_log_version_in(names: Iterable[str], file_id: str, base_instant: str) -> LogFileName | None:
    """The highest-version log file of a file slice among the file ``names`` of its partition."""
    best: LogFileName | None = None
    for name in names:
        parsed = LogFileName.parse(name)
        if (
            parsed is None
            or parsed.cdc
            or parsed.extension != "log"
            or parsed.file_id != file_id
            or parsed.base_instant != base_instant
        ):
            continue
        if best is None or (parsed.version, parsed.write_token or "") > (
            best.version,
            best.write_token or "",
        ):
            best = parsed
    return best


class LogWriter:
    """Appends blocks to the log of one file slice.

    On storage without append support (everything built in) every :meth:`append` creates a new
    log version, ``highest existing + 1``, named with this writer's write token. A storage that
    sets ``supports_append = True`` and offers ``append_bytes(path, data) -> int`` (new size)
    gets Java's HDFS behaviour: append to the current file until it exceeds ``max_size``.
    """

    def __init__(
        self,
        storage: Storage,
        partition_uri: str,
        file_id: str,
        base_instant: str,
        write_token: str,
        *,
        max_size: int = DEFAULT_MAX_LOG_SIZE,
        listed: Iterable[str] | None = None,
    ) -> None:
        """``listed``: the file names of the partition, when the caller listed it already."""
        self.storage = storage
        self._latest: LogFileName | bool | None = (
            False if listed is None else latest_log_version_in(listed, file_id, base_instant)
        )  # False: not known yet
        self.partition_uri = partition_uri.rstrip("/")
        self.file_id = file_id
        self.base_instant = base_instant
        self.write_token = write_token
        self.max_size = max_size
        self._current: LogFileName | None = None
        self._current_size = 0

    def _path(self, name: LogFileName) -> str:
        return f"{self.partition_uri}/{name.name}"

    def _next_name(self) -> LogFileName:
        latest = self._latest
        self._latest = False  # a second name (a lost create, a roll-over) lists again
        if latest is False:
            latest = latest_log_version(self.storage, self.partition_uri, self.file_id, self.base_instant)
        assert not isinstance(latest, bool)
        version = 1 if latest is None else latest.version + 1
        if self._current is not None:
            version = max(version, self._current.version + 1)
        return LogFileName(self.file_id, self.base_instant, version, self.write_token)

    def append(self, blocks: list[bytes]) -> LogAppendResult:
        """Write ``blocks`` (each a whole encoded block) with a single write."""
        data = b"".join(blocks)
        can_append = bool(getattr(self.storage, "supports_append", False))
        if can_append and self._current is not None and self._current_size < self.max_size:
            path = self._path(self._current)
            new_size = int(self.storage.append_bytes(path, data))  # type: ignore[attr-defined]
            self._current_size = new_size
            return LogAppendResult(
                path, self._current.name, self._current.version, new_size - len(data), len(data), new_size
            )
        for _ in range(100):
            name = self._next_name()
            path = self._path(name)
            if self.storage.create_if_absent(path, data):
                self._current = name
                self._current_size = len(data)
                return LogAppendResult(path, name.name, name.version, 0, len(data), len(data))
            # Another writer with the same token took this version; step past it.
            self._current = name
        raise StorageError(
            f"could not create a new log version for file group {self.file_id!r} in {self.partition_uri}; "
            "another writer keeps creating the same names (duplicate write token?)"
        )

    @property
    def current_file(self) -> str | None:
        return None if self._current is None else self._path(self._current)
