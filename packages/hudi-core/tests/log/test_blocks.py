"""Block contents: Avro data, parquet data and delete blocks, written then read back."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
from hudi_core.errors import CorruptedLogBlockError
from hudi_core.log import BlockType, HeaderKey, encode_block, read_log_bytes
from hudi_core.log.blocks import encode_avro_data_block, encode_delete_block, encode_parquet_data_block
from hudi_core.schema.avro_schema import add_meta_fields, arrow_to_avro

#: every test twice: the compiled Avro codec (hudi_core.avro._codec) and the numpy one
pytestmark = pytest.mark.usefixtures("avro_codec")


def data() -> pa.Table:
    meta = {
        "_hoodie_commit_time": ["001", "001"],
        "_hoodie_commit_seqno": ["001_0_1", "001_0_2"],
        "_hoodie_record_key": ["k1", "k2"],
        "_hoodie_partition_path": ["p", "p"],
        "_hoodie_file_name": ["fid-0", "fid-0"],
    }
    user = {
        "id": pa.array([1, 2], pa.int32()),
        "amount": pa.array([decimal.Decimal("1.50"), None], pa.decimal128(10, 2)),
        "day": pa.array([dt.date(2024, 5, 1), dt.date(1999, 12, 31)]),
        "tags": pa.array([["a"], []]),
    }
    return pa.table({**{k: pa.array(v) for k, v in meta.items()}, **user})


def schema_json(table: pa.Table) -> dict:
    user = table.drop_columns([c for c in table.column_names if c.startswith("_hoodie")])
    return add_meta_fields(arrow_to_avro(user.schema, "t"))


def test_avro_data_block_round_trip() -> None:
    import json

    table = data()
    schema = schema_json(table)
    content = encode_avro_data_block(table, schema)
    assert content[:8] == b"\x00\x00\x00\x03\x00\x00\x00\x02"
    raw = encode_block(
        BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: "001", HeaderKey.SCHEMA: json.dumps(schema)}, content
    )
    (block,) = read_log_bytes(raw)
    assert block.block_type is BlockType.AVRO_DATA and block.instant_time == "001"
    got = block.records()
    assert got.to_pylist() == table.cast(got.schema).to_pylist()
    assert got.column_names[:5] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]


def test_avro_content_version_1_has_no_count() -> None:
    import json

    table = data()
    schema = schema_json(table)
    v3 = encode_avro_data_block(table, schema)
    v1 = b"\x00\x00\x00\x01" + v3[8:]
    raw = encode_block(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: json.dumps(schema)}, v1)
    assert read_log_bytes(raw)[0].records().num_rows == 2


def test_parquet_data_block_is_a_gzip_parquet_file() -> None:
    import io

    import pyarrow.parquet as pq

    table = data()
    content = encode_parquet_data_block(table)
    assert content[:4] == b"PAR1" and content[-4:] == b"PAR1"
    meta = pq.ParquetFile(io.BytesIO(content)).metadata
    assert meta.row_group(0).column(0).compression == "GZIP"
    import json

    raw = encode_block(BlockType.PARQUET_DATA, {HeaderKey.SCHEMA: json.dumps(schema_json(table))}, content)
    got = read_log_bytes(raw)[0].records()
    assert got.to_pylist() == table.cast(got.schema).to_pylist()


def _delete_content(payload: bytes) -> bytes:
    """A delete block's content around a ``HoodieDeleteRecordList`` payload: version 3, length."""
    return b"\x00\x00\x00\x03" + len(payload).to_bytes(4, "big") + payload


def test_default_delete_block_is_natural_order_int_zero() -> None:
    content = encode_delete_block(["k1", "k2"], ["p1", ""])
    # version 3, payload length, array of 2 (04), records: key, partition, orderingVal IntWrapper 0
    # (union branch 2: 04 00, as Hudi 0.15's delete operation writes it), end 00
    payload = bytes.fromhex("04") + b"\x02\x04k1\x02\x04p1\x04\x00" + b"\x02\x04k2\x02\x00\x04\x00" + b"\x00"
    assert content == _delete_content(payload)
    (block,) = read_log_bytes(encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: "2"}, content))
    deletes = block.deletes()
    assert deletes.to_pylist() == [
        {
            "_hoodie_record_key": "k1",
            "_hoodie_partition_path": "p1",
            "_ordering_val": 0,
            "_ordering_natural": True,
        },
        {
            "_hoodie_record_key": "k2",
            "_hoodie_partition_path": "",
            "_ordering_val": 0,
            "_ordering_natural": True,
        },
    ]


def test_long_zero_delete_is_long_wrapper_and_not_natural() -> None:
    # HoodieDeleteRecord's orderingVal union: null, BooleanWrapper, IntWrapper, LongWrapper, ...
    # A Long 0 is branch 3 ("06 00") and compared like any other value; only Integer 0 is natural.
    content = encode_delete_block(["a"], ["city=x"], pa.array([0], pa.int64()))
    assert content.endswith(b"\x02\x0ccity=x" + b"\x06\x00" + b"\x00")
    deletes = read_log_bytes(encode_block(BlockType.DELETE, {}, content))[0].deletes()
    assert deletes.schema.field("_ordering_val").type == pa.int64()
    assert deletes.column("_ordering_natural").to_pylist() == [False]


def test_a_block_of_payload_and_natural_deletes_as_hudi_writes_it() -> None:
    # Hudi 0.15's upsert with a global index and a Debezium payload (explore seed 12705) wrote one
    # block: k1 deleted by its payload (LongWrapper 126: branch 3, 06 fc01), k2 moved to another
    # partition (IntWrapper 0, natural: branch 2, 04 00)
    payload = (
        bytes.fromhex("04")
        + b"\x02\x04k1\x02\x06sea\x06\xfc\x01"
        + b"\x02\x04k2\x02\x06sea\x04\x00"
        + b"\x00"
    )
    content = _delete_content(payload)
    deletes = read_log_bytes(encode_block(BlockType.DELETE, {}, content))[0].deletes()
    assert deletes.schema.field("_ordering_val").type == pa.int64()
    assert deletes.column("_hoodie_record_key").to_pylist() == ["k1", "k2"]
    assert deletes.column("_ordering_val").to_pylist() == [126, None]  # a natural delete needs none
    assert deletes.column("_ordering_natural").to_pylist() == [False, True]


def test_a_block_of_two_ordering_classes_beside_natural_deletes_is_refused() -> None:
    # LongWrapper 126 and StringWrapper "x": no one column holds both (Java never writes it)
    payload = (
        bytes.fromhex("04") + b"\x02\x04k1\x02\x00\x06\xfc\x01" + b"\x02\x04k2\x02\x00\x0e\x02x" + b"\x00"
    )
    content = _delete_content(payload)
    with pytest.raises(CorruptedLogBlockError, match=r"mixes orderingVal branches \[3, 7\]"):
        read_log_bytes(encode_block(BlockType.DELETE, {}, content))[0].deletes()


@pytest.mark.parametrize(
    "values",
    [
        pa.array([5, None, 2**40], pa.int64()),
        pa.array(["b", "a", None]),
        pa.array([1.25, None, -2.5]),
        pa.array([1.5, 2.0, None], pa.float32()),
        pa.array([b"\x01", None, b""]),
        pa.array(
            [decimal.Decimal("1.5"), None, decimal.Decimal("-3.000000000000001")], pa.decimal128(30, 15)
        ),
        pa.array([dt.date(2024, 1, 1), None, dt.date(1969, 12, 31)]),
        pa.array([True, None, False]),
    ],
)
def test_typed_ordering_values_round_trip(values: pa.Array) -> None:
    content = encode_delete_block(["k1", "k2", None], ["p", None, "q"], values)
    deletes = read_log_bytes(encode_block(BlockType.DELETE, {}, content))[0].deletes()
    assert deletes.column("_hoodie_record_key").to_pylist() == ["k1", "k2", None]
    assert deletes.column("_hoodie_partition_path").to_pylist() == ["p", None, "q"]
    assert deletes.column("_ordering_val").to_pylist() == values.to_pylist()
    assert deletes.column("_ordering_natural").to_pylist() == [False, False, False]


@pytest.mark.parametrize("unit", ["ms", "us"])
def test_timestamp_ordering_values_are_written_as_java_longs(unit: str) -> None:
    # Hudi holds a timestamp ordering value as the Long the Avro record stores (LongWrapper)
    values = pa.array([1, None, -1], pa.timestamp(unit, tz="UTC"))
    content = encode_delete_block(["k1", "k2", "k3"], ["p", "p", "p"], values)
    assert b"k1\x02\x02p\x06\x02" in content  # long branch (06), zigzag 1 (02)
    assert content.endswith(b"k3\x02\x02p\x06\x01\x00")  # long branch, zigzag -1 (01)
    deletes = read_log_bytes(encode_block(BlockType.DELETE, {}, content))[0].deletes()
    assert deletes.column("_ordering_val").to_pylist() == [1, None, -1]
    assert deletes.column("_ordering_natural").to_pylist() == [False, False, False]


def test_empty_delete_block() -> None:
    content = encode_delete_block([], [])
    assert content == b"\x00\x00\x00\x03\x00\x00\x00\x01\x00"
    assert read_log_bytes(encode_block(BlockType.DELETE, {}, content))[0].deletes().num_rows == 0


def _flat_block(n: int) -> tuple[bytes, dict]:
    table = pa.table({
        "_hoodie_commit_time": ["001"] * n,
        "_hoodie_commit_seqno": [f"001_0_{i}" for i in range(n)],
        "_hoodie_record_key": [f"k{i}" for i in range(n)],
        "_hoodie_partition_path": ["p"] * n,
        "_hoodie_file_name": ["fid-0"] * n,
        "v": pa.array(range(n), pa.int64()),
    })  # fmt: skip
    schema = schema_json(table)
    return encode_avro_data_block(table, schema), schema


def test_record_bounds_split_every_record() -> None:
    from hudi_core.log.blocks import record_bounds, split_avro_records

    content, _ = _flat_block(3)
    starts, ends = record_bounds(content)
    prefixes = [int.from_bytes(content[s - 4 : s], "big") for s in starts.tolist()]
    assert (ends - starts).tolist() == prefixes
    assert int(starts[0]) == 12 and int(ends[-1]) == len(content)
    assert [bytes(r) for r in split_avro_records(content)] == [
        content[s:e] for s, e in zip(starts, ends, strict=True)
    ]


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda c: c[:-3], id="truncated-last-record"),
        pytest.param(lambda c: c[:4] + (99).to_bytes(4, "big") + c[8:], id="count-too-large"),
        pytest.param(lambda c: c[:8] + (-8).to_bytes(4, "big", signed=True) + c[12:], id="negative-length"),
        pytest.param(lambda c: c[:8] + (10**6).to_bytes(4, "big") + c[12:], id="length-past-end"),
        pytest.param(lambda c: b"\x00\x00\x00\x01" + c[8:-2], id="v1-truncated"),
    ],
)
def test_malformed_record_chain_is_a_corrupt_block(mangle: object) -> None:
    import json

    from hudi_core.errors import CorruptedLogBlockError
    from hudi_core.log.blocks import decode_avro_data_block

    content, schema = _flat_block(3)
    with pytest.raises(CorruptedLogBlockError):
        decode_avro_data_block(mangle(content), json.dumps(schema))  # type: ignore[operator]
