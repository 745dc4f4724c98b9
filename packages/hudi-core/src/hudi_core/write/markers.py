"""DIRECT markers (spec 10.1): one empty file per data file, created before the file.

``.hoodie/.temp/<instant>/<partition>/<file name>.marker.<CREATE|MERGE|APPEND>``; APPEND markers
carry a base-file-style name ``<fileId>_<writeToken>_<baseInstant>.parquet`` (HUDI-1517).
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_core.storage.base import Storage
from hudi_core.table.paths import join_table_path

__all__ = ["TEMP_FOLDER", "Marker", "MarkerFiles"]

TEMP_FOLDER = ".temp"
IO_TYPES = ("CREATE", "MERGE", "APPEND")


@dataclass(frozen=True)
class Marker:
    partition_path: str
    file_name: str  # the data file's name (APPEND: base-file-style name)
    io_type: str

    @property
    def relative_path(self) -> str:
        name = f"{self.file_name}.marker.{self.io_type}"
        return f"{self.partition_path}/{name}" if self.partition_path else name


class MarkerFiles:
    """The markers of one instant."""

    def __init__(self, storage: Storage, meta_path: str, instant: str) -> None:
        self.storage = storage
        self.dir = f"{meta_path.rstrip('/')}/{TEMP_FOLDER}/{instant}"

    def create(self, partition_path: str, file_name: str, io_type: str) -> Marker:
        if io_type not in IO_TYPES:
            raise ValueError(f"marker IO type {io_type!r} is not one of {IO_TYPES}")
        marker = Marker(partition_path, file_name, io_type)
        self.storage.create_if_absent(join_table_path(self.dir, marker.relative_path), b"")
        return marker

    def exists(self) -> bool:
        return self.storage.exists(self.dir)

    def list(self) -> list[Marker]:
        """Every marker of the instant (``MARKERS*`` timeline-server files are not written here
        and are read as a plain list when present)."""
        out: list[Marker] = []
        root = self.dir.rstrip("/")
        for info in self.storage.walk_files(root):
            rel = info.path[len(root) + 1 :]
            name = info.name
            if name.startswith("MARKERS") and "/" not in rel:
                if name == "MARKERS.type":
                    continue
                for line in self.storage.read_text(info.path).splitlines():
                    parsed = _parse(line.strip())
                    if parsed is not None:
                        out.append(parsed)
                continue
            parsed = _parse(rel)
            if parsed is not None:
                out.append(parsed)
        return out

    def delete_all(self) -> None:
        self.storage.delete_dir(self.dir)


def _parse(rel: str) -> Marker | None:
    if ".marker." not in rel:
        return None
    path, io_type = rel.rsplit(".marker.", 1)
    if io_type not in IO_TYPES:
        return None
    partition, _, name = path.rpartition("/")
    return Marker(partition, name, io_type)
