"""Values as Java prints them, where Apache Hudi's text holds them: a double as Java 17's
``Double.toString`` and a float as ``Float.toString`` (record keys and partition paths made of
float fields, the CDC query's JSON), vectorised with pyarrow.compute."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["java_float", "java_floats"]

#: FloatingDecimal's table of the decimal digits an integer loses below a double's (or a float's)
#: significant bits, by the power of two above them (``insignificantDigitsNumber``)
_INSIGNIFICANT = np.array([
    0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8,
    9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15,
    16, 16, 16, 17, 17, 17, 18, 18, 18, 19,
])  # fmt: skip

#: the shortest text pyarrow gives a finite value: integer digits, fraction digits, exponent
_SHORTEST = r"^(?P<i>[0-9]+)(?:\.(?P<f>[0-9]+))?(?:e\+?(?P<e>-?[0-9]+))?$"


def java_floats(arr: pa.Array, *, quote: str = "") -> pa.Array:
    """A float or double array's values as Java 17 prints them (``Float.toString``,
    ``Double.toString``), as JSON: from 10^-3 up to 10^7 in plain notation with at least one
    fraction digit, else as ``d.dddE±n``; digits as few as tell the value apart, except for
    integral values from 2^53 (floats: 2^24) up to 2^63, which Java 17 prints from the exact
    integer rounded below the type's precision (``FloatingDecimal.developLongDigits``: 2^60 is
    ``1.15292150460684698E18``); NaN and the infinities as ``NaN``, ``Infinity``, ``-Infinity``,
    each between two ``quote`` (``"`` in JSON, where Jackson and Avro write them as strings).
    Nulls stay null.

    Deviation: for a few values from 2^63 up to about 10^26 and a few subnormal ones, Java 17's
    digit generation gives other digits than the shortest (2e23 is ``1.9999999999999998E23``,
    1e-323 ``1.0E-323``); ours are the shortest, as Java 19 and later print them. Both read back
    as the same value."""
    single = not pa.types.is_float64(arr.type)
    if pa.types.is_float16(arr.type):
        arr = arr.cast(pa.float32())
    x = arr.to_numpy(zero_copy_only=False)
    text = arr.cast(pa.string())  # the shortest digits, plain from 10^-7 up to 10^16
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else np.ones(len(x), dtype=bool)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(x)
        magnitude = np.abs(x)
        integral = finite & (np.floor(x) == x)
        scientific = finite & (x != 0) & ((magnitude < 1e-3) | (magnitude >= 1e7))
    bits = 24 if single else 53
    tiny = scientific & (magnitude < np.finfo(np.float32 if single else np.float64).tiny)
    exact = integral & (magnitude >= 2.0**bits) & (magnitude < 2.0**63)  # (all of them >= 10^7)
    # each kind of value the shortest text does not already print Java's way, and its text
    fixes: list[tuple[np.ndarray, pa.Array]] = []
    if (at := np.flatnonzero(integral & ~scientific)).size:  # "1" -> "1.0"
        fixes.append((at, pc.binary_join_element_wise(text.take(at), ".0", "")))
    if (at := np.flatnonzero(scientific & ~exact & ~tiny)).size:
        fixes.append((at, _scientific_from_text(text.take(at), x[at])))
    if (at := np.flatnonzero(exact)).size:
        fixes.append((at, _scientific_of_integers(magnitude[at], x[at] < 0, bits)))
    if (at := np.flatnonzero(tiny)).size:  # subnormal: where one digit tells the value apart, the closest two
        fixes.append((at, pa.array([java_float(float(v), single=single) for v in x[at]], pa.string())))
    if (at := np.flatnonzero(~finite & valid)).size:
        words = np.where(np.isnan(x[at]), "NaN", np.where(x[at] > 0, "Infinity", "-Infinity"))
        words = np.char.add(np.char.add(quote, words), quote) if quote else words
        fixes.append((at, pa.array(words, pa.string())))
    if not fixes:
        return text
    where = np.concatenate([at for at, _ in fixes])
    values = pa.concat_arrays([v for _, v in fixes]).take(np.argsort(where, kind="stable"))
    mask = np.zeros(len(text), dtype=bool)
    mask[where] = True
    return pc.replace_with_mask(text, pa.array(mask), values)


def java_float(value: float, *, single: bool = False, quote: str = "") -> str:
    """One value as :func:`java_floats` prints it (a float's when ``single``), value by value."""
    if math.isnan(value):
        return f"{quote}NaN{quote}"
    if math.isinf(value):
        return f"{quote}{'Infinity' if value > 0 else '-Infinity'}{quote}"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    magnitude = abs(value)
    if magnitude == 0:
        return sign + "0.0"
    bits = 24 if single else 53
    if 2.0**bits <= magnitude < 2.0**63 and magnitude == math.floor(magnitude):
        n = int(magnitude)
        above = n.bit_length() - 1 - bits - 1
        lost = int(_INSIGNIFICANT[above]) if 1 < above < len(_INSIGNIFICANT) else 0
        if lost:
            n, residue = divmod(n, 10**lost)
            n += residue >= 10**lost // 2
        digits, power = str(n), len(str(n)) + lost - 1
    else:
        shortest = np.format_float_scientific(np.float32(magnitude) if single else magnitude, unique=True)
        mantissa, _, exponent = shortest.partition("e")
        digits, power = mantissa.replace(".", ""), int(exponent)
        if len(digits.rstrip("0")) == 1 and magnitude < np.finfo(np.float32 if single else np.float64).tiny:
            two, _, exponent = f"{magnitude:.1e}".partition("e")  # Java's closest two digits
            digits, power = two.replace(".", ""), int(exponent)
    digits = digits.rstrip("0") or "0"
    if 0 <= power < 7:
        whole = digits[: power + 1].ljust(power + 1, "0")
        return f"{sign}{whole}.{digits[power + 1 :] or '0'}"
    if -3 <= power < 0:
        return f"{sign}0.{'0' * (-power - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{power}"


def _scientific_from_text(text: pa.Array, x: np.ndarray) -> pa.Array:
    """Values outside Java's plain range in its scientific notation, from pyarrow's shortest text
    of them (plain or with an exponent)."""
    parts = pc.extract_regex(pc.utf8_ltrim(text, "-"), _SHORTEST)
    whole, fraction, exponent = (parts.field(k) for k in ("i", "f", "e"))
    every = pc.binary_join_element_wise(whole, pc.fill_null(fraction, ""), "")
    stripped = pc.utf8_ltrim(every, "0")
    lead = pc.subtract(pc.utf8_length(every), pc.utf8_length(stripped))
    power = pc.if_else(pc.equal(pc.fill_null(exponent, ""), ""), "0", exponent).cast(pa.int32())
    # the value is 0.<digits> x 10^(len(whole) + power - lead): Java's exponent one less
    shift = pc.subtract(pc.add(pc.utf8_length(whole), power), pc.add(lead, 1))
    return _layout(pc.utf8_rtrim(stripped, "0"), shift, x < 0)


def _scientific_of_integers(magnitude: np.ndarray, negative: np.ndarray, bits: int) -> pa.Array:
    """Integral values from 2^bits up to 2^63 as Java 17 prints them: the exact integer with the
    digits below the type's precision rounded away, half up."""
    value = magnitude.astype(np.uint64)
    above = np.frexp(magnitude)[1] - 1 - bits - 1  # insignificantDigitsForPow2's argument
    lost = np.where(above > 1, _INSIGNIFICANT[np.clip(above, 0, len(_INSIGNIFICANT) - 1)], 0)
    scale = (10 ** lost.astype(np.uint64)).astype(np.uint64)
    kept, residue = np.divmod(value, scale)
    kept += (residue >= scale // 2) & (lost > 0)
    digits = pa.array(kept).cast(pa.string())
    shift = pc.add(pc.utf8_length(digits), pa.array(lost.astype(np.int32) - 1))
    return _layout(pc.utf8_rtrim(digits, "0"), shift, negative)


def _layout(digits: pa.Array, exponent: pa.Array, negative: np.ndarray) -> pa.Array:
    """``d.ddd`` (at least one fraction digit) ``E`` exponent, signed."""
    rest = pc.utf8_slice_codeunits(digits, 1)
    rest = pc.if_else(pc.equal(rest, ""), "0", rest)
    sign = pc.if_else(pa.array(negative), "-", "")
    first = pc.utf8_slice_codeunits(digits, 0, 1)
    return pc.binary_join_element_wise(sign, first, ".", rest, "E", exponent.cast(pa.string()), "")
