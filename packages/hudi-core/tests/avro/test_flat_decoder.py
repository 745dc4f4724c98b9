"""The vectorised flat decoder returns exactly what the general (fastavro) decoder returns."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hudi_core.avro.decoder import NotFlat, decode_flat_records, decode_records
from hudi_core.avro.encoder import encode_records
from hudi_core.errors import CorruptedLogBlockError
from hudi_core.schema.avro_schema import add_meta_fields, arrow_to_avro


def flat_table() -> pa.Table:
    return pa.table(
        {
            "_hoodie_commit_time": ["1", None, "3"],
            "n": pa.array([1, None, -(2**62)], pa.int64()),
            "i": pa.array([None, 7, -1], pa.int32()),
            "s": ["a", "héllo", None],
            "f": pa.array([1.5, None, -0.25], pa.float32()),
            "d": [None, 2.5, 1e300],
            "b": [True, None, False],
            "bin": [b"\x00", None, b""],
            "dec": pa.array(
                [decimal.Decimal("-12.34"), decimal.Decimal("99999999.99"), None], pa.decimal128(10, 2)
            ),
            "day": [dt.date(2024, 1, 1), None, dt.date(1901, 1, 1)],
            "at": pa.array([0, 1_700_000_000_123_456, None], pa.timestamp("us", tz="UTC")),
        }
    )


def encode(table: pa.Table, schema: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    buf, offsets = encode_records(table, schema)
    return buf, offsets[:-1], offsets[1:]


def general(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, writer: Any, reader: Any = None
) -> pa.Table:
    return decode_records([buf[s:e].tobytes() for s, e in zip(starts, ends, strict=False)], writer, reader)


def schema_of(table: pa.Table) -> dict[str, Any]:
    return add_meta_fields(arrow_to_avro(table.drop_columns(["_hoodie_commit_time"]).schema, "t"))


def test_flat_matches_general_decoder() -> None:
    table = flat_table()
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    fast = decode_flat_records(buf, starts, ends, schema)
    assert fast.equals(general(buf, starts, ends, schema))
    assert fast.column("dec").to_pylist() == table.column("dec").to_pylist()
    assert fast.column("at").type == pa.timestamp("us", tz="UTC")


def test_flat_reader_schema_resolution() -> None:
    table = flat_table()
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    reader = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "i", "type": ["null", "long"], "default": None},
            {"name": "f", "type": ["null", "double"], "default": None},
            {"name": "new_null", "type": ["null", "string"], "default": None},
            {"name": "new_int", "type": "int", "default": 3},
            {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
        ],
    }
    fast = decode_flat_records(buf, starts, ends, schema, reader)
    assert fast.equals(general(buf, starts, ends, schema, reader))
    assert fast.column_names == ["_hoodie_commit_time", "i", "f", "new_null", "new_int"]
    assert fast.column("new_int").to_pylist() == [3, 3, 3]


def test_nested_schema_is_not_flat() -> None:
    table = pa.table({"l": pa.array([[1]])})
    schema = arrow_to_avro(table.schema, "t")
    buf, starts, ends = encode(table, schema)
    with pytest.raises(NotFlat):
        decode_flat_records(buf, starts, ends, schema)


def test_record_length_mismatch_is_corruption() -> None:
    table = flat_table()
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    with pytest.raises(CorruptedLogBlockError):
        decode_flat_records(buf, starts, ends + 1, schema)


def test_many_rows_with_long_values_and_no_nulls_match_general_decoder() -> None:
    # multi-byte varints (large ints, strings over 127 bytes) and all-valid optional columns
    n = 300
    table = pa.table(
        {
            "_hoodie_commit_time": [str(i) for i in range(n)],
            "n": pa.array([(-1) ** i * (i * 7919) ** 2 * 1_000_003 for i in range(n)], pa.int64()),
            "s": ["x" * (i % 200) + "é" * (i % 3) for i in range(n)],
            "bin": [bytes([i % 256]) * (i % 150) for i in range(n)],
            "day": [dt.date(2000, 1, 1) + dt.timedelta(days=i * 40) for i in range(n)],
        }
    )
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    fast = decode_flat_records(buf, starts, ends, schema)
    assert fast.equals(general(buf, starts, ends, schema))
    assert fast.column("s").to_pylist() == table.column("s").to_pylist()


def test_string_length_pointing_into_the_next_record_is_corrupt() -> None:
    table = pa.table({"_hoodie_commit_time": ["a", "b"], "s": ["hello", "world"]})
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    # Give the first record's "s" a length that reaches into the second record.
    raw = buf.tobytes()
    i = raw.index(b"hello")
    mangled = np.frombuffer(raw[: i - 1] + bytes([2 * 12]) + raw[i:], dtype=np.uint8)
    with pytest.raises(CorruptedLogBlockError):
        decode_flat_records(mangled, starts, ends, schema)
