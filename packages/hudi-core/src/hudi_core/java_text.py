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

#: up to where :func:`java_floats` takes Java's digit generation value by value (from 2^63, where
#: its integer path ends: Java 17's digits and the shortest differ for some values up to ~4e25;
#: none differed above among 6M random values)
HARD_ABOVE = 1e30

#: the shortest text pyarrow gives a finite value: integer digits, fraction digits, exponent
_SHORTEST = r"^(?P<i>[0-9]+)(?:\.(?P<f>[0-9]+))?(?:e\+?(?P<e>-?[0-9]+))?$"


def java_floats(arr: pa.Array, *, quote: str = "") -> pa.Array:
    """A float or double array's values as Java 17 prints them (``Float.toString``,
    ``Double.toString``): from 10^-3 up to 10^7 in plain notation with at least one fraction
    digit, else as ``d.dddE±n``; NaN and the infinities as ``NaN``, ``Infinity``, ``-Infinity``,
    each between two ``quote`` (``"`` in JSON, where Jackson and Avro write them as strings).
    Nulls stay null. The digits are the fewest that tell the value apart (pyarrow's, column-wide)
    except where Java 17's ``FloatingDecimal`` gives others: integral values from 2^54 (floats:
    2^25) up to 2^63, printed from the exact integer rounded below the type's precision (2^60 is
    ``1.15292150460684698E18``), column-wide too; values from 2^63 up to ~4e25 its digit
    generation misses the shortest for (2e23 is ``1.9999999999999998E23``) and subnormal ones
    (``4.9E-324``, ``1.0E-323``), taken value by value through :func:`java_float`. Held to Java 17's
    own output on 2.2 million values (``tests/schema/test_promotion.py`` keeps a sample)."""
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
    # where Java 17's digits may not be the shortest: subnormal values, and from 2^63 (past its
    # integer path) up to HARD_ABOVE
    hard = scientific & (
        (magnitude < np.finfo(np.float32 if single else np.float64).tiny)
        | (magnitude >= 2.0**63) & (magnitude < HARD_ABOVE)
    )
    exact = integral & (magnitude >= 2.0**bits) & (magnitude < 2.0**63)  # (all of them >= 10^7)
    # each kind of value the shortest text does not already print Java's way, and its text
    fixes: list[tuple[np.ndarray, pa.Array]] = []
    if (at := np.flatnonzero(integral & ~scientific)).size:  # "1" -> "1.0"
        fixes.append((at, pc.binary_join_element_wise(text.take(at), ".0", "")))
    if (at := np.flatnonzero(scientific & ~exact & ~hard)).size:
        fixes.append((at, _scientific_from_text(text.take(at), x[at])))
    if (at := np.flatnonzero(exact)).size:
        fixes.append((at, _scientific_of_integers(magnitude[at], x[at] < 0, bits)))
    if (at := np.flatnonzero(hard)).size:  # Java's own digit generation, value by value
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
    """One value as Java 17 prints it (a float's when ``single``): ``FloatingDecimal``'s digit
    generation itself, value by value (:func:`java_floats` takes it where the shortest digits
    and Java's differ; values nested in lists and structs take it too)."""
    if math.isnan(value):
        return f"{quote}NaN{quote}"
    if math.isinf(value):
        return f"{quote}{'Infinity' if value > 0 else '-Infinity'}{quote}"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    digits, point = _floating_decimal(abs(value), single)
    if 0 < point <= 7:
        return f"{sign}{digits[:point].ljust(point, '0')}.{digits[point:] or '0'}"
    if -3 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


#: the bits of 5^i (FloatingDecimal's ``N_5_BITS``, as far as its long table goes)
_N_5_BITS = [(5**i).bit_length() for i in range(27)]


def _floating_decimal(magnitude: float, single: bool) -> tuple[str, int]:
    """The digits (no trailing zeros) and decimal point position (value = 0.digits x
    10^point) Java 17's ``FloatingDecimal.BinaryToASCIIBuffer.dtoa`` gives a positive finite
    value: the integer path for integral values below 2^63, else its digit generation with the
    estimate of the decimal exponent, its symmetric stopping test (a digit past the first
    outside the plain range) and its int, long or big-integer arithmetic, as it takes each."""
    if single:
        raw = int(np.array(magnitude, np.float32).view(np.uint32))
        fraction, exp2, width, bias = raw & 0x7FFFFF, raw >> 23, 23, 127
    else:
        raw = int(np.array(magnitude, np.float64).view(np.uint64))
        fraction, exp2, width, bias = raw & ((1 << 52) - 1), raw >> 52, 52, 1023
    if exp2 == 0:  # subnormal: normalized, fewer significant bits
        shift = width + 1 - fraction.bit_length()
        fraction, exp2, significant = fraction << shift, 1 - shift, fraction.bit_length()
    else:
        fraction, significant = fraction | (1 << width), width + 1
    bin_exp = exp2 - bias
    bits = fraction << (52 - width)  # (a float's bits where a double's would be)
    tail = (bits & -bits).bit_length() - 1
    n_fract = 53 - tail
    tiny_bits = max(0, n_fract - bin_exp - 1)
    if -21 <= bin_exp <= 62 and tiny_bits == 0:  # an integer below 2^63
        n = bits << (bin_exp - 52) if bin_exp >= 52 else bits >> (52 - bin_exp)
        above = bin_exp - significant - 1
        lost = int(_INSIGNIFICANT[above]) if 1 < above < len(_INSIGNIFICANT) else 0
        if lost:
            n, residue = divmod(n, 10**lost)
            n += residue >= 10**lost // 2
        text = str(n)
        return text.rstrip("0") or "0", len(text) + lost
    mantissa = _double_of(0x3FF0000000000000 | (bits & ((1 << 52) - 1)))
    dec_exp = math.floor((mantissa - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981)
    b5, s5 = max(0, -dec_exp), max(0, dec_exp)
    b2, s2 = b5 + tiny_bits + bin_exp, s5 + tiny_bits
    m5, m2 = b5, b5 + tiny_bits + bin_exp - significant
    bits >>= tail
    b2 -= n_fract - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if n_fract == 1:
        m2 -= 1
    if m2 < 0:
        b2, s2, m2 = b2 - m2, s2 - m2, 0
    b_bits = n_fract + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    # int or long arithmetic where Java's estimate of the sizes says they fit (its sums and M's
    # products then wrap as Java's do), else exact big integers
    width = 32 if b_bits < 32 and ten_s_bits < 32 else 64 if b_bits < 64 and ten_s_bits < 64 else 0

    def fixed(v: int) -> int:
        if not width:
            return v
        v &= (1 << width) - 1
        return v - (1 << width) if v >> (width - 1) else v

    b, s, m = fixed(bits * 5**b5 << b2), fixed(5**s5 << s2), fixed(5**m5 << m2)
    tens = fixed(10 * s)
    digits: list[int] = []
    first = True
    while True:
        q, b = b // s, fixed(10 * (b % s))
        m = fixed(10 * m)
        if width and not first and m <= 0:
            low = high = True  # (M overflowed: Java takes it as both)
        else:
            low, high = b < m, (fixed(b + m) > tens) if width else (b + m >= tens)
        if first:
            first = False
            if q == 0 and not high:
                dec_exp -= 1
            else:
                digits.append(q)
            if dec_exp < -3 or dec_exp >= 8:  # E-form: a digit after the point, whatever it is
                low = high = False
        else:
            digits.append(q)
        if low or high:
            break
    difference = fixed(fixed(2 * b) - tens) if width else 2 * b - tens
    if high and (not low or difference > 0 or (difference == 0 and digits[-1] % 2)):
        i = len(digits) - 1
        while i > 0 and digits[i] == 9:
            digits[i] = 0
            i -= 1
        if digits[i] == 9:  # a carry out of the first digit: 10^(dec_exp + 1)
            digits, dec_exp = [1], dec_exp + 1
        else:
            digits[i] += 1
    text = "".join(map(str, digits)).rstrip("0") or "0"
    return text, dec_exp + 1


def _double_of(bits: int) -> float:
    return float(np.array(bits, np.uint64).view(np.float64))


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
