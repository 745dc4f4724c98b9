"""Our writers beside a clustering Apache Hudi scheduled (``run_clustering(op => 'schedule')``)
and runs later (``op => 'execute'``).

Before, our writers updated the file groups of the pending plan: Apache Hudi's clustering then
replaced them with what it had read at planning time, and the acknowledged updates were gone
(COW and MOR, found by hand with the oracle). Apache Hudi's own writer refuses such an update
(``HoodieClusteringUpdateException``, its default ``SparkRejectUpdateStrategy``); so do ours now,
through the local engine and ``hudi_spark.write``, and they write everything else: updates in
other file groups, new keys in new file groups (not in the plan's small files). After Hudi's
clustering runs, its snapshot and ours hold every write we acknowledged, and our next update of
a clustered key lands in the clustering's new file group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ClusteringUpdateError
from workloads import table_options

pytestmark = pytest.mark.interop


def _options(table_type: str) -> dict[str, str]:
    parallelism = {"hoodie.upsert.shuffle.parallelism": "2", "hoodie.insert.shuffle.parallelism": "2"}
    return table_options("clustered", table_type, more=parallelism)


def _rows(ids: list[str], part: str, ts: int, v: str) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": [part] * n, "ts": pa.array([ts] * n, pa.int64()), "v": [v] * n})


def _answer(table: pa.Table) -> list[tuple[str, str, str]]:
    return sorted((r["id"], r["p"], r["v"]) for r in table.select(["id", "p", "v"]).to_pylist())


@pytest.mark.parametrize("engine", ["local", "spark"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_our_writes_beside_a_pending_hudi_clustering(
    hudi: Any, tmp_path: Path, table_type: str, engine: str, request: pytest.FixtureRequest
) -> None:
    oracle, path, opts = hudi.oracle, str(tmp_path / "t"), _options(table_type)
    oracle.write(
        path, _rows(["a", "b", "c"], "p1", 1, "one"), {**opts, "hoodie.datasource.write.operation": "insert"}
    )
    oracle.write(path, _rows(["d"], "p2", 1, "one"), {**opts, "hoodie.datasource.write.operation": "insert"})
    selected = "hoodie.clustering.plan.strategy.partition.selected=p1"
    oracle.sql(f"CALL run_clustering(path => '{path}', op => 'schedule', options => '{selected}')")
    clustered = {s.file_id for s in HudiTable.open(path).file_slices() if s.partition_path == "p1"}
    assert clustered and HudiTable.open(path).timeline.pending().filter(actions=["replacecommit"])

    def write(data: pa.Table) -> None:
        if engine == "spark":
            import hudi_spark

            session = request.getfixturevalue("spark")
            hudi_spark.write(session.createDataFrame(data), path, operation="upsert", options=opts)
        else:
            HudiTable.open(path).upsert(data, options=opts)

    with pytest.raises(ClusteringUpdateError, match="clustering file group"):
        write(_rows(["a"], "p1", 5, "refused"))
    write(pa.concat_tables([_rows(["d"], "p2", 5, "ours"), _rows(["n"], "p1", 5, "ours")]))
    n_file = HudiTable.open(path).read(columns=["id", "_hoodie_file_name"], filters=[("id", "=", "n")])
    assert not n_file.column("_hoodie_file_name")[0].as_py().startswith(tuple(clustered))

    oracle.sql(f"CALL run_clustering(path => '{path}', op => 'execute')")
    expected = [
        ("a", "p1", "one"),
        ("b", "p1", "one"),
        ("c", "p1", "one"),
        ("d", "p2", "ours"),
        ("n", "p1", "ours"),
    ]
    assert _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})) == expected
    after = HudiTable.open(path)
    assert _answer(after.read()) == expected
    assert not {s.file_id for s in after.file_slices() if s.partition_path == "p1"} & clustered  # replaced
    write(_rows(["a"], "p1", 6, "after"))  # the clustered file groups take updates again
    expected[0] = ("a", "p1", "after")
    assert _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})) == expected
    assert _answer(HudiTable.open(path).read()) == expected
