"""Storage: read/write/list/delete/rename, atomic ``create_if_absent`` where the store allows."""

from __future__ import annotations

from collections.abc import Mapping

from hudi_core.storage.base import (
    TEMP_PREFIX,
    FileInfo,
    FsspecStorage,
    HdfsStorage,
    Storage,
    stale_temp_files,
)
from hudi_core.storage.local import LocalStorage, MemoryStorage

__all__ = [
    "TEMP_PREFIX",
    "FileInfo",
    "FsspecStorage",
    "HdfsStorage",
    "LocalStorage",
    "MemoryStorage",
    "Storage",
    "normalize_uri",
    "stale_temp_files",
    "storage_for",
]


def normalize_uri(uri: str) -> str:
    """Strip trailing slashes; turn relative plain paths into absolute ones."""
    import os

    if "://" not in uri:
        return os.path.abspath(uri).rstrip("/") or "/"
    return uri.rstrip("/")


def storage_for(uri: str, options: Mapping[str, str] | None = None) -> Storage:
    """The Storage that serves ``uri``, chosen by the installed storage plugins."""
    from hudi_core.plugins.manager import get_plugin_manager

    storage: Storage = get_plugin_manager().storage_for(uri, options or {})
    return storage
