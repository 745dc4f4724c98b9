"""Storage conformance suite: what every :class:`~hudi_core.storage.Storage` must do.

A storage plugin runs it by subclassing and providing the ``storage_case`` fixture::

    from hudi_core.testing.storage import StorageCase, StorageConformance

    class TestMyStorage(StorageConformance):
        @pytest.fixture
        def storage_case(self, tmp_path):
            return StorageCase(MyStorage(), base=f"my://{tmp_path}")

``base`` must be an empty directory URI that no other test uses. Every test writes only below it.
"""

from __future__ import annotations

import pickle
import random
import threading
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_core.storage.base import Storage

__all__ = ["StorageCase", "StorageConformance"]


@dataclass
class StorageCase:
    """The storage under test and an empty base directory (URI or plain path) for one test."""

    storage: Storage
    base: str


class StorageConformance:
    """The tests. Not collected itself (no ``Test`` prefix); subclasses are."""

    #: Threads racing on one ``create_if_absent`` path.
    concurrent_creators: int = 16

    @pytest.fixture
    def storage_case(self) -> StorageCase:
        raise NotImplementedError("override the storage_case fixture in your subclass")

    # -- whole files -----------------------------------------------------------------------------

    def test_write_then_read_bytes_and_text(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "dir", "hello.txt")
        assert not st.exists(path)
        st.write_bytes(path, "héllo\n".encode())
        assert st.exists(path)
        assert st.read_bytes(path) == "héllo\n".encode()
        assert st.read_text(path) == "héllo\n"
        assert st.size(path) == len("héllo\n".encode())

    def test_write_overwrites(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "f.bin")
        st.write_bytes(path, b"first version")
        st.write_bytes(path, b"2nd")
        assert st.read_bytes(path) == b"2nd"

    def test_reading_a_missing_file_raises_file_not_found(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        with pytest.raises(FileNotFoundError):
            st.read_bytes(st.join(base, "missing.bin"))

    def test_empty_file(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "empty")
        st.write_bytes(path, b"")
        assert st.exists(path)
        assert st.read_bytes(path) == b""
        assert st.size(path) == 0

    # -- listing ---------------------------------------------------------------------------------

    def _tree(self, st: Storage, base: str) -> None:
        st.write_bytes(st.join(base, "a.txt"), b"abc")
        st.write_bytes(st.join(base, "sub", "b.txt"), b"bbbbb")
        st.write_bytes(st.join(base, "sub", "deeper", "c.txt"), b"c")
        st.write_bytes(st.join(base, "sub2", "d.txt"), b"dd")  # shares the prefix "sub"

    def test_list_returns_direct_children_with_sizes_and_dirs_flagged(
        self, storage_case: StorageCase
    ) -> None:
        st, base = storage_case.storage, storage_case.base
        self._tree(st, base)
        entries = {e.name: e for e in st.list(base)}
        assert sorted(entries) == ["a.txt", "sub", "sub2"]
        assert entries["a.txt"].size == 3 and not entries["a.txt"].is_dir
        assert entries["sub"].is_dir and entries["sub2"].is_dir
        assert entries["a.txt"].path == st.join(base, "a.txt")
        assert entries["sub"].path == st.join(base, "sub")
        sub = {e.name: (e.size, e.is_dir) for e in st.list(st.join(base, "sub"))}
        assert sub == {"b.txt": (5, False), "deeper": (sub["deeper"][0], True)}
        assert st.is_dir(st.join(base, "sub"))
        assert not st.is_dir(st.join(base, "a.txt"))

    def test_list_of_missing_directory_is_empty(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        assert st.list(st.join(base, "nowhere")) == []

    def test_list_accepts_a_trailing_slash(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        self._tree(st, base)
        assert sorted(e.name for e in st.list(base + "/")) == ["a.txt", "sub", "sub2"]

    def test_walk_files_lists_every_file_below(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        self._tree(st, base)
        found = {f.path: f.size for f in st.walk_files(st.join(base, "sub"))}
        assert found == {
            st.join(base, "sub", "b.txt"): 5,
            st.join(base, "sub", "deeper", "c.txt"): 1,
        }
        assert all(not f.is_dir for f in st.walk_files(base))
        assert len(st.walk_files(base)) == 4
        assert st.walk_files(st.join(base, "nowhere")) == []

    # -- delete and rename -----------------------------------------------------------------------

    def test_delete_reports_whether_the_file_existed(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "x.bin")
        st.write_bytes(path, b"x")
        assert st.delete(path) is True
        assert not st.exists(path)
        assert st.delete(path) is False

    def test_discard_deletes_a_file_and_ignores_a_missing_one(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "x.bin")
        st.write_bytes(path, b"x")
        st.discard(path)
        assert not st.exists(path)
        st.discard(path)  # gone already: no error

    def test_delete_files_deletes_those_named_and_counts_missing_ones_as_deleted(
        self, storage_case: StorageCase
    ) -> None:
        st, base = storage_case.storage, storage_case.base
        self._tree(st, base)
        doomed = [st.join(base, "a.txt"), st.join(base, "sub", "b.txt"), st.join(base, "sub", "gone.txt")]
        assert st.delete_files(doomed) == {}
        assert [st.exists(p) for p in doomed] == [False, False, False]
        assert st.read_bytes(st.join(base, "sub", "deeper", "c.txt")) == b"c"
        assert st.read_bytes(st.join(base, "sub2", "d.txt")) == b"dd"
        assert st.delete_files([]) == {}

    def test_delete_dir_removes_everything_below_and_nothing_beside(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        self._tree(st, base)
        st.delete_dir(st.join(base, "sub"))
        assert not st.exists(st.join(base, "sub", "b.txt"))
        assert not st.exists(st.join(base, "sub", "deeper", "c.txt"))
        assert st.read_bytes(st.join(base, "sub2", "d.txt")) == b"dd"
        assert st.read_bytes(st.join(base, "a.txt")) == b"abc"
        assert sorted(e.name for e in st.list(base)) == ["a.txt", "sub2"]
        st.delete_dir(st.join(base, "sub"))  # deleting a missing directory is not an error

    def test_rename_moves_content(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        src, dst = st.join(base, "src.bin"), st.join(base, "moved", "dst.bin")
        st.write_bytes(src, b"payload")
        st.rename(src, dst)
        assert not st.exists(src)
        assert st.read_bytes(dst) == b"payload"

    def test_rename_of_missing_file_raises(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        with pytest.raises(FileNotFoundError):
            st.rename(st.join(base, "nope"), st.join(base, "nope2"))

    # -- ranges and streams ----------------------------------------------------------------------

    def test_read_range(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "range.bin")
        data = bytes(range(256)) * 4
        st.write_bytes(path, data)
        assert st.read_range(path, 0, 4) == data[:4]
        assert st.read_range(path, 300, 50) == data[300:350]
        assert st.read_range(path, len(data) - 10, 100) == data[-10:]  # past the end: truncated

    @pytest.mark.parametrize("size", [1000, 3 << 20])  # a small file; one local disk maps
    def test_read_mapped_gives_the_files_bytes_even_once_it_is_deleted(
        self, storage_case: StorageCase, size: int
    ) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "mapped.log")
        data = random.Random(size).randbytes(size)
        st.write_bytes(path, data)
        mapped = st.read_mapped(path)
        st.delete(path)  # a clean removing a file a reader holds
        assert len(mapped) == size
        assert mapped[:4] == data[:4] and mapped.find(data[-300:]) == size - 300
        assert bytes(memoryview(mapped)) == data

    def test_open_write_then_open_read(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "stream", "s.bin")
        chunks = [bytes([i]) * 1000 for i in range(50)]
        with st.open_write(path) as f:
            for c in chunks:
                f.write(c)
        assert st.size(path) == 50_000
        with st.open_read(path) as f:
            assert f.read(1000) == chunks[0]
            f.seek(49_000)
            assert f.read() == chunks[-1]
        assert st.read_bytes(path) == b"".join(chunks)

    # -- exclusive create ------------------------------------------------------------------------

    def test_create_if_absent_true_once_then_false_never_overwrites(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, ".hoodie", "001.commit")
        assert st.create_if_absent(path, b"winner") is True
        assert st.create_if_absent(path, b"loser") is False
        assert st.create_if_absent(path, b"") is False
        assert st.read_bytes(path) == b"winner"

    def test_create_if_absent_refuses_an_existing_written_file(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "existing")
        st.write_bytes(path, b"old")
        assert st.create_if_absent(path, b"new") is False
        assert st.read_bytes(path) == b"old"

    @pytest.mark.parametrize("same_content", [False, True], ids=["distinct", "identical"])
    def test_concurrent_create_if_absent_has_exactly_one_winner(
        self, storage_case: StorageCase, same_content: bool
    ) -> None:
        st, base = storage_case.storage, storage_case.base
        if not st.atomic_create:
            pytest.skip(f"{type(st).__name__}.atomic_create is False: no exclusivity promised")
        path = st.join(base, ".hoodie", "race.commit")
        n = self.concurrent_creators
        barrier = threading.Barrier(n)
        results: list[bool | BaseException] = [False] * n

        def content(i: int) -> bytes:
            # Identical bytes (an empty .requested file) must not let two writers both "win".
            return b"" if same_content else f"writer-{i}".encode()

        def create(i: int) -> None:
            barrier.wait()
            try:
                results[i] = st.create_if_absent(path, content(i))
            except BaseException as e:  # surfaced by the assertion below
                results[i] = e

        threads = [threading.Thread(target=create, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        errors = [r for r in results if isinstance(r, BaseException)]
        assert not errors, errors
        winners = [i for i, r in enumerate(results) if r is True]
        assert len(winners) == 1, f"{len(winners)} writers won: {winners}"
        assert st.read_bytes(path) == content(winners[0])

    # -- Arrow, names, pickling ------------------------------------------------------------------

    def test_arrow_filesystem_writes_and_reads_parquet(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", None]})
        path = st.join(base, "part=1", "data.parquet")
        st.makedirs(st.join(base, "part=1"))
        fs = st.arrow_filesystem()
        pq.write_table(table, st.arrow_path(path), filesystem=fs)
        assert st.exists(path)
        assert st.read_bytes(path)[:4] == b"PAR1"
        assert pq.read_table(st.arrow_path(path), filesystem=fs).equals(table)
        assert pq.read_table(pa.BufferReader(st.read_bytes(path))).equals(table)

    def test_names_with_spaces_and_equals(self, storage_case: StorageCase) -> None:
        st, base = storage_case.storage, storage_case.base
        part = st.join(base, "city=San Francisco", "day=2024-01-01")
        path = st.join(part, "file name=1.log")
        st.write_bytes(path, b"sf")
        assert st.exists(path)
        assert st.read_bytes(path) == b"sf"
        assert [e.name for e in st.list(st.join(base, "city=San Francisco"))] == ["day=2024-01-01"]
        assert [(e.name, e.path) for e in st.list(part)] == [("file name=1.log", path)]
        assert [f.path for f in st.walk_files(base)] == [path]
        assert st.create_if_absent(st.join(part, "x y=z"), b"1") is True
        assert st.delete(path) is True

    def test_storage_survives_pickling(self, storage_case: StorageCase) -> None:
        """Engines ship the storage to tasks (Spark pickles it)."""
        st, base = storage_case.storage, storage_case.base
        path = st.join(base, "pickled.bin")
        st.write_bytes(path, b"before")
        clone = pickle.loads(pickle.dumps(st))
        assert clone.read_bytes(path) == b"before"
        clone.write_bytes(path, b"after")
        assert st.read_bytes(path) == b"after"
        assert clone.atomic_create == st.atomic_create
