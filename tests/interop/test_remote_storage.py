"""Apache Hudi and our writers taking turns on one table in remote storage: an S3 bucket of
moto's server and an HDFS mini cluster, both on loopback. Hudi goes through Hadoop's file systems
(S3A, ``s3a://``, and HDFS), on S3 with its metadata table (its default); ours through s3fs
(``s3://``) and hdfs-native, the local engine and ``hudi_spark.write``. After every write both
readers give the model's rows; Hudi compacts what we wrote and we compact what Hudi wrote (MOR).
On local disk the other tests of this tier prove the bytes; here the stores' ways are in play:
no rename and no folders on S3, Hudi's timeline-server markers, our conditional puts and
exclusive creates, listings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.s3 import MotoS3Server, S3Bucket
from minihdfs import ONE_DATANODE
from oracle import S3_LOCK, HudiOracle, OracleSetupError, ensure_oracle, hudi_uri, s3_oracle
from runner import procedure_options
from workloads import table_options

pytestmark = pytest.mark.interop

Model = dict[str, tuple[str, str]]  # id -> (partition, v)

#: Hudi's compaction procedure plans at once
COMPACTION = {"hoodie.compact.inline.max.delta.commits": "1"}


@dataclass(frozen=True)
class Store:
    ours: str  # the table's URI for our code
    theirs: str  # and for Hudi's (S3: the S3A connector's scheme)
    options: dict[str, str]  # what reaches the store from our code
    hudi: HudiOracle
    hudi_extra: dict[str, str]  # what Hudi's writes and procedures take there beyond the table's


@pytest.fixture(params=["s3", "hdfs"])
def store(request: pytest.FixtureRequest, spark: Any, hudi: Any) -> Store:
    """The table's place. ``spark`` comes first: its JVM is launched (a fork that runs Python's
    after-fork handlers) before this process uses hdfs-native, whose threads would leave fsspec's
    handler waiting in the child for ever."""
    name = f"t-{request.node.callspec.id}"
    if request.param == "s3":
        bucket: S3Bucket = request.getfixturevalue("s3_bucket")
        oracle: HudiOracle = request.getfixturevalue("hudi_s3")
        ours = f"{bucket.uri}/{name}"
        # its metadata table (its default), with the lock provider its table services need on S3
        return Store(
            ours, hudi_uri(ours), bucket.options, oracle, {"hoodie.metadata.enable": "true", **S3_LOCK}
        )
    root: str = request.getfixturevalue("hdfs_root")
    hudi.oracle.hadoop_conf(ONE_DATANODE)
    uri = f"{root}/interop-{name}"
    # Hudi 0.15's bundle shades an HBase built for Hadoop 2, whose HFile reader fails on Hadoop 3's
    # HDFS client when it closes a file of the metadata table (NoSuchMethodError:
    # HdfsDataInputStream.getReadStatistics; apache/hudi#5765, #6414): Hudi on HDFS runs without it
    return Store(uri, uri, {}, hudi.oracle, {"hoodie.metadata.enable": "false"})


@pytest.fixture(scope="session")
def hudi_s3(moto_s3_server: MotoS3Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HudiOracle]:
    """A Hudi session with the S3A connector, pointed at this process's moto server."""
    try:
        oracle = s3_oracle(ensure_oracle(), tmp_path_factory.mktemp("oracle-s3"), moto_s3_server.endpoint_url)
    except OracleSetupError as exc:
        pytest.fail(f"Apache Hudi oracle unavailable: {exc}", pytrace=False)
    try:
        yield oracle
    finally:
        oracle.close()


def _rows(ids: list[str], ts: int, v: str) -> pa.Table:
    n = len(ids)
    return pa.table({
        "id": ids, "p": [f"p{int(i[1:]) % 3}" for i in ids], "ts": pa.array([ts] * n, pa.int64()), "v": [v] * n,
    })  # fmt: skip


def _answer(table: pa.Table) -> Model:
    return {r["id"]: (r["p"], r["v"]) for r in table.select(["id", "p", "v"]).to_pylist()}


def _apply(model: Model, op: str, rows: pa.Table) -> None:
    for r in rows.select(["id", "p", "v"]).to_pylist():
        if op == "delete":
            model.pop(r["id"], None)
        else:
            model[r["id"]] = (r["p"], r["v"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_and_our_writers_take_turns_in_remote_storage(spark: Any, store: Store, table_type: str) -> None:
    import hudi_spark

    hudi = store.hudi
    mor = table_type == "MERGE_ON_READ"
    model: Model = {}

    def hudi_write(op: str, rows: pa.Table) -> None:
        hudi.write(
            store.theirs,
            rows,
            table_options("rt", table_type, op, store.hudi_extra),
        )
        _apply(model, op, rows)

    def our_write(op: str, rows: pa.Table, *, on_spark: bool = False) -> None:
        options = {**store.options, **table_options("rt", table_type, op)}
        if on_spark:
            hudi_spark.write(spark.createDataFrame(rows), store.ours, operation=op, options=options)
        else:
            table = HudiTable.open(store.ours, options=options)
            if op == "delete":
                table.delete(rows, options=options)
            else:
                table.upsert(rows, options=options)
        _apply(model, op, rows)

    def both_read(step: str) -> None:
        hudi_rows = _answer(hudi.read(store.theirs))
        our_rows = _answer(HudiTable.open(store.ours, options=store.options).read())
        assert hudi_rows == model, f"Hudi's read after {step}"
        assert our_rows == model, f"our read after {step}"

    ids = [f"k{i:02d}" for i in range(60)]
    hudi_write("insert", _rows(ids, 1, "h1"))
    both_read("Hudi's insert")
    our_write("upsert", _rows(ids[:20] + [f"k{i}" for i in range(60, 70)], 2, "o2"))
    our_write("delete", _rows(ids[50:55], 2, ""))
    both_read("our upsert and delete")
    hudi_write("upsert", _rows(ids[10:30] + ids[50:52] + [f"k{i}" for i in range(70, 75)], 3, "h3"))
    both_read("Hudi's upsert after ours")
    if mor:  # Hudi compacts the logs both writers left
        compaction = procedure_options({**COMPACTION, **store.hudi_extra})
        hudi.sql(f"CALL run_compaction(op => 'scheduleAndExecute', path => '{store.theirs}'{compaction})")
        both_read("Hudi's compaction")
    our_write("upsert", _rows(ids[::7] + [f"k{i}" for i in range(75, 80)], 4, "o4"), on_spark=True)
    both_read("our upsert through Spark")
    if mor:  # we compact the last logs: Hudi's read_optimized then holds every row
        assert HudiTable.open(store.ours, options=store.options).compact()
        both_read("our compaction")
        optimized = hudi.read(store.theirs, {"hoodie.datasource.query.type": "read_optimized"})
        assert _answer(optimized) == model
    hudi_write("upsert", _rows(ids[40:45], 5, "h5"))
    both_read("Hudi's last upsert")
    actions = [i.action for i in HudiTable.open(store.ours, options=store.options).timeline.completed()]
    writes = actions.count("deltacommit" if mor else "commit")
    assert writes == 6 and actions.count("compaction") == (2 if mor else 0)
