from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.clean import CleanerPlan, CleanError, CleanMetadata, clean, plan_clean
from hudi_core.clean.planner import savepointed_files
from hudi_core.compaction import schedule_compaction

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.int64())])


def batch(n: int, ts: int) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in range(n)], "ts": [ts] * n, "val": [ts * 100 + i for i in range(n)]},
                    schema=SCHEMA)  # fmt: skip


def make(tmp_path: Path, kind: str, commits: int) -> tuple[HudiTable, list[str]]:
    t = HudiTable.create(str(tmp_path / kind), name="t", table_type=kind, record_key_fields="id",
                         ordering_field="ts", schema=SCHEMA)  # fmt: skip
    instants = [t.insert(batch(10, 1)).instant]
    for c in range(2, commits + 1):
        instants.append(t.upsert(batch(10, c)).instant)
        if kind == "MERGE_ON_READ":
            t.compact()
            instants.append(t.timeline.completed_commits().last().timestamp)  # type: ignore[union-attr]
    return t, instants


def vals(t: HudiTable, as_of: str | None = None) -> list[int]:
    return sorted(t.read(as_of=as_of, columns=["val"]).column("val").to_pylist())


def data_files(t: HudiTable) -> set[str]:
    return {p.name for p in Path(t.base_uri).iterdir() if p.is_file() and not p.name.startswith(".hoodie")}


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_keep_latest_commits_keeps_time_travel_to_retained_instants(tmp_path: Path, kind: str) -> None:
    t, instants = make(tmp_path, kind, 5)
    expected = {i: vals(t, i) for i in instants}
    files_before = data_files(t)
    meta = clean(t, config={"hoodie.cleaner.commits.retained": "2"})
    assert meta is not None and meta.total_files_deleted > 0
    retained = [i for i in instants if i >= meta.earliest_commit_to_retain]
    assert len(retained) >= 2
    for i in retained:
        assert vals(t, i) == expected[i]
    assert vals(t) == expected[instants[-1]]
    deleted = files_before - data_files(t)
    assert {n for p in meta.partitions.values() for n in p.success_delete_files} == deleted
    # the clean instant's files: requested plan, inflight, completed metadata
    hoodie = Path(t.meta_path)
    ts = meta.start_clean_time
    plan = CleanerPlan.from_bytes((hoodie / f"{ts}.clean.requested").read_bytes())
    assert plan.policy == "KEEP_LATEST_COMMITS" and plan.total_files == len(deleted)
    assert (hoodie / f"{ts}.clean.inflight").read_bytes() and (hoodie / f"{ts}.clean").exists()
    back = CleanMetadata.from_bytes((hoodie / f"{ts}.clean").read_bytes())
    assert back.total_files_deleted == len(deleted)
    assert clean(t, config={"hoodie.cleaner.commits.retained": "2"}) is None  # nothing left


def test_keep_latest_file_versions(tmp_path: Path) -> None:
    t, _ = make(tmp_path, "COPY_ON_WRITE", 5)
    assert len(data_files(t)) == 5
    meta = clean(t, config={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                            "hoodie.cleaner.fileversions.retained": "2"})  # fmt: skip
    assert meta is not None and meta.total_files_deleted == 3
    assert len(data_files(t)) == 2
    assert vals(t) == [500 + i for i in range(10)]


def test_keep_latest_by_hours(tmp_path: Path) -> None:
    t, _ = make(tmp_path, "COPY_ON_WRITE", 4)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "1"}
    assert plan_clean(t, config=t.write_config(cfg)).total_files == 0  # all commits are recent
    later = dt.datetime.now() + dt.timedelta(hours=5)
    plan = plan_clean(t, config=t.write_config(cfg), now=later)
    assert plan.total_files == 0  # every commit is old: no earliest commit to retain, keep all


def test_files_of_a_pending_compaction_are_never_cleaned(tmp_path: Path) -> None:
    t, _ = make(tmp_path, "MERGE_ON_READ", 3)
    t.upsert(batch(10, 9))
    tc = schedule_compaction(t, force=True)
    assert tc is not None
    before = vals(t)
    clean(t, config={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                     "hoodie.cleaner.fileversions.retained": "1"})  # fmt: skip
    assert vals(t) == before
    t.run_compaction(tc)
    assert vals(t) == before


def test_bad_policy_is_refused(tmp_path: Path) -> None:
    t, _ = make(tmp_path, "COPY_ON_WRITE", 1)
    with pytest.raises(CleanError, match="KEEP_NEWEST"):
        clean(t, config={"hoodie.cleaner.policy": "KEEP_NEWEST"})


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize(
    "policy",
    [
        {"hoodie.cleaner.commits.retained": "1"},
        {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"},
    ],
    ids=["commits", "file-versions"],
)
def test_a_savepoints_files_are_never_cleaned(tmp_path: Path, kind: str, policy: dict[str, str]) -> None:
    """A savepoint (Apache Hudi's ``create_savepoint``) keeps its commit's files from every
    clean, so Hudi's restore to it finds them (tests/interop/test_savepoints.py); before, the
    cleaner deleted them like any old slice (Hudi's restore then gave an empty table)."""
    t, instants = make(tmp_path, kind, 2)
    saved = instants[1] if kind == "COPY_ON_WRITE" else instants[0]  # MOR: the slice with a log
    expected = vals(t, saved)
    HudiTable.open(t.base_uri).savepoint(saved)
    kept = {n for names in savepointed_files(HudiTable.open(t.base_uri).timeline).values() for n in names}
    assert kept and kept <= data_files(t)
    for c in range(3, 6):
        t.upsert(batch(10, c))
        if kind == "MERGE_ON_READ":
            t.compact()
    meta = clean(HudiTable.open(t.base_uri), config=policy)
    assert meta is not None and meta.total_files_deleted > 0  # the other old slices went
    assert kept <= data_files(t)
    if "hoodie.cleaner.policy" in policy:  # time travel past a clean's retained commits is refused
        assert vals(HudiTable.open(t.base_uri), saved) == expected
    assert vals(HudiTable.open(t.base_uri)) == [500 + i for i in range(10)]
