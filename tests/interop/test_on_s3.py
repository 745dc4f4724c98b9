"""Apache Hudi and our writers taking turns on one table in an S3 bucket (moto's server on
loopback): Hudi through Hadoop's S3A connector (``s3a://``, with its metadata table, its default),
ours through s3fs (``s3://``). After every write both readers give the model's rows; Hudi
compacts what we wrote and we compact what Hudi wrote (MOR). On local disk the other tests of
this tier prove the bytes; here the object store's ways are in play: no rename, no directories,
Hudi's timeline-server markers, our conditional puts, listings instead of folders."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.s3 import MotoS3Server, S3Bucket
from oracle import HudiOracle, OracleSetupError, ensure_oracle, s3a_jars
from workloads import table_options

pytestmark = pytest.mark.interop

Model = dict[str, tuple[str, str]]  # id -> (partition, v)

#: Hudi's compaction procedure now, and with its metadata table on it takes the table lock, whose
#: default provider (the file system's) refuses ``s3a://`` ("can not support atomic creation"):
#: a Hudi user on S3 names a provider; the in-process one serves a single session
COMPACTION = ",".join([
    "hoodie.compact.inline.max.delta.commits=1",
    "hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.InProcessLockProvider",
])  # fmt: skip


@pytest.fixture(scope="session")
def hudi_s3(moto_s3_server: MotoS3Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HudiOracle]:
    """A Hudi session with the S3A connector, pointed at this process's moto server (a JVM of
    its own: the tier's shared session keeps Hudi's bundle alone on its class path)."""
    try:
        env, jars = ensure_oracle(), s3a_jars()
    except OracleSetupError as exc:
        pytest.fail(f"Apache Hudi oracle unavailable: {exc}", pytrace=False)
    oracle = HudiOracle(env, tmp_path_factory.mktemp("oracle-s3"), jars=jars)
    try:
        oracle.hadoop_conf({
            "fs.s3a.endpoint": moto_s3_server.endpoint_url,
            "fs.s3a.endpoint.region": "us-east-1",
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "false",
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            "fs.s3a.access.key": "testing",
            "fs.s3a.secret.key": "testing",
        })  # fmt: skip
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
def test_hudi_and_our_writers_take_turns_on_s3(
    hudi_s3: HudiOracle, s3_bucket: S3Bucket, table_type: str
) -> None:
    ours_uri, hudi_uri = f"{s3_bucket.uri}/t", f"s3a://{s3_bucket.name}/t"
    mor = table_type == "MERGE_ON_READ"
    model: Model = {}

    def hudi_write(op: str, rows: pa.Table) -> None:
        hudi_s3.write(
            hudi_uri, rows, table_options("s3t", table_type, op, {"hoodie.metadata.enable": "true"})
        )
        _apply(model, op, rows)

    def our_write(op: str, rows: pa.Table) -> None:
        options = {**s3_bucket.options, **table_options("s3t", table_type, op)}
        table = HudiTable.open(ours_uri, options=options)
        (table.delete(rows, options=options) if op == "delete" else table.upsert(rows, options=options))
        _apply(model, op, rows)

    def both_read(step: str) -> None:
        hudi_rows = _answer(hudi_s3.read(hudi_uri))
        our_rows = _answer(HudiTable.open(ours_uri, options=s3_bucket.options).read())
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
        hudi_s3.sql(
            f"CALL run_compaction(op => 'scheduleAndExecute', path => '{hudi_uri}', options => '{COMPACTION}')"
        )
        both_read("Hudi's compaction")
    our_write("upsert", _rows(ids[::7], 4, "o4"))
    both_read("our second upsert")
    if mor:  # we compact the last logs: Hudi's read_optimized then holds every row
        assert HudiTable.open(ours_uri, options=s3_bucket.options).compact()
        both_read("our compaction")
        optimized = hudi_s3.read(hudi_uri, {"hoodie.datasource.query.type": "read_optimized"})
        assert _answer(optimized) == model
    hudi_write("upsert", _rows(ids[40:45], 5, "h5"))
    both_read("Hudi's last upsert")
    actions = [i.action for i in HudiTable.open(ours_uri, options=s3_bucket.options).timeline.completed()]
    writes = actions.count("deltacommit" if mor else "commit")
    assert writes == 6 and actions.count("compaction") == (2 if mor else 0)
