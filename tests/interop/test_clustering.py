"""Our clustering (``HudiTable.cluster``, ``hudi-py cluster``) against Apache Hudi 0.15's
(``run_clustering``): the same plan over the same table, each engine running the other's plan,
and Hudi reading, writing over and cleaning a table we clustered.

Before, clustering was Hudi's alone: a Python user could only leave a plan Hudi scheduled alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.clustering import read_plan
from runner import write_rows
from workloads import table_options

pytestmark = pytest.mark.interop

#: no small files: every insert makes new file groups, merge-on-read updates go to logs
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0", "hoodie.clean.automatic": "false"}


def _options(table_type: str, operation: str) -> dict[str, str]:
    return table_options("clustered", table_type, operation, NO_SMALL_FILES)


def _rows(ids: list[str], part: str, ts: int, v: str) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": [part] * n, "ts": pa.array([ts] * n, pa.int64()), "v": [v] * n})


def _answer(table: pa.Table) -> list[tuple[str, ...]]:
    cols = ["_hoodie_commit_time", "_hoodie_record_key", "id", "p", "v"]
    return sorted(tuple(r.values()) for r in table.select(cols).to_pylist())


def _id_v(table: pa.Table) -> list[tuple[str, str]]:
    return sorted((r["id"], r["v"]) for r in table.select(["id", "v"]).to_pylist())


def _small_files(oracle: Any, path: str, table_type: str) -> None:
    """Six file groups over two partitions, written by both engines; on MOR one with a log."""
    for writer, ids, part, ts in [("hudi", ["c", "a"], "p1", 1), ("ours", ["b", "e"], "p1", 2),
                                  ("ours", ["x"], "p2", 3), ("hudi", ["d", "g"], "p1", 4),
                                  ("ours", ["y", "z"], "p2", 5)]:  # fmt: skip
        write_rows(writer, oracle, None, path, _rows(ids, part, ts, f"v{ts}"), _options(table_type, "insert"))
    write_rows("ours", oracle, None, path, _rows(["a", "f"], "p1", 6, "v6"), _options(table_type, "upsert"))


def _groups(path: str, instant: str) -> list[tuple[Any, ...]]:
    plan = read_plan(HudiTable.open(path), instant)
    return sorted(
        (g.partition_path, tuple(sorted(s.file_id for s in g.slices)), g.num_output_file_groups,
         tuple(sorted((k, v) for k, v in g.metrics.items() if k != "TOTAL_LOG_FILES_SIZE")))
        for g in plan.groups
    )  # fmt: skip


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_each_engine_runs_the_others_plan_and_both_plan_alike(
    hudi: Any, tmp_path: Path, table_type: str
) -> None:
    oracle, path = hudi.oracle, str(tmp_path / "t")
    _small_files(oracle, path, table_type)
    expected = _answer(HudiTable.open(path).read())
    twin = str(tmp_path / "twin")
    shutil.copytree(path, twin)

    # the same plan: Hudi's schedule on the table, ours on its copy (the same files)
    sort = "hoodie.clustering.plan.strategy.sort.columns=v"
    oracle.sql("SET hoodie.metadata.enable=false")  # the procedure's client would bootstrap one
    oracle.sql(f"CALL run_clustering(path => '{path}', op => 'schedule', options => '{sort}')")
    theirs = HudiTable.open(path).timeline.pending().last().timestamp  # type: ignore[union-attr]
    ours = HudiTable.open(twin).schedule_clustering({"hoodie.clustering.plan.strategy.sort.columns": "v"})
    assert ours is not None
    assert _groups(twin, ours) == _groups(path, theirs)
    assert (
        read_plan(HudiTable.open(twin), ours).strategy_params
        == read_plan(HudiTable.open(path), theirs).strategy_params
    )

    # we run Hudi's plan; Hudi runs ours
    HudiTable.open(path).run_clustering(theirs)
    oracle.sql(f"CALL run_clustering(path => '{twin}', op => 'execute')")
    for p in (path, twin):
        t = HudiTable.open(p)
        assert not t.timeline.pending()
        # two file groups are left (one per partition), each a single base file
        assert sorted((s.partition_path, len(s.log_files)) for s in t.file_slices()) == [("p1", 0), ("p2", 0)]
        # every row kept its commit time; both engines read the clustered files only
        assert _answer(t.read()) == expected
        hudi_answer = oracle.read(p, {"hoodie.datasource.query.type": "snapshot"})
        assert _answer(hudi_answer) == expected
        names = {s.base_file.name for s in t.file_slices()}  # type: ignore[union-attr]
        assert set(hudi_answer.column("_hoodie_file_name").to_pylist()) == names
        # sorted by v within each file
        for s in t.file_slices():
            v = pq.read_table(f"{p}/{s.partition_path}/{s.base_file.name}", columns=["v"])  # type: ignore[union-attr]
            assert v.column("v").to_pylist() == sorted(v.column("v").to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_writes_reads_and_cleans_after_our_clustering(
    hudi: Any, tmp_path: Path, table_type: str
) -> None:
    oracle, path = hudi.oracle, str(tmp_path / "t")
    _small_files(oracle, path, table_type)
    before = HudiTable.open(path).timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    results = HudiTable.open(path).cluster()
    assert len(results) == 1 and sum(map(len, results[0].replaced_file_ids.values())) == 6

    # Hudi's incremental query after the last write sees nothing new: the rows kept their commit times
    incremental = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": before,
    }
    assert oracle.read(path, incremental).num_rows == 0

    # Hudi updates a clustered key and adds one; its update lands in the clustering's file group
    write_rows("hudi", oracle, None, path, _rows(["a", "n"], "p1", 7, "v7"), _options(table_type, "upsert"))
    clustered = {s.file_id for s in HudiTable.open(path).file_slices() if s.partition_path == "p1"}
    expected = _id_v(HudiTable.open(path).read())
    assert ("a", "v7") in expected and ("n", "v7") in expected and len(expected) == 11
    hudi_rows = oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})
    assert _id_v(hudi_rows) == expected
    a_file = next(r["_hoodie_file_name"] for r in hudi_rows.to_pylist() if r["id"] == "a")
    assert a_file.split("_")[0] in clustered

    # Hudi's cleaner deletes the replaced file groups; both read the same rows after
    oracle.write(path, _rows(["e"], "p1", 8, "v8"), {**_options(table_type, "upsert"),
                                                     "hoodie.clean.automatic": "true",
                                                     "hoodie.cleaner.commits.retained": "1"})  # fmt: skip
    replaced = set(results[0].replaced_file_ids["p1"])
    left = {
        f.name.split("_")[0].lstrip(".")
        for f in (Path(path) / "p1").iterdir()
        if not f.name.startswith(".hoodie")
    }
    assert not replaced & left
    expected = sorted({**dict(expected), "e": "v8"}.items())
    assert _id_v(HudiTable.open(path).read()) == expected
    hudi_rows = oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})
    assert _id_v(hudi_rows) == expected
