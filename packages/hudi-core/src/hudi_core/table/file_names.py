"""File names of base and log files, file ids and write tokens (spec section 4)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

__all__ = [
    "PARTITION_METAFILE_PREFIX",
    "UNKNOWN_WRITE_TOKEN",
    "BaseFileName",
    "LogFileName",
    "is_base_file",
    "new_file_id",
    "write_token",
]

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METAFILE_PREFIX = ".hoodie_partition_metadata"
UNKNOWN_WRITE_TOKEN = "1-0-1"
DEFAULT_WRITE_TOKEN = "0-0-0"

_LOG_RE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(\.cdc)?)?$")
_TOKEN_RE = re.compile(r"^\d+-\d+-\d+$")


def new_file_id(index: int = 0) -> str:
    """``<uuid4>-<index>``: a new file group id."""
    return f"{uuid.uuid4()}-{index}"


def write_token(task_partition_id: int, stage_id: int, task_attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{task_attempt_id}"


@dataclass(frozen=True)
class BaseFileName:
    """``<fileId>_<writeToken>_<instantTime>.parquet``."""

    file_id: str
    write_token: str
    instant_time: str
    extension: str = BASE_FILE_EXTENSION

    @property
    def name(self) -> str:
        return f"{self.file_id}_{self.write_token}_{self.instant_time}{self.extension}"

    @classmethod
    def parse(cls, name: str) -> BaseFileName | None:
        if not name.endswith(BASE_FILE_EXTENSION) or name.startswith("."):
            return None
        stem = name[: -len(BASE_FILE_EXTENSION)]
        parts = stem.split("_")
        if len(parts) != 3 or not parts[0] or not parts[2].isdigit():
            return None
        return cls(parts[0], parts[1], parts[2])


@dataclass(frozen=True)
class LogFileName:
    """``.<fileId>_<baseInstant>.log.<version>_<writeToken>``."""

    file_id: str
    base_instant: str
    version: int
    write_token: str | None
    extension: str = "log"
    cdc: bool = False

    @property
    def name(self) -> str:
        token = f"_{self.write_token}" if self.write_token else ""
        return f".{self.file_id}_{self.base_instant}.{self.extension}.{self.version}{token}{'.cdc' if self.cdc else ''}"

    @classmethod
    def parse(cls, name: str) -> LogFileName | None:
        m = _LOG_RE.match(name)
        if not m:
            return None
        return cls(m.group(1), m.group(2), int(m.group(4)), m.group(6), m.group(3), m.group(10) is not None)

    def sort_key(self) -> tuple[str, int, str]:
        """Reader order within a slice: base instant, version, write token (None first)."""
        return (self.base_instant, self.version, self.write_token or "")


def is_base_file(name: str) -> bool:
    return BaseFileName.parse(name) is not None
