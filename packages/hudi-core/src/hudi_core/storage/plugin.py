"""Built-in storage plugins: local disk, memory, and the generic fsspec fallback (trylast)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_core.plugins.hookspecs import hookimpl
from hudi_core.storage.base import FsspecStorage, HdfsStorage, Storage
from hudi_core.storage.local import LocalStorage, MemoryStorage

__all__ = ["FsspecStoragePlugin", "LocalStoragePlugin", "MemoryStoragePlugin"]


def _scheme(uri: str) -> str:
    return uri.split("://", 1)[0].lower() if "://" in uri else "file"


class LocalStoragePlugin:
    STORAGE_NAME = "file"

    @hookimpl
    def hudi_storage_for_uri(self, uri: str, options: Mapping[str, str]) -> Storage | None:
        return LocalStorage() if _scheme(uri) in ("file", "local") else None


class MemoryStoragePlugin:
    STORAGE_NAME = "memory"

    @hookimpl
    def hudi_storage_for_uri(self, uri: str, options: Mapping[str, str]) -> Storage | None:
        return MemoryStorage() if _scheme(uri) == "memory" else None


class FsspecStoragePlugin:
    """Any scheme fsspec knows (hdfs through hdfs-native, gcs, abfs...), asked last."""

    STORAGE_NAME = "fsspec"

    @hookimpl(trylast=True)
    def hudi_storage_for_uri(self, uri: str, options: Mapping[str, str]) -> Storage | None:
        import fsspec

        scheme = _scheme(uri)
        if scheme not in fsspec.available_protocols():
            return None
        try:
            fs_options: dict[str, Any] = {
                k.removeprefix("hoodie.storage.fsspec."): v
                for k, v in options.items()
                if k.startswith("hoodie.storage.fsspec.")
            }
            storage = FsspecStorage(uri, fs_options)
            if scheme == "hdfs" and type(storage.fs).__module__.startswith("hdfs_native"):
                return HdfsStorage(uri, fs_options)
            return storage
        except (ImportError, ValueError):
            return None
