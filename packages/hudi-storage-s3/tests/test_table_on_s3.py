"""End to end on the moto server: tables, the timeline protocol and the CLI over s3://."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hudi_core import HudiTable
from hudi_core.errors import CommitConflictError
from hudi_core.testing.s3 import FlakyS3Proxy, S3Bucket
from hudi_core.timeline.timeline import ActiveTimeline
from hudi_storage_s3 import S3Storage

pytestmark = pytest.mark.s3


def _create(bucket: S3Bucket, name: str = "t1") -> HudiTable:
    return HudiTable.create(
        f"{bucket.uri}/{name}",
        name=name,
        record_key_fields="id",
        partition_fields="region",
        ordering_field="ts",
        options=bucket.options,
    )


def test_create_then_open_a_table_on_s3(s3_bucket: S3Bucket) -> None:
    created = _create(s3_bucket)
    assert isinstance(created.storage, S3Storage)
    assert "t1/.hoodie/hoodie.properties" in s3_bucket.keys()
    opened = HudiTable.open(f"{s3_bucket.uri}/t1", options=s3_bucket.options)
    assert opened.name == "t1"
    assert opened.table_type == "COPY_ON_WRITE"
    assert opened.config.record_key_fields == ["id"]
    assert opened.config.partition_fields == ["region"]
    assert opened.config.ordering_field == "ts"
    assert HudiTable.exists(f"{s3_bucket.uri}/t1", options=s3_bucket.options)
    assert not HudiTable.exists(f"{s3_bucket.uri}/nope", options=s3_bucket.options)


def test_timeline_transitions_on_s3(s3_bucket: S3Bucket) -> None:
    table = _create(s3_bucket)
    tl = table.timeline
    ts = tl.new_instant_time()
    req = tl.create_requested(ts, "commit")
    inflight = tl.transition_to_inflight(req)
    tl.complete(inflight, b'{"partitionToWriteStats": {}}')
    reloaded = HudiTable.open(f"{s3_bucket.uri}/t1", options=s3_bucket.options).timeline
    assert [(i.timestamp, i.action, i.state.name) for i in reloaded] == [(ts, "commit", "COMPLETED")]
    assert reloaded.read_details(reloaded[0]) == b'{"partitionToWriteStats": {}}'
    assert sorted(k.rsplit("/", 1)[-1] for k in s3_bucket.keys("t1/.hoodie/") if k.count("/") == 2) == [
        f"{ts}.commit",
        f"{ts}.commit.requested",
        f"{ts}.inflight",
        "hoodie.properties",
    ]


def test_two_writers_completing_one_instant_exactly_one_wins(s3_bucket: S3Bucket) -> None:
    table = _create(s3_bucket)
    tl = table.timeline
    ts = tl.new_instant_time()
    inflight = tl.transition_to_inflight(tl.create_requested(ts, "commit"))
    # Two writers, each with its own storage client and its own view of the timeline.
    writers = [ActiveTimeline(S3Storage(s3_bucket.uri, s3_bucket.options), table.meta_path) for _ in range(2)]
    barrier = threading.Barrier(2)
    outcome: list[object] = [None, None]

    def complete(i: int) -> None:
        barrier.wait()
        try:
            writers[i].complete(inflight, f'{{"writer": {i}}}'.encode())
            outcome[i] = "won"
        except CommitConflictError as e:
            outcome[i] = e

    threads = [threading.Thread(target=complete, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(type(o).__name__ for o in outcome) == ["CommitConflictError", "str"]
    winner = outcome.index("won")
    final = table.timeline
    assert [i.state.name for i in final] == ["COMPLETED"]
    assert json.loads(final.read_details(final[0])) == {"writer": winner}


def test_cli_timeline_json_with_the_endpoint_from_the_environment(s3_bucket: S3Bucket) -> None:
    table = _create(s3_bucket)
    tl = table.timeline
    ts = tl.new_instant_time()
    tl.complete(tl.transition_to_inflight(tl.create_requested(ts, "commit")), b"{}")
    env = {**os.environ, **s3_bucket.server.env()}  # AWS_ENDPOINT_URL + fake credentials, no --option
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "hudi-py"), "timeline", f"{s3_bucket.uri}/t1", "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"instant": ts, "action": "commit", "state": "COMPLETED"}]


def test_a_merge_on_read_table_clustered_on_s3(s3_bucket: S3Bucket) -> None:
    """A clustering over s3://: the plan names the files by their s3:// paths, the groups are
    read merged and rewritten there, and the replaced file groups drop out of every read."""
    import pyarrow as pa
    from hudi_core.clustering import read_plan

    uri = f"{s3_bucket.uri}/clustered"
    table = HudiTable.create(uri, name="clustered", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="region", ordering_field="ts", options=s3_bucket.options)  # fmt: skip
    small = {**s3_bucket.options, "hoodie.parquet.small.file.limit": "0"}
    for ts, ids in enumerate([["a", "b"], ["c"], ["a", "d"]]):
        rows = pa.table({"id": ids, "region": ["eu"] * len(ids), "ts": pa.array([ts] * len(ids), pa.int64())})
        HudiTable.open(uri, options=s3_bucket.options).upsert(rows, options=small)
    before = sorted(
        map(tuple, HudiTable.open(uri, options=s3_bucket.options).read(columns=["id", "ts"]).to_pylist())
    )
    t = table.schedule_clustering(s3_bucket.options)
    assert t is not None
    (group,) = read_plan(HudiTable.open(uri, options=s3_bucket.options), t).groups
    assert len(group.slices) == 3 and all(s.data_file.startswith(f"{uri}/eu/") for s in group.slices)
    HudiTable.open(uri, options=s3_bucket.options).run_clustering(t, s3_bucket.options)
    after = HudiTable.open(uri, options=s3_bucket.options)
    assert sorted(map(tuple, after.read(columns=["id", "ts"]).to_pylist())) == before
    (slice_,) = after.file_slices()
    assert not slice_.log_files and slice_.base_file is not None
    assert f"clustered/eu/{slice_.base_file.name}" in s3_bucket.keys("clustered/eu/")


@contextmanager
def _behind_proxy(
    bucket: S3Bucket, name: str, table_type: str, **options: str
) -> Iterator[tuple[FlakyS3Proxy, HudiTable, dict[str, str]]]:
    """A new table (key ``id``, partitions by ``region``, ordering ``ts``) whose every request
    goes through a proxy that records it, with the options that point at the proxy."""
    with FlakyS3Proxy(bucket.server.endpoint_url) as proxy:
        opts = {**bucket.options, "hoodie.storage.s3.endpoint": proxy.endpoint_url, **options}
        table = HudiTable.create(f"{bucket.uri}/{name}", name=name, table_type=table_type, record_key_fields="id",
                                 partition_fields="region", ordering_field="ts", options=opts)  # fmt: skip
        yield proxy, table, opts


def _as_large_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every base file read as a large one (its footer, then column ranges), not fetched whole."""
    from hudi_core.read import files

    monkeypatch.setattr(files, "WHOLE_FILE_MAX_BYTES", 0)


@pytest.mark.parametrize("whole", [True, False], ids=["small-files", "large-files"])
def test_a_process_fetches_what_it_needs_of_a_base_file_once(
    s3_bucket: S3Bucket, monkeypatch: pytest.MonkeyPatch, whole: bool
) -> None:
    """A SIMPLE index reads the keys of every base file of the partitions an upsert touches, and
    merge-on-read updates go to logs, leaving the base files as they are (a streaming writer). A
    base file never changes under its name: a small one (up to 4 MB) is fetched whole once per
    process, the next upserts read it from memory; of a larger one the footer (with Hudi's
    default bloom filter, ~430 kB) is fetched once, the next upserts GET the key column alone."""
    import pyarrow as pa

    if not whole:
        _as_large_files(monkeypatch)
    with _behind_proxy(s3_bucket, "footers", "MERGE_ON_READ") as (proxy, table, options):
        uri = table.base_uri
        ids = [f"k{i}" for i in range(20)]
        regions = ["eu", "us"] * 10
        table.bulk_insert(pa.table({"id": ids, "region": regions, "ts": [0] * 20}), options=options)
        base_files = sorted(s.base_file.name for s in table.file_slices() if s.base_file is not None)
        assert len(base_files) == 2

        def upsert_reads(ts: int) -> list[tuple[str, str | None]]:
            """What an upsert of updates alone (in both partitions) asks of the base files."""
            start = len(proxy.seen)
            rows = pa.table({"id": ids[ts::3], "region": regions[ts::3], "ts": [ts] * len(ids[ts::3])})
            HudiTable.open(uri, options=options).upsert(rows, options=options)
            return [(q.method, q.range) for q in proxy.seen[start:] if q.path.endswith(".parquet")]

        first, second, third = upsert_reads(1), upsert_reads(2), upsert_reads(3)
        if whole:
            assert first == [("GET", None)] * len(base_files) and second == third == [], (
                first,
                second,
                third,
            )
        else:  # each file's size, last bytes (the footer's length), footer, then its key column
            gets = [r for method, r in first if method == "GET"]
            assert len(gets) == 3 * len(base_files), first
            later = [r for method, r in second + third if method == "GET"]
            assert len(later) == 2 * len(base_files) and set(later) <= set(gets), (second, third)
        # the base files are the bulk_insert's still (updates go to logs), and every update is read
        now = HudiTable.open(uri, options=options)
        assert sorted(s.base_file.name for s in now.file_slices() if s.base_file is not None) == base_files
        got = {r["id"]: r["ts"] for r in now.read(columns=["id", "ts"]).to_pylist()}
        assert got == {k: max([0] + [ts for ts in (1, 2, 3) if k in ids[ts::3]]) for k in ids}


@pytest.mark.parametrize("index", ["SIMPLE", "BUCKET"])
def test_an_upsert_lists_only_the_partitions_it_writes(s3_bucket: S3Bucket, index: str) -> None:
    """As Apache Hudi's index, an upsert looks only at the partitions of its records: into 2 of a
    table's 8 partitions it lists those 2 folders (a LIST request each, once), not the table's
    root and every partition below it."""
    import pyarrow as pa

    index_options = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "2"}
    with _behind_proxy(s3_bucket, "parts", "MERGE_ON_READ", **index_options) as (proxy, table, options):
        uri = table.base_uri
        regions = [f"r{i}" for i in range(8)]
        table.upsert(pa.table({"id": [f"k{i}" for i in range(16)], "region": regions * 2, "ts": [0] * 16}),
                     options=options)  # fmt: skip
        start = len(proxy.seen)
        # updates of k1 and k2, a new key in each of r1 and r2
        rows = pa.table({"id": ["k1", "k2", "n1", "n2"], "region": ["r1", "r2", "r1", "r2"], "ts": [1] * 4})
        HudiTable.open(uri, options=options).upsert(rows, options=options)
        listed = [q.prefix for q in proxy.seen[start:] if q.prefix is not None]
        # once each: the handles write with the listing the index made
        assert sorted(p for p in listed if not p.startswith("parts/.hoodie/")) == ["parts/r1/", "parts/r2/"]
        # the same rows given as a stream of batches (one write, chunk by chunk)
        start = len(proxy.seen)
        streamed = pa.table(
            {"id": ["k1", "k2", "n1", "n2"], "region": ["r1", "r2", "r1", "r2"], "ts": [2] * 4}
        )
        HudiTable.open(uri, options=options).upsert(
            iter(streamed.to_batches(max_chunksize=2)), options=options
        )
        listed = [q.prefix for q in proxy.seen[start:] if q.prefix is not None]
        assert sorted(p for p in listed if not p.startswith("parts/.hoodie/")) == ["parts/r1/", "parts/r2/"]
        read = HudiTable.open(uri, options=options).read(columns=["id", "ts"])
        got = {r["id"]: r["ts"] for r in read.to_pylist()}
        assert got == {**{f"k{i}": 0 for i in range(16)}, "k1": 2, "k2": 2, "n1": 2, "n2": 2}


@pytest.mark.parametrize("whole", [True, False], ids=["small-file", "large-file"])
def test_a_copy_on_write_upsert_fetches_the_old_base_file_once(
    s3_bucket: S3Bucket, monkeypatch: pytest.MonkeyPatch, whole: bool
) -> None:
    """A copy-on-write upsert reads a base file twice: the SIMPLE index its keys, then the merge
    every column. A small file (up to 4 MB) is fetched whole in one GET (no HEAD for its size, no
    GETs of its footer's length, its footer and its columns) and the merge reads those bytes; of
    a larger one no byte range is fetched twice (the footer, ~430 kB with Hudi's default bloom
    filter, once)."""
    import pyarrow as pa

    if not whole:
        _as_large_files(monkeypatch)
    with _behind_proxy(s3_bucket, "cow", "COPY_ON_WRITE") as (proxy, table, options):
        uri = table.base_uri
        ids = [f"k{i}" for i in range(50)]
        table.bulk_insert(pa.table({"id": ids, "region": ["eu"] * 50, "ts": [0] * 50}), options=options)
        (old,) = [s.base_file.name for s in table.file_slices() if s.base_file is not None]
        start = len(proxy.seen)
        HudiTable.open(uri, options=options).upsert(
            pa.table({"id": ids[:5], "region": ["eu"] * 5, "ts": [1] * 5}), options=options
        )
        asked = [(q.method, q.range) for q in proxy.seen[start:] if q.path.endswith(f"/{old}")]
        if whole:
            assert asked == [("GET", None)]
        else:  # the index: the footer's length, the footer, the keys; the merge: the other columns
            ranges = [r for method, r in asked if method == "GET"]
            assert len(ranges) >= 3 and len(ranges) == len(set(ranges)), asked
        now = HudiTable.open(uri, options=options)
        assert [s.base_file.name for s in now.file_slices() if s.base_file is not None] != [old]
        got = {r["id"]: r["ts"] for r in now.read(columns=["id", "ts"]).to_pylist()}
        assert got == {k: 1 if k in ids[:5] else 0 for k in ids}


def test_a_write_reads_the_previous_commits_file_once(s3_bucket: S3Bucket) -> None:
    """A write looks up the table's schema and the average record size in the latest commit's
    file (and the clean after it, the partitions it wrote): one GET of that file, not one a look."""
    import pyarrow as pa

    with _behind_proxy(s3_bucket, "commits", "MERGE_ON_READ") as (proxy, table, options):
        uri = table.base_uri
        table.upsert(pa.table({"id": ["a", "b"], "region": ["eu", "us"], "ts": [0, 0]}), options=options)
        (first,) = list(table.timeline.completed_commits())
        start = len(proxy.seen)
        HudiTable.open(uri, options=options).upsert(
            pa.table({"id": ["a", "c"], "region": ["eu", "us"], "ts": [1, 1]}), options=options
        )
        gets = [q for q in proxy.seen[start:] if q.method == "GET" and q.path.endswith(f"/{first.file_name}")]
        assert len(gets) == 1, gets
        got = {
            r["id"]: r["ts"]
            for r in HudiTable.open(uri, options=options).read(columns=["id", "ts"]).to_pylist()
        }
        assert got == {"a": 1, "b": 0, "c": 1}
