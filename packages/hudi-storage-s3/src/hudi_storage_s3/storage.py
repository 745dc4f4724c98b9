"""``S3Storage``: Hudi's storage operations on S3 through s3fs.

- ``create_if_absent`` is a conditional put (``If-None-Match: *``): exactly one of any number of
  concurrent creators wins, which is what the timeline's completed-file protocol needs.
- ``open_write`` streams multipart uploads in fixed-size parts and aborts them on failure.
- Every whole-object request is retried on transient errors (see :mod:`hudi_storage_s3.retry`).
- ``rename`` is copy + delete and not atomic (``atomic_rename = False``).
"""

from __future__ import annotations

import builtins
import io
import logging
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any, cast

import pyarrow.fs as pafs
import s3fs
from hudi_core.errors import StorageError
from hudi_core.storage.base import FileInfo, Storage

from hudi_storage_s3.retry import RetryPolicy
from hudi_storage_s3.settings import S3Settings

__all__ = ["S3Storage"]

log = logging.getLogger("hudi_storage_s3")

#: User-metadata key (x-amz-meta-...) holding the token of the put that created a file.
_TOKEN_KEY = "hudi-create-token"

#: Keys in one multi-object delete: S3's limit.
_DELETE_BATCH = 1000

#: Read-ahead of ``open_read``: one ranged GET serves many small reads (footers, log headers).
_READ_BUFFER = 1024 * 1024


def _is_precondition_failed(exc: BaseException) -> bool:
    cur: BaseException | None = exc
    while cur is not None:
        response = getattr(cur, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            return code == "PreconditionFailed" or status == 412
        cur = cur.__cause__
    return False


def _is_missing_bucket(exc: BaseException) -> bool:
    cur: BaseException | None = exc
    while cur is not None:
        response = getattr(cur, "response", None)
        if isinstance(response, dict):
            return response.get("Error", {}).get("Code") == "NoSuchBucket"
        cur = cur.__cause__
    return False


class S3Storage(Storage):
    """S3 (``s3://`` and ``s3a://``) storage.

    >>> S3Storage("s3://lake/t", {"hoodie.storage.s3.endpoint": "http://127.0.0.1:9000"})  # doctest: +SKIP
    S3Storage(scheme='s3', endpoint_url='http://127.0.0.1:9000', region=None, access_key=None)
    """

    scheme = "s3"
    atomic_create = True
    atomic_rename = False

    def __init__(self, uri: str = "s3://", options: Mapping[str, Any] | None = None) -> None:
        self.settings = S3Settings.resolve(options)
        fs = s3fs.S3FileSystem(
            use_listings_cache=False,  # another writer's timeline files must be visible at once
            # Retries are ours (RetryPolicy): botocore's and s3fs's loops are off so the bound holds.
            config_kwargs={"retries": {"mode": "standard", "total_max_attempts": 1}},
            **self.settings.s3fs_kwargs(),
        )
        fs.retries = 1
        scheme = uri.split("://", 1)[0].lower() if "://" in uri else "s3"
        super().__init__(fs, scheme=scheme)
        self.retry = RetryPolicy(max_retries=self.settings.max_retries, base_delay=self.settings.base_delay)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self.fs.retries = 1  # an unpickled s3fs instance comes back with its own retry loop on

    # -- helpers ---------------------------------------------------------------------------------

    def _bucket_key(self, path: str) -> tuple[str, str]:
        bucket, key, _ = self.fs.split_path(self._p(path))
        if not key:
            raise StorageError(f"{path!r} names a bucket, not an object; give s3://bucket/key")
        return str(bucket), str(key)

    def _call(self, what: str, path: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self.retry.call(f"S3 {what} {path}", lambda: fn(*args, **kwargs))

    @contextmanager
    def _writing(self, path: str) -> Iterator[None]:
        """On writes a FileNotFoundError can only mean the bucket is missing: say so."""
        try:
            yield
        except FileNotFoundError as e:
            if not _is_missing_bucket(e):
                raise
            bucket = self._p(path).split("/", 1)[0]
            where = self.settings.endpoint_url or "AWS"
            raise StorageError(
                f"cannot write {path}: bucket {bucket!r} does not exist at {where}; "
                "create the bucket or fix the table URI"
            ) from e

    # -- reads -----------------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        return bool(self._call("exists", path, self.fs.exists, self._p(path)))

    def is_dir(self, path: str) -> bool:
        return bool(self._call("isdir", path, self.fs.isdir, self._p(path)))

    def size(self, path: str) -> int:
        return int(self._call("size", path, self.fs.size, self._p(path)))

    def read_bytes(self, path: str) -> bytes:
        # one GET: s3fs would first HEAD the object to split a large one into concurrent ranges,
        # a request more for every timeline and metadata file (large files go through open_read)
        return bytes(self._call("read", path, self.fs.cat_file, self._p(path), max_concurrency=1))

    def modified_time(self, path: str) -> float:
        bucket, key = self._bucket_key(path)
        head = self._call("head", path, self.fs.call_s3, "head_object", Bucket=bucket, Key=key)
        return float(head["LastModified"].timestamp())

    def read_range(self, path: str, start: int, length: int) -> bytes:
        p = self._p(path)
        return bytes(self._call("read range", path, self.fs.cat_file, p, start=start, end=start + length))

    @contextmanager
    def open_read(self, path: str) -> Iterator[IO[bytes]]:
        """A buffered, seekable reader whose every range request goes through the retry policy
        (s3fs's own file object would not retry: its loop is off)."""
        raw = _RangeReader(self, path, self.size(path))
        with io.BufferedReader(raw, buffer_size=_READ_BUFFER) as f:
            yield cast("IO[bytes]", f)

    def list(self, path: str) -> list[FileInfo]:
        return cast("list[FileInfo]", self._call("list", path, super().list, path))

    def walk_files(self, path: str) -> builtins.list[FileInfo]:  # `list` is a method here
        """One flat listing (no delimiter) instead of one request per directory."""
        p = self._p(path).rstrip("/")
        try:
            found = self._call("walk", path, self.fs.find, p, detail=True)
        except FileNotFoundError:
            return []
        base = path.rstrip("/")
        out = []
        for name, e in sorted(found.items()):
            name = str(name)
            if not name.startswith(p + "/") or e.get("type") == "directory":
                continue
            rel = name[len(p) + 1 :]
            mtime = e.get("LastModified")
            out.append(
                FileInfo(
                    path=f"{base}/{rel}",
                    name=rel.rsplit("/", 1)[-1],
                    size=int(e.get("size") or 0),
                    is_dir=False,
                    mtime=mtime.timestamp() if hasattr(mtime, "timestamp") else None,
                )
            )
        return out

    # -- writes ----------------------------------------------------------------------------------

    def makedirs(self, path: str) -> None:
        """S3 has no directories: a prefix exists once an object sits below it."""

    def write_bytes(self, path: str, data: bytes) -> None:
        with self._writing(path):
            self._call(
                "write", path, self.fs.pipe_file, self._p(path), data, chunksize=self.settings.part_size
            )

    @contextmanager
    def open_write(self, path: str) -> Iterator[IO[bytes]]:
        """A writer that uploads ``part_size`` parts as data arrives (one put when it stays
        smaller). The object appears only on a clean exit; on an exception the upload is aborted."""
        bucket, key = self._bucket_key(path)
        writer = _MultipartWriter(self, bucket, key, path)
        try:
            yield cast("IO[bytes]", writer)
        except BaseException:
            writer.abort()
            raise
        with self._writing(path):
            writer.close()

    def create_if_absent(self, path: str, data: bytes = b"") -> bool:
        """Conditional put (``If-None-Match: *``): True for exactly one of concurrent creators.

        Each put carries a random token in its user metadata. A 412 can be our own put answering
        late: the HTTP client (or our retry) resends a put whose first answer was lost, and the
        resend finds the object the first one made. The token tells that case from a real loser,
        even when both wrote identical bytes.
        """
        bucket, key = self._bucket_key(path)
        token = uuid.uuid4().hex

        def put() -> Any:
            return self.fs.call_s3(
                "put_object", Bucket=bucket, Key=key, Body=data, IfNoneMatch="*",
                Metadata={_TOKEN_KEY: token},
            )  # fmt: skip

        try:
            with self._writing(path):
                self.retry.call(f"S3 create {path}", put)
            return True
        except OSError as e:
            if not isinstance(e, FileExistsError) and not _is_precondition_failed(e):
                raise
        try:
            head = self._call("head", path, self.fs.call_s3, "head_object", Bucket=bucket, Key=key)
        except FileNotFoundError:  # deleted since: still not ours
            return False
        if head.get("Metadata", {}).get(_TOKEN_KEY) == token:
            log.info("S3 create %s: 412 on a resent put, the object is ours", path)
            return True
        return False

    def delete(self, path: str) -> bool:
        # S3 deletes of a missing key succeed silently: ask first to honour the False contract.
        p = self._p(path)
        try:
            self._call("info", path, self.fs.info, p)
        except FileNotFoundError:
            return False
        self._call("delete", path, self.fs.rm_file, p)
        return True

    def discard(self, path: str) -> None:
        self._call("delete", path, self.fs.rm_file, self._p(path))

    def delete_files(self, paths: Iterable[str]) -> dict[str, OSError]:
        """Multi-object deletes (``DeleteObjects``) of up to 1,000 keys each."""
        by_bucket: dict[str, list[tuple[str, str]]] = {}
        for path in paths:
            bucket, key = self._bucket_key(path)
            by_bucket.setdefault(bucket, []).append((key, path))
        failed: dict[str, OSError] = {}
        for bucket, items in by_bucket.items():
            for i in range(0, len(items), _DELETE_BATCH):
                batch = dict(items[i : i + _DELETE_BATCH])
                objects = {"Objects": [{"Key": k} for k in batch], "Quiet": True}
                what = f"{len(batch)} files in s3://{bucket}"
                try:
                    out = self._call(
                        "delete", what, self.fs.call_s3, "delete_objects", Bucket=bucket, Delete=objects
                    )
                except OSError as e:
                    failed.update(dict.fromkeys(batch.values(), e))
                    continue
                for err in out.get("Errors", []):
                    if (refused := batch.get(err.get("Key", ""))) is not None:
                        failed[refused] = OSError(
                            f"S3 delete {refused}: {err.get('Code')}: {err.get('Message')}"
                        )
        return failed

    def delete_dir(self, path: str) -> None:
        keys = [self._p(f.path) for f in self.walk_files(path)]
        if keys:
            self._call("delete dir", path, self.fs.rm, keys)

    def rename(self, src: str, dst: str) -> None:
        """Copy then delete: not atomic (the commit protocol never relies on it)."""
        self._call("copy", src, self.fs.copy, self._p(src), self._p(dst))
        self._call("delete", src, self.fs.rm_file, self._p(src))

    # -- Arrow -----------------------------------------------------------------------------------

    def arrow_filesystem(self) -> pafs.FileSystem:
        """Arrow's native S3 client with the same endpoint and credentials (much faster parquet
        I/O than going through fsspec); the fsspec handler when Arrow was built without S3."""
        try:
            kwargs: dict[str, Any] = {
                "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=self.settings.max_retries + 1)
            }
            s = self.settings
            if s.access_key is not None:
                kwargs.update(access_key=s.access_key, secret_key=s.secret_key)
                if s.session_token is not None:
                    kwargs["session_token"] = s.session_token
            if s.endpoint_url:
                kwargs["endpoint_override"] = s.endpoint_url
            region = s.region or ("us-east-1" if s.endpoint_url else None)
            if region:
                kwargs["region"] = region
            return pafs.S3FileSystem(**kwargs)
        except (ImportError, AttributeError, NotImplementedError):
            return super().arrow_filesystem()

    def __repr__(self) -> str:
        key = None if self.settings.access_key is None else self.settings.access_key[:4] + "****"
        return (
            f"S3Storage(scheme={self.scheme!r}, endpoint_url={self.settings.endpoint_url!r}, "
            f"region={self.settings.region!r}, access_key={key!r})"
        )


class _MultipartWriter(io.RawIOBase):
    """Buffers writes and uploads every full ``part_size`` chunk as one multipart part."""

    def __init__(self, storage: S3Storage, bucket: str, key: str, path: str) -> None:
        super().__init__()
        self._s = storage
        self._bucket = bucket
        self._key = key
        self._path = path
        self._part_size = storage.settings.part_size
        self._buf = bytearray()
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []
        self._written = 0

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._written

    def write(self, b: Any) -> int:
        if self.closed:
            raise ValueError(f"write to closed S3 writer for {self._path}")
        data = memoryview(b).cast("B")
        self._buf += data
        self._written += len(data)
        while len(self._buf) >= self._part_size:
            chunk = bytes(self._buf[: self._part_size])
            del self._buf[: self._part_size]
            self._upload_part(chunk)
        return len(data)

    def _s3(self, method: str, **kwargs: Any) -> Any:
        return self._s.retry.call(
            f"S3 {method} {self._path}",
            lambda: self._s.fs.call_s3(method, Bucket=self._bucket, Key=self._key, **kwargs),
        )

    def _upload_part(self, chunk: bytes) -> None:
        if self._upload_id is None:
            self._upload_id = str(self._s3("create_multipart_upload")["UploadId"])
        number = len(self._parts) + 1
        resp = self._s3("upload_part", UploadId=self._upload_id, PartNumber=number, Body=chunk)
        self._parts.append({"PartNumber": number, "ETag": resp["ETag"]})

    def close(self) -> None:
        if self.closed:
            return
        try:
            if self._upload_id is None:
                self._s3("put_object", Body=bytes(self._buf))
            else:
                if self._buf:
                    self._upload_part(bytes(self._buf))
                self._s3(
                    "complete_multipart_upload",
                    UploadId=self._upload_id,
                    MultipartUpload={"Parts": self._parts},
                )
        except BaseException:
            self.abort()
            raise
        finally:
            self._buf = bytearray()
            super().close()

    def abort(self) -> None:
        """Drop the upload (no incomplete multipart upload is left behind)."""
        upload_id, self._upload_id = self._upload_id, None
        if upload_id is not None:
            try:
                self._s.fs.call_s3(
                    "abort_multipart_upload", Bucket=self._bucket, Key=self._key, UploadId=upload_id
                )
            except Exception as e:  # the original error matters more than a failed clean-up
                log.warning("S3 abort of multipart upload for %s failed: %s", self._path, type(e).__name__)
        self._buf = bytearray()
        if not self.closed:
            super().close()


class _RangeReader(io.RawIOBase):
    """Seekable raw reader over ranged GETs (wrapped in a ``BufferedReader`` by ``open_read``)."""

    def __init__(self, storage: S3Storage, path: str, size: int) -> None:
        super().__init__()
        self._s = storage
        self._path = path
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"seek to {base + offset} before the start of {self._path}")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = min(len(view), self._size - self._pos)
        if n <= 0:
            return 0
        data = self._s.read_range(self._path, self._pos, n)
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def readall(self) -> bytes:
        # One request for the rest, not RawIOBase's loop of 8 KiB reads.
        if self._pos >= self._size:
            return b""
        data = self._s.read_range(self._path, self._pos, self._size - self._pos)
        self._pos += len(data)
        return data
