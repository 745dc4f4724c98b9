"""hdfs:// through hdfs-native against a real HDFS (a mini cluster on loopback, or the cluster
HUDI_TEST_HDFS_URI names): the storage conformance suite, exclusive creation of timeline files,
and a table's whole life (write, read, compaction, a crashed write rolled back)."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from hudi_core.plugins.manager import PluginManager
from hudi_core.storage import HdfsStorage, storage_for
from hudi_core.table import HudiTable
from hudi_core.testing.storage import StorageCase, StorageConformance


def test_hdfs_uris_resolve_to_the_hdfs_storage_without_connecting() -> None:
    # ".invalid" never resolves: constructing must not touch the network (a connect would hang
    # in hdfs-native's retries for minutes, so this test would time out rather than pass).
    st = PluginManager(load_entry_points=False).storage_for("hdfs://namenode.invalid:8020/warehouse/t", {})
    assert type(st) is HdfsStorage
    assert st.scheme == "hdfs"
    assert st.arrow_path("hdfs://namenode.invalid:8020/warehouse/t/.hoodie") == "/warehouse/t/.hoodie"
    assert st.atomic_create is True  # the NameNode refuses a create without overwrite of an existing file


class TestHdfsStorage(StorageConformance):
    """The conformance suite against a real HDFS (its concurrent-creator test included)."""

    @pytest.fixture
    def storage_case(self, hdfs_root: str) -> StorageCase:
        base = f"{hdfs_root}/conformance-{uuid.uuid4().hex}"
        st = storage_for(base)
        assert isinstance(st, HdfsStorage)
        yield StorageCase(st, base=base)  # type: ignore[misc]
        st.delete_dir(base)


def test_a_merge_on_read_table_lives_on_hdfs(hdfs_root: str) -> None:
    base = f"{hdfs_root}/table-{uuid.uuid4().hex}"
    t = HudiTable.create(base, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    opts = {"hoodie.compact.inline": "false"}
    t.upsert(
        pa.table({"id": ["a", "b", "c"], "ts": [1, 1, 1], "v": [1, 2, 3], "p": ["x", "x", "y"]}), options=opts
    )
    t.upsert(pa.table({"id": ["a", "c"], "ts": [2, 2], "v": [10, 30], "p": ["x", "y"]}), options=opts)
    t.delete(pa.table({"id": ["b"], "p": ["x"]}), options=opts)

    def rows(table: HudiTable) -> list[tuple[str, int]]:
        return sorted((r["id"], r["v"]) for r in table.read(columns=["id", "v"]).to_pylist())

    assert rows(HudiTable.open(base)) == [("a", 10), ("c", 30)]
    assert any(s.log_files for s in HudiTable.open(base).file_slices())
    committed = HudiTable.open(base).compact(opts)
    assert committed and not any(s.log_files for s in HudiTable.open(base).file_slices())
    assert rows(HudiTable.open(base)) == [("a", 10), ("c", 30)]

    # a write that dies before its commit: files and a pending instant stay behind, invisible
    import hudi_core.write.client as client

    real_commit = client.commit
    client.commit = lambda *a, **k: (_ for _ in ()).throw(SystemExit("killed"))  # type: ignore[assignment]
    try:
        with pytest.raises(SystemExit):
            HudiTable.open(base).upsert(pa.table({"id": ["a", "z"], "ts": [9, 9], "v": [99, 99], "p": ["x", "z"]}),
                                        options=opts)  # fmt: skip
    finally:
        client.commit = real_commit
    assert HudiTable.open(base).timeline.pending(), "the crashed write left its instant pending"
    assert rows(HudiTable.open(base)) == [("a", 10), ("c", 30)]
    # the next writer rolls it back
    HudiTable.open(base).upsert(pa.table({"id": ["d"], "ts": [3], "v": [4], "p": ["y"]}), options=opts)
    t = HudiTable.open(base)
    assert not t.timeline.pending()
    assert [i.action for i in t.timeline.completed()].count("rollback") == 1
    assert rows(t) == [("a", 10), ("c", 30), ("d", 4)]
    st = storage_for(base)
    left = [f.name for f in st.list(f"{base}/z") if not f.name.startswith(".hoodie_partition_metadata")]
    assert left == [], "the rollback removed the crashed write's files (the folder stays, as in Hudi)"
