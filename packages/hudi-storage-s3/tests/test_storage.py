"""S3Storage beyond the conformance suite: plugin selection, settings, multipart, retries, secrets."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pyarrow.fs as pafs
import pytest
import s3fs
from hudi_core.errors import ConfigError, StorageError
from hudi_core.plugins.manager import PluginManager
from hudi_core.storage import FsspecStorage, storage_for
from hudi_core.testing.s3 import FlakyS3Proxy, MotoS3Server, S3Bucket
from hudi_storage_s3 import S3Storage
from hudi_storage_s3.retry import TransientS3Error

pytestmark = pytest.mark.s3

MiB = 1024 * 1024


# -- plugin selection ------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["s3", "s3a"])
def test_storage_for_picks_the_s3_plugin_over_the_fsspec_fallback(s3_bucket: S3Bucket, scheme: str) -> None:
    uri = f"{scheme}://{s3_bucket.name}/t"
    st = storage_for(uri, s3_bucket.options)
    assert type(st) is S3Storage
    assert st.scheme == scheme
    st.write_bytes(f"{uri}/x.txt", b"via plugin")
    assert s3_bucket.keys() == ["t/x.txt"]


def test_the_fsspec_fallback_is_asked_last() -> None:
    order = [c.name for c in PluginManager().storage_plugins()]
    assert "s3" in order
    assert order[-1] == "fsspec"


def test_without_the_plugin_s3_would_fall_back_to_fsspec(s3_bucket: S3Bucket) -> None:
    # Only the built-ins: proves the S3 plugin (not the fallback) answered above.
    pm = PluginManager(load_entry_points=False)
    st = pm.storage_for(f"s3://{s3_bucket.name}/t", {})
    assert type(st) is FsspecStorage


# -- settings --------------------------------------------------------------------------------------


def test_endpoint_from_the_aws_environment(s3_endpoint_env: S3Bucket) -> None:
    s3_bucket = s3_endpoint_env
    st = storage_for(f"{s3_bucket.uri}/t", {})
    assert st.settings.endpoint_url == s3_bucket.server.endpoint_url
    assert st.settings.access_key is None  # botocore's chain reads AWS_ACCESS_KEY_ID itself
    st.write_bytes(f"{s3_bucket.uri}/t/env.txt", b"env")
    assert s3_bucket.keys() == ["t/env.txt"]


def test_options_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    st = S3Storage("s3://b", {"hoodie.storage.s3.endpoint": "http://127.0.0.1:2"})
    assert st.settings.endpoint_url == "http://127.0.0.1:2"
    assert st.settings.region == "eu-west-3"


def test_half_a_credential_pair_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"secret\.key"):
        S3Storage("s3://b", {"hoodie.storage.s3.access.key": "AKIA"})


def test_part_size_below_the_s3_minimum_is_refused() -> None:
    with pytest.raises(ConfigError, match="5 MiB"):
        S3Storage("s3://b", {"hoodie.storage.s3.multipart.part.size": str(MiB)})


def test_credentials_never_show_in_repr_or_logs(
    moto_s3_server: MotoS3Server, caplog: pytest.LogCaptureFixture
) -> None:
    moto_s3_server.reset()
    bucket = moto_s3_server.create_bucket("secrets")
    secret = "s3cr3t-must-not-leak-9f8e7d"
    token = "t0ken-must-not-leak-1a2b3c"
    options = {
        **bucket.options,
        "hoodie.storage.s3.access.key": "AKIAHUDITESTKEY",
        "hoodie.storage.s3.secret.key": secret,
        "hoodie.storage.s3.session.token": token,
    }
    with caplog.at_level(logging.DEBUG):
        st = storage_for("s3://secrets/t", options)
        st.write_bytes("s3://secrets/t/a", b"a")
        assert st.create_if_absent("s3://secrets/t/a", b"b") is False
        st.list("s3://secrets/t")
        text = repr(st) + str(st) + repr(st.settings)
    assert "AKIA****" in repr(st)
    assert caplog.records, "DEBUG logging captured nothing: the check below would be vacuous"
    assert secret not in text and token not in text
    # The secret key reaches no log at all, even botocore's DEBUG output.
    assert secret not in caplog.text
    # botocore's own DEBUG output prints request headers, session token included; ours never do.
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("hudi"))
    assert token not in ours


def test_arrow_filesystem_is_arrows_native_s3_client(s3_bucket: S3Bucket) -> None:
    st = S3Storage(s3_bucket.uri, s3_bucket.options)
    fs = st.arrow_filesystem()
    assert isinstance(fs, pafs.S3FileSystem)
    st.write_bytes(f"{s3_bucket.uri}/t/n.bin", b"12345")
    assert fs.get_file_info(st.arrow_path(f"{s3_bucket.uri}/t/n.bin")).size == 5


# -- multipart ----------------------------------------------------------------------------------


def _etag(bucket: S3Bucket, key: str) -> str:
    return str(bucket.server.client().head_object(Bucket=bucket.name, Key=key)["ETag"]).strip('"')


def test_open_write_streams_multipart_parts(s3_bucket: S3Bucket) -> None:
    st = S3Storage(
        s3_bucket.uri, {**s3_bucket.options, "hoodie.storage.s3.multipart.part.size": str(5 * MiB)}
    )
    path = f"{s3_bucket.uri}/t/big.bin"
    chunks = [bytes([i]) * MiB for i in range(12)]
    with st.open_write(path) as f:
        for c in chunks:
            f.write(c)
    assert _etag(s3_bucket, "t/big.bin").endswith("-3")  # 5 + 5 + 2 MiB
    assert st.read_bytes(path) == b"".join(chunks)


def test_small_open_write_is_a_single_put(s3_bucket: S3Bucket) -> None:
    st = S3Storage(s3_bucket.uri, s3_bucket.options)
    with st.open_write(f"{s3_bucket.uri}/t/small.bin") as f:
        f.write(b"tiny")
    assert "-" not in _etag(s3_bucket, "t/small.bin")
    assert st.read_bytes(f"{s3_bucket.uri}/t/small.bin") == b"tiny"


def test_failed_open_write_leaves_no_object_and_no_dangling_upload(s3_bucket: S3Bucket) -> None:
    st = S3Storage(
        s3_bucket.uri, {**s3_bucket.options, "hoodie.storage.s3.multipart.part.size": str(5 * MiB)}
    )
    path = f"{s3_bucket.uri}/t/broken.bin"
    with pytest.raises(RuntimeError, match="producer died"):
        with st.open_write(path) as f:
            f.write(b"x" * (6 * MiB))  # one part already uploaded
            raise RuntimeError("producer died")
    assert not st.exists(path)
    uploads = s3_bucket.server.client().list_multipart_uploads(Bucket=s3_bucket.name)
    assert uploads.get("Uploads", []) == []


def test_rename_is_copy_then_delete_and_not_atomic(s3_bucket: S3Bucket) -> None:
    st = S3Storage(s3_bucket.uri, s3_bucket.options)
    assert st.atomic_rename is False and st.atomic_create is True
    st.write_bytes(f"{s3_bucket.uri}/t/a", b"A")
    st.rename(f"{s3_bucket.uri}/t/a", f"{s3_bucket.uri}/t/b")
    assert s3_bucket.keys() == ["t/b"]


# -- retries through a faulty network --------------------------------------------------------------


@pytest.fixture
def flaky(s3_bucket: S3Bucket) -> Iterator[tuple[S3Storage, FlakyS3Proxy, S3Bucket]]:
    with FlakyS3Proxy(s3_bucket.server.endpoint_url) as proxy:
        options = {
            **s3_bucket.options,
            "hoodie.storage.s3.endpoint": proxy.endpoint_url,
            "hoodie.storage.s3.max.retries": "3",
            "hoodie.storage.s3.retry.base.delay.ms": "1",
        }
        yield S3Storage(s3_bucket.uri, options), proxy, s3_bucket


@pytest.mark.parametrize("mode", ["503", "reset"])
def test_transient_errors_are_retried(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket], mode: str) -> None:
    st, proxy, bucket = flaky
    proxy.fail(2, mode)
    st.write_bytes(f"{bucket.uri}/t/r.bin", b"survived")
    assert proxy.faults_served == 2
    assert proxy.requests == 3
    proxy.fail(3, mode)
    assert st.read_bytes(f"{bucket.uri}/t/r.bin") == b"survived"
    assert proxy.faults_served == 5


def test_reading_a_whole_file_is_one_request(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    # timeline and metadata files are read whole, several per commit: a GET, no HEAD before it
    st, proxy, bucket = flaky
    path = f"{bucket.uri}/t/.hoodie/001.deltacommit"
    st.write_bytes(path, b"{}" * 1000)
    before = proxy.requests
    assert st.read_bytes(path) == b"{}" * 1000
    assert proxy.requests == before + 1


def test_discarding_a_file_is_one_request(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    # a heartbeat or the table lock goes at the end of every commit: no HEAD before the DELETE
    st, proxy, bucket = flaky
    path = f"{bucket.uri}/t/.hoodie/.heartbeat/001"
    st.write_bytes(path, b"")
    before = proxy.requests
    st.discard(path)
    st.discard(path)  # gone already
    assert [q.method for q in proxy.seen[before:]] == ["DELETE", "DELETE"]
    assert bucket.keys() == []


def test_deleting_many_files_is_one_request(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    # a clean deletes a partition's old file slices, archival a batch of instant files
    st, proxy, bucket = flaky
    paths = [f"{bucket.uri}/t/p/f{i}.parquet" for i in range(5)]
    for p in paths:
        st.write_bytes(p, b"x")
    st.write_bytes(f"{bucket.uri}/t/p/kept.parquet", b"k")
    before = proxy.requests
    assert st.delete_files([*paths, f"{bucket.uri}/t/p/missing.parquet"]) == {}
    assert [q.method for q in proxy.seen[before:]] == ["POST"]
    assert bucket.keys() == ["t/p/kept.parquet"]
    proxy.fail(2)  # retried as any request
    st.write_bytes(paths[0], b"x")
    assert st.delete_files(paths[:1]) == {}
    assert bucket.keys() == ["t/p/kept.parquet"]


def test_a_file_s3_refuses_to_delete_is_reported(
    flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket], monkeypatch: pytest.MonkeyPatch
) -> None:
    st, _proxy, bucket = flaky
    paths = [f"{bucket.uri}/t/a.parquet", f"{bucket.uri}/t/b.parquet"]
    for p in paths:
        st.write_bytes(p, b"x")
    real = st.fs.call_s3

    def refusing_b(method: str, *args: object, **kwargs: object) -> object:
        out = real(method, *args, **kwargs)
        if method == "delete_objects":  # as S3 answers a key a bucket policy protects
            out["Errors"] = [{"Key": "t/b.parquet", "Code": "AccessDenied", "Message": "Access Denied"}]
        return out

    monkeypatch.setattr(st.fs, "call_s3", refusing_b)
    failed = st.delete_files(paths)
    assert list(failed) == [paths[1]]
    assert "AccessDenied" in str(failed[paths[1]])


def test_retries_are_bounded(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    st, proxy, bucket = flaky
    proxy.fail(10)
    with pytest.raises(TransientS3Error, match="after 4 attempts"):
        st.write_bytes(f"{bucket.uri}/t/never.bin", b"x")
    assert proxy.requests == 4  # the first try and max.retries=3 retries, nothing more
    assert bucket.keys() == []


def test_a_lost_conditional_put_is_still_ours(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    st, proxy, bucket = flaky
    path = f"{bucket.uri}/t/.hoodie/001.commit"
    proxy.fail(1, "lost")  # the put lands, the answer is lost; the retry then sees 412
    assert st.create_if_absent(path, b"mine") is True
    assert st.read_bytes(path) == b"mine"
    assert st.create_if_absent(path, b"mine") is False  # a second, unambiguous attempt loses


def test_precondition_failed_is_not_retried(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    st, proxy, bucket = flaky
    path = f"{bucket.uri}/t/once"
    assert st.create_if_absent(path, b"1") is True
    before = proxy.requests
    assert st.create_if_absent(path, b"2") is False
    assert proxy.requests == before + 2  # the put (answered 412, not resent) and one HEAD
    assert st.read_bytes(path) == b"1"


def test_streamed_reads_are_retried(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    st, proxy, bucket = flaky
    path = f"{bucket.uri}/t/stream.bin"
    data = bytes(range(256)) * 8192  # 2 MiB: more than one read-ahead buffer
    st.write_bytes(path, data)
    with st.open_read(path) as f:
        proxy.fail(2)
        assert f.read(10) == data[:10]
        f.seek(len(data) - 5)
        proxy.fail(1, "reset")
        assert f.read() == data[-5:]
        f.seek(1000)
        assert f.read(3 * 1024 * 1024) == data[1000:]
    assert proxy.faults_served == 3


def test_writing_to_a_missing_bucket_names_the_bucket(s3_bucket: S3Bucket) -> None:
    st = S3Storage("s3://no-such-bucket", s3_bucket.options)
    for write in (
        lambda: st.write_bytes("s3://no-such-bucket/t/a", b"x"),
        lambda: st.create_if_absent("s3://no-such-bucket/t/.hoodie/1.commit", b"x"),
    ):
        with pytest.raises(StorageError, match="bucket 'no-such-bucket' does not exist"):
            write()
    with pytest.raises(StorageError, match="no-such-bucket"):
        with st.open_write("s3://no-such-bucket/t/b") as f:
            f.write(b"y")
    with pytest.raises(FileNotFoundError):  # reads keep the FileNotFoundError contract
        st.read_bytes("s3://no-such-bucket/t/a")


def test_an_unpickled_storage_keeps_the_retry_bound(flaky: tuple[S3Storage, FlakyS3Proxy, S3Bucket]) -> None:
    import pickle

    st, proxy, bucket = flaky
    payload = pickle.dumps(st)
    s3fs.S3FileSystem.clear_instance_cache()  # as in a fresh task process
    clone = pickle.loads(payload)
    assert clone.fs is not st.fs
    proxy.fail(10)
    with pytest.raises(TransientS3Error):
        clone.write_bytes(f"{bucket.uri}/t/x", b"x")
    assert proxy.requests == 4
