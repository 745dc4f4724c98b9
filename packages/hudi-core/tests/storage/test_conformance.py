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


def test_local_storage_drops_hadoops_stale_checksum_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Hudi's writers leave .NAME.crc beside each local file; Hadoop refuses to read a file whose
    # checksum no longer matches, so replacing or deleting a file must drop its checksum
    from hudi_core.storage.local import LocalStorage

    st = LocalStorage()
    for name in ("hoodie.properties", "gone.parquet", "moved.json"):
        (tmp_path / name).write_bytes(b"old")
        (tmp_path / f".{name}.crc").write_bytes(b"crc of old")
    st.write_bytes(str(tmp_path / "hoodie.properties"), b"new")
    st.delete(str(tmp_path / "gone.parquet"))
    (tmp_path / "src").write_bytes(b"new")
    st.rename(str(tmp_path / "src"), str(tmp_path / "moved.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hoodie.properties", "moved.json"]
    assert (tmp_path / "hoodie.properties").read_bytes() == b"new"
