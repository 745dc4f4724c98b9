"""Values across a column's type change, as Apache Hudi 0.15 converts them.

When a write changes a column's type (int, long, float or double to string; float to double),
the rows written before keep the old type in their files. Hudi's readers and its merge handle
give them in the new type as Java would: a number as ``String.valueOf`` writes it (``100.0``,
``1.0E10``, ``1.0E-5``, ``NaN``, ``Infinity``), and a float widened to a double through its
text (``1.1f`` becomes ``1.1``, not ``1.100000023841858``). A number written into a text column
is stored as the same text. Checked against Apache Hudi 0.15 (both table types, each writer's
table read by both readers) and against Java 17's ``Double.toString`` / ``Float.toString``.

The numbers' text is ``hudi_core.java_text``'s: Java 17's ``FloatingDecimal``, with its
exceptions to the shortest digits (integral values from 2^25 (a float) or 2^54 (a double) below
2^63, some values from 2^63 up to ~4e25, subnormal ones).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.java_text import java_floats

__all__ = ["FLOATS", "NUMBERS", "java_text", "promoted", "unchecked_cast"]

FLOATS = (pa.float32(), pa.float64())
NUMBERS = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), *FLOATS)
_TEXT = (pa.string(), pa.large_string())


def java_text(values: pa.Array) -> pa.Array:
    """``values`` (numbers or dates) as Java's ``String.valueOf`` writes them."""
    if pa.types.is_floating(values.type):
        return java_floats(values)
    return pc.cast(values, pa.string())


def promoted(values: pa.Array, to: pa.DataType) -> pa.Array | None:
    """``values`` in the type ``to`` as Hudi converts them across a type change, or None where
    Hudi's conversion is the plain cast."""
    if to in _TEXT and (values.type in NUMBERS or pa.types.is_date(values.type)):
        return java_text(values).cast(to)
    if to.equals(pa.float64()) and values.type.equals(pa.float32()):
        return pc.cast(pc.cast(values, pa.string()), pa.float64())  # through the float's text
    return None


def unchecked_cast(old: pa.DataType, new: pa.DataType) -> bool:
    """Whether values of ``old`` convert to ``new`` without Arrow's value check: timestamps with
    another unit or zone (Hudi stores micros), and integers widened to a floating type, which
    Java rounds to the nearest float as Arrow's unchecked cast does (16777217 -> 16777216.0)."""
    types = pa.types
    return (types.is_timestamp(old) and types.is_timestamp(new)) or (
        types.is_integer(old) and types.is_floating(new)
    )
