from __future__ import annotations

import numpy as np
import pyarrow as pa
from hudi_executors.sizing import SizeEstimator, deep_size


def test_arrow_items_are_sized_exactly_by_nbytes() -> None:
    est = SizeEstimator(100, seed=1)
    small = pa.record_batch({"a": np.zeros(10, dtype=np.int64)})
    big = pa.table({"a": np.zeros(1000, dtype=np.int64)})
    assert est.size_of(small) == 80
    assert est.size_of(big) == 8000
    assert est.measurements == 0  # nbytes is read, never sampled


def test_other_items_are_sampled_about_once_in_rate() -> None:
    est = SizeEstimator(100, seed=7)
    records = [{"id": i, "name": "x" * (i % 50)} for i in range(20_000)]
    sizes = [est.size_of(r) for r in records]
    assert sizes[0] == deep_size(records[0])  # the first item is always measured
    assert 120 <= est.measurements <= 300  # ~1 in 100 of 20k
    assert len(set(sizes)) > 1  # estimates follow the samples


def test_deep_size_counts_nested_values() -> None:
    payload = b"x" * 10_000
    assert deep_size({"k": payload}) > 10_000
    assert deep_size([np.zeros(100)]) >= 800
