"""Bad input gets a clear error and loses nothing: options naming unknown components, partition
values aimed at the metadata folder, damaged log blocks, credentials in a config's repr."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.client.write_client import WriteClient
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError, CorruptedLogBlockError, UnknownComponentError, UnsafePathError

NO_COMPACTION = {"hoodie.compact.inline": "false"}


def _mor(tmp_path: Path, **options: str) -> HudiTable:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options={**NO_COMPACTION, **options})  # fmt: skip
    WriteClient(table, NO_COMPACTION).write(_rows(1, "alpha"), operation="insert")
    return HudiTable.open(table.base_uri)


def _rows(ts: int, name: str) -> pa.Table:
    return pa.table({"uuid": ["a", "b"], "ts": [ts, ts], "name": [name, "beta"], "city": ["sf", "sf"]})


def _values(table: HudiTable) -> list[tuple[str, str]]:
    data = HudiTable.open(table.base_uri).read(columns=["uuid", "name"]).to_pydict()
    return sorted(zip(data["uuid"], data["name"], strict=True))


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("hoodie.write.executor.type", "FOO", UnknownComponentError),
        ("hoodie.logfile.data.block.format", "foo", ConfigError),
        ("hoodie.parquet.compression.codec", "foo", ConfigError),
        ("hoodie.parquet.compression.level", "99", ConfigError),
        ("hoodie.parquet.compression.level", "fast", ConfigError),
        ("hoodie.bulkinsert.sort.mode", "FOO", ConfigError),
        ("hoodie.index.type", "HBASE", ConfigError),
        ("hoodie.write.concurrency.mode", "non_blocking_concurrency_control", ConfigError),
        ("hoodie.cleaner.policy.failed.writes", "SOMETIMES", ConfigError),
        (
            "hoodie.write.lock.provider",
            "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
            UnknownComponentError,
        ),
    ],
)
def test_an_unknown_component_or_mode_is_refused_before_the_write(
    tmp_path: Path, option: str, value: str, error: type[Exception]
) -> None:
    """Even a MOR upsert that only appends to a log file (and would never have used the
    executor or the codec) is refused, and the table keeps its last commit."""
    table = _mor(tmp_path)
    with pytest.raises(error, match=value):
        WriteClient(table, {**NO_COMPACTION, option: value}).write(_rows(2, "ALPHA"), operation="upsert")
    assert _values(table) == [("a", "alpha"), ("b", "beta")]
    assert len(HudiTable.open(table.base_uri).timeline) == 1  # no instant was started


def test_the_consistent_hashing_bucket_engine_is_refused_before_the_write(tmp_path: Path) -> None:
    """Its file groups come from hashing metadata our writers do not keep: a key hashed as the
    SIMPLE engine's would land in another file group than the one holding it."""
    table = _mor(tmp_path)
    options = {
        **NO_COMPACTION,
        "hoodie.index.type": "BUCKET",
        "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
    }
    with pytest.raises(ConfigError, match="CONSISTENT_HASHING"):
        WriteClient(table, options).write(_rows(2, "ALPHA"), operation="upsert")
    assert _values(table) == [("a", "alpha"), ("b", "beta")]
    assert len(HudiTable.open(table.base_uri).timeline) == 1


@pytest.mark.parametrize("city", [".hoodie", ".hoodie/archived"])
def test_a_partition_value_naming_the_metadata_folder_is_refused(tmp_path: Path, city: str) -> None:
    table = _mor(tmp_path)
    rows = pa.table({"uuid": ["c"], "ts": [1], "name": ["x"], "city": [city]})
    with pytest.raises(UnsafePathError, match="metadata folder"):
        WriteClient(table, NO_COMPACTION).write(rows, operation="insert")
    assert not [n for n in os.listdir(Path(table.base_uri) / ".hoodie") if n.endswith(".parquet")]
    assert _values(table) == [("a", "alpha"), ("b", "beta")]


def _log_file(table: HudiTable) -> Path:
    return next(p for p in Path(table.base_uri).glob("sf/.*.log.*"))


def test_a_string_that_is_not_utf8_in_a_log_block_is_a_corrupt_block(tmp_path: Path) -> None:
    """Not invalid Arrow data handed on (and compacted into a base file Hudi cannot read)."""
    table = _mor(tmp_path)
    WriteClient(table, NO_COMPACTION).write(_rows(2, "ALPHA")[:1], operation="upsert")
    log = _log_file(table)
    raw = bytearray(log.read_bytes())
    raw[raw.find(b"ALPHA")] ^= 0x80
    log.write_bytes(bytes(raw))
    with pytest.raises(CorruptedLogBlockError, match="UTF-8"):
        HudiTable.open(table.base_uri).read()


def test_a_committed_block_that_cannot_be_read_is_an_error_not_stale_values(tmp_path: Path) -> None:
    table = _mor(tmp_path, **{"hoodie.logfile.data.block.format": "parquet"})
    opts = {**NO_COMPACTION, "hoodie.logfile.data.block.format": "parquet"}
    WriteClient(table, opts).write(_rows(2, "ALPHA")[:1], operation="upsert")
    assert _values(table) == [("a", "ALPHA"), ("b", "beta")]
    log = _log_file(table)
    raw = bytearray(log.read_bytes())
    assert struct.unpack(">i", raw[18:22])[0] == 5  # PARQUET_DATA, after magic, size and version
    raw[18:22] = struct.pack(">i", 4)  # now it says HFILE_DATA
    log.write_bytes(bytes(raw))
    with pytest.raises(CorruptedLogBlockError, match="HFILE_DATA"):
        HudiTable.open(table.base_uri).read()


def test_credentials_never_show_in_a_configs_repr() -> None:
    conf = HoodieConfig({"hoodie.storage.s3.secret.key": "s3cr3t", "hoodie.storage.s3.access.key": "AKIA1",
                         "hoodie.storage.s3.session.token": "tok3n", "hoodie.table.name": "trips"})  # fmt: skip
    text = repr(conf)
    assert "trips" in text
    assert not any(secret in text for secret in ("s3cr3t", "AKIA1", "tok3n"))
