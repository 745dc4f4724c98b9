"""``hoodie.datasource.merge.type=skip_merge`` (Hudi's REALTIME_SKIP_MERGE): a merge-on-read
snapshot gives each base file's rows as stored and its log files' records beside them, merged
with each other only (a key deleted in the logs keeps its base row). Our reader merged them
anyway (the option was ignored); now the local reader (``merge_type=``) and ``hudi_spark.read``
give Hudi's answer, on Hudi's table and on ours."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_spark.table_ops import open_or_create
from workloads import table_options

pytestmark = pytest.mark.interop

SKIP = {"hoodie.datasource.merge.type": "skip_merge"}


def _batch(ids: str, ts: int, v: str) -> pa.Table:
    return pa.table({"id": list(ids), "p": ["p1"] * len(ids), "ts": pa.array([ts] * len(ids), pa.int64()),
                     "v": [v] * len(ids)})  # fmt: skip


def _rows(table: pa.Table) -> list[tuple[str, int, str, str]]:
    return sorted(
        tuple(r.values()) for r in table.select(["id", "ts", "v", "_hoodie_commit_time"]).to_pylist()
    )


def test_skip_merge_gives_base_rows_and_log_records_unmerged(hudi, tmp_path: Path) -> None:
    """(A slice of log files alone, BUCKET's inserts, reads as it is: packages/hudi-spark's
    test_read_paths checks both readers of ours on such a table.)"""
    options = table_options("t", "MERGE_ON_READ", "upsert", {"hoodie.parquet.small.file.limit": "0"})
    steps = [
        ("upsert", _batch("abc", 1, "v1")),
        ("upsert", _batch("ab", 2, "v2")),  # logs
        ("upsert", _batch("ad", 3, "v3")),  # d: a new base file
        ("delete", _batch("b", 0, "x")),
    ]
    for writer in ("hudi", "ours"):
        path = tmp_path / writer
        for op, rows in steps:
            opts = {**options, "hoodie.datasource.write.operation": op}
            if writer == "hudi":
                hudi.oracle.write(path, rows, opts)
            else:
                getattr(open_or_create(str(path), opts, rows.schema)[0], op)(rows, options=opts)
        theirs = _rows(hudi.oracle.read(path, SKIP))
        assert _rows(HudiTable.open(str(path)).read(merge_type="skip_merge")) == theirs
        merged = _rows(HudiTable.open(str(path)).read())
        assert _rows(hudi.oracle.read(path)) == merged
        # base rows a, b, c (and d) as stored; the logs' a (merged: v3), b deleted there
        values = sorted((i, ts, v) for i, ts, v, _ in theirs)
        assert values == [("a", 1, "v1"), ("a", 3, "v3"), ("b", 1, "v1"), ("c", 1, "v1"), ("d", 3, "v3")]
