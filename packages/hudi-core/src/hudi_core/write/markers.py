"""DIRECT markers (spec 10.1): one empty file per data file, created before the file.

``.hoodie/.temp/<instant>/<partition>/<file name>.marker.<CREATE|MERGE|APPEND>``; APPEND markers
carry a base-file-style name ``<fileId>_<writeToken>_<baseInstant>.parquet`` (HUDI-1517).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_core.storage.base import Storage
from hudi_core.table.paths import join_table_path

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.write.handles.context import WriteStatus

__all__ = ["TEMP_FOLDER", "Marker", "MarkerFiles", "delete_marked_files", "reconcile_against_markers"]

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


def delete_marked_files(table: MetaClient, instant: str) -> list[str]:
    """Delete every base file a MERGE or CREATE marker of ``instant`` names, then its markers
    (a table service's failed attempt: it writes no log files, so APPEND markers are not its
    own); returns the deleted files."""
    markers = MarkerFiles(table.storage, table.meta_path, instant)
    if not markers.exists():
        return []
    deleted: list[str] = []
    for m in markers.list():
        if m.io_type not in ("MERGE", "CREATE"):
            continue
        parent = table.partition_uri(m.partition_path) if m.partition_path else table.base_uri
        if table.storage.delete(f"{parent}/{m.file_name}"):
            deleted.append(f"{parent}/{m.file_name}")
    markers.delete_all()
    return deleted


def _parse(rel: str) -> Marker | None:
    if ".marker." not in rel:
        return None
    path, io_type = rel.rsplit(".marker.", 1)
    if io_type not in IO_TYPES:
        return None
    partition, _, name = path.rpartition("/")
    return Marker(partition, name, io_type)


def reconcile_against_markers(table: MetaClient, instant: str, statuses: Iterable[WriteStatus]) -> list[str]:
    """Delete the data files of ``instant`` that markers name but no successful ``statuses``
    do: files of failed, retried or speculative task attempts (Hudi's reconcileAgainstMarkers).
    Returns the deleted paths; log file lists in the statuses' stats drop the deleted names.

    CREATE/MERGE markers name the file. An APPEND marker names the file group and the attempt's
    write token (``<fileId>_<token>_<baseInstant>.parquet``): every log file of that slice with
    that token is the attempt's, unless a successful status came from the same attempt. A log
    file is only deleted when its blocks are of ``instant`` (tokens repeat across Spark apps)."""
    from hudi_core.log.reader import read_log_file
    from hudi_core.table.file_names import BaseFileName, LogFileName

    statuses = list(statuses)
    kept: set[str] = set()
    for s in statuses:
        if s.stat.path:
            kept.add(s.stat.path.rsplit("/", 1)[-1])
        kept.update(p.rsplit("/", 1)[-1] for p in s.stat.cdc_stats or ())
    ok_tokens = {t for n in kept if (t := _token_of(n)) is not None}
    markers = MarkerFiles(table.storage, table.meta_path, instant)
    storage = table.storage
    deleted: list[str] = []
    listings: dict[str, list[str]] = {}
    for m in markers.list():  # (no folder lists empty: asking first would cost S3 two requests)
        uri = table.partition_uri(m.partition_path) if m.partition_path else table.base_uri
        if m.io_type != "APPEND":
            if m.file_name not in kept and storage.delete(f"{uri}/{m.file_name}"):
                deleted.append(f"{uri}/{m.file_name}")
            continue
        base = BaseFileName.parse(m.file_name)
        if base is None or base.write_token in ok_tokens:
            continue
        if uri not in listings:
            listings[uri] = [i.name for i in storage.list(uri)]
        for name in listings[uri]:
            lf = LogFileName.parse(name)
            if (lf is None or name in kept or lf.file_id != base.file_id or lf.base_instant != base.instant_time
                    or lf.write_token != base.write_token):  # fmt: skip
                continue
            path = f"{uri}/{name}"
            blocks = read_log_file(storage, path)
            if blocks and any(b.instant_time not in (None, instant) for b in blocks):
                continue  # another instant's file that happens to share the token
            if storage.delete(path):
                deleted.append(path)
    gone = {p.rsplit("/", 1)[-1] for p in deleted}
    for s in statuses:
        if s.stat.log_files:
            s.stat.log_files = [f for f in s.stat.log_files if f.rsplit("/", 1)[-1] not in gone]
    return deleted


def _token_of(name: str) -> str | None:
    from hudi_core.table.file_names import BaseFileName, LogFileName

    lf = LogFileName.parse(name)
    if lf is not None:
        return lf.write_token
    b = BaseFileName.parse(name)
    return b.write_token if b is not None else None
