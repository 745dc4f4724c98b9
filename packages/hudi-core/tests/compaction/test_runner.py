from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.compaction import (
    CompactionError,
    pending_compactions,
    read_plan,
    run_compaction,
    run_compaction_async,
    run_pending_compactions,
    schedule_compaction,
)
from hudi_core.compaction import runner as runner_mod
from hudi_core.testing.corpus import copy_corpus_table, corpus_root
from hudi_core.timeline import State

pytestmark = pytest.mark.skipif(corpus_root() is None, reason="compat corpus not available")

TRIPS = "tables/trips_mor_avro/v6_trips_8i1u"
LOGGED = "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"


@pytest.fixture()
def trips(tmp_path: Path) -> HudiTable:
    return HudiTable.open(str(copy_corpus_table(TRIPS, tmp_path)))


def _rows(table: HudiTable) -> pa.Table:
    t = table.read()
    return t.drop_columns(["_hoodie_file_name"]).sort_by("uuid")


def test_new_base_file_keeps_commit_times_and_names_itself(trips: HudiTable) -> None:
    before = trips.read().sort_by("uuid")
    t = schedule_compaction(trips, force=True)
    assert t is not None
    result = run_compaction(trips, t)
    assert result.instant_time == t
    [op] = result.operations
    assert (
        op.path is not None
        and op.path.endswith(f"_{t}.parquet")
        and op.path.startswith(f"city=san_francisco/{LOGGED}_")
    )
    data = pq.read_table(Path(trips.base_uri) / op.path)
    assert data.num_rows == op.records_written == 4
    assert set(data.column("_hoodie_file_name").to_pylist()) == {op.path.split("/")[-1]}
    # records keep the commit time and sequence number of the write that produced them
    merged = before.filter(pc.equal(before["_hoodie_partition_path"], "city=san_francisco"))
    assert sorted(zip(data["_hoodie_record_key"].to_pylist(), data["_hoodie_commit_time"].to_pylist(),
                      data["_hoodie_commit_seqno"].to_pylist(), strict=True)) == sorted(
        zip(merged["_hoodie_record_key"].to_pylist(), merged["_hoodie_commit_time"].to_pylist(),
            merged["_hoodie_commit_seqno"].to_pylist(), strict=True))  # fmt: skip
    assert "20250331030645735" in data["_hoodie_commit_time"].to_pylist()  # the logged update
    inst = trips.timeline.find(t)
    assert inst is not None and inst.state is State.COMPLETED


def test_failed_operation_rolls_back_and_retry_completes(
    trips: HudiTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _rows(trips)
    t = schedule_compaction(trips, force=True)
    assert t is not None
    real = runner_mod._write_base
    written: list[str] = []

    def crash_after_write(table, path, *rest):  # type: ignore[no-untyped-def]
        real(table, path, *rest)
        written.append(path)
        raise OSError("disk full (injected)")

    monkeypatch.setattr(runner_mod, "_write_base", crash_after_write)
    with pytest.raises(CompactionError, match="disk full"):
        run_compaction(trips, t)
    # nothing half-committed: no new base file, no inflight, plan requested again, same rows
    assert written and not any(Path(p).exists() for p in written)
    meta = Path(trips.meta_path)
    assert not (meta / f"{t}.commit").exists() and not (meta / f"{t}.compaction.inflight").exists()
    assert [(i.timestamp, i.state) for i in pending_compactions(trips)] == [(t, State.REQUESTED)]
    assert _rows(trips).equals(before)
    monkeypatch.setattr(runner_mod, "_write_base", real)
    run_compaction(trips, t)
    assert (meta / f"{t}.commit").exists()
    assert _rows(trips).equals(before)


def test_inflight_left_by_a_crash_is_retried(trips: HudiTable) -> None:
    before = _rows(trips)
    t = schedule_compaction(trips, force=True)
    assert t is not None
    # a crashed attempt: inflight, a marker and a partial base file
    tl = trips.timeline
    tl.transition_to_inflight(tl.find(t))  # type: ignore[arg-type]
    part = Path(trips.base_uri) / "city=san_francisco"
    stray = part / f"{LOGGED}_9-9-9_{t}.parquet"
    stray.write_bytes(b"PAR1 partial")
    marker = Path(trips.meta_path) / ".temp" / t / "city=san_francisco" / f"{stray.name}.marker.MERGE"
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    assert _rows(trips).equals(before)  # readers ignore the pending compaction's file
    run_compaction(trips)
    assert not stray.exists()
    assert _rows(trips).equals(before)


def test_unknown_or_completed_instant_is_refused(trips: HudiTable) -> None:
    with pytest.raises(CompactionError, match="no pending compaction"):
        run_compaction(trips)
    t = schedule_compaction(trips, force=True)
    with pytest.raises(CompactionError, match="no such compaction"):
        run_compaction(trips, "20200101000000000")
    run_compaction(trips, t)
    with pytest.raises(CompactionError, match="already completed"):
        run_compaction(trips, t)


def test_pending_plans_run_oldest_first(trips: HudiTable) -> None:
    # two plans over different file groups: split the scheduled plan by hand
    from hudi_core.compaction.plan import CompactionPlan, write_plan

    t1 = schedule_compaction(trips, force=True)
    assert t1 is not None
    plan = read_plan(trips, t1)
    t2 = trips.timeline.new_instant_time()
    write_plan(trips, t2, CompactionPlan([]))
    results = run_pending_compactions(trips)
    assert [r.instant_time for r in results] == [t1, t2]
    assert len(results[0].operations) == len(plan.operations) == 1
    assert pending_compactions(trips) == []


def test_async_compaction_returns_a_future(trips: HudiTable) -> None:
    before = _rows(trips)
    t = schedule_compaction(trips, force=True)
    fut = run_compaction_async(trips, t)
    result = fut.result(timeout=60)
    assert result.instant_time == t
    assert _rows(trips).equals(before)


def test_merge_marker_precedes_each_new_base_file_and_is_gone_after_commit(
    trips: HudiTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hudi_core.write.markers import MarkerFiles

    t = schedule_compaction(trips, force=True)
    assert t is not None
    real = runner_mod._write_base
    seen: set[tuple[str, str, str]] = set()

    def check_marker(table, path, *rest):  # type: ignore[no-untyped-def]
        # the marker exists before the file, in the write path's marker layout
        markers = MarkerFiles(table.storage, table.meta_path, t).list()
        seen.update((m.partition_path, m.file_name, m.io_type) for m in markers)
        return real(table, path, *rest)

    monkeypatch.setattr(runner_mod, "_write_base", check_marker)
    result = run_compaction(trips, t)
    assert result.operations
    assert seen == {(op.partition_path, Path(op.path).name, "MERGE") for op in result.operations if op.path}
    assert not (Path(trips.meta_path) / ".temp" / t).exists()


def test_rows_from_the_log_are_counted_in_dictionary_and_plain_commit_times() -> None:
    """A compaction counts the rows committed after the base file's instant whether the merge
    hands it the commit times as a dictionary (the base rows) or as strings (the log's rows)."""
    times = pa.chunked_array([
        pa.array(["001", "002", None, "003", "002"]).dictionary_encode(),
        pa.array(["002", "003", None]).dictionary_encode(),
    ])  # fmt: skip
    plain = times.cast(pa.string())
    for column in (times, plain):
        assert runner_mod._count_after(column, "002", inclusive=False) == 2
        assert runner_mod._count_after(column, "002", inclusive=True) == 5
