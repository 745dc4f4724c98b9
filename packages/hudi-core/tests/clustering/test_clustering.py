"""Clustering, as Apache Hudi 0.15's size-based plan and sort-and-size execution do it (the Apache
Hudi tier, ``tests/interop/test_clustering.py``, has both engines plan alike and run each
other's plans)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.cli.main import main
from hudi_core.clustering import ClusteringError, pending_clusterings, read_plan
from hudi_core.errors import ClusteringUpdateError, ConfigError
from hudi_core.timeline.avro_files import deserialize

NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}  # every insert makes a file group
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path"]


def _rows(ids: list[str], ts: int, v: str, p: str = "p1") -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": [p] * n, "ts": pa.array([ts] * n, pa.int64()), "v": [v] * n})


def _answer(path: str) -> list[tuple[Any, ...]]:
    """Every row with its meta columns but the file name."""
    return sorted(
        tuple(r.values()) for r in HudiTable.open(path).read(columns=[*META, "id", "v"]).to_pylist()
    )


def _table(tmp_path: Path, table_type: str, **more: str) -> str:
    """Five small file groups in p1 (merge-on-read: one with a log), one in p2."""
    path = str(tmp_path / "t")
    t = HudiTable.create(path, name="t", table_type=table_type, record_key_fields="id", partition_fields="p",
                         ordering_field="ts", options=more or None)  # fmt: skip
    for i, ids in enumerate([["c", "a"], ["b", "e"], ["d"], ["h", "g"], ["i"]]):
        t.insert(_rows(ids, i, f"v{i}"), options=NO_SMALL_FILES)
    t.insert(_rows(["x"], 5, "v5", "p2"), options=NO_SMALL_FILES)
    HudiTable.open(path).upsert(_rows(["a"], 6, "v6"), options=NO_SMALL_FILES)
    return path


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_clustering_rewrites_the_small_file_groups_and_keeps_every_row(
    tmp_path: Path, table_type: str
) -> None:
    path = _table(tmp_path, table_type)
    before = _answer(path)
    old = {(s.partition_path, s.file_id) for s in HudiTable.open(path).file_slices()}
    assert len(old) == 6

    t = HudiTable.open(path).schedule_clustering()
    assert t is not None
    requested = deserialize(
        "HoodieRequestedReplaceMetadata",
        (Path(path) / ".hoodie" / f"{t}.replacecommit.requested").read_bytes(),
    )
    assert requested["operationType"] == "CLUSTER"
    plan = requested["clusteringPlan"]
    assert plan["preserveHoodieMetadata"] is True
    assert plan["strategy"]["strategyClassName"].endswith(".SparkSortAndSizeExecutionStrategy")
    groups = {g["slices"][0]["partitionPath"]: g for g in plan["inputGroups"]}
    assert {p: len(g["slices"]) for p, g in groups.items()} == {"p1": 5, "p2": 1}
    for s in groups["p1"]["slices"]:  # full paths, as Hudi's plans name the files
        assert s["dataFilePath"].startswith(f"file:{path}/p1/{s['fileId']}_")
        assert all(d.startswith(f"file:{path}/p1/.{s['fileId']}_") for d in s["deltaFilePaths"])
    assert sum(len(s["deltaFilePaths"]) for s in groups["p1"]["slices"]) == (table_type == "MERGE_ON_READ")
    assert groups["p1"]["numOutputFileGroups"] == 1
    assert groups["p1"]["metrics"]["TOTAL_LOG_FILES"] == (table_type == "MERGE_ON_READ")

    result = HudiTable.open(path).run_clustering(t)
    assert result.records_written == 9
    done = json.loads((Path(path) / ".hoodie" / f"{t}.replacecommit").read_text())
    assert done["operationType"] == "CLUSTER"
    assert {p: sorted(ids) for p, ids in done["partitionToReplaceFileIds"].items()} == {
        p: sorted(f for q, f in old if q == p) for p in ("p1", "p2")
    }
    assert (Path(path) / ".hoodie" / f"{t}.replacecommit.inflight").read_bytes() == b""
    slices = HudiTable.open(path).file_slices()
    assert len(slices) == 2 and not any(s.log_files for s in slices)
    assert not {(s.partition_path, s.file_id) for s in slices} & old
    assert _answer(path) == before  # commit times and sequence numbers kept
    # hudi-rs reads the clustered file groups only, the same rows
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(tuple(r.values()) for r in rs.select([*META, "id", "v"]).to_pylist()) == before
    assert set(rs.column("_hoodie_file_name").to_pylist()) == {s.base_file.name for s in slices}  # type: ignore[union-attr]
    for s in slices:  # the file name column names the new file
        names = pq.read_table(f"{path}/{s.partition_path}/{s.base_file.name}", columns=["_hoodie_file_name"])  # type: ignore[union-attr]
        assert set(names.column(0).to_pylist()) == {s.base_file.name}  # type: ignore[union-attr]
    assert not (Path(path) / ".hoodie" / ".temp" / t).exists()  # markers gone

    # writes go on: an update lands in the clustering's file group, time travel still sees before
    HudiTable.open(path).upsert(_rows(["a", "z"], 9, "v9"), options=NO_SMALL_FILES)
    after = {r["id"]: r["v"] for r in HudiTable.open(path).read(columns=["id", "v"]).to_pylist()}
    assert (after["a"], after["z"], len(after)) == ("v9", "v9", 10)
    new_p1 = next(s.file_id for s in slices if s.partition_path == "p1")
    located = HudiTable.open(path).read(columns=["id", "_hoodie_file_name"]).to_pylist()
    assert next(r["_hoodie_file_name"] for r in located if r["id"] == "a").startswith(new_p1)


def test_a_plan_groups_slices_by_size_as_hudi_does(tmp_path: Path) -> None:
    path = _table(tmp_path, "COPY_ON_WRITE")
    sizes = {
        s.file_id: s.base_file.size for s in HudiTable.open(path).file_slices() if s.partition_path == "p1"
    }  # type: ignore[union-attr]
    size = max(sizes.values())
    options = {
        # slices of two files a group, each group written as two file groups
        "hoodie.clustering.plan.strategy.max.bytes.per.group": str(2 * size + 1),
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(size + 1),
        # p1's last group holds one slice: not clustered without sort columns
        "hoodie.clustering.plan.strategy.single.group.clustering.enabled": "false",
        "hoodie.clustering.plan.strategy.partition.regex.pattern": "p1",
    }
    t = HudiTable.open(path).schedule_clustering(options)
    assert t is not None
    plan = read_plan(HudiTable.open(path), t)
    assert [len(g.slices) for g in plan.groups] == [2, 2]
    assert [g.num_output_file_groups for g in plan.groups] == [2, 2]
    planned = [s.file_id for g in plan.groups for s in g.slices]
    # largest base files first; the smallest is left
    assert [sizes[f] for f in planned] == sorted((sizes[f] for f in planned), reverse=True)
    (left,) = set(sizes) - set(planned)
    assert sizes[left] == min(sizes.values())

    # a second plan leaves the first's file groups alone
    again = HudiTable.open(path).schedule_clustering(
        {**options, "hoodie.clustering.plan.strategy.single.group.clustering.enabled": "true"}
    )
    assert again is not None
    second = read_plan(HudiTable.open(path), again)
    assert [s.file_id for g in second.groups for s in g.slices] == sorted(set(sizes) - set(planned))

    before = _answer(path)
    HudiTable.open(path).run_clustering(t)
    HudiTable.open(path).run_clustering(again)
    assert _answer(path) == before
    # each group of two became two file groups; the single one, one
    assert len(HudiTable.open(path).file_slices()) == 2 + 2 + 1 + 1

    # nothing small left under a limit below every file: nothing scheduled
    assert (
        HudiTable.open(path).schedule_clustering({"hoodie.clustering.plan.strategy.small.file.limit": "1"})
        is None
    )


def test_sort_columns_order_each_output_file(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    t = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    values = [[9, 3, None], [7, 1], [8, 2, 5], [4, 6, 0]]
    for i, vs in enumerate(values):
        ids = [f"k{i}{j}" for j in range(len(vs))]
        rows = pa.table({"id": ids, "p": ["p1"] * len(vs), "ts": pa.array([i] * len(vs), pa.int64()),
                         "n": pa.array(vs, pa.int64())})  # fmt: skip
        t.insert(rows, options=NO_SMALL_FILES)
    size = max(s.base_file.size for s in HudiTable.open(path).file_slices())  # type: ignore[union-attr]
    before = sorted(HudiTable.open(path).read(columns=["id", "n"]).to_pylist(), key=str)
    out = main(["cluster", path, "--sort-columns", "n", "--json",
                "-o", f"hoodie.clustering.plan.strategy.target.file.max.bytes={2 * size + 1}"])  # fmt: skip
    assert out == 0
    slices = HudiTable.open(path).file_slices()
    assert len(slices) == 2  # four files' bytes, two a file
    runs = [
        pq.read_table(f"{path}/p1/{s.base_file.name}", columns=["n"]).column(0).to_pylist() for s in slices
    ]  # type: ignore[union-attr]
    runs.sort(key=lambda r: (r[0] is not None, r[0]))
    assert [len(r) for r in runs] == [6, 5]
    assert runs[0] + runs[1] == [None, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]  # nulls first, as Spark's sort
    assert sorted(HudiTable.open(path).read(columns=["id", "n"]).to_pylist(), key=str) == before


def test_writes_beside_a_pending_plan_and_inline_clustering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _table(tmp_path, "MERGE_ON_READ")
    assert (
        main(["cluster", path, "--schedule", "-o", "hoodie.clustering.plan.strategy.partition.selected=p1"])
        == 0
    )
    (t,) = [i.timestamp for i in pending_clusterings(HudiTable.open(path))]
    capsys.readouterr()
    assert main(["cluster", path, "--list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "pending": [{"instant": t, "state": "REQUESTED", "groups": 1, "file_groups": 5, "sort_columns": []}]
    }
    with pytest.raises(ClusteringUpdateError):
        HudiTable.open(path).upsert(_rows(["a"], 7, "v7"), options=NO_SMALL_FILES)
    HudiTable.open(path).upsert(_rows(["x", "y"], 7, "v7", "p2"), options=NO_SMALL_FILES)
    assert [i.timestamp for i in pending_clusterings(HudiTable.open(path))] == [t]

    # inline (Hudi's counting, checked with the oracle): after the next commit the pending plan
    # runs, then one is scheduled and run once max.commits commits completed after the last
    # clustering (here the two since t: p2's small files)
    inline = {
        **NO_SMALL_FILES,
        "hoodie.clustering.inline": "true",
        "hoodie.clustering.inline.max.commits": "2",
    }
    HudiTable.open(path).upsert(_rows(["q"], 8, "v8", "p2"), options=inline)
    assert not pending_clusterings(HudiTable.open(path))
    done = [i.timestamp for i in HudiTable.open(path).timeline.completed().filter(actions=["replacecommit"])]
    assert len(done) == 2 and done[0] == t
    assert len([s for s in HudiTable.open(path).file_slices() if s.partition_path == "p2"]) == 1
    HudiTable.open(path).upsert(_rows(["r"], 9, "v9", "p2"), options=inline)  # one commit since: none
    assert len(HudiTable.open(path).timeline.completed().filter(actions=["replacecommit"])) == 2
    answer = {r["id"]: r["v"] for r in HudiTable.open(path).read(columns=["id", "v"]).to_pylist()}
    assert {k: answer[k] for k in "axyqr"} == {"a": "v6", "x": "v7", "y": "v7", "q": "v8", "r": "v9"}


def test_a_failed_run_is_rolled_back_and_a_crashed_one_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hudi_core.clustering import runner
    from hudi_core.read import merge

    path = _table(tmp_path, "MERGE_ON_READ")
    before = _answer(path)
    files = {f for f in Path(path).rglob("*") if ".hoodie" not in f.parts}
    t = HudiTable.open(path).schedule_clustering()
    assert t is not None

    # a group fails: the other's files are deleted, the plan is requested again
    real = merge.compact_file_slice

    def failing(table: Any, file_slice: Any, **kw: Any) -> Any:
        if file_slice.partition_path == "p2":
            raise OSError("disk gone")
        return real(table, file_slice, **kw)

    monkeypatch.setattr(merge, "compact_file_slice", failing)
    with pytest.raises(ClusteringError, match="disk gone"):
        HudiTable.open(path).run_clustering(t)
    assert {f for f in Path(path).rglob("*") if ".hoodie" not in f.parts} == files
    assert [(i.timestamp, i.state.name) for i in pending_clusterings(HudiTable.open(path))] == [
        (t, "REQUESTED")
    ]
    assert _answer(path) == before

    # a run that dies after writing (its rollback never happens): the table reads as before, a
    # write goes on beside it, and the next run deletes the files it left and completes
    monkeypatch.setattr(runner, "rollback_inflight_clustering", lambda *_a: [])
    with pytest.raises(ClusteringError):
        HudiTable.open(path).run_clustering(t)
    monkeypatch.undo()
    left = {f for f in Path(path).rglob("*.parquet") if ".hoodie" not in f.parts} - files
    assert left and all(t in f.name for f in left)
    assert _answer(path) == before
    HudiTable.open(path).upsert(_rows(["w"], 7, "v7", "p2"), options=NO_SMALL_FILES)  # a new key
    result = HudiTable.open(path).run_clustering()
    assert result.instant_time == t
    assert not left & {f for f in Path(path).rglob("*.parquet")}
    answer = {r["id"]: r["v"] for r in HudiTable.open(path).read(columns=["id", "v"]).to_pylist()}
    assert answer["w"] == "v7" and len(answer) == 10


def test_refusals(tmp_path: Path) -> None:
    path = _table(tmp_path, "COPY_ON_WRITE")
    with pytest.raises(ClusteringError, match="no pending clustering"):
        HudiTable.open(path).run_clustering()
    with pytest.raises(ConfigError, match="is not supported"):
        HudiTable.open(path).schedule_clustering({"hoodie.layout.optimize.strategy": "z-order"})
    with pytest.raises(ConfigError, match="BUCKET index"):
        HudiTable.open(path).schedule_clustering({"hoodie.index.type": "BUCKET"})
    t = HudiTable.open(path).schedule_clustering({"hoodie.clustering.plan.strategy.sort.columns": "nope"})
    before = _answer(path)
    with pytest.raises(ClusteringError, match="nope"):
        HudiTable.open(path).run_clustering(t)
    assert _answer(path) == before
    with pytest.raises(ClusteringError, match="there is no such clustering"):
        HudiTable.open(path).run_clustering("20200101000000000")
