"""hdfs:// through hdfs-native against a real HDFS (a mini cluster on loopback, or the cluster
HUDI_TEST_HDFS_URI names): the storage conformance suite, exclusive creation of timeline files,
and a table's whole life (write, read, compaction, a crashed write rolled back)."""

from __future__ import annotations

import faulthandler
import uuid
from collections.abc import Iterator
from typing import Any, NoReturn

import hudi_core.write.transaction as transaction_mod
import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.log.format import BlockType
from hudi_core.log.reader import read_log_file
from hudi_core.plugins.manager import PluginManager
from hudi_core.storage import HdfsStorage, storage_for
from hudi_core.testing.storage import StorageCase, StorageConformance

# hdfs-native retries a lost NameNode for minutes inside one call, where no Python code runs (no
# pytest timeout could interrupt it): a test still running after this long ends its process with
# every thread's stack printed, which pytest (or xdist, for a worker) reports as a failure.
TEST_DEADLINE_S = 240


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    faulthandler.dump_traceback_later(TEST_DEADLINE_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


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


# hdfs-native's words for a NameNode that has not heard of the last block yet (its RPC error, as
# a RuntimeError), as seen once under load in this suite
NOT_REPLICATED_YET = (
    'RPCError("org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException", "Not replicated yet: {}")'
)


def _refuse_first_writes(
    monkeypatch: pytest.MonkeyPatch, st: HdfsStorage, refusals: int, message: str
) -> list[str]:
    """Make ``st``'s next ``refusals`` writes stop after half the bytes, raising ``message`` as
    hdfs-native does, until the test ends (fsspec shares the file system object between storages);
    returns the list of paths each write attempt was for."""
    pipe_file = st.fs.pipe_file
    attempts: list[str] = []

    def refusing(path: str, data: bytes, **kw: Any) -> None:
        attempts.append(path)
        if len(attempts) > refusals:
            return pipe_file(path, data, **kw)
        pipe_file(path, data[: len(data) // 2], **kw)  # the blocks before the refused one
        raise RuntimeError(message.format(path))

    monkeypatch.setattr(st.fs, "pipe_file", refusing)
    return attempts


@pytest.mark.parametrize(
    "message", [NOT_REPLICATED_YET, 'OperationFailed("Failed to complete file in time")']
)
def test_a_write_the_namenode_refuses_as_not_replicated_yet_is_written_again(
    hdfs_root: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = f"{hdfs_root}/retry-{uuid.uuid4().hex}"
    st = storage_for(base)
    assert isinstance(st, HdfsStorage)
    st.not_replicated_retry_s = 0.01
    path = f"{base}/f.bin"
    data = bytes(range(256)) * 12_288  # 3 MiB: three of the mini cluster's blocks
    attempts = _refuse_first_writes(monkeypatch, st, 2, message)
    st.write_bytes(path, data)
    assert len(attempts) == 3
    assert st.read_bytes(path) == data  # the whole file, not the refused attempts' halves


def test_other_write_errors_and_a_namenode_that_stays_behind_are_raised(
    hdfs_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = f"{hdfs_root}/retry-{uuid.uuid4().hex}"
    st = storage_for(base)
    assert isinstance(st, HdfsStorage)
    st.not_replicated_retry_s = 0.01
    attempts = _refuse_first_writes(
        monkeypatch, st, 1, 'RPCError("org.apache.hadoop.security.AccessControlException", "{}")'
    )
    with pytest.raises(RuntimeError, match="AccessControlException"):
        st.write_bytes(f"{base}/denied.bin", b"x" * 1000)
    assert len(attempts) == 1  # not a block report's delay: no second attempt

    monkeypatch.undo()
    attempts = _refuse_first_writes(monkeypatch, st, 100, NOT_REPLICATED_YET)
    with pytest.raises(RuntimeError, match="NotReplicatedYetException"):
        st.write_bytes(f"{base}/late.bin", b"x" * 1000)
    assert len(attempts) == 1 + st.not_replicated_retries


def test_a_merge_on_read_table_lives_on_hdfs(hdfs_root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    base = f"{hdfs_root}/table-{uuid.uuid4().hex}"
    t = HudiTable.create(base, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    opts = {"hoodie.compact.inline": "false"}
    t.upsert(
        pa.table({"id": ["a", "b", "c"], "ts": [1, 1, 1], "v": [1, 2, 3], "p": ["x", "x", "y"]}), options=opts
    )
    t.upsert(pa.table({"id": ["a", "c"], "ts": [2, 2], "v": [10, 30], "p": ["x", "y"]}), options=opts)
    t.delete(pa.table({"id": ["b"], "p": ["x"]}), options=opts)

    def rows(table: HudiTable, **kw: str) -> list[tuple[str, int]]:
        return sorted((r["id"], r["v"]) for r in table.read(columns=["id", "v"], **kw).to_pylist())

    assert rows(HudiTable.open(base)) == [("a", 10), ("c", 30)]
    assert any(s.log_files for s in HudiTable.open(base).file_slices())
    committed = HudiTable.open(base).compact(opts)
    assert committed and not any(s.log_files for s in HudiTable.open(base).file_slices())
    assert rows(HudiTable.open(base)) == [("a", 10), ("c", 30)]
    last_commit = HudiTable.open(base).timeline.completed()[-1].timestamp

    # a write that dies before its commit (as in tests/write/test_failures_and_rollback.py): its
    # files and its pending instant stay behind on HDFS, invisible to readers
    st = storage_for(base)

    def killed(*args: Any, **kwargs: Any) -> NoReturn:
        raise SystemExit("killed before the commit file")

    def data_files(partition: str) -> list[str]:  # base files, and log files (".<file id>_...")
        listed = st.list(f"{base}/{partition}")
        return sorted(f.name for f in listed if not f.name.startswith(".hoodie_partition_metadata"))

    x_before = data_files("x")
    with monkeypatch.context() as m:
        m.setattr(transaction_mod, "commit", killed)
        with pytest.raises(SystemExit):
            HudiTable.open(base).upsert(pa.table({"id": ["a", "z"], "ts": [9, 9], "v": [99, 99], "p": ["x", "z"]}),
                                        options=opts)  # fmt: skip
    crashed = HudiTable.open(base)
    [crashed_instant] = [i.timestamp for i in crashed.timeline.pending()]  # left pending
    assert data_files("z"), "the crashed write left a base file in the new partition"
    assert len(data_files("x")) == len(x_before) + 1, "and a log file where it updated a"
    assert rows(crashed) == [("a", 10), ("c", 30)]
    assert rows(crashed, as_of=last_commit) == [("a", 10), ("c", 30)]

    # the next writer rolls it back before writing
    HudiTable.open(base).upsert(pa.table({"id": ["d"], "ts": [3], "v": [4], "p": ["y"]}), options=opts)
    t = HudiTable.open(base)
    assert not t.timeline.pending()
    assert [i.action for i in t.timeline.completed()].count("rollback") == 1
    assert rows(t) == [("a", 10), ("c", 30), ("d", 4)]
    assert rows(t, as_of=last_commit) == [("a", 10), ("c", 30)]
    assert data_files("z") == [], (
        "the rollback removed the crashed write's files (the folder stays, as in Hudi)"
    )
    # in partition x the crashed log stays; a new log version holds one command block cancelling it
    added = [n for n in data_files("x") if n not in x_before]
    assert len(added) == 2 and all(n.startswith(".") and ".log." in n for n in added), added
    [rollback_log] = [n for n in added if n.endswith("_1-0-1")]
    blocks = read_log_file(st, f"{base}/x/{rollback_log}")
    assert [(b.block_type, b.target_instant_time) for b in blocks] == [(BlockType.COMMAND, crashed_instant)]
