"""The storage conformance suite over every storage hudi-core ships."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hudi_core.storage import FsspecStorage, LocalStorage, MemoryStorage
from hudi_core.testing.storage import StorageCase, StorageConformance


class TestLocalStoragePlainPath(StorageConformance):
    @pytest.fixture
    def storage_case(self, tmp_path: Path) -> StorageCase:
        return StorageCase(LocalStorage(), base=str(tmp_path / "t"))


class TestLocalStorageFileUri(StorageConformance):
    @pytest.fixture
    def storage_case(self, tmp_path: Path) -> StorageCase:
        return StorageCase(LocalStorage(), base=f"file://{tmp_path}/t")


class TestMemoryStorage(StorageConformance):
    @pytest.fixture
    def storage_case(self) -> StorageCase:
        st = MemoryStorage()
        base = f"memory://conformance-{uuid.uuid4().hex}"
        yield StorageCase(st, base=base)  # type: ignore[misc]
        st.delete_dir(base)


class TestFsspecStorageOverFile(StorageConformance):
    @pytest.fixture
    def storage_case(self, tmp_path: Path) -> StorageCase:
        base = f"file://{tmp_path}/t"
        return StorageCase(FsspecStorage(base), base=base)
