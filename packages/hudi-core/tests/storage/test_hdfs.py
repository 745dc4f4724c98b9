"""hdfs:// goes through the generic fsspec storage (hdfs-native). No namenode runs here: the real
cluster suite runs only when HUDI_TEST_HDFS_URI names one (e.g. hdfs://namenode:8020/tmp/hudi-test)."""

from __future__ import annotations

import os
import uuid

import pytest
from hudi_core.plugins.manager import PluginManager
from hudi_core.storage import FsspecStorage
from hudi_core.testing.storage import StorageCase, StorageConformance

HDFS_URI_ENV = "HUDI_TEST_HDFS_URI"


def test_fsspec_fallback_resolves_hdfs_uris_without_connecting() -> None:
    pytest.importorskip("hdfs_native", reason="hdfs-native is not installed (pip install 'hudi-core[hdfs]')")
    from hdfs_native.fsspec import HdfsFileSystem

    # ".invalid" never resolves: constructing must not touch the network (a connect would hang
    # in hdfs-native's retries for minutes, so this test would time out rather than pass).
    st = PluginManager(load_entry_points=False).storage_for("hdfs://namenode.invalid:8020/warehouse/t", {})
    assert type(st) is FsspecStorage
    assert st.scheme == "hdfs"
    assert isinstance(st.fs, HdfsFileSystem)
    assert st.arrow_path("hdfs://namenode.invalid:8020/warehouse/t/.hoodie") == "/warehouse/t/.hoodie"
    assert st.atomic_create is False  # only the in-process lock; not claimed as atomic


class TestHdfsStorage(StorageConformance):
    """The conformance suite against a real HDFS, when one is named."""

    @pytest.fixture
    def storage_case(self) -> StorageCase:
        root = os.environ.get(HDFS_URI_ENV)
        if not root:
            pytest.skip(f"no HDFS cluster: set {HDFS_URI_ENV}=hdfs://namenode:port/scratch/dir to run")
        pytest.importorskip(
            "hdfs_native", reason="hdfs-native is not installed (pip install 'hudi-core[hdfs]')"
        )
        base = f"{root.rstrip('/')}/conformance-{uuid.uuid4().hex}"
        st = FsspecStorage(base)
        yield StorageCase(st, base=base)  # type: ignore[misc]
        st.delete_dir(base)
