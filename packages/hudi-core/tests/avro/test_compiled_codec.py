"""The compiled Avro codec (``hudi_core.avro._codec``) writes the bytes the numpy encoder writes,
reads the columns the numpy and fastavro decoders read, refuses corrupt records as they do, and
checks every buffer it is handed."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hudi_core.avro import encoder
from hudi_core.avro.decoder import decode_records
from hudi_core.avro.encoder import BYTES, LONG, RAW, RECORD, encode_records
from hudi_core.errors import CorruptedLogBlockError, SchemaMismatchError
from hudi_core.log.blocks import decode_avro_data_block, encode_avro_data_block, record_bounds

COMPILED = encoder.compiled

SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "trips_record",
    "fields": [
        {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
        {"name": "uuid", "type": "string"},
        {"name": "ts", "type": "long"},
        {"name": "seats", "type": ["int", "null"]},
        {"name": "ratio", "type": ["null", "float"], "default": None},
        {"name": "fare", "type": ["null", "double"], "default": None},
        {"name": "paid", "type": ["null", "boolean"], "default": None},
        {"name": "blob", "type": ["null", "bytes"], "default": None},
        {"name": "wide", "type": "string"},
        {"name": "city", "type": ["null", "string"], "default": None},
        {
            "name": "at",
            "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
            "default": None,
        },
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
        {"name": "absent", "type": ["null", "string"], "default": None},
    ],
}


@pytest.fixture(autouse=True)
def built() -> None:
    assert COMPILED is not None, "hudi_core.avro._codec is not built (make setup compiles it)"


def trips(n: int, seed: int) -> pa.Table:
    """Every kind the codec writes, nulls in a third of the optional rows; ``absent`` is missing."""
    rng = np.random.default_rng(seed)
    null = rng.random(n) < 0.33
    text = [bytes(rng.integers(97, 123, int(k))).decode() for k in rng.integers(0, 40, n)]
    ts = rng.integers(-(2**62), 2**62, n)
    ts[: min(n, 2)] = [-(2**63), 2**63 - 1][: min(n, 2)]
    blobs = [
        None if z else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
        for z, k in zip(null, rng.integers(0, 9, n), strict=True)
    ]
    return pa.table(
        {
            "_hoodie_commit_time": pa.array(["20261127000000000"] * n)
            .to_pandas()
            .where(~null, None)
            .tolist(),
            "uuid": text,
            "ts": ts,
            "seats": pa.array(rng.integers(-(2**31), 2**31, n), pa.int64()).cast(pa.int32()).to_pylist(),
            "ratio": pa.array(rng.random(n).astype(np.float32), mask=null),
            "fare": pa.array(np.where(rng.random(n) < 0.1, np.inf, rng.normal(0, 1e6, n)), mask=null),
            "paid": pa.array(rng.random(n) < 0.5, mask=null),
            "blob": pa.array(blobs, pa.binary()),
            "wide": pa.array(text, pa.large_string()),
            "city": pa.array(
                rng.choice(["berlin", "chennai", "sao_paulo"], n), mask=null
            ).dictionary_encode(),
            "at": pa.array(ts // 1000, mask=null).cast(pa.timestamp("us", tz="UTC")),
            "day": pa.array((ts % 40000).astype(np.int32), mask=null).cast(pa.date32()),
        }
    )


def with_codec(compiled: bool, fn: Any, *args: Any) -> Any:
    saved = encoder.compiled
    encoder.compiled = COMPILED if compiled else None
    try:
        return fn(*args)
    finally:
        encoder.compiled = saved


class Counting:
    """The compiled module, counting the calls that reach it."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {"encode": 0, "decode": 0, "bounds": 0}

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.calls[name] += 1
            return getattr(COMPILED, name)(*args)

        return call


@pytest.mark.parametrize(("n", "seed"), [(0, 1), (1, 2), (3, 3), (2000, 4)])
@pytest.mark.parametrize("shape", ["whole", "slice", "chunks"])
def test_compiled_blocks_are_the_numpy_blocks_and_read_back_alike(
    n: int, seed: int, shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = trips(n + 10, seed)
    table = {
        "whole": table,
        "slice": table.slice(7, n),
        "chunks": pa.concat_tables([table.slice(0, 5), table.slice(5, n)]),
    }[shape].slice(0, n)
    counting = Counting()
    monkeypatch.setattr(encoder, "compiled", counting)
    block = encode_avro_data_block(table, SCHEMA)
    compiled_rows = decode_avro_data_block(block, json.dumps(SCHEMA))
    assert counting.calls == (
        {"encode": 1, "decode": 1, "bounds": 1} if n else {"encode": 0, "decode": 1, "bounds": 1}
    )
    monkeypatch.setattr(encoder, "compiled", None)
    assert encode_avro_data_block(table, SCHEMA) == block
    numpy_rows = decode_avro_data_block(block, json.dumps(SCHEMA))
    assert compiled_rows.schema == numpy_rows.schema
    assert compiled_rows.equals(numpy_rows)
    starts, ends = record_bounds(block)
    data = np.frombuffer(block, dtype=np.uint8)
    fastavro_rows = decode_records([data[s:e].tobytes() for s, e in zip(starts, ends, strict=True)], SCHEMA)
    assert compiled_rows.equals(fastavro_rows.select(compiled_rows.column_names))
    expected = table.to_pylist()
    for row, want in zip(compiled_rows.to_pylist(), expected, strict=True):
        assert row["uuid"] == want["uuid"] and row["ts"] == want["ts"] and row["blob"] == want["blob"]
        assert row["city"] == want["city"] and row["wide"] == want["wide"] and row["absent"] is None


def test_compiled_records_and_offsets_are_numpy_ones() -> None:
    table = trips(500, 9)
    body, offsets = with_codec(True, encode_records, table, SCHEMA)
    body_np, offsets_np = with_codec(False, encode_records, table, SCHEMA)
    assert body.tobytes() == body_np.tobytes()
    assert offsets.tolist() == offsets_np.tolist()


def test_fields_the_compiled_writer_does_not_know_are_written_from_numpy_segments() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "k", "type": "string"},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
            {
                "name": "amount",
                "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}],
            },
            {"name": "v", "type": ["null", "long"]},
        ],
    }
    import decimal

    table = pa.table(
        {
            "k": ["a", "b", "c"],
            "tags": [["x"], [], ["y", "z"]],
            "amount": pa.array(
                [decimal.Decimal("1.25"), None, decimal.Decimal("-3.00")], pa.decimal128(9, 2)
            ),
            "v": [1, None, 3],
        }
    )
    block = with_codec(True, encode_avro_data_block, table, schema)
    assert block == with_codec(False, encode_avro_data_block, table, schema)
    rows = with_codec(True, decode_avro_data_block, block, json.dumps(schema))
    assert rows.column("tags").to_pylist() == [["x"], [], ["y", "z"]]
    assert rows.column("v").to_pylist() == [1, None, 3]


#: a CDC log record's shape: a key, then a table record's image before and after, each optional
#: and holding an optional nested record and a required one
_POINT = {"type": "record", "name": "point", "fields": [
    {"name": "x", "type": ["null", "double"], "default": None}, {"name": "tag", "type": "string"}]}  # fmt: skip
_IMAGE = {"type": "record", "name": "image", "fields": [
    {"name": "uuid", "type": "string"}, {"name": "ts", "type": ["null", "long"], "default": None},
    {"name": "paid", "type": "boolean"}, {"name": "p", "type": ["null", _POINT], "default": None},
    {"name": "q", "type": "point"}]}  # fmt: skip
CDC_LIKE = {"type": "record", "name": "cdc", "fields": [
    {"name": "record_key", "type": "string"}, {"name": "before", "type": ["null", _IMAGE], "default": None},
    {"name": "after", "type": ["image", "null"]}]}  # fmt: skip


def _images(n: int, seed: int, *, nulls: bool = True) -> pa.Table:
    rng = np.random.default_rng(seed)
    point = pa.struct([("x", pa.float64()), pa.field("tag", pa.string(), nullable=False)])
    image = pa.struct([pa.field("uuid", pa.string(), nullable=False), ("ts", pa.int64()),
                       pa.field("paid", pa.bool_(), nullable=False), ("p", point),
                       pa.field("q", point, nullable=False)])  # fmt: skip

    def one(k: int) -> dict[str, Any] | None:
        if nulls and rng.random() < 0.3:
            return None
        x = None if rng.random() < 0.3 else float(rng.random())
        return {"uuid": f"k{k}" * int(rng.integers(1, 4)), "ts": None if rng.random() < 0.3 else int(k) << 33,
                "paid": bool(k % 2), "p": None if rng.random() < 0.3 else {"x": x, "tag": "é" * (k % 3)},
                "q": {"x": -float(k), "tag": "q"}}  # fmt: skip

    return pa.table({"record_key": [f"k{k}" for k in range(n)], "before": pa.array([one(k) for k in range(n)], image),
                     "after": pa.array([one(k + n) for k in range(n)], image)})  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_nested_records_are_compiled_and_written_as_numpy_writes_them(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records of primitives inside records (optional or not, null or not, their fields' values
    under a null record whatever they are) go to the compiled writer as RECORD columns, one call,
    and come out as the numpy segments' bytes; they read back as written."""
    table = _images(300, seed).slice(3)
    if seed == 3:  # the nested fields of null images as pa.nulls leaves them: nulls in every field
        n = table.num_rows
        empty = pa.nulls(n, table.schema.field("before").type)
        table = table.set_column(1, "before", pa.chunked_array([empty]))
    counting = Counting()
    monkeypatch.setattr(encoder, "compiled", counting)
    block = encode_avro_data_block(table, CDC_LIKE)
    assert counting.calls["encode"] == 1
    columns = encoder.record_columns(table, CDC_LIKE)
    assert [c[0] for c in columns].count(RAW) == 0 and [c[0] for c in columns].count(RECORD) == 6
    monkeypatch.setattr(encoder, "compiled", None)
    assert encode_avro_data_block(table, CDC_LIKE) == block
    rows = with_codec(True, decode_avro_data_block, block, json.dumps(CDC_LIKE))
    for name in ("before", "after"):
        assert rows.column(name).to_pylist() == table.column(name).to_pylist()


def test_a_required_field_null_outside_a_null_record_goes_to_numpy_and_is_refused() -> None:
    """Nulls a required field of a present record holds are numpy's to refuse, with their path."""
    table = _images(5, 1, nulls=False)
    after = table.column("after").combine_chunks()
    uuid = pa.array(["a", None, "c", "d", "e"])
    broken = pa.StructArray.from_arrays(
        [uuid, *(after.field(i) for i in range(1, 5))], fields=list(after.type)
    )
    table = table.set_column(2, "after", broken)
    with pytest.raises(SchemaMismatchError, match=r"'after.uuid' holds a null at row 1"):
        with_codec(True, encode_avro_data_block, table, CDC_LIKE)


def test_single_byte_changes_are_decoded_alike_or_refused_as_corrupt() -> None:
    """A block with one byte changed: the compiled decoder returns what numpy's does, or both call
    it corrupt (the compiled one also refuses an int out of the int range, which numpy wraps)."""
    table = trips(40, 5)
    block = bytearray(encode_avro_data_block(table, SCHEMA))
    rng = np.random.default_rng(6)
    outcomes = {"equal": 0, "corrupt": 0}
    for at, value in zip(rng.integers(8, len(block), 400), rng.integers(0, 256, 400), strict=True):
        bent = bytearray(block)
        bent[at] = int(value)
        results = []
        for compiled in (True, False):
            try:
                results.append(with_codec(compiled, decode_avro_data_block, bytes(bent), json.dumps(SCHEMA)))
            except CorruptedLogBlockError as e:
                results.append(str(e))
        ours, theirs = results
        if isinstance(ours, str) and "out of the int range" in ours:
            continue
        if isinstance(ours, str) or isinstance(theirs, str):
            assert isinstance(ours, str) and isinstance(theirs, str), (at, ours, theirs)
            outcomes["corrupt"] += 1
        else:  # a changed double can be NaN, which Table.equals never calls equal: compare reprs
            assert ours.schema == theirs.schema and repr(ours.to_pylist()) == repr(theirs.to_pylist())
            outcomes["equal"] += 1
    assert outcomes["equal"] > 50 and outcomes["corrupt"] > 50


def test_an_int_out_of_the_int_range_is_a_corrupt_record() -> None:
    wide = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "long"}]}
    narrow = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "int"}]}
    block = encode_avro_data_block(pa.table({"n": [5, 2**40]}), wide)
    with pytest.raises(CorruptedLogBlockError, match=r"out of the int range \(record 1\)"):
        with_codec(True, decode_avro_data_block, block, json.dumps(narrow))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x00\x00\x03\x00\x00\x00\x02\x00\x00\x00\x01\x02\x00\x00\x00", "truncated at record 1"),
        (b"\x00\x00\x00\x03\x00\x00\x00\x01\xff\xff\xff\xfe\x02", "length -2 at byte 8 is negative"),
        (b"\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x09\x02", "runs past the block of 13 bytes"),
    ],
)
def test_record_chains_that_leave_the_block_are_corrupt(content: bytes, message: str) -> None:
    with pytest.raises(CorruptedLogBlockError, match=message):
        with_codec(True, record_bounds, content)
    with pytest.raises(CorruptedLogBlockError):
        with_codec(False, record_bounds, content)


def test_the_c_side_refuses_buffers_that_do_not_fit() -> None:
    assert COMPILED is not None
    short = [(LONG, 0, -1, None, np.zeros(2, np.int64), None)]
    with pytest.raises(ValueError, match="do not hold n rows"):
        COMPILED.encode(short, 3, b"", False)
    outside = [(BYTES, 0, -1, None, np.array([0, 4], np.int64), np.zeros(3, np.uint8))]
    with pytest.raises(ValueError, match="offsets do not index"):
        COMPILED.encode(outside, 1, b"", False)
    backwards = [(RAW, 0, -1, None, np.array([2, 1], np.int64), np.zeros(3, np.uint8))]
    with pytest.raises(ValueError, match="offsets do not index"):
        COMPILED.encode(backwards, 1, b"", False)
    with pytest.raises(ValueError, match="union branch"):
        COMPILED.encode([(LONG, 0, 64, None, np.zeros(1, np.int64), None)], 1, b"", False)
    with pytest.raises(ValueError, match="starts must hold"):
        COMPILED.encode([], 2, b"", False, np.zeros(2, np.int64))
    data = np.zeros(4, np.uint8)
    starts, ends = np.array([0], np.int64), np.array([1], np.int64)
    with pytest.raises(ValueError, match="output buffers"):
        COMPILED.decode([(LONG, 0, -1, None, np.empty(0, np.int64), None)], data, starts, ends)
    with pytest.raises(ValueError, match="output buffers"):
        COMPILED.decode([(LONG, 0, 1, None, np.empty(1, np.int64), None)], data, starts, ends)
    with pytest.raises(ValueError, match="outside its block"):
        COMPILED.decode([], data, starts, np.array([5], np.int64))
    with pytest.raises(ValueError, match="runs past its record"):
        COMPILED.decode(
            [(BYTES, 0, -1, None, np.empty(2, np.int32), np.empty(4, np.uint8))],
            np.array([8, 1, 2, 3], np.uint8),
            starts,
            ends,
        )
    with pytest.raises(BufferError):
        COMPILED.decode([(LONG, 0, -1, None, b"\x00" * 8, None)], data, starts, ends)  # read-only output
    # a record's span must stay among the columns after it
    past = [(RECORD, 0, -1, None, np.array([1], np.int64), None)]
    with pytest.raises(ValueError, match="do not hold n rows"):
        COMPILED.encode(past, 1, b"", False)
    with pytest.raises(ValueError, match="output buffers"):
        COMPILED.decode(past, data, starts, ends)


def test_the_codec_does_not_change_what_a_date_or_timestamp_reads_as() -> None:
    table = pa.table(
        {
            "at": pa.array(
                [dt.datetime(2026, 11, 27, 5, 30, tzinfo=dt.timezone.utc), None], pa.timestamp("us", tz="UTC")
            ),
            "day": pa.array([dt.date(2026, 11, 27), None], pa.date32()),
        }
    )
    schema = {
        "type": "record",
        "name": "r",
        "fields": [f for f in SCHEMA["fields"] if f["name"] in ("at", "day")],
    }
    rows = with_codec(
        True,
        decode_avro_data_block,
        with_codec(True, encode_avro_data_block, table, schema),
        json.dumps(schema),
    )
    assert rows.schema.field("at").type == pa.timestamp("us", tz="UTC")
    assert rows.schema.field("day").type == pa.date32()
    assert rows.to_pylist() == table.to_pylist()
