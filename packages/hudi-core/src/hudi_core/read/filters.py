"""Simple row filters ``(column, op, value)``: validation, Arrow expressions, partition pruning."""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import HudiError
from hudi_core.fs_view.partitions import coerce_like

__all__ = [
    "Filter",
    "FilterError",
    "normalize_filters",
    "partition_matches",
    "to_expression",
    "typed_filters",
]

Filter = tuple[str, str, Any]
_OPS = ("=", "==", "!=", "<", "<=", ">", ">=", "in", "not in")


class FilterError(HudiError):
    """A filter names an unknown column or operator, or a value of the wrong type."""


def normalize_filters(filters: Sequence[Sequence[Any]] | None, columns: Sequence[str]) -> list[Filter]:
    out: list[Filter] = []
    for f in filters or ():
        if len(f) != 3:
            raise FilterError(f"filter {f!r} is not (column, op, value)")
        col, op, value = f[0], str(f[1]).strip().lower(), f[2]
        if op not in _OPS:
            raise FilterError(f"filter operator {f[1]!r} is not one of {', '.join(_OPS)}")
        if col not in columns:
            raise FilterError(f"filter column {col!r} is not a column of the table: {', '.join(columns)}")
        if op in ("in", "not in") and (
            isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set))
        ):
            raise FilterError(f"filter {col} {op} needs a list of values, got {value!r}")
        out.append((col, "=" if op == "==" else op, value))
    return out


def typed_filters(filters: Sequence[Filter], schema: pa.Schema) -> list[Filter]:
    """``filters`` with each text value on a date, timestamp or decimal column read as that
    column's type, as Spark SQL reads ``day >= '2024-01-31'`` (and the CLI's ``--filter`` gives
    text): a date as ``2024-01-31``, a time as ``2024-01-31 10:00:00`` (with its offset, ``Z`` or
    ``+02:00``, where the column has a time zone); on a decimal column, text and numbers as
    decimals."""
    out: list[Filter] = []
    for col, op, value in filters:
        dt = schema.field(col).type
        if pa.types.is_date32(dt) or pa.types.is_timestamp(dt) or pa.types.is_decimal(dt):
            if op in ("in", "not in"):
                value = [_typed(col, v, dt) for v in value]
            else:
                value = _typed(col, value, dt)
        out.append((col, op, value))
    return out


def _typed(col: str, value: Any, dt: pa.DataType) -> Any:
    if pa.types.is_decimal(dt):
        # a number as a decimal (Arrow compares no int or float with a decimal column), at the
        # value's own precision: a value beyond the column's compares, as in Spark
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return value
        try:
            number = decimal.Decimal(value if isinstance(value, (str, int)) else repr(value))
        except decimal.InvalidOperation:
            number = None
        if number is None or not number.is_finite():
            raise FilterError(f"filter value {value!r} of {col} is not a decimal number")
        return number
    if not isinstance(value, str):
        return value
    try:
        return pa.scalar(value).cast(dt).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        zone = " with its offset (Z, +02:00)" if pa.types.is_timestamp(dt) and dt.tz else ""
        raise FilterError(
            f"filter value {value!r} of {col} does not read as {dt}: a date is 2024-01-31, a time "
            f"2024-01-31 10:00:00{zone}"
        ) from e


def to_expression(filters: Sequence[Filter]) -> pc.Expression | None:
    expr: pc.Expression | None = None
    for col, op, value in filters:
        field = pc.field(col)
        if op == "=":
            e = field == value
        elif op == "!=":
            e = field != value
        elif op == "<":
            e = field < value
        elif op == "<=":
            e = field <= value
        elif op == ">":
            e = field > value
        elif op == ">=":
            e = field >= value
        elif op == "in":
            e = field.isin(list(value))
        else:
            e = ~field.isin(list(value))
        expr = e if expr is None else expr & e
    return expr


def apply_filters(data: pa.Table, expr: pc.Expression | None) -> pa.Table:
    if expr is None or data.num_rows == 0:
        return data
    try:
        return data.filter(expr)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise FilterError(f"cannot apply filter {expr}: {e} (is the value of the column's type?)") from e


def partition_matches(
    values: dict[str, str] | None, filters: Sequence[Filter], schema: pa.Schema | None = None
) -> bool:
    """False only when a filter on a partition field surely rejects every row of the partition.
    A float column's value is the float its path's text stands for (``Float.toString`` keeps
    the digits that tell floats apart: ``0.1`` is 0.10000000149011612), as its rows hold it."""
    if values is None:
        return True
    for col, op, value in filters:
        raw = values.get(col)
        if raw is None:
            continue
        single = schema is not None and schema.get_field_index(col) >= 0 and schema.field(col).type in _SINGLE
        try:
            if op in ("in", "not in"):
                hit = any(_stored(raw, v, single) == v for v in value)
                ok = hit if op == "in" else not hit
            else:
                ok = _compare(_stored(raw, value, single), op, value)
        except (ValueError, TypeError):
            continue  # not comparable here: let the row filter decide
        if not ok:
            return False
    return True


def _stored(raw: str, sample: Any, single: bool) -> Any:
    """A partition path's text as the value its rows hold, of ``sample``'s kind (``single``: a
    float column's, through a float)."""
    if single and isinstance(sample, float):
        return float(np.float32(raw))
    return coerce_like(raw, sample)


#: the float types whose values a path's text gives through a float, not a double
_SINGLE = (pa.float32(), pa.float16())


def _compare(left: Any, op: str, right: Any) -> bool:
    if op == "=":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)
