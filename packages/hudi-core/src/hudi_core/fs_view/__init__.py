"""File groups, file slices and the file-system view (spec 8.1)."""

from __future__ import annotations

from hudi_core.fs_view.model import BaseFile, FileGroup, FileSlice, LogFile
from hudi_core.fs_view.partitions import list_partitions, partition_values
from hudi_core.fs_view.view import (
    CommitSet,
    CompactionOperation,
    FileSystemView,
    VisibleTimeline,
)

__all__ = [
    "BaseFile",
    "CommitSet",
    "CompactionOperation",
    "FileGroup",
    "FileSlice",
    "FileSystemView",
    "LogFile",
    "VisibleTimeline",
    "list_partitions",
    "partition_values",
]
