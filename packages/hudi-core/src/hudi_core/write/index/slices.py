"""Where an index finds the existing records of a file group, and where updates must go.

Under a pending compaction the latest slice of a file group is the compaction's (maybe empty)
slice: the records still live in the previous slice's base file and logs, but new log files
must be written on top of the compaction instant (spec 8.1 step 7). So an index reads keys from
the *merged* slice and tags records with the *latest* slice's base instant.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hudi_core.fs_view import BaseFile, FileSystemView

__all__ = ["FileGroupLocation", "file_group_locations"]


@dataclass(frozen=True)
class FileGroupLocation:
    partition_path: str
    file_id: str
    #: base instant new writes go to (a pending compaction's instant when there is one)
    base_instant: str
    #: the base file holding the group's keys (from the slice before a pending compaction)
    base_file: BaseFile | None
    under_pending_compaction: bool


def file_group_locations(view: FileSystemView, partitions: Iterable[str] | None) -> list[FileGroupLocation]:
    """One location per visible file group of ``partitions`` (all when None).

    Only the named partitions are listed, as Apache Hudi's index does: an upsert into two of a
    year's daily partitions lists two folders, not 366 (a request each on S3). A named partition
    that does not exist lists empty."""
    pending = view.visible.pending_compactions
    out: list[FileGroupLocation] = []
    for g in view.all_file_groups(partitions=partitions):
        latest = g.latest_slice()
        if latest is None:
            continue
        under = latest.base_instant in pending
        base_file = latest.base_file
        if under and base_file is None and len(g.slices) > 1:
            base_file = g.slices[-2].base_file
        if base_file is None and not latest.log_files and not under:
            continue
        out.append(FileGroupLocation(g.partition_path, g.file_id, latest.base_instant, base_file, under))
    return out
