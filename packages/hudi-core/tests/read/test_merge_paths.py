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
