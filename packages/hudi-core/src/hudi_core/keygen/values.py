"""Column values of key fields as the strings Java Hudi puts into keys (``toString()`` of the
Avro value), vectorised with pyarrow.compute."""

from __future__ import annotations

from typing import TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import SchemaMismatchError
from hudi_core.java_text import java_floats
from hudi_core.schema.fields import field_type, field_values

__all__ = ["column_of", "to_key_strings"]

Data: TypeAlias = "pa.Table | pa.RecordBatch"


def column_of(data: Data, field: str) -> pa.Array:
    """The values of ``field`` (dotted names reach into structs: ``a.b``) as one Array."""
    col = field_values(data, field)
    if col is None:
        raise _missing(data.schema, field)
    if not isinstance(col, pa.ChunkedArray):
        return col
    arr = col.combine_chunks()
    if isinstance(arr, pa.ChunkedArray):  # combine_chunks of a 0-chunk column
        arr = pa.array([], type=col.type)
    return arr


def _missing(schema: pa.Schema, field: str) -> SchemaMismatchError:
    """The error for a key ``field`` that ``schema`` lacks, naming the level that lacks it."""
    parts = field.split(".")
    if parts[0] not in schema.names:
        return SchemaMismatchError(
            f"key field {field!r} is not a column of the data (columns: {', '.join(schema.names)}); "
            "fix hoodie.datasource.write.recordkey.field / partitionpath.field"
        )
    depth = next(d for d in range(1, len(parts)) if field_type(schema, ".".join(parts[: d + 1])) is None)
    return SchemaMismatchError(
        f"nested key field {field!r}: {'.'.join(parts[:depth])!r} has no field {parts[depth]!r}"
    )


def _timestamp_strings(arr: pa.Array, consistent_logical: bool) -> pa.Array:
    unit = arr.type.unit
    if not consistent_logical:
        # Avro timestamp-micros / -millis values are longs: the raw number.
        if unit in ("s", "ns"):
            arr = arr.cast(pa.timestamp("us", arr.type.tz))
        return arr.cast(pa.int64()).cast(pa.string())
    # java.sql.Timestamp.toString(): "yyyy-MM-dd HH:mm:ss.f" with trailing zeros trimmed (at
    # least one digit); Java keeps only millis (micros / 1000). Rendered in UTC.
    millis = arr.cast(pa.timestamp("ms", "UTC"), safe=False)
    base = pc.strftime(millis.cast(pa.timestamp("s", "UTC"), safe=False), format="%Y-%m-%d %H:%M:%S")
    ms = pc.millisecond(millis)
    frac = pc.utf8_lpad(ms.cast(pa.string()), 3, "0")
    frac = pc.utf8_rtrim(frac, "0")
    frac = pc.if_else(pc.equal(pc.utf8_length(frac), 0), "0", frac)
    return pc.binary_join_element_wise(base, frac, ".")


_LAST_FOUR_DIGIT_DAY = 2932896  # 9999-12-31


def _date_strings(days: pa.Array) -> pa.Array:
    """Dates as ``LocalDate.toString``: ISO ``yyyy-MM-dd``, a year past 9999 signed (``+10000-01-01``)."""
    text = days.cast(pa.string())
    beyond = pc.greater(days.cast(pa.int32()), _LAST_FOUR_DIGIT_DAY)
    if not pc.any(beyond).as_py():
        return text
    return pc.if_else(beyond, pc.binary_join_element_wise("+", text, ""), text)


def to_key_strings(arr: pa.Array, *, consistent_logical_timestamp: bool = False) -> pa.Array:
    """Every value as Java's string form; nulls stay null.

    ints/longs decimal, booleans ``true``/``false``, doubles like ``Double.toString``, decimals as
    ``BigDecimal`` (plain), dates ISO ``yyyy-MM-dd`` (Hudi converts the Avro date logical type to
    ``LocalDate`` always), timestamps raw epoch micros unless the consistent-logical-timestamp
    option asks for ``java.sql.Timestamp`` text.
    """
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_string(t):
        return arr
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return arr.cast(pa.string())
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_decimal(t):
        return arr.cast(pa.string())
    if pa.types.is_floating(t):
        return java_floats(arr)
    if pa.types.is_date(t):
        return _date_strings(arr.cast(pa.date32()))
    if pa.types.is_timestamp(t):
        return _timestamp_strings(arr, consistent_logical_timestamp)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return arr.cast(pa.string())
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    raise SchemaMismatchError(
        f"a key field of type {t} cannot be turned into a key string; use a primitive column"
    )
