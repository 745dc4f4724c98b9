"""Java/Joda date patterns (``yyyy-MM-dd'T'HH:mm:ss.SSSZ``) for the timestamp key generator:
parse strings and format instants, vectorised over Arrow arrays.

Supported letters: ``y`` (year), ``M`` (month number), ``d``, ``H``, ``h``, ``a``, ``m``, ``s``,
``S`` (fraction), ``D`` (day of year), ``Z``/``X``/``x`` (offset); quoted text and other
characters are literals. Anything else raises :class:`ConfigError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import ConfigError

__all__ = ["JavaDatePattern", "arrow_zone"]

_LETTERS = set("yMdHhamsSDZXx")


def arrow_zone(zone: str | None) -> str:
    """A Java time-zone id as Arrow understands it (``GMT`` -> ``UTC``, ``GMT+8`` -> ``+08:00``)."""
    if not zone:
        return "UTC"
    z = zone.strip()
    if z.upper() in ("GMT", "UTC", "Z", "UT"):
        return "UTC"
    m = re.fullmatch(r"(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?", z, flags=re.IGNORECASE)
    if m:
        return f"{m.group(1)}{int(m.group(2)):02d}:{m.group(3) or '00'}"
    return z


@dataclass(frozen=True)
class _Token:
    letter: str  # "" for a literal
    count: int
    text: str = ""


def _tokenize(pattern: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            j = pattern.find("'", i + 1)
            if j < 0:
                raise ConfigError(f"date pattern {pattern!r} has an unclosed quote")
            out.append(_Token("", 0, "'" if j == i + 1 else pattern[i + 1 : j]))
            i = j + 1
        elif c.isalpha():
            if c not in _LETTERS:
                raise ConfigError(
                    f"date pattern {pattern!r}: letter {c!r} is not supported; use y M d H h a m s S D Z X"
                )
            j = i
            while j < n and pattern[j] == c:
                j += 1
            out.append(_Token(c, j - i))
            i = j
        else:
            out.append(_Token("", 0, c))
            i += 1
    return out


def _days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (vectorised civil calendar)."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = (m + 9) % 12
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


class JavaDatePattern:
    """One Java date pattern, usable to parse and to format."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.tokens = _tokenize(pattern)
        self.has_offset = any(t.letter in "ZXx" for t in self.tokens)

    # -- parsing ---------------------------------------------------------------------------------

    def _regex(self) -> str:
        parts = []
        for t in self.tokens:
            if not t.letter:
                parts.append(re.escape(t.text))
                continue
            name = {
                "y": "y",
                "M": "M",
                "d": "d",
                "H": "H",
                "h": "h",
                "a": "a",
                "m": "mi",
                "s": "s",
                "S": "S",
                "D": "D",
                "Z": "z",
                "X": "z",
                "x": "z",
            }[t.letter]
            if t.letter == "y":
                rx = r"\d{4}" if t.count != 2 else r"\d{2}"
            elif t.letter == "S":
                rx = r"\d{1,9}"
            elif t.letter == "a":
                rx = r"(?i:AM|PM)"
            elif t.letter in "ZXx":
                rx = r"Z|[+-]\d{2}:?\d{2}|[+-]\d{2}"
            elif t.letter == "D":
                rx = r"\d{1,3}"
            else:
                rx = r"\d{2}" if t.count >= 2 else r"\d{1,2}"
            parts.append(f"(?P<{name}>{rx})")
        return "^" + "".join(parts) + "$"

    def parse_micros(self, values: pa.Array, *, zone: str) -> tuple[pa.Array, pa.Array]:
        """``(epoch_micros int64 with nulls where unparsed, parsed mask)``; ``zone`` is used when
        the pattern has no offset."""
        fields = pc.extract_regex(values, self._regex())
        ok = np.asarray(fields.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        names = {f.name for f in fields.type}

        def num(name: str, default: int) -> np.ndarray:
            if name not in names:
                return np.full(len(values), default, dtype=np.int64)
            col = pc.struct_field(fields, name)
            col = pc.if_else(pc.equal(pc.fill_null(col, ""), ""), "0", col)
            return np.asarray(col.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)

        year = num("y", 1970)
        if any(t.letter == "y" and t.count == 2 for t in self.tokens):
            year = year + 2000
        if "D" in names:
            days = _days_from_civil(year, np.ones_like(year), np.ones_like(year)) + num("D", 1) - 1
        else:
            days = _days_from_civil(year, num("M", 1), num("d", 1))
        hour = num("H", 0)
        if "h" in names:
            hour = num("h", 0) % 12
            if "a" in names:
                pm = pc.equal(pc.utf8_upper(pc.fill_null(pc.struct_field(fields, "a"), "AM")), "PM")
                hour = hour + 12 * np.asarray(pm.to_numpy(zero_copy_only=False), dtype=np.int64)
        secs = days * 86400 + hour * 3600 + num("mi", 0) * 60 + num("s", 0)
        micros = secs * 1_000_000
        if "S" in names:
            frac = pc.utf8_slice_codeunits(pc.fill_null(pc.struct_field(fields, "S"), ""), 0, 6)
            frac = pc.utf8_rpad(frac, 6, "0")
            micros = micros + np.asarray(frac.cast(pa.int64()).to_numpy(zero_copy_only=False))
        if "z" in names:
            z = pc.fill_null(pc.struct_field(fields, "z"), "Z")
            z = pc.replace_substring(z, ":", "")
            z = pc.if_else(pc.equal(z, "Z"), "+0000", z)
            z = pc.if_else(pc.equal(pc.utf8_length(z), 3), pc.binary_join_element_wise(z, "00", ""), z)
            sign = np.where(np.asarray(pc.starts_with(z, "-").to_numpy(zero_copy_only=False)), -1, 1)
            hh = np.asarray(pc.utf8_slice_codeunits(z, 1, 3).cast(pa.int64()).to_numpy(zero_copy_only=False))
            mm = np.asarray(pc.utf8_slice_codeunits(z, 3, 5).cast(pa.int64()).to_numpy(zero_copy_only=False))
            micros = micros - sign * (hh * 3600 + mm * 60) * 1_000_000
            result = pa.array(micros, pa.int64(), mask=~ok)
        else:
            local = pa.array(micros, pa.timestamp("us"), mask=~ok)
            result = pc.assume_timezone(
                local, arrow_zone(zone), ambiguous="earliest", nonexistent="latest"
            ).cast(pa.int64())
        return result, pa.array(ok)

    # -- formatting ------------------------------------------------------------------------------

    def format(self, micros: pa.Array, *, zone: str) -> pa.Array:
        """Format epoch micros (int64 or timestamp) in ``zone``."""
        ts = (
            micros.cast(pa.int64()).cast(pa.timestamp("us", "UTC")).cast(pa.timestamp("us", arrow_zone(zone)))
        )
        pieces: list[pa.Array | str] = []

        def pad(arr: pa.Array, width: int) -> pa.Array:
            return pc.utf8_lpad(arr.cast(pa.string()), width, "0")

        for t in self.tokens:
            if not t.letter:
                pieces.append(t.text)
            elif t.letter == "y":
                y = pc.year(ts)
                pieces.append(
                    pad(pc.subtract(y, pc.multiply(pc.divide(y, 100), 100)), 2)
                    if t.count == 2
                    else pad(y, t.count)
                )
            elif t.letter == "M":
                if t.count > 2:
                    raise ConfigError(f"output pattern {self.pattern!r}: month names are not supported")
                pieces.append(pad(pc.month(ts), t.count))
            elif t.letter == "d":
                pieces.append(pad(pc.day(ts), t.count))
            elif t.letter == "D":
                pieces.append(pad(pc.day_of_year(ts), t.count))
            elif t.letter == "H":
                pieces.append(pad(pc.hour(ts), t.count))
            elif t.letter == "h":
                h = pc.subtract(pc.hour(ts), pc.multiply(pc.divide(pc.hour(ts), 12), 12))
                pieces.append(pad(pc.if_else(pc.equal(h, 0), 12, h), t.count))
            elif t.letter == "a":
                pieces.append(pc.if_else(pc.less(pc.hour(ts), 12), "AM", "PM"))
            elif t.letter == "m":
                pieces.append(pad(pc.minute(ts), t.count))
            elif t.letter == "s":
                pieces.append(pad(pc.second(ts), t.count))
            elif t.letter == "S":
                frac = pad(pc.add(pc.multiply(pc.millisecond(ts), 1000), pc.microsecond(ts)), 6)
                pieces.append(pc.utf8_slice_codeunits(pc.utf8_rpad(frac, t.count, "0"), 0, t.count))
            else:  # offset letters
                pieces.append(pc.strftime(ts, format="%z"))
        arrays = [
            p if isinstance(p, (pa.Array, pa.ChunkedArray)) else pa.array([p] * len(micros), pa.string())
            for p in pieces
        ]
        if not arrays:
            return pa.repeat(pa.scalar("", pa.string()), len(micros))
        return pc.binary_join_element_wise(*arrays, "")
