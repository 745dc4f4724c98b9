"""A table Apache Hudi 0.15.0 keys with the complex key generator over one record key field: it
stores the bare value as the key (HUDI-7001), where our writers' default, as Hudi's releases
before 0.14.1 and after the fix, is ``<field>:<value>``. Our writes take the table's encoding
(``hoodie.write.complex.keygen.auto.deduce.encoding``, as Hudi's fixed releases do), so our
upserts update Hudi's records instead of adding a second record of each key (found with the
oracle, 2026-12-07: every update came back twice in Hudi's snapshot and ours)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from workloads import table_options

pytestmark = pytest.mark.interop


def _options(table_type: str, operation: str) -> dict[str, str]:
    return table_options("complex", table_type, operation, {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
    })  # fmt: skip


def _rows(ids: list[str], ts: int) -> pa.Table:
    return pa.table({"id": ids, "p": ["x"] * len(ids), "ts": pa.array([ts] * len(ids), pa.int64()),
                     "v": [f"v{ts}"] * len(ids)})  # fmt: skip


def _answer(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in t.select(["_hoodie_record_key", "id", "ts"]).to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_our_upserts_update_the_bare_keys_hudi_015_stored(
    hudi: Any, spark: Any, collected: Any, tmp_path: Path, table_type: str
) -> None:
    import hudi_spark

    oracle, path = hudi.oracle, str(tmp_path / "t")
    oracle.write(path, _rows(["a", "b", "c"], 1), _options(table_type, "insert"))
    assert _answer(HudiTable.open(path).read())[0] == ("a", "a", 1)  # Hudi 0.15.0: the bare value
    HudiTable.open(path).upsert(_rows(["a", "d"], 2), options=_options(table_type, "upsert"))
    hudi_spark.write(spark.createDataFrame(_rows(["b", "e"], 3)), path, operation="upsert",
                     options=_options(table_type, "upsert"))  # fmt: skip
    oracle.write(path, _rows(["c", "f"], 4), _options(table_type, "upsert"))
    expected = [("a", "a", 2), ("b", "b", 3), ("c", "c", 4), ("d", "d", 2), ("e", "e", 3), ("f", "f", 4)]
    assert _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})) == expected
    assert _answer(HudiTable.open(path).read()) == expected
    assert _answer(collected(hudi_spark.read(spark, path))) == expected
