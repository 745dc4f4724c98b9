"""Record keys and partition paths made of float fields. Apache Hudi takes them from the Avro
value's ``toString()``: Java 17's ``Double.toString`` and ``Float.toString`` (``1.0E7``,
``1.5E-4``, and an integral value from 2^54 as its exact integer rounded below 53 bits:
``2^60`` is ``1.15292150460684698E18``, where the shortest digits would be ``1.152921504606847E18``).
Ours print the same (``hudi_core.java_text``), so our upsert of the keys Hudi wrote updates
them instead of adding a second record of each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from workloads import table_options

pytestmark = pytest.mark.interop

KEYS = [2.0**60, 123456789012345678.0, -(2.0**62), 1e7, 1.5e-4, 0.1, -0.0, 1e21, 9007199254740993.0]
PARTS = [2.0**30, 12345679.0, 0.5]


def _rows(ts: int) -> pa.Table:
    n = len(KEYS)
    return pa.table({
        "d": pa.array(KEYS, pa.float64()), "f": pa.array([PARTS[i % 3] for i in range(n)], pa.float32()),
        "ts": pa.array([ts] * n, pa.int64()), "v": [f"v{ts}-{i}" for i in range(n)],
    })  # fmt: skip


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_our_upsert_finds_the_float_keys_hudi_wrote(hudi: Any, tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    options = table_options("floats", table_type, None, {
        "hoodie.datasource.write.recordkey.field": "d", "hoodie.datasource.write.partitionpath.field": "f",
    })  # fmt: skip
    hudi.oracle.write(path, _rows(1), {**options, "hoodie.datasource.write.operation": "insert"})
    theirs = hudi.oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})
    keys = _keys(theirs)
    assert ("1.15292150460684698E18", "1.07374182E9") in keys and ("1.5E-4", "1.2345679E7") in keys
    HudiTable.open(path).upsert(_rows(2), options={**options, "hoodie.datasource.write.operation": "upsert"})
    after = hudi.oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})
    assert after.num_rows == len(KEYS)  # every key updated, none written twice
    assert set(after.column("v").to_pylist()) == {f"v2-{i}" for i in range(len(KEYS))}
    assert _keys(after) == keys
    assert sorted(HudiTable.open(path).read().column("v").to_pylist()) == sorted(
        after.column("v").to_pylist()
    )


def _keys(t: pa.Table) -> list[tuple[str, str]]:
    return sorted(zip(t.column("_hoodie_record_key").to_pylist(), t.column("_hoodie_partition_path").to_pylist(),
                      strict=True))  # fmt: skip
