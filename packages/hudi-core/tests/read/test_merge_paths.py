"""The single-pass log merge (no delete blocks) gives the same rows as the block-by-block fold."""

from __future__ import annotations

import pytest
from hudi_core.read import merge

from .conftest import RIDER_A, RIDER_D, RIDER_E, Trips

T1, T2, T3 = "20250401000000001", "20250401000000002", "20250401000000003"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


@pytest.mark.parametrize("payload", [None, DEFAULT_PAYLOAD])
def test_single_pass_equals_fold(trips: Trips, payload: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if payload:
        trips.set_payload(payload)
    for t in (T1, T2, T3):
        trips.instant(t)
    trips.append(trips.data_block(T1, trips.rows([RIDER_A, RIDER_D], T1, fare=1.0, ts=1695300000000)))
    trips.append(trips.data_block(T2, trips.rows([RIDER_A, RIDER_E], T2, fare=2.0, ts=1695100000000)))
    trips.append(
        trips.data_block(T3, trips.rows([RIDER_D], T3, fare=3.0, ts=1695300000000)),  # tie: later wins
        trips.data_block(T3, trips.rows([RIDER_E], T3, fare=4.0, ts=1695400000000)),
    )
    single = trips.table().read().sort_by("_hoodie_record_key")
    monkeypatch.setattr(merge, "_single_pass", lambda events: False)
    folded = trips.table().read().sort_by("_hoodie_record_key")
    assert single.equals(folded)
    fares = dict(
        zip(single.column("_hoodie_record_key").to_pylist(), single.column("fare").to_pylist(), strict=True)
    )
    assert fares[RIDER_A] == 1.0 and fares[RIDER_D] == 3.0 and fares[RIDER_E] == 4.0


def test_one_row_per_key_is_the_greatest_ordering_then_the_latest() -> None:
    """preCombine within the log: per key the row of the greatest ordering value (a null one
    never wins over a set one), on a tie the latest; keys met once keep their row."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    n = 5000
    keys = rng.integers(0, 3000, n)  # most keys once, some twice or more
    ords = rng.integers(0, 4, n).astype(float)
    ords[rng.random(n) < 0.2] = np.nan
    batch = pa.table({
        "key": pa.array([f"k{k}" for k in keys]),
        "w_ord": pa.array(ords, pa.float64(), from_pandas=True),
        "w_row": pa.array(np.arange(n, dtype=np.int64)),
    })  # fmt: skip
    expected: dict[str, tuple[float, int]] = {}
    for k, o, r in zip(
        batch.column("key").to_pylist(), batch.column("w_ord").to_pylist(), range(n), strict=True
    ):
        rank = (-1.0 if o is None else o, r)
        if k not in expected or rank > expected[k]:
            expected[k] = rank
    got = merge._last_per_key(batch)
    rows = got.column("w_row").to_pylist()
    assert len(rows) == len(set(rows)) == len(expected)
    assert dict(zip(got.column("key").to_pylist(), rows, strict=True)) == {
        k: r for k, (_, r) in expected.items()
    }
    unique = batch.slice(0, 3).set_column(0, "key", pa.array(["a", "b", "c"]))
    assert merge._last_per_key(unique).equals(unique)
