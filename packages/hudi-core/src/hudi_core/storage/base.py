"""The Storage interface: the few file operations a Hudi table needs, over fsspec."""

from __future__ import annotations

import builtins
import mmap
import posixpath
import re
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

import fsspec
import pyarrow.fs as pafs

from hudi_core.errors import StorageError

__all__ = ["TEMP_PREFIX", "FileInfo", "FsspecStorage", "Storage", "stale_temp_files"]

#: the name prefix of a storage's temporary files (an exclusive create's bytes before they get
#: their name): no Hudi reader takes such a name for a base or log file
TEMP_PREFIX = ".hudi-py-temp-"


@dataclass(frozen=True)
class FileInfo:
    """One entry of a directory listing."""

    path: str
    name: str
    size: int
    is_dir: bool
    mtime: float | None = None

    def stale(self, older_than_s: float, now: float) -> bool:
        """Last modified more than ``older_than_s`` before ``now`` (epoch seconds): what a live
        writer's fresh file never is, so the leftover of a dead one. A store that reports no
        time counts as stale."""
        return (self.mtime or 0.0) < now - older_than_s


class Storage:
    """File operations on one file system. Paths are the URIs (or plain paths) the caller built
    from the table's base URI; listings return paths in the same form.

    Subclasses override what their store does better (atomic create, cheap rename).
    """

    scheme: str = "file"
    #: True when ``create_if_absent`` is atomic (no two writers can both succeed).
    atomic_create: bool = False
    #: True when ``rename`` is atomic (local file systems, HDFS); object stores copy + delete.
    atomic_rename: bool = False

    def __init__(self, fs: fsspec.AbstractFileSystem, *, scheme: str | None = None) -> None:
        self.fs = fs
        if scheme is not None:
            self.scheme = scheme
        self._create_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        # Engines pickle storages into tasks; a lock cannot travel, a fresh one is made.
        state = dict(self.__dict__)
        state.pop("_create_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._create_lock = threading.Lock()

    # -- path handling ---------------------------------------------------------------------------

    def _p(self, path: str) -> str:
        return str(self.fs._strip_protocol(path))

    @staticmethod
    def join(base: str, *parts: str) -> str:
        out = base.rstrip("/")
        for part in parts:
            if part:
                out = out + "/" + part.strip("/")
        return out

    @staticmethod
    def name_of(path: str) -> str:
        return posixpath.basename(path.rstrip("/"))

    # -- reads -----------------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._p(path)))

    def is_dir(self, path: str) -> bool:
        return bool(self.fs.isdir(self._p(path)))

    def size(self, path: str) -> int:
        return int(self.fs.size(self._p(path)))

    def modified_time(self, path: str) -> float:
        """When the file was last written (seconds since the epoch, the store's clock);
        FileNotFoundError when it does not exist."""
        info = self.fs.info(self._p(path))
        mtime = info.get("mtime") or info.get("LastModified") or info.get("created")
        if mtime is None and info.get("modification_time") is not None:  # hdfs-native: ms
            mtime = info["modification_time"] / 1000.0
        if hasattr(mtime, "timestamp"):
            mtime = mtime.timestamp()
        if not isinstance(mtime, (int, float)):
            raise StorageError(f"{path}: the store reports no modification time")
        return float(mtime)

    def read_bytes(self, path: str) -> bytes:
        try:
            return bytes(self.fs.cat_file(self._p(path)))
        except FileNotFoundError:
            raise
        except OSError as e:
            raise StorageError(f"cannot read {path}: {e}") from e

    def read_range(self, path: str, start: int, length: int) -> bytes:
        return bytes(self.fs.cat_file(self._p(path), start=start, end=start + length))

    def read_mapped(self, path: str) -> bytes | mmap.mmap:
        """The file's bytes for a reader that takes them in place (a log file's blocks): a
        read-only memory map where the storage offers one (local disk), else :meth:`read_bytes`."""
        return self.read_bytes(path)

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8")

    @contextmanager
    def open_read(self, path: str) -> Iterator[IO[bytes]]:
        with self.fs.open(self._p(path), "rb") as f:
            yield f

    def list(self, path: str) -> list[FileInfo]:
        """Direct children of a directory; an empty list when it does not exist."""
        p = self._p(path)
        try:
            entries = self.fs.ls(p, detail=True)
        except FileNotFoundError:
            return []
        base = path.rstrip("/")
        out = []
        for e in entries:
            name = posixpath.basename(str(e["name"]).rstrip("/"))
            if not name or str(e["name"]).rstrip("/") == p.rstrip("/"):
                continue
            mtime = e.get("mtime") or e.get("LastModified") or e.get("created")
            if mtime is None and e.get("modification_time") is not None:  # hdfs-native: ms
                mtime = e["modification_time"] / 1000.0
            if mtime is not None and not isinstance(mtime, (int, float)):
                mtime = mtime.timestamp() if hasattr(mtime, "timestamp") else None
            out.append(
                FileInfo(
                    path=f"{base}/{name}",
                    name=name,
                    size=int(e.get("size") or 0),
                    is_dir=e.get("type") == "directory",
                    mtime=mtime,
                )
            )
        return out

    def walk_files(self, path: str) -> builtins.list[FileInfo]:  # `list` is a method here
        """Every file below ``path`` (recursive)."""
        out: builtins.list[FileInfo] = []
        stack = [path]
        while stack:
            d = stack.pop()
            for info in self.list(d):
                if info.is_dir:
                    stack.append(info.path)
                else:
                    out.append(info)
        return out

    # -- writes ----------------------------------------------------------------------------------

    def makedirs(self, path: str) -> None:
        self.fs.makedirs(self._p(path), exist_ok=True)

    def write_bytes(self, path: str, data: bytes) -> None:
        p = self._p(path)
        parent = posixpath.dirname(p)
        if parent:
            self.fs.makedirs(parent, exist_ok=True)
        self.fs.pipe_file(p, data)

    @contextmanager
    def open_write(self, path: str) -> Iterator[IO[bytes]]:
        p = self._p(path)
        parent = posixpath.dirname(p)
        if parent:
            self.fs.makedirs(parent, exist_ok=True)
        with self.fs.open(p, "wb") as f:
            yield f

    def create_if_absent(self, path: str, data: bytes = b"") -> bool:
        """Create ``path`` with ``data`` unless it exists; True when this call created it.

        Atomic only where the store allows (see :attr:`atomic_create`); the generic version
        serialises creators within this process.
        """
        with self._create_lock:
            if self.exists(path):
                return False
            self.write_bytes(path, data)
            return True

    def delete(self, path: str) -> bool:
        """Delete a file; False when it did not exist."""
        try:
            self.fs.rm_file(self._p(path))
            return True
        except FileNotFoundError:
            return False

    def discard(self, path: str) -> None:
        """Delete a file if it is there, without telling whether it was (on S3 one request,
        where :meth:`delete` needs two)."""
        self.delete(path)

    def delete_files(self, paths: Iterable[str]) -> dict[str, OSError]:
        """Delete files, a missing one counting as deleted; returns those that could not be
        deleted, with why (on S3 one request for up to 1,000 files)."""
        failed: dict[str, OSError] = {}
        for path in paths:
            try:
                self.discard(path)
            except OSError as e:
                failed[path] = e
        return failed

    def delete_dir(self, path: str) -> None:
        p = self._p(path)
        if self.fs.exists(p):
            self.fs.rm(p, recursive=True)

    def rename(self, src: str, dst: str) -> None:
        s, d = self._p(src), self._p(dst)
        if not self.fs.exists(s):
            raise FileNotFoundError(f"cannot rename {src}: it does not exist")
        parent = posixpath.dirname(d)
        if parent:
            self.fs.makedirs(parent, exist_ok=True)
        self.fs.mv(s, d)

    # -- Arrow -----------------------------------------------------------------------------------

    def arrow_filesystem(self) -> pafs.FileSystem:
        """A pyarrow file system over this storage (for parquet reads and writes)."""
        return pafs.PyFileSystem(pafs.FSSpecHandler(self.fs))

    def arrow_path(self, path: str) -> str:
        return self._p(path)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scheme={self.scheme!r})"


class FsspecStorage(Storage):
    """Any fsspec file system (``hdfs://`` through hdfs-native, ``gs://``, ...)."""

    def __init__(self, uri: str, options: dict[str, Any] | None = None) -> None:
        fs, _ = fsspec.core.url_to_fs(uri, **(options or {}))
        scheme = uri.split("://", 1)[0] if "://" in uri else "file"
        super().__init__(fs, scheme=scheme)


#: how hdfs-native words a NameNode that has not yet heard from the DataNode about the block just
#: sent: ``NotReplicatedYetException`` on the next block's addBlock, or complete() answering "not
#: yet" until hdfs-native gives up; both pass once the DataNode's block report arrives
_NOT_REPLICATED_YET = ("NotReplicatedYetException", "Failed to complete file in time")


class HdfsStorage(FsspecStorage):
    """``hdfs://`` through hdfs-native: timeline files are created exclusively by the NameNode
    (a create without the overwrite flag fails when the file exists), as Hudi creates them.

    A busy DataNode can report a block to the NameNode after the writer asks for the next block
    or closes the file. Hadoop's own client retries that (``dfs.client.block.write.
    locateFollowingBlock.retries``: 5 times, from 400 ms, doubling); hdfs-native does not and its
    writer cannot go on after the refusal, so :meth:`write_bytes`, which holds all the bytes,
    writes the file again from the start on the same schedule. A streamed write
    (:meth:`open_write`) fails with the NameNode's answer, as any failed write does."""

    atomic_create = True
    #: the wait before the first rewrite after a NameNode's "not replicated yet"; doubles each time
    not_replicated_retry_s = 0.4
    not_replicated_retries = 5

    def write_bytes(self, path: str, data: bytes) -> None:
        delay = self.not_replicated_retry_s
        for retry in range(self.not_replicated_retries + 1):
            try:
                return super().write_bytes(path, data)
            except Exception as e:  # hdfs-native raises the NameNode's refusals as RuntimeError
                if retry == self.not_replicated_retries or not any(m in str(e) for m in _NOT_REPLICATED_YET):
                    raise
            self.delete(path)  # the part already written, left open by the writer that gave up
            time.sleep(delay)
            delay *= 2

    def create_if_absent(self, path: str, data: bytes = b"") -> bool:
        p = self._p(path)
        parent = posixpath.dirname(p)
        if parent:
            self.fs.makedirs(parent, exist_ok=True)
        try:
            with self.fs.open(p, "wb", overwrite=False) as f:
                f.write(data)
        except FileExistsError:
            return False
        except OSError as e:  # hdfs-native names the NameNode's FileAlreadyExistsException
            if "exist" in str(e).lower():
                return False
            raise
        return True

    def delete(self, path: str) -> bool:
        """Delete a file; False when it did not exist (HDFS answers that; fsspec's rm_file hides it)."""
        return bool(self.fs.client.delete(self._p(path), False))


#: the temporary files of releases before :data:`TEMP_PREFIX`: ``.<target name>.<uuid hex>.tmp``
_LEGACY_TEMP = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")


def stale_temp_files(storage: Storage, directory: str, older_than_s: float, now: float) -> list[FileInfo]:
    """The temporary files (:data:`TEMP_PREFIX`, or the older releases' names) in ``directory``
    last modified more than ``older_than_s`` before ``now`` (epoch seconds): left by a process
    killed mid-create, since a live create holds its temporary file only for one write."""
    return [
        f
        for f in storage.list(directory)
        if (f.name.startswith(TEMP_PREFIX) or _LEGACY_TEMP.match(f.name))
        and not f.is_dir
        and f.stale(older_than_s, now)
    ]
