"""Values across a column's type change, as Apache Hudi 0.15 converts them.

When a write changes a column's type (int, long, float or double to string; float to double),
the rows written before keep the old type in their files. Hudi's readers and its merge handle
give them in the new type as Java would: a number as ``String.valueOf`` writes it (``100.0``,
``1.0E10``, ``1.0E-5``, ``NaN``, ``Infinity``), and a float widened to a double through its
text (``1.1f`` becomes ``1.1``, not ``1.100000023841858``). A number written into a text column
is stored as the same text. Checked against Apache Hudi 0.15 (both table types, each writer's
table read by both readers) and against Java 17's ``Double.toString`` / ``Float.toString``.

Java 17's ``FloatingDecimal`` gives a value's shortest round-trip digits (Arrow's, which the
text is rebuilt from in Java's layout, column at a time) except in two places: an integer at or
above 2^25 (a float) or 2^54 (a double) and below 2^63 is printed from its exact integer value
with as many low digits dropped as its binary exponent says cannot matter (``2.82879384806159008E17``,
``-7.2441728E12``), which is done here too; and a few values outside that range that its
estimate gets wrong (JDK-4511638: ``1.0E23`` prints as ``9.999999999999999E22``; the smallest
subnormals as ``4.9E-324`` and ``1.4E-45``), where the text here keeps the shortest digits.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["FLOATS", "NUMBERS", "java_text", "promoted", "unchecked_cast"]

FLOATS = (pa.float32(), pa.float64())
NUMBERS = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), *FLOATS)
_TEXT = (pa.string(), pa.large_string())

#: Arrow's text of a finite float: sign, integer digits, fraction digits, exponent
_PARTS = r"^(?P<sign>-?)(?P<whole>\d*)(?:\.(?P<fraction>\d*))?(?:e\+?(?P<exp>-?\d+))?$"


def java_text(values: pa.Array) -> pa.Array:
    """``values`` (numbers or dates) as Java's ``String.valueOf`` writes them."""
    if pa.types.is_floating(values.type):
        return _java_float_text(values)
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


#: FloatingDecimal's insignificantDigitsNumber: the low decimal digits an integer of binary
#: exponent p (above the mantissa's bits) cannot tell apart
_INSIGNIFICANT = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7,
                           8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14,
                           14, 15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19])  # fmt: skip


def _shortest_digits(values: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Sign, significant digits (no leading or trailing zeros; empty for zero) and the decimal
    exponent of the first digit (value = d.ddd x 10^e) of Arrow's shortest text of each finite
    value."""
    text = pc.cast(values, pa.string())
    parts = pc.extract_regex(pc.if_else(pc.is_finite(values), text, pa.scalar("0")), _PARTS)
    sign, whole, fraction, exp = (pc.struct_field(parts, [i]) for i in range(4))
    raw = pc.binary_join_element_wise(whole, fraction, "")
    stripped = pc.utf8_ltrim(raw, "0")
    leading = pc.subtract(pc.utf8_length(raw), pc.utf8_length(stripped))
    given = pc.cast(pc.if_else(pc.equal(exp, ""), pa.scalar("0"), exp), pa.int32())
    e = pc.add(pc.subtract(pc.subtract(pc.utf8_length(whole), 1), leading), given)
    return sign, pc.utf8_rtrim(stripped, "0"), e


def _long_digits(values: pa.Array, digits: pa.Array, e: pa.Array) -> tuple[pa.Array, pa.Array]:
    """``digits`` and ``e`` with FloatingDecimal's integer path where it applies: an integral
    value of binary exponent p in (mantissa bits, 62] is its integer divided by 10^k, rounded
    half up, k = insignificantDigitsNumber[p - mantissa bits - 1]."""
    bits = 24 if values.type.equals(pa.float32()) else 53
    v = np.abs(values.to_numpy(zero_copy_only=False).astype(np.float64))
    v = np.where(np.isfinite(v), v, 0.0)
    p = np.frexp(v)[1] - 1  # the binary exponent: 2^p <= v < 2^(p+1)
    taken = (v == np.floor(v)) & (p > bits) & (p <= 62)
    if not taken.any():
        return digits, e
    k = _INSIGNIFICANT[np.clip(p - bits - 1, 0, len(_INSIGNIFICANT) - 1)]
    exact = np.where(taken, v, 0.0).astype(np.int64)
    pow10 = (10 ** k.astype(np.int64)).astype(np.int64)
    q = exact // pow10 + (exact % pow10 >= pow10 // 2).astype(np.int64) * (k > 0)
    text = pc.cast(pa.array(q), pa.string())
    long_digits = pc.utf8_rtrim(text, "0")
    long_e = pc.add(pc.subtract(pc.utf8_length(text), 1), pa.array(k.astype(np.int32)))
    mask = pa.array(taken)
    return pc.if_else(mask, long_digits, digits), pc.if_else(mask, pc.cast(long_e, pa.int32()), e)


def _java_float_text(values: pa.Array) -> pa.Array:
    sign, digits, e = _shortest_digits(values)
    digits, e = _long_digits(values, digits, e)
    n = pc.utf8_length(digits)
    # Java's plain layout for 1e-3 <= |x| < 1e7: at least one digit after the point
    plain = pa.nulls(len(values), pa.string())
    for k in range(7):  # x = digits[:k+1] (padded with zeros) . digits[k+1:]
        head = pc.binary_join_element_wise(
            pc.utf8_slice_codeunits(digits, 0, k + 1),
            pc.binary_repeat("0", pc.max_element_wise(pc.subtract(k + 1, n), 0)),
            "",
        )
        tail = pc.utf8_slice_codeunits(digits, k + 1)
        tail = pc.if_else(pc.equal(tail, ""), pa.scalar("0"), tail)
        plain = pc.if_else(pc.equal(e, k), pc.binary_join_element_wise(head, tail, "."), plain)
    small = pc.binary_join_element_wise(
        "0.", pc.binary_repeat("0", pc.max_element_wise(pc.subtract(pc.negate(e), 1), 0)), digits, ""
    )
    plain = pc.if_else(pc.and_(pc.less(e, 0), pc.greater_equal(e, -3)), small, plain)
    # and the computerized scientific layout elsewhere: d.ddd E exponent
    rest = pc.utf8_slice_codeunits(digits, 1)
    scientific = pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(digits, 0, 1), ".", pc.if_else(pc.equal(rest, ""), pa.scalar("0"), rest),
        "E", pc.cast(e, pa.string()), "",
    )  # fmt: skip
    body = pc.if_else(pc.and_(pc.greater_equal(e, -3), pc.less(e, 7)), plain, scientific)
    body = pc.if_else(pc.equal(digits, ""), pa.scalar("0.0"), body)
    out = pc.binary_join_element_wise(sign, body, "")
    special = pc.if_else(pc.is_nan(values), pa.scalar("NaN"),
                         pc.if_else(pc.less(values, 0), pa.scalar("-Infinity"), pa.scalar("Infinity")))  # fmt: skip
    return pc.if_else(pc.is_finite(values), out, special)
