"""The Spark SQL types of the hudi-rs sample tables, both ways: booleans, byte/short/int/long,
float/double, decimal, date, timestamp, binary, an array of structs, a map of structs and a
nested struct, with nulls at every level (the interop layouts' schema is flat), written through
merge-on-read log blocks and compaction.

One difference is kept on purpose: Apache Hudi's merge-on-read reader hands out the map entries
of a row that comes from a log record in Java ``HashMap`` order (it decodes the record to Avro),
while base-file rows keep their stored order; we return the stored order everywhere. The entries
are the same, so maps are compared as sets of entries where Hudi reads our log records."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_spark.table_ops import open_or_create
from workloads import differences, table_options

pytestmark = pytest.mark.interop

_ARRAY = pa.list_(pa.struct([("arr_struct_f1", pa.string()), ("arr_struct_f2", pa.int32())]))
_MAP = pa.map_(pa.string(), pa.struct([("map_field_value_struct_f1", pa.float64()),
                                       ("map_field_value_struct_f2", pa.bool_())]))  # fmt: skip
_STRUCT = pa.struct([
    ("field1", pa.string()), ("field2", pa.int32()),
    ("child_struct", pa.struct([("child_field1", pa.float64()), ("child_field2", pa.bool_())])),
])  # fmt: skip
SCHEMA = pa.schema([
    ("id", pa.string()), ("name", pa.string()), ("isActive", pa.bool_()), ("byteField", pa.int8()),
    ("shortField", pa.int16()), ("intField", pa.int32()), ("ts", pa.int64()), ("floatField", pa.float32()),
    ("doubleField", pa.float64()), ("decimalField", pa.decimal128(10, 5)), ("dateField", pa.date32()),
    ("timestampField", pa.timestamp("us", tz="UTC")), ("binaryField", pa.binary()), ("arrayField", _ARRAY),
    ("mapField", _MAP), ("structField", _STRUCT), ("p", pa.string()),
])  # fmt: skip


def _rows(ids: list[int], ts: int, salt: int) -> pa.Table:
    """Rows of keys ``k<i>``; ``salt`` changes every value an update can change, and some values
    are null at the top level or inside a nested type."""
    rows = [{
        "id": f"k{i}", "name": None if i == 2 else f"n{i}-{salt}", "isActive": (i + salt) % 2 == 0,
        "byteField": (i * 7 + salt) % 120 - 60, "shortField": 100 * i + salt, "intField": 1000 * i - salt,
        "ts": ts, "floatField": i + 0.25 * salt, "doubleField": i / 3 + salt,
        "decimalField": decimal.Decimal(f"{12345 - 1000 * i}.{salt:05d}"),
        "dateField": datetime.date(2023, 4, 1 + i + salt),
        "timestampField": datetime.datetime(2023, 4, 1, 12, i, salt, 123000, tzinfo=datetime.timezone.utc),
        "binaryField": None if i == 3 else f"bin{i}-{salt}".encode(),
        "arrayField": None if i == 4 else [{"arr_struct_f1": f"c{i}", "arr_struct_f2": 100 * i + salt},
                                           {"arr_struct_f1": None, "arr_struct_f2": salt}],
        "mapField": [(f"key{i}", {"map_field_value_struct_f1": 1.5 * i, "map_field_value_struct_f2": True}),
                     ("z", {"map_field_value_struct_f1": None, "map_field_value_struct_f2": salt > 0})],
        "structField": {"field1": f"f{i}", "field2": i + salt,
                        "child_struct": None if i == 1 else {"child_field1": i * 1.25, "child_field2": salt % 2 == 0}},
        "p": ("sf", "la")[i % 2],
    } for i in ids]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=SCHEMA)


#: insert six keys, update three of them, then two (one again) and insert one more
STEPS = [("insert", _rows([1, 2, 3, 4, 5, 6], 1, 0)), ("upsert", _rows([1, 2, 3], 2, 7)),
         ("upsert", _rows([3, 4, 8], 3, 9))]  # fmt: skip


def _latest() -> pa.Table:
    """What a snapshot holds after :data:`STEPS`: each key's last row, as every reader types it.
    Avro has no byte or short: the table's schema holds them as int, and so do Hudi's answers."""
    last: dict[str, dict[str, Any]] = {}
    for _, data in STEPS:
        last.update({r["id"]: r for r in data.to_pylist()})
    widened = {"byteField": pa.int32(), "shortField": pa.int32()}
    return pa.Table.from_pylist(list(last.values()), schema=SCHEMA).cast(
        pa.schema([f.with_type(widened.get(f.name, f.type)) for f in SCHEMA])
    )


def _options(name: str, more: dict[str, str] | None = None) -> dict[str, str]:
    return table_options(name, "MERGE_ON_READ", None, more)


def _queries(path: Path) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(name, our read's arguments, Hudi's read options): snapshot, read_optimized, incremental
    after the first commit."""
    first = HudiTable.open(str(path)).timeline.completed_commits().timestamps()[0]
    return [
        ("snapshot", {}, {"hoodie.datasource.query.type": "snapshot"}),
        ("read_optimized", {"query_type": "read_optimized"}, {"hoodie.datasource.query.type": "read_optimized"}),
        ("incremental", {"query_type": "incremental", "start": first},
         {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first}),
    ]  # fmt: skip


def _entry_sets(table: pa.Table) -> pa.Table:
    """``table`` with every map's entries sorted by key: the map as a set of entries."""
    i = table.column_names.index("mapField")
    column = table.column(i)
    values = [None if m is None else sorted(m, key=lambda e: e[0]) for m in column.to_pylist()]
    return table.set_column(i, "mapField", pa.array(values, column.type))


def _data(table: pa.Table) -> pa.Table:
    return table.select(SCHEMA.names).sort_by("id")


def test_hudi_reads_our_rich_types(hudi: Any, tmp_path: Path) -> None:
    """Our merge-on-read table (Avro log blocks), before and after our compaction: Apache Hudi's
    snapshot, read_optimized and incremental answers equal ours, and our snapshot is each key's
    last row, map entries in the order written."""
    path = tmp_path / "ours"
    options = _options("rich_ours")
    for operation, data in STEPS:
        table, _ = open_or_create(str(path), options, data.schema)
        getattr(table, operation)(data, options=options)
    assert _data(HudiTable.open(str(path)).read()).equals(_data(_latest()))
    for compacted in (False, True):
        if compacted:
            HudiTable.open(str(path), options=options).compact(options)
        for name, ours_query, hudi_query in _queries(path):
            ours = HudiTable.open(str(path)).read(**ours_query)
            theirs = hudi.oracle.read(str(path), hudi_query)
            if not compacted and name != "read_optimized":  # rows from log records: Hudi's HashMap order
                ours, theirs = _entry_sets(ours), _entry_sets(theirs)
            assert ours.schema.field("byteField").type == theirs.schema.field("byteField").type == pa.int32()
            found = differences(ours, theirs)
            assert not found, f"{name}{' after compaction' if compacted else ''}: {found}"


def test_we_read_hudis_rich_types(hudi: Any, tmp_path: Path) -> None:
    """Apache Hudi's merge-on-read table with parquet log blocks: our snapshot, read_optimized and
    incremental answers equal Hudi's, map entries in the same order."""
    path = tmp_path / "hudi"
    options = _options("rich_hudi", {"hoodie.logfile.data.block.format": "parquet"})
    for operation, data in STEPS:
        hudi.oracle.write(str(path), data, {**options, "hoodie.datasource.write.operation": operation})
    table = HudiTable.open(str(path))
    assert table.config.table_type == "MERGE_ON_READ"
    assert _entry_sets(_data(table.read())).equals(_entry_sets(_data(_latest())))
    for name, ours_query, hudi_query in _queries(path):
        ours = HudiTable.open(str(path)).read(**ours_query)
        found = differences(ours, hudi.oracle.read(str(path), hudi_query))
        assert not found, f"{name}: {found}"
