"""``HoodieDeleteRecord`` ordering values (spec 5.5): the union branches and their Arrow types."""

from __future__ import annotations

import struct
from typing import Any

import pyarrow as pa

from hudi_core.errors import CorruptedLogBlockError, SchemaMismatchError

__all__ = ["DELETE_COLUMNS", "INT_BRANCH", "ORDERING_BRANCHES", "branch_for", "decode_delete_payload"]

#: ``orderingVal`` union branches by index: (Avro type, Arrow type). Java wraps each value in a
#: one-field record (``BooleanWrapper``, ``IntWrapper``, ... in Hudi's ``HoodieDeleteRecord.avsc``,
#: checked against the schema inside Hudi 0.15's bundle), which encodes exactly as the bare value.
ORDERING_BRANCHES: tuple[tuple[Any, pa.DataType], ...] = (
    ("null", pa.null()),
    ("boolean", pa.bool_()),
    ("int", pa.int32()),
    ("long", pa.int64()),
    ("float", pa.float32()),
    ("double", pa.float64()),
    ("bytes", pa.binary()),
    ("string", pa.string()),
    ({"type": "int", "logicalType": "date"}, pa.date32()),
    ({"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}, pa.decimal128(30, 15)),
    ({"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
    ("long", pa.timestamp("us", tz="UTC")),  # TimestampMicrosWrapper: a bare long
)
#: the branch of Java's Integer: an Integer 0 is the "natural order" delete that always wins
INT_BRANCH = 2

DELETE_COLUMNS = ("_hoodie_record_key", "_hoodie_partition_path", "_ordering_val", "_ordering_natural")


def branch_for(values: pa.Array) -> tuple[int, Any, pa.Array]:
    """(union branch, Avro type or None, values cast to the branch's Arrow type)."""
    t = values.type
    if pa.types.is_dictionary(t):
        values = values.dictionary_decode()
        t = values.type
    if pa.types.is_null(t):
        return 0, None, values
    # The Java class Hudi holds the value as (HoodieAvroUtils.getNestedFieldVal with logical
    # types converted): timestamps stay Long, dates become LocalDate, decimals BigDecimal.
    if pa.types.is_boolean(t):
        branch = 1
    elif t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()) or pa.types.is_time32(t):
        branch = INT_BRANCH
    elif pa.types.is_integer(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t):
        branch = 3
        values = values.cast(_storage_of(t)) if not pa.types.is_integer(t) else values
        t = values.type
    elif pa.types.is_float16(t) or pa.types.is_float32(t):
        branch = 4
    elif pa.types.is_float64(t):
        branch = 5
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        branch = 6
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        branch = 7
    elif pa.types.is_date(t):
        branch = 8
    elif pa.types.is_decimal(t):
        branch = 9
    else:
        raise SchemaMismatchError(
            f"ordering values of type {t} have no HoodieDeleteRecord orderingVal branch"
        )
    node, arrow_type = ORDERING_BRANCHES[branch]
    if pa.types.is_time32(t):
        values = values.cast(pa.int32())
        arrow_type = pa.int32()
    try:
        return branch, node, values.cast(arrow_type)
    except pa.ArrowInvalid as e:
        raise SchemaMismatchError(f"ordering values do not fit {arrow_type}: {e}") from e


class _Cursor:
    """Minimal Avro binary reader for the fixed ``HoodieDeleteRecordList`` shape."""

    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.pos = 0

    def long(self) -> int:
        shift = 0
        acc = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            acc |= (b & 0x7F) << shift
            if b < 0x80:
                return (acc >> 1) ^ -(acc & 1)
            shift += 7
            if shift > 63:
                raise CorruptedLogBlockError("varint longer than 10 bytes in delete block")

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise CorruptedLogBlockError(f"length {n} runs past the delete block payload")
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def opt_string(self) -> str | None:
        branch = self.long()
        if branch == 0:
            return None
        if branch != 1:
            raise CorruptedLogBlockError(f"union branch {branch} in a [null, string] field")
        return self.raw(self.long()).decode("utf-8")


def _ordering_value(cur: _Cursor, branch: int) -> Any:
    if branch in (2, 3, 8, 10, 11):
        return cur.long()
    if branch == 1:
        return cur.raw(1) != b"\x00"
    if branch == 4:
        return struct.unpack("<f", cur.raw(4))[0]
    if branch == 5:
        return struct.unpack("<d", cur.raw(8))[0]
    if branch == 6:
        return cur.raw(cur.long())
    if branch == 7:
        return cur.raw(cur.long()).decode("utf-8")
    if branch == 9:
        return int.from_bytes(cur.raw(cur.long()), "big", signed=True)
    raise CorruptedLogBlockError(f"orderingVal union branch {branch} does not exist (0..11)")


def decode_delete_payload(payload: memoryview) -> pa.Table:
    """The ``HoodieDeleteRecordList`` record as the delete table (see DELETE_COLUMNS).

    Delete blocks are small next to data blocks, so a plain loop reads them.
    """
    cur = _Cursor(payload)
    keys: list[str | None] = []
    parts: list[str | None] = []
    branches: list[int] = []
    vals: list[Any] = []
    try:
        while True:
            count = cur.long()
            if count == 0:
                break
            if count < 0:  # a block with its byte size (Avro allows it; Java never writes it)
                count = -count
                cur.long()
            for _ in range(count):
                keys.append(cur.opt_string())
                parts.append(cur.opt_string())
                branch = cur.long()
                branches.append(branch)
                vals.append(None if branch == 0 else _ordering_value(cur, branch))
    except IndexError as e:
        raise CorruptedLogBlockError("delete block payload is truncated") from e
    natural = [b == INT_BRANCH and v == 0 for b, v in zip(branches, vals, strict=False)]
    # Java's writer puts natural-order deletes (Integer 0: a key a global index moves to another
    # partition) and payload deletes (the record's own ordering value, a Long say) in one block;
    # a natural delete always wins, so its value is not needed beside the others' type
    typed = {b for b, nat in zip(branches, natural, strict=False) if b != 0 and not nat}
    if len(typed) > 1:
        raise CorruptedLogBlockError(f"delete block mixes orderingVal branches {sorted(typed)}")
    branch = typed.pop() if typed else (INT_BRANCH if any(natural) else 0)
    if branch != INT_BRANCH:
        vals = [None if nat else v for v, nat in zip(vals, natural, strict=False)]
    arrow_type = ORDERING_BRANCHES[branch][1]
    if branch == 9:
        import decimal

        vals = [None if v is None else decimal.Decimal(v).scaleb(-15) for v in vals]
    if branch in (8, 10, 11):
        ordering = pa.array(vals, pa.int64()).cast(_storage_of(arrow_type)).view(arrow_type)
    else:
        ordering = pa.array(vals, arrow_type)
    return pa.table(
        [pa.array(keys, pa.string()), pa.array(parts, pa.string()), ordering, pa.array(natural, pa.bool_())],
        names=list(DELETE_COLUMNS),
    )


def _storage_of(t: pa.DataType) -> pa.DataType:
    return pa.int32() if pa.types.is_date32(t) or pa.types.is_time32(t) else pa.int64()
