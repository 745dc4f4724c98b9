"""A Spark filter's condition, as the filters core can prune with.

``df.filter(condition)`` on a ``hudi_spark.read`` DataFrame is Spark's own: the condition reaches
the JVM's parquet scans, but not core's plan, which prunes partitions and skips file slices before
any Python task merges one. :func:`condition_filters` reads the condition as Spark analyzed it
(comparisons and ``IN`` of a column with literals, their negations, text prefixes, ANDed) into
core's ``(column, op, value)`` filters, for the read to be planned again with them. What it cannot read
(an OR, a function of a column, a float or naive timestamp literal) it leaves out and says so: core
then prunes with what it has, and Spark applies the whole condition as before.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

__all__ = ["condition_filters"]

#: Spark's comparisons (catalyst's expression classes) as core's operators, with the column on the left
_OPS = {"EqualTo": "=", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<",
        "LessThanOrEqual": "<="}  # fmt: skip
#: the same with the column on the right (``5 < ts`` is ``ts > 5``)
_MIRRORED = {"EqualTo": "=", "GreaterThan": "<", "GreaterThanOrEqual": "<=", "LessThan": ">",
             "LessThanOrEqual": ">="}  # fmt: skip
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def condition_filters(condition: Any, columns: set[str]) -> tuple[list[tuple[str, str, Any]], bool]:
    """Core's filters implied by ``condition`` (a catalyst expression, through py4j) on the
    top-level ``columns``, and whether they say all of it: every conjunct a comparison or ``IN``
    (or its negation) of one of ``columns`` with literals of a text, integer, boolean, date,
    decimal or timestamp type. A row the condition keeps passes every filter returned."""
    out: list[tuple[str, str, Any]] = []
    whole = True
    for conjunct in _conjuncts(condition):
        f = _filter(conjunct, columns)
        if f is not None:
            out.append(f)
            continue
        whole = False
        out.extend(_prefix_range(conjunct, columns))
    return out, whole


def _conjuncts(e: Any) -> list[Any]:
    if _kind(e) == "And":
        return _conjuncts(e.left()) + _conjuncts(e.right())
    return [e]


def _filter(e: Any, columns: set[str]) -> tuple[str, str, Any] | None:
    kind = _kind(e)
    negated = kind == "Not"
    if negated:
        e = e.child()
        kind = _kind(e)
    if kind == "In":
        column = _column(e.value(), columns)
        items = [e.list().apply(i) for i in range(e.list().size())]
        values = [_literal(v) for v in items]
        if column is None or not values or any(v is None for v in values):
            return None
        return (column, "not in" if negated else "in", values)
    if kind not in _OPS:
        return None
    left, right = e.left(), e.right()
    column, value, op = _column(left, columns), _literal(right), _OPS[kind]
    if column is None:
        column, value, op = _column(right, columns), _literal(left), _MIRRORED[kind]
    if column is None or value is None:
        return None
    if negated:
        return (column, "!=", value) if op == "=" else None
    return (column, op, value)


def _prefix_range(e: Any, columns: set[str]) -> list[tuple[str, str, Any]]:
    """A text prefix (``LIKE 'abc%'``, ``startswith('abc')``) as the range of text it lies in,
    ``>= 'abc'`` and ``< 'abd'``, which every row with the prefix passes (not the whole condition:
    Spark still checks the prefix)."""
    kind = _kind(e)
    if kind not in ("StartsWith", "Like"):
        return []
    column, value = _column(e.left(), columns), _literal(e.right())
    if column is None or not isinstance(value, str):
        return []
    if kind == "Like":  # a pattern of a prefix then one '%', no other wildcard or escape
        escape = str(e.escapeChar())
        head = value[:-1]
        if not value.endswith("%") or any(c in head for c in ("%", "_", escape)):
            return []
        value = head
    if not value:
        return []
    beyond = _after_prefix(value)
    return [(column, ">=", value)] + ([(column, "<", beyond)] if beyond is not None else [])


def _after_prefix(prefix: str) -> str | None:
    """The least text greater than every text that starts with ``prefix`` (code point order,
    which is UTF-8's byte order), or None when there is none."""
    for i in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[i]) + 1
        if 0xD800 <= code <= 0xDFFF:  # surrogates are no text
            code = 0xE000
        if code <= 0x10FFFF:
            return prefix[:i] + chr(code)
    return None


def _kind(e: Any) -> str:
    return str(e.getClass().getSimpleName())


def _column(e: Any, columns: set[str]) -> str | None:
    if _kind(e) != "AttributeReference":
        return None
    name = str(e.name())
    return name if name in columns else None


def _literal(e: Any) -> Any:
    """The Python value of a foldable expression (a literal, maybe cast), or None where it has no
    plain value core compares as Spark does: null, floating point (Spark orders NaN above every
    number), a naive timestamp (read in the session's time zone), other types."""
    if _kind(e) == "AttributeReference" or not e.foldable():
        return None
    value = e.eval(None)
    if value is None:
        return None
    kind = str(e.dataType().typeName())
    if kind == "string":
        return str(value.toString())
    if kind in ("byte", "short", "integer", "long"):
        return int(value)
    if kind == "boolean":
        return bool(value)
    if kind == "date":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=int(value))
    if kind == "timestamp":
        return _EPOCH + datetime.timedelta(microseconds=int(value))
    if kind.startswith("decimal"):
        big = value.toJavaBigDecimal()  # py4j hands a java.math.BigDecimal over as a Python Decimal
        return big if isinstance(big, decimal.Decimal) else decimal.Decimal(str(big.toPlainString()))
    return None
