"""DIRECT markers of a compaction (spec 10.1): ``.hoodie/.temp/<t>/<partition>/<file>.marker.MERGE``,
written before each new base file so a failed attempt can be undone file by file."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hudi_core.table.hudi_table import HudiTable

__all__ = ["create_merge_marker", "delete_marker_dir", "marker_dir", "rollback_by_markers"]

_SUFFIXES = (".marker.MERGE", ".marker.CREATE")


def marker_dir(table: HudiTable, instant_time: str) -> str:
    return f"{table.meta_path}/.temp/{instant_time}"


def create_merge_marker(table: HudiTable, instant_time: str, partition_path: str, file_name: str) -> str:
    rel = f"{partition_path}/{file_name}" if partition_path else file_name
    path = f"{marker_dir(table, instant_time)}/{rel}.marker.MERGE"
    table.storage.makedirs(path.rsplit("/", 1)[0])
    table.storage.write_bytes(path, b"")
    return path


def rollback_by_markers(table: HudiTable, instant_time: str) -> list[str]:
    """Delete every data file a MERGE/CREATE marker of ``instant_time`` names; returns them."""
    root = marker_dir(table, instant_time)
    storage = table.storage
    if not storage.exists(root):
        return []
    deleted: list[str] = []
    for info in storage.walk_files(root):
        rel = info.path[len(root) + 1 :] if info.path.startswith(root + "/") else info.name
        for suffix in _SUFFIXES:
            if rel.endswith(suffix):
                data_rel = rel[: -len(suffix)]
                parent, _, name = data_rel.rpartition("/")
                target = f"{table.partition_uri(parent) if parent else table.base_uri}/{name}"
                if storage.delete(target):
                    deleted.append(target)
    delete_marker_dir(table, instant_time)
    return deleted


def delete_marker_dir(table: HudiTable, instant_time: str) -> None:
    root = marker_dir(table, instant_time)
    if table.storage.exists(root):
        table.storage.delete_dir(root)
