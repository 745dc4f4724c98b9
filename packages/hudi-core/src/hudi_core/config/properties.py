"""Java ``java.util.Properties`` text format: ``load`` and ``store`` semantics.

``hoodie.properties`` is written by Java's ``Properties.store`` and read with
``Properties.load``; this module reproduces both (spec section 2.1).
"""

from __future__ import annotations

import datetime as _dt

__all__ = ["dump_properties", "java_date_string", "load_properties"]

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> list[str]:
    """Join continuation lines (odd number of trailing backslashes) like ``Properties.load``."""
    out: list[str] = []
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")  # Java skips leading blanks of every natural line
        if pending is None and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        continued = trailing % 2 == 1
        if continued:
            line = line[:-1]
        pending = line if pending is None else pending + line
        if not continued:
            out.append(pending)
            pending = None
    if pending is not None:
        out.append(pending)
    return out


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(s):
            break
        c = s[i]
        if c == "u":
            digits = s[i + 1 : i + 5]
            if len(digits) != 4:
                raise ValueError(f"malformed \\uXXXX escape in {s!r}")
            try:
                out.append(chr(int(digits, 16)))
                i += 5
                continue
            except ValueError as e:
                raise ValueError(f"malformed \\uXXXX escape in {s!r}") from e
        out.append(_ESCAPES.get(c, c))
        i += 1
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in " \t\f":
        j += 1
    if j < n and line[j] in "=:":
        j += 1
        while j < n and line[j] in " \t\f":
            j += 1
    return _unescape(key), _unescape(line[j:])


def load_properties(text: str) -> dict[str, str]:
    """Parse Java properties text into an ordered dict (last occurrence of a key wins)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        props[key] = value
    return props


def _escape(s: str, *, is_key: bool) -> str:
    out: list[str] = []
    for idx, c in enumerate(s):
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif c in "=:#!":
            out.append("\\" + c)
        elif c == "\t":
            out.append("\\t")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\f":
            out.append("\\f")
        elif c == " " and (is_key or idx == 0):
            out.append("\\ ")
        elif o < 0x20 or o > 0x7E:
            out.append(f"\\u{o:04X}")
        else:
            out.append(c)
    return "".join(out)


def java_date_string(when: _dt.datetime | None = None) -> str:
    """``java.util.Date.toString()`` form, e.g. ``Thu Apr 18 17:35:50 UTC 2024``."""
    when = when or _dt.datetime.now(_dt.timezone.utc)
    tz = when.strftime("%Z") or "UTC"
    return when.strftime(f"%a %b %d %H:%M:%S {tz} %Y")


def dump_properties(props: dict[str, str], comment: str | None = None) -> str:
    """Render like ``Properties.store``: optional comment line, date line, escaped pairs."""
    lines: list[str] = []
    if comment is not None:
        lines.append("#" + comment)
    lines.append("#" + java_date_string())
    for key, value in props.items():
        lines.append(f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}")
    return "\n".join(lines) + "\n"
