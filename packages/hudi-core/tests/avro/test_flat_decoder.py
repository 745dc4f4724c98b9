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

#: every test twice: the compiled Avro codec (hudi_core.avro._codec) and the numpy one
pytestmark = pytest.mark.usefixtures("avro_codec")


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


def nested_table() -> pa.Table:
    point = pa.struct([("x", pa.int64()), ("tag", pa.string())])
    return pa.table(
        {
            "_hoodie_commit_time": ["1", "2", "3", "4"],
            "l": pa.array([[1, None, 3], [], None, [2**40]], pa.list_(pa.int64())),
            "ls": pa.array([["a"], ["bb", "ccc"], [], None], pa.list_(pa.string())),
            "m": pa.array([[("k", 1)], None, [], [("a", 2), ("b", None)]], pa.map_(pa.string(), pa.int32())),
            "st": pa.array([{"x": 1, "tag": "p"}, None, {"x": -5, "tag": None}, {"x": 0, "tag": "q"}], point),
            "lst": pa.array(
                [[{"x": 1, "tag": "a"}], None, [None, {"x": 2, "tag": "b"}], []], pa.list_(point)
            ),
            "ll": pa.array([[[1], [2, 3]], [[]], None, [[4]]], pa.list_(pa.list_(pa.int32()))),
        }
    )


def test_nested_records_arrays_and_maps_match_general_decoder() -> None:
    table = nested_table()
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    fast = decode_flat_records(buf, starts, ends, schema)
    assert fast.equals(general(buf, starts, ends, schema))
    for name in ("l", "ls", "st", "lst", "ll"):
        assert fast.column(name).to_pylist() == table.column(name).to_pylist(), name
    assert fast.column("m").to_pylist() == table.column("m").to_pylist()


def _fastavro_records(
    schema: dict[str, Any], rows: list[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import io

    import fastavro

    parsed = fastavro.parse_schema(schema)
    chunks = []
    for row in rows:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, row)
        chunks.append(out.getvalue())
    lengths = np.array([len(c) for c in chunks], dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.frombuffer(b"".join(chunks), dtype=np.uint8), ends - lengths, ends


def test_bytes_decimals_and_array_blocks_with_byte_sizes() -> None:
    dec = {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 3}
    schema = {
        "type": "record",
        "name": "t",
        "fields": [
            {"name": "d", "type": ["null", dec]},
            {"name": "big", "type": dec},
            {"name": "a", "type": {"type": "array", "items": "string"}},
        ],
    }
    values = [decimal.Decimal("0.000"), decimal.Decimal("-1.500"), None, decimal.Decimal("123456789.123")]
    bigs = [decimal.Decimal("-99999999999999999999999999999999999.999"), decimal.Decimal("0.001"),
            decimal.Decimal("-0.001"), decimal.Decimal("128.000")]  # fmt: skip
    rows = [{"d": v, "big": b, "a": ["x"] * i} for i, (v, b) in enumerate(zip(values, bigs, strict=True))]
    buf, starts, ends = _fastavro_records(schema, rows)
    fast = decode_flat_records(buf, starts, ends, schema)
    assert fast.column("d").to_pylist() == values
    assert fast.column("big").to_pylist() == bigs
    assert fast.equals(general(buf, starts, ends, schema))
    # Java may write array blocks as (-count, byte size, items): same values
    raw = buf.tobytes()
    last = raw[int(starts[3]) : int(ends[3])]
    head = last[: len(last) - 8]  # before the array: count 3 (0x06), 3 x "x" (0x02 'x'), end 0
    assert last[len(head) :] == b"\x06\x02x\x02x\x02x\x00"
    sized = head + b"\x05\x0c\x02x\x02x\x02x\x00"  # -3 items, 6 bytes
    buf2 = np.frombuffer(raw[: int(starts[3])] + sized, dtype=np.uint8)
    ends2 = ends.copy()
    ends2[3] += 1
    again = decode_flat_records(buf2, starts, ends2, schema)
    assert again.column("a").to_pylist() == [[], ["x"], ["x", "x"], ["x", "x", "x"]]


def test_very_long_arrays_go_to_the_general_decoder() -> None:
    table = pa.table({"l": pa.array([list(range(300))], pa.list_(pa.int64()))})
    schema = arrow_to_avro(table.schema, "t")
    buf, starts, ends = encode(table, schema)
    with pytest.raises(NotFlat):
        decode_flat_records(buf, starts, ends, schema)
    assert general(buf, starts, ends, schema).column("l").to_pylist() == [list(range(300))]


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


@pytest.mark.parametrize("seed", range(6))
def test_random_nested_tables_match_general_decoder(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.2 else value

    def words(k: int) -> list[Any]:
        return [maybe("w" * int(rng.integers(0, 140))) for _ in range(k)]

    inner = pa.struct([("a", pa.int32()), ("s", pa.list_(pa.string()))])
    maps = [
        maybe([(f"k{j}", maybe(int(rng.integers(-(2**40), 2**40)))) for j in range(int(rng.integers(0, 4)))])
        for _ in range(n)
    ]
    structs = [
        maybe({"a": maybe(int(rng.integers(-1000, 1000))), "s": maybe(words(int(rng.integers(0, 3))))})
        for _ in range(n)
    ]
    table = pa.table(
        {
            "_hoodie_commit_time": [str(i) for i in range(n)],
            "ls": pa.array([maybe(words(int(rng.integers(0, 5)))) for _ in range(n)], pa.list_(pa.string())),
            "m": pa.array(maps, pa.map_(pa.string(), pa.int64())),
            "st": pa.array(structs, inner),
            "v": pa.array([maybe(float(x)) for x in rng.random(n)]),
        }
    )
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    fast = decode_flat_records(buf, starts, ends, schema)
    assert fast.equals(general(buf, starts, ends, schema))
    assert fast.column("st").to_pylist() == table.column("st").to_pylist()


def test_records_of_primitives_at_any_depth_match_the_general_decoder(
    avro_codec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nested records of primitives, nullable or not, null or not (a CDC log record's images):
    the compiled codec reads them in its one pass (the numpy decoder is not called), the numpy
    one field by field, both as the general decoder does."""
    from hudi_core.avro import flat_decoder

    if avro_codec == "compiled":
        monkeypatch.setattr(flat_decoder, "_decode", lambda *a: pytest.fail("the numpy decoder was called"))
    point = pa.struct([("x", pa.float64()), ("y", pa.float32()), ("tag", pa.string())])
    image = pa.struct([
        pa.field("id", pa.string(), nullable=False), ("n", pa.int64()), ("i", pa.int32()), ("b", pa.bool_()),
        ("bin", pa.binary()), ("day", pa.date32()), ("at", pa.timestamp("us", tz="UTC")), ("p", point),
        pa.field("q", point, nullable=False),
    ])  # fmt: skip

    def img(k: int) -> dict[str, Any] | None:
        if k % 3 == 2:
            return None
        return {"id": f"k{k}é", "n": None if k % 4 == 0 else k * 2**40, "i": -k, "b": k % 2 == 0,
                "bin": bytes([k % 256]) * (k % 5), "day": dt.date(2024, 1, 1 + k % 28),
                "at": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=k),
                "p": None if k % 5 == 0 else {"x": k / 3, "y": None, "tag": None if k % 2 else "t"},
                "q": {"x": -k / 7, "y": float(k), "tag": "q"}}  # fmt: skip

    n = 50
    table = pa.table({
        "_hoodie_commit_time": [str(k) for k in range(n)],
        "op": ["u"] * n,
        "before": pa.array([img(k) for k in range(n)], image),
        "after": pa.array([img(k + 1) for k in range(n)], image),
    })  # fmt: skip
    schema = schema_of(table)
    buf, starts, ends = encode(table, schema)
    fast = decode_flat_records(buf, starts, ends, schema)
    assert fast.equals(general(buf, starts, ends, schema))
    for name in ("before", "after"):
        assert fast.column(name).to_pylist() == table.column(name).to_pylist(), name
    # a record cut inside a nested one is corrupt, as in a flat one
    with pytest.raises(CorruptedLogBlockError):
        decode_flat_records(buf, starts, ends - 3, schema)
