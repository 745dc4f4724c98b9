"""Archival with Apache Hudi: Hudi reads the archived timeline we write (its archived-commits
procedure lists our commits with their write stats, its archiver merges our archive files into
its own), we read Hudi's, and incremental queries that start inside the archived part answer as
Hudi does (with and without its full-table-scan fallback)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.archival import archived_instants
from workloads import differences

pytestmark = [pytest.mark.interop, pytest.mark.slow]

KEEP = {
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "4",
    "hoodie.cleaner.commits.retained": "2",
}


def _options(table_type: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "archived",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.index.type": "SIMPLE",
        **({"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
           if table_type == "MERGE_ON_READ" else {}),
        **KEEP,
    }  # fmt: skip


def _batch(i: int) -> pa.Table:
    return pa.table({"uuid": [f"k{i % 4}", f"n{i}"], "ts": pa.array([i, i], pa.int64()),
                     "v": pa.array([i, i], pa.int64()), "city": ["sf", "la"]})  # fmt: skip


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_reads_and_extends_our_archived_timeline(hudi, tmp_path: Path, table_type: str) -> None:
    path = tmp_path / table_type.lower()
    opts = _options(table_type)
    from hudi_spark.table_ops import open_or_create

    for i in range(12):
        open_or_create(str(path), opts, _batch(i).schema)[0].upsert(_batch(i), options=opts)
    ours = archived_instants(HudiTable.open(str(path)))
    archived_commits = sorted(
        a.instant.timestamp for a in ours if a.instant.action in ("commit", "deltacommit")
    )
    assert len(archived_commits) >= 6 and len(HudiTable.open(str(path)).timeline.completed_commits()) <= 4

    def same_snapshot(step: str) -> None:
        diff = differences(HudiTable.open(str(path)).read(), hudi.oracle.read(path))
        assert not diff, f"{step}: {diff}"

    same_snapshot("our archived table")
    name = f"archived_{table_type.lower()}"
    hudi.oracle.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    listed = hudi.oracle.sql(f"CALL show_archived_commits(table => '{name}', limit => 1000, "
                             "start_ts => '19700101000000000', end_ts => '99991231235959999')")  # fmt: skip
    assert sorted(row[0] for row in listed) == archived_commits, "Hudi lists the commits we archived"
    for fallback in ("false", "true"):
        start = archived_commits[1]
        q = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": fallback}
        theirs = hudi.oracle.read(path, {"hoodie.datasource.query.type": "incremental",
                                         "hoodie.datasource.read.begin.instanttime": start, **q})  # fmt: skip
        mine = HudiTable.open(str(path), options=q).read("incremental", start=start)
        if table_type == "MERGE_ON_READ" and fallback == "true":
            # Hudi 0.15's MOR full-table-scan fallback reads base files without their log files
            # (it returned a compacted value a later committed log record had replaced): we keep
            # the merged values and compare which records come back
            assert sorted(mine.column("uuid").to_pylist()) == sorted(theirs.column("uuid").to_pylist())
            continue
        assert not differences(mine, theirs), f"incremental from archived {start}, fallback={fallback}"

    # Hudi's writer archives on top of ours and merges the small archive files into one of its own
    merge = {"hoodie.archive.merge.enable": "true", "hoodie.archive.merge.files.batch.size": "2",
             "hoodie.archive.merge.small.file.limit.bytes": str(100 << 20)}  # fmt: skip
    for i in range(12, 18):
        hudi.oracle.write(path, _batch(i), {**opts, **merge})
    after = {a.instant.timestamp for a in archived_instants(HudiTable.open(str(path)))}
    assert {a.instant.timestamp for a in ours} <= after, "every instant we archived survives Hudi's merge"
    same_snapshot("after Hudi archived and merged")
