from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest
from hudi_core import HudiTable
from hudi_core.compaction import (
    CompactionValidationError,
    read_plan,
    schedule_compaction,
    validate_compaction_instant,
)
from hudi_core.compaction.plan import CompactionOperation, CompactionPlan, plan_from_bytes, plan_to_bytes
from hudi_core.fs_view import FileSystemView
from hudi_core.testing.corpus import copy_corpus_table, corpus_root

pytestmark = pytest.mark.skipif(corpus_root() is None, reason="compat corpus not available")

TRIPS = "tables/trips_mor_avro/v6_trips_8i1u"
TRIPS_LOGGED = "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"


@pytest.fixture()
def trips(tmp_path: Path) -> HudiTable:
    return HudiTable.open(str(copy_corpus_table(TRIPS, tmp_path)))


def test_plan_avro_round_trip_and_java_schema() -> None:
    plan = CompactionPlan([CompactionOperation("city=sf", "f-0", "001", "f-0_0-1-1_001.parquet",
                                               (".f-0_001.log.1_0-1-1",), {"TOTAL_LOG_FILES": 1.0})])  # fmt: skip
    data = plan_to_bytes(plan)
    reader = fastavro.reader(__import__("io").BytesIO(data))
    schema = json.loads(reader.metadata["avro.schema"])
    assert schema["name"].endswith("HoodieCompactionPlan")
    rec = next(iter(reader))
    assert rec["version"] == 2 and rec["operations"][0]["dataFilePath"] == "f-0_0-1-1_001.parquet"
    assert plan_from_bytes(data).operations == plan.operations


def test_version_1_absolute_paths_become_names() -> None:
    plan = CompactionPlan([CompactionOperation("p", "f-0", "001", "/tbl/p/f-0_0-1-1_001.parquet",
                                               ("/tbl/p/.f-0_001.log.1_0-1-1",))], version=1)  # fmt: skip
    back = plan_from_bytes(plan_to_bytes(plan))
    assert back.version == 1
    assert back.operations[0].data_file_name == "f-0_0-1-1_001.parquet"
    assert back.operations[0].delta_file_names == (".f-0_001.log.1_0-1-1",)


def test_schedule_writes_plan_to_aux_and_timeline(trips: HudiTable) -> None:
    t = schedule_compaction(trips, force=True)
    assert t is not None
    meta = Path(trips.meta_path)
    main = (meta / f"{t}.compaction.requested").read_bytes()
    aux = (meta / ".aux" / f"{t}.compaction.requested").read_bytes()
    assert plan_from_bytes(main).operations == plan_from_bytes(aux).operations
    ops = read_plan(trips, t).operations
    # only the slice with a log file is planned, with names relative to the partition
    assert [(o.partition_path, o.file_id) for o in ops] == [("city=san_francisco", TRIPS_LOGGED)]
    assert ops[0].data_file_name and "/" not in ops[0].data_file_name
    assert ops[0].delta_file_names == (f".{TRIPS_LOGGED}_20250331030642808.log.1_0-26-85",)
    assert ops[0].metrics["TOTAL_LOG_FILES"] == 1.0 and ops[0].metrics["TOTAL_LOG_FILES_SIZE"] > 0
    # the file-system view sees the pending operation
    assert [o.file_id for o in FileSystemView(trips).pending_compaction_operations()] == [TRIPS_LOGGED]


def test_read_plan_prefers_aux(trips: HudiTable) -> None:
    t = schedule_compaction(trips, force=True)
    assert t is not None
    aux = Path(trips.meta_path) / ".aux" / f"{t}.compaction.requested"
    aux.write_bytes(plan_to_bytes(CompactionPlan([])))
    assert read_plan(trips, t).operations == []
    aux.unlink()
    assert len(read_plan(trips, t).operations) == 1


def test_slice_in_pending_compaction_is_not_planned_again(trips: HudiTable) -> None:
    assert schedule_compaction(trips, force=True) is not None
    assert schedule_compaction(trips, force=True) is None


def test_trigger_decides_without_force(trips: HudiTable) -> None:
    assert schedule_compaction(trips) is None  # 2 delta commits < 5
    t = schedule_compaction(trips, config={"hoodie.compact.inline.max.delta.commits": "2"})
    assert t is not None


def test_cow_tables_cannot_compact(tmp_path: Path) -> None:
    cow = HudiTable.open(str(copy_corpus_table("tables/sample_cow/v6_simplekeygen_nonhivestyle", tmp_path)))
    with pytest.raises(CompactionValidationError, match="COPY_ON_WRITE"):
        schedule_compaction(cow, force=True)


def test_instant_at_or_before_a_completed_write_is_refused(trips: HudiTable) -> None:
    with pytest.raises(CompactionValidationError, match="20250331030645735"):
        schedule_compaction(trips, force=True, instant_time="20250331030645735")
    with pytest.raises(CompactionValidationError):
        validate_compaction_instant(trips, "20250331030644000", trips.timeline)


def test_pending_write_older_than_compaction_is_refused(trips: HudiTable) -> None:
    (Path(trips.meta_path) / "20250331030650000.deltacommit.requested").write_bytes(b"")
    with pytest.raises(CompactionValidationError, match="still pending"):
        schedule_compaction(trips, force=True)
    # a compaction before the pending write is fine
    assert schedule_compaction(trips, force=True, instant_time="20250331030649000") == "20250331030649000"
