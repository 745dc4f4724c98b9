"""Writes beside a clustering that is scheduled and has not run yet.

The plan here is the file our scheduler and Hudi's ``run_clustering(op => 'schedule')`` write: a
``<instant>.replacecommit.requested`` holding ``HoodieRequestedReplaceMetadata`` with a
``clusteringPlan`` over the file groups' latest slices. When that clustering completes it
replaces those file groups with what it read, so a write may not update them (Hudi's default
``SparkRejectUpdateStrategy``) and new records go elsewhere (the interop tier runs the same
against Apache Hudi's own clustering)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.compaction.errors import CompactionValidationError
from hudi_core.errors import ClusteringUpdateError, ConfigError
from hudi_core.fs_view import FileSystemView

ALLOW = "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"


def _schedule(t: HudiTable, partition: str) -> None:
    """A clustering plan over every file group of ``partition`` (our scheduler writes it as
    Apache Hudi's ``run_clustering(op => 'schedule')`` does)."""
    assert t.schedule_clustering({"hoodie.clustering.plan.strategy.partition.selected": partition})


def rows(ids: list[str], part: str, ts: int, v: str) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": [part] * n, "ts": pa.array([ts] * n, pa.int64()), "v": [v] * n})


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> HudiTable:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=request.param, record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    t.insert(pa.concat_tables([rows(["a", "b", "c"], "p1", 1, "one"), rows(["x"], "p2", 1, "one")]))
    _schedule(HudiTable.open(t.base_uri), "p1")
    return HudiTable.open(t.base_uri)


def snapshot(t: HudiTable) -> list[tuple[str, str]]:
    return sorted((r["id"], r["v"]) for r in HudiTable.open(t.base_uri).read(columns=["id", "v"]).to_pylist())


@pytest.mark.parametrize("stream", [False, True])
def test_an_update_of_a_clustered_file_group_is_refused_and_nothing_is_kept(
    table: HudiTable, stream: bool
) -> None:
    before = snapshot(table)
    commits = len(table.timeline.completed_commits())
    batch = rows(["a", "n1"], "p1", 5, "new")
    with pytest.raises(ClusteringUpdateError, match=r"clustering file group .* in partition 'p1'"):
        table.upsert(iter(batch.to_batches(max_chunksize=1)) if stream else batch)
    after = HudiTable.open(table.base_uri)
    assert snapshot(after) == before
    assert len(after.timeline.completed_commits()) == commits
    after.upsert(rows(["x"], "p2", 5, "two"))  # the next writer rolls the refused instant back
    after = HudiTable.open(table.base_uri)
    assert [i.action for i in after.timeline.pending()] == ["replacecommit"]  # only the plan
    assert snapshot(after) == [*before[:-1], ("x", "two")]


def test_a_delete_in_a_clustered_file_group_is_refused(table: HudiTable) -> None:
    with pytest.raises(ClusteringUpdateError):
        table.delete(pa.table({"id": ["b"], "p": ["p1"]}))
    assert ("b", "one") in snapshot(table)


def test_other_partitions_and_new_keys_are_written_beside_the_plan(table: HudiTable) -> None:
    """Updates elsewhere go through; a new key of the clustered partition gets a new file group,
    not one of the plan's small files."""
    clustered = {s.file_id for s in table.file_slices() if s.partition_path == "p1"}
    table.upsert(pa.concat_tables([rows(["x"], "p2", 5, "two"), rows(["n1"], "p1", 5, "two")]))
    after = HudiTable.open(table.base_uri)
    assert snapshot(after) == [("a", "one"), ("b", "one"), ("c", "one"), ("n1", "two"), ("x", "two")]
    n1 = after.read(columns=["id", "_hoodie_file_name"], filters=[("id", "=", "n1")])
    assert not any(name.startswith(tuple(clustered)) for name in n1.column("_hoodie_file_name").to_pylist())
    assert {s.file_id for s in after.file_slices() if s.partition_path == "p1"} > clustered


def test_the_allow_strategy_writes_the_update(table: HudiTable) -> None:
    table.upsert(rows(["a"], "p1", 5, "new"), options={"hoodie.clustering.updates.strategy": ALLOW})
    assert ("a", "new") in snapshot(table)


def test_an_unknown_strategy_is_a_config_error(table: HudiTable) -> None:
    with pytest.raises(ConfigError, match=r"hoodie\.clustering\.updates\.strategy"):
        table.upsert(
            rows(["x"], "p2", 5, "new"), options={"hoodie.clustering.updates.strategy": "com.acme.Mine"}
        )


def test_compaction_leaves_the_clustered_file_groups_alone(tmp_path: Path) -> None:
    """Under optimistic concurrency control (a single writer refuses to schedule a compaction
    after a pending write, a clustering included, as Hudi does) the plan leaves the clustered
    file groups out, as Hudi's plan generator does."""
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    t.insert(pa.concat_tables([rows(["a"], "p1", 1, "one"), rows(["x"], "p2", 1, "one")]))
    HudiTable.open(t.base_uri).upsert(
        pa.concat_tables([rows(["a"], "p1", 2, "two"), rows(["x"], "p2", 2, "two")])
    )
    t = HudiTable.open(t.base_uri)
    assert all(s.log_files for s in t.file_slices())
    _schedule(t, "p1")
    occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
           "hoodie.cleaner.policy.failed.writes": "LAZY"}  # fmt: skip
    with pytest.raises(CompactionValidationError, match="still pending"):
        HudiTable.open(t.base_uri).schedule_compaction(force=True)
    assert HudiTable.open(t.base_uri).schedule_compaction(occ, force=True) is not None
    ops = FileSystemView(HudiTable.open(t.base_uri)).pending_compaction_operations()
    assert {op.partition_path for op in ops} == {"p2"}


def test_inline_compaction_waits_for_a_pending_clustering(tmp_path: Path) -> None:
    """A single writer cannot schedule a compaction after a pending clustering; Apache Hudi's
    write then schedules none and succeeds (checked with the oracle). Ours raised
    CompactionValidationError after its commit, so an acknowledged write looked failed."""
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    t.insert(pa.concat_tables([rows(["a"], "p1", 1, "one"), rows(["x"], "p2", 1, "one")]))
    _schedule(HudiTable.open(t.base_uri), "p1")
    inline = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
    HudiTable.open(t.base_uri).upsert(rows(["x"], "p2", 2, "two"), options=inline)
    after = HudiTable.open(t.base_uri)
    assert not after.timeline.pending_compactions() and ("x", "two") in snapshot(after)
    assert [i.action for i in after.timeline.pending()] == ["replacecommit"]
