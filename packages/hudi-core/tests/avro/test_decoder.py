"""Decoding Avro records into Arrow, with schema resolution to a reader schema."""

from __future__ import annotations

import datetime as dt
import decimal
import io
from typing import Any

import fastavro
import pyarrow as pa
from hudi_core.avro.decoder import decode_records

WRITER: dict[str, Any] = {
    "type": "record",
    "name": "trips_record",
    "namespace": "hoodie.trips",
    "fields": [
        {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "", "default": None},
        {"name": "id", "type": ["null", "int"], "default": None},
        {"name": "name", "type": ["null", "string"], "default": None},
        {
            "name": "price",
            "type": [
                "null",
                {
                    "type": "fixed",
                    "name": "fixed",
                    "namespace": "hoodie.trips.trips_record.price",
                    "size": 5,
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            ],
            "default": None,
        },
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
        {
            "name": "at",
            "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
            "default": None,
        },
        {"name": "tags", "type": ["null", {"type": "map", "values": ["null", "long"]}], "default": None},
    ],
}

ROWS = [
    {
        "_hoodie_commit_time": "1",
        "id": 7,
        "name": "a",
        "price": decimal.Decimal("12.34"),
        "day": dt.date(2024, 1, 2),
        "at": dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc),
        "tags": {"x": 1, "y": None},
    },
    {
        "_hoodie_commit_time": "1",
        "id": None,
        "name": None,
        "price": None,
        "day": None,
        "at": None,
        "tags": None,
    },
]


def encoded() -> list[bytes]:
    parsed = fastavro.parse_schema(WRITER)
    out = []
    for row in ROWS:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        out.append(buf.getvalue())
    return out


def test_decode_with_writer_schema_types() -> None:
    table = decode_records(encoded(), WRITER)
    assert table.schema.field("price").type == pa.decimal128(10, 2)
    assert table.schema.field("day").type == pa.date32()
    assert table.schema.field("at").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("tags").type == pa.map_(pa.string(), pa.int64())
    got = table.to_pylist()
    assert got[0]["price"] == decimal.Decimal("12.34")
    assert got[0]["tags"] == [("x", 1), ("y", None)]
    assert got[1] == {k: (None if k != "_hoodie_commit_time" else "1") for k in got[1]}


def test_reader_schema_resolution_added_removed_promoted() -> None:
    reader = {
        "type": "record",
        "name": "other_name",
        "fields": [
            {"name": "id", "type": ["null", "long"], "default": None},
            {"name": "added", "type": ["null", "string"], "default": None},
            {"name": "added_default", "type": "int", "default": 5},
            {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
        ],
    }
    table = decode_records(encoded(), WRITER, reader)
    # meta columns come first, whatever the reader schema's order
    assert table.column_names == ["_hoodie_commit_time", "id", "added", "added_default"]
    assert table.schema.field("id").type == pa.int64()
    assert table.to_pylist() == [
        {"_hoodie_commit_time": "1", "id": 7, "added": None, "added_default": 5},
        {"_hoodie_commit_time": "1", "id": None, "added": None, "added_default": 5},
    ]


def test_no_records_gives_empty_typed_table() -> None:
    table = decode_records([], WRITER)
    assert table.num_rows == 0
    assert table.schema.field("id").type == pa.int32()
