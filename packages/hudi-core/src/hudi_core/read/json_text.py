"""Rows as the JSON text Apache Hudi's CDC query answers, built column by column.

Hudi 0.15 renders an image two ways: a record of a CDC log file as Avro renders a record
(``GenericData.toString``: ``{"id": "a", "ts": 1}``, nulls kept), a row it reads from a base file
compactly through Jackson (``{"id":"a","ts":1}``, null fields left out). Both run on the JVM, so
their text is Java's:

- a double as ``Double.toString`` and a float as ``Float.toString`` print it: ``1.0``, ``0.001``,
  ``1.0E7``, ``1.5E-4``, and the values that are not finite as the strings ``"NaN"``,
  ``"Infinity"``, ``"-Infinity"`` (``hudi_core.java_text``);
- a string with ``"``, ``\\``, ``\\b``, ``\\f``, ``\\n``, ``\\r``, ``\\t`` escaped and every other
  character it escapes as ``\\uXXXX`` in upper-case hex: below U+0020 for both, and for Avro also
  U+007F-U+009F and U+2000-U+20FF (:func:`escaped`).

A compact row's fields come in the order of the Scala hash map Hudi 0.15 puts them in
(:func:`scala_hash_order`). Not rendered as Hudi does: the types whose rendering docs/interop.md
lists among Hudi's quirks.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import functools
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.java_text import java_float, java_floats

__all__ = ["escaped", "images_json", "rows_json", "scala_hash_order"]


def images_json(images: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A CDC record's images as Avro renders a record, nulls kept (an absent image too: the text
    ``null``, as Hudi answers it)."""
    col = images.combine_chunks() if isinstance(images, pa.ChunkedArray) else images
    fields = [col.type.field(i).name for i in range(col.type.num_fields)]
    rows = pa.Table.from_arrays(col.flatten(), names=fields)
    return pc.if_else(col.is_valid(), rows_json(rows), pa.scalar("null"))


def rows_json(rows: pa.Table, *, compact: bool = False) -> pa.Array:
    """Each row as JSON: compact and without the null fields, in the order of a Scala hash map
    (Jackson's rendering of the rows Hudi reads from base files), else as Avro renders a record
    (the columns' order, ``, `` and ``: ``, nulls kept)."""
    sep, colon = (",", ":") if compact else (", ", ": ")
    if compact:
        rows = rows.select(list(scala_hash_order(tuple(rows.column_names))))
    # the text of every row in one join: literals (each member's separator and name, the quotes
    # around a string column's values) and columns, each member with its separator before it
    pieces: list[str | pa.Array] = []
    for name in rows.column_names:
        arr = rows.column(name).combine_chunks()
        key = sep + _quoted(name, avro=not compact) + colon
        text = _plain_text(arr, avro=not compact)
        if text is not None:  # strings without nulls or characters to escape: quoted by the literals
            pieces += [key + '"', text, '"']
            continue
        values = _values(arr, avro=not compact)
        if not compact or not values.null_count:
            pieces += [key, pc.fill_null(values, "null") if values.null_count else values]
        else:  # a member left out where its value is null: "" (pyarrow 26's join skipping nulls
            # drops the rows where every value is null)
            pieces.append(pc.fill_null(pc.binary_join_element_wise(key, values, ""), ""))
    merged: list[str | pa.Array] = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        else:
            merged.append(piece)
    if not merged:
        return pa.array(["{}"] * rows.num_rows, pa.string())
    if isinstance(merged[0], str):  # the first member is always there: its separator is the brace
        merged[0] = "{" + merged[0][len(sep) :]
        merged.append("}")
        return pc.binary_join_element_wise(*merged, "")
    body = pc.utf8_slice_codeunits(pc.binary_join_element_wise(*merged, ""), len(sep))
    return pc.binary_join_element_wise("{", body, "}", "")


@functools.lru_cache(maxsize=64)
def scala_hash_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """The order a Scala 2.12 ``mutable.HashMap`` gives the ``names`` put into it in this order,
    Hudi 0.15's order of a compact row's fields (``InternalRowToJsonStringConverter``): each name
    hashed (``String.hashCode``, then ``HashTable.improve``) into a table of 16 buckets doubled
    past three quarters full, put at the head of its bucket; iterated from the last bucket."""
    size, seed = 16, 4  # the seed: the bits of the first table's mask, kept through resizes
    buckets: list[list[str]] = [[] for _ in range(size)]
    for count, name in enumerate(names, start=1):
        buckets[_bucket(name, size, seed)].insert(0, name)
        if count > size * 3 // 4:
            moved: list[list[str]] = [[] for _ in range(2 * size)]
            for chain in reversed(buckets):
                for key in chain:
                    moved[_bucket(key, 2 * size, seed)].insert(0, key)
            buckets, size = moved, 2 * size
    return tuple(name for chain in reversed(buckets) for name in chain)


def _bucket(name: str, size: int, seed: int) -> int:
    units = name.encode("utf-16-le")
    h = 0
    for i in range(0, len(units), 2):  # Java's String.hashCode, over UTF-16 code units
        h = (31 * h + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    h = (h * 0x9E3775CD) & 0xFFFFFFFF  # scala.util.hashing.byteswap32
    h = (int.from_bytes(h.to_bytes(4, "big"), "little") * 0x9E3775CD) & 0xFFFFFFFF
    h = ((h >> seed) | (h << (32 - seed))) & 0xFFFFFFFF  # rotated by the seed
    return (h >> (33 - size.bit_length())) & (size - 1)  # the top bits


# -- strings ----------------------------------------------------------------------------------

#: the short escapes both renderings use
_SHORT = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str, *, avro: bool) -> str | None:
    """How a character is written inside a JSON string, or None where it stays as it is."""
    if ch in _SHORT:
        return _SHORT[ch]
    c = ord(ch)
    if c < 0x20 or (avro and (0x7F <= c <= 0x9F or 0x2000 <= c <= 0x20FF)):
        return f"\\u{c:04X}"
    return None


def _quoted(text: str, *, avro: bool) -> str:
    return '"' + "".join(_escape(ch, avro=avro) or ch for ch in text) + '"'


def escaped(text: pa.Array, *, avro: bool) -> pa.Array:
    """A string array's values as the inside of JSON strings, Java's way (Avro's rendering, or
    Jackson's): each character found to need it replaced column-wide, the backslash first."""
    found = _special_characters(text, avro=avro)
    for ch in sorted(found, key=lambda c: c != "\\"):
        text = pc.replace_substring(text, ch, _escape(ch, avro=avro))
    return text


def _special_characters(text: pa.Array, *, avro: bool) -> set[str]:
    """The characters a string array holds that its JSON escapes (a look at its bytes): below
    U+0020, the quote and the backslash; for Avro also U+007F-U+009F and U+2000-U+20FF."""
    if len(text) == 0:
        return set()
    width = np.int64 if pa.types.is_large_string(text.type) else np.int32
    offsets = np.frombuffer(text.buffers()[1], dtype=width)[text.offset : text.offset + len(text) + 1]
    data = text.buffers()[2]
    if data is None or offsets[-1] == offsets[0]:
        return set()
    b = np.frombuffer(data, dtype=np.uint8)[offsets[0] : offsets[-1]]
    wide = avro and b.max() >= 0x7F  # (a few quick passes settle the usual text)
    if b.min() >= 0x20 and not wide and not (b == 0x22).any() and not (b == 0x5C).any():
        return set()
    leads = (b < 0x20) | (b == 0x22) | (b == 0x5C)
    if wide:
        leads |= (b == 0x7F) | (b == 0xC2) | (b == 0xE2)
    at = np.flatnonzero(leads)
    lead = b[at]
    found = {chr(c) for c in np.unique(lead[lead < 0x80]).tolist()}
    # (UTF-8 keeps a character's bytes together: a lead byte's next ones are in the buffer)
    two = b[at[lead == 0xC2] + 1]
    found |= {chr(c) for c in np.unique(two[two <= 0x9F]).tolist()}  # U+0080-U+009F
    three = at[lead == 0xE2]
    pairs = (b[three + 1].astype(np.int32) << 8) | b[three + 2]
    found |= {
        bytes([0xE2, p >> 8, p & 0xFF]).decode("utf-8") for p in np.unique(pairs[pairs < 0x8400]).tolist()
    }
    return found


def _plain_text(arr: pa.Array, *, avro: bool) -> pa.Array | None:
    """A string column without nulls whose values JSON takes as they are, as plain strings; else
    None."""
    if arr.null_count or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr.cast(pa.string()) if not _special_characters(arr, avro=avro) else None


# -- every type -------------------------------------------------------------------------------


def _values(arr: pa.Array, *, avro: bool) -> pa.Array:
    """The JSON text of each value (null where it is null): strings, numbers, booleans, temporal
    values (as Avro holds them: days, microseconds) and decimals (their text, quoted) at once;
    other types value by value."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return _values(arr.dictionary_decode(), avro=avro)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.binary_join_element_wise('"', escaped(arr.cast(pa.string()), avro=avro), '"', "")
    if pa.types.is_boolean(t):
        return pc.if_else(arr, "true", "false")
    if pa.types.is_integer(t):
        return arr.cast(pa.string())
    if pa.types.is_floating(t):
        return java_floats(arr, quote='"')
    if pa.types.is_date32(t):
        return arr.cast(pa.int32()).cast(pa.string())
    if pa.types.is_timestamp(t):
        return arr.cast(pa.timestamp("us", tz=t.tz)).cast(pa.int64()).cast(pa.string())
    if pa.types.is_decimal(t):
        return pc.binary_join_element_wise('"', arr.cast(pa.string()), '"', "")
    return pa.array([None if v is None else _text(v, t, avro=avro) for v in arr.to_pylist()], pa.string())


def _text(value: Any, t: pa.DataType, *, avro: bool) -> str:
    """One value of type ``t`` as JSON (a list, a map, a struct, a date64, a time, a binary; nulls
    inside kept), Java's way."""
    if value is None:
        return "null"
    sep, colon = (", ", ": ") if avro else (",", ":")
    if pa.types.is_struct(t):
        return "{" + sep.join(
            _quoted(f.name, avro=avro) + colon + _text(value.get(f.name), f.type, avro=avro) for f in t
        ) + "}"  # fmt: skip
    if pa.types.is_map(t):
        return "{" + sep.join(
            _quoted(str(k), avro=avro) + colon + _text(v, t.item_type, avro=avro) for k, v in value
        ) + "}"  # fmt: skip
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return "[" + sep.join(_text(v, t.value_type, avro=avro) for v in value) + "]"
    if pa.types.is_floating(t):
        return java_float(value, single=not pa.types.is_float64(t), quote='"')
    if pa.types.is_boolean(t):
        return "true" if value else "false"
    if pa.types.is_integer(t):
        return str(value)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _quoted(value, avro=avro)
    plain = _plain(value)
    return str(plain) if isinstance(plain, int) else _quoted(plain, avro=avro)


def _plain(value: Any) -> Any:
    """A value JSON has no type for, as Avro's records hold it."""
    if isinstance(value, _dt.datetime):
        epoch = _dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (value - epoch) // _dt.timedelta(microseconds=1)
    if isinstance(value, _dt.date):
        return (value - _dt.date(1970, 1, 1)).days
    if isinstance(value, _dt.time):
        return (value.hour * 3600 + value.minute * 60 + value.second) * 1_000_000 + value.microsecond
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)
