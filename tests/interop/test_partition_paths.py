"""Partition values that need care in a path: a space, a slash, ``=``, ``%``, non-ASCII text, an
empty string and null. With hive-style paths on or off and URL encoding on or off, our writer lays
out the directories Apache Hudi's writer lays out for the same rows, nothing beside the base path, and
both readers' snapshots of both tables hold the values written.

(Hudi's file-index reads, read_optimized and COW snapshot, take partition values from the path
instead; docs/interop.md lists what that changes. The merge-on-read snapshot compared here
returns the stored values, as we do.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_spark.table_ops import open_or_create
from workloads import differences, table_options

pytestmark = pytest.mark.interop

VALUES = ["new york", "a/b", "x=y", "ünï", None, "", "%20", "a b/c=d"]


def _rows(ts: int, ids: list[int]) -> pa.Table:
    return pa.table({
        "id": [f"k{i}" for i in ids], "ts": pa.array([ts] * len(ids), pa.int64()),
        "v": [f"v{ts}-{i}" for i in ids], "p": [VALUES[i % len(VALUES)] for i in ids],
    })  # fmt: skip


STEPS = [("insert", _rows(1, list(range(8)))), ("upsert", _rows(2, [0, 1, 4, 5, 9]))]


def _directories(base: Path) -> list[str]:
    return sorted(
        str(d.relative_to(base)) for d in base.rglob("*") if d.is_dir() and ".hoodie" not in d.parts
    )


@pytest.mark.parametrize("hive", ["false", "true"])
@pytest.mark.parametrize("encode", ["false", "true"])
def test_awkward_partition_values_lay_out_as_hudis(hudi: Any, tmp_path: Path, hive: str, encode: str) -> None:
    options = table_options("paths", "MERGE_ON_READ", None, {
        "hoodie.datasource.write.hive_style_partitioning": hive,
        "hoodie.datasource.write.partitionpath.urlencode": encode,
    })  # fmt: skip
    theirs, ours = tmp_path / "hudi", tmp_path / "ours"
    for operation, data in STEPS:
        hudi.oracle.write(str(theirs), data, {**options, "hoodie.datasource.write.operation": operation})
        table, _ = open_or_create(str(ours), options, data.schema)
        getattr(table, operation)(data, options=options)
    assert _directories(ours) == _directories(theirs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hudi", "ours"]  # nothing beside a base path
    expected = {r["id"]: r["p"] for _, data in STEPS for r in data.to_pylist()}
    snapshot = {"hoodie.datasource.query.type": "snapshot"}
    for path in (ours, theirs):
        answer = HudiTable.open(str(path)).read()
        assert {r["id"]: r["p"] for r in answer.select(["id", "p"]).to_pylist()} == expected
        found = differences(answer, hudi.oracle.read(str(path), snapshot))
        assert not found, f"{path.name}: {found}"
