"""Ordering values compare as Hudi compares them (``Comparable.compareTo``)."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from hudi_core.config.payload import java_order

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("kind", [pa.float64(), pa.float32()])
def test_floats_order_as_java_compares_them(kind: pa.DataType) -> None:
    """Double.compare and Float.compare: -inf < ... < -0.0 < 0.0 < ... < inf < NaN, every NaN
    equal to every other; nulls stay null."""
    values = [NAN, 1.5, -0.0, None, -INF, 0.0, INF, -2.5, -NAN, 1e-30]
    keys = java_order(pa.chunked_array([values[:4], values[4:]], kind)).to_pylist()
    assert keys[3] is None
    ranked = sorted((k, i) for i, k in enumerate(keys) if k is not None)
    order = [values[i] for _, i in ranked]
    assert [repr(v) for v in order] == ["-inf", "-2.5", "-0.0", "0.0", "1e-30", "1.5", "inf", "nan", "nan"]
    assert keys[0] == keys[8] and math.isnan(values[8])  # a negative NaN is the NaN


def test_other_types_are_compared_as_they_are() -> None:
    ints = pa.array([3, None, -1])
    assert java_order(ints) is ints
