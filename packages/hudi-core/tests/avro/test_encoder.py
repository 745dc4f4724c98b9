"""The vectorised encoder writes exactly the bytes fastavro writes for the same rows."""

from __future__ import annotations

import datetime as dt
import decimal
import io
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hudi_core.avro.encoder import encode_records
from hudi_core.errors import SchemaMismatchError
from hudi_core.schema.avro_schema import arrow_to_avro
from hypothesis import given, settings
from hypothesis import strategies as st

#: every test twice: the compiled Avro codec (hudi_core.avro._codec) and the numpy one
pytestmark = pytest.mark.usefixtures("avro_codec")

UTC = dt.timezone.utc


def fastavro_bytes(table: pa.Table, schema: dict[str, Any]) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    out = []
    for row in table.to_pylist(maps_as_pydicts="strict"):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        out.append(buf.getvalue())
    return out


def our_bytes(table: pa.Table, schema: dict[str, Any]) -> list[bytes]:
    buf, offsets = encode_records(table, schema)
    assert len(offsets) == table.num_rows + 1
    return [buf[offsets[i] : offsets[i + 1]].tobytes() for i in range(table.num_rows)]


def every_type_table() -> pa.Table:
    struct_t = pa.struct([("f1", pa.string()), ("c", pa.struct([("z", pa.float64())]))])
    map_t = pa.map_(pa.string(), pa.struct([("v", pa.float64()), ("w", pa.bool_())]))
    return pa.table(
        {
            "a": pa.array([1, -2, None, 2**40, -(2**63)], pa.int64()),
            "i": pa.array([0, 63, -64, 2**31 - 1, None], pa.int32()),
            "s": pa.array(["x", None, "héllo", "", "y" * 300]),
            "d": pa.array([1.5, 2.0, None, -3.0, float("inf")]),
            "f": pa.array([1.5, 2.0, None, -3.0, 0.1], pa.float32()),
            "b": pa.array([True, False, None, True, False]),
            "dec": pa.array(
                [
                    decimal.Decimal("1.23456"),
                    decimal.Decimal("-99999.99999"),
                    None,
                    decimal.Decimal("0"),
                    decimal.Decimal("-0.00001"),
                ],
                pa.decimal128(10, 5),
            ),
            "dt": pa.array(
                [dt.date(2020, 1, 1), None, dt.date(1960, 1, 1), dt.date(2024, 2, 29), dt.date(1970, 1, 1)]
            ),
            "ts": pa.array(
                [dt.datetime(2020, 1, 1, 1, 2, 3, 456789, tzinfo=UTC)] * 3
                + [None, dt.datetime(1900, 1, 1, tzinfo=UTC)],
                pa.timestamp("us", tz="UTC"),
            ),
            "arr": pa.array(
                [[{"x": "a", "y": 1}], [], None, [{"x": None, "y": 3}, {"x": "q", "y": None}], [None]]
            ),
            "m": pa.array(
                [
                    [("k", {"v": 1.0, "w": True})],
                    None,
                    [],
                    [("a", None)],
                    [("p", None), ("q", {"v": 2.0, "w": None})],
                ],
                map_t,
            ),
            "st": pa.array(
                [
                    {"f1": "a", "c": {"z": 1.0}},
                    None,
                    {"f1": None, "c": None},
                    {"f1": "b", "c": {"z": 2.0}},
                    None,
                ],
                struct_t,
            ),
            "bin": pa.array([b"\x00\x01", None, b"", b"zz", b"\xff" * 200]),
        }
    )


def test_every_type_matches_fastavro_bytes() -> None:
    table = every_type_table()
    schema = arrow_to_avro(table.schema, "every")
    assert our_bytes(table, schema) == fastavro_bytes(table, schema)


def test_sliced_and_chunked_input() -> None:
    table = every_type_table()
    schema = arrow_to_avro(table.schema, "every")
    chunked = pa.concat_tables([table.slice(0, 2), table.slice(2)])
    assert our_bytes(chunked, schema) == fastavro_bytes(table, schema)
    assert our_bytes(table.slice(1, 3), schema) == fastavro_bytes(table.slice(1, 3), schema)


def test_non_nullable_fields_and_bytes_decimal() -> None:
    table = pa.table(
        {
            "k": pa.array(["a", "b"]),
            "n": pa.array([1, 2], pa.int64()),
            "dec": pa.array([decimal.Decimal("-1.5"), decimal.Decimal("123456789.25")], pa.decimal128(12, 2)),
        }
    )
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "k", "type": "string"},
            {"name": "n", "type": "long"},
            {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
            {"name": "gone", "type": ["null", "string"], "default": None},
        ],
    }
    got = our_bytes(table, schema)
    expected = fastavro_bytes(table.append_column("gone", pa.nulls(2, pa.string())), schema)
    assert got == expected
    # Java's BigInteger.toByteArray(): -150 is two bytes ff 6a.
    assert got[0] == b"\x02a" + b"\x02" + b"\x04\xff\x6a" + b"\x00"


def test_null_in_required_field_names_the_column() -> None:
    table = pa.table({"k": pa.array(["a", None])})
    schema = {"type": "record", "name": "r", "fields": [{"name": "k", "type": "string"}]}
    with pytest.raises(SchemaMismatchError, match=r"'k'.*row 1"):
        encode_records(table, schema)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
            st.one_of(st.none(), st.text(max_size=20)),
            st.one_of(st.none(), st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4)),
        ),
        max_size=30,
    )
)
def test_random_rows_match_fastavro(rows: list[tuple[Any, Any, Any]]) -> None:
    table = pa.table(
        {
            "n": pa.array([r[0] for r in rows], pa.int64()),
            "s": pa.array([r[1] for r in rows], pa.string()),
            "l": pa.array([r[2] for r in rows], pa.list_(pa.int32())),
        }
    )
    schema = arrow_to_avro(table.schema, "rnd")
    assert our_bytes(table, schema) == fastavro_bytes(table, schema)
