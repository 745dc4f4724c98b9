"""``hoodie.datasource.read.incr.path.glob``: an incremental query of the file slices whose path
matches a glob, against Apache Hudi 0.15's answers on the same table. Before, our readers
ignored the option and answered every partition's records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.hollow import rows

pytestmark = pytest.mark.interop

GLOB = "hoodie.datasource.read.incr.path.glob"


def _answer(table: pa.Table) -> list[str]:
    return sorted(table.column("v").to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_an_incremental_query_reads_the_slices_its_glob_matches_as_hudis(
    hudi: Any, tmp_path: Path, table_type: str
) -> None:
    path = tmp_path / "t"
    HudiTable.create(str(path), name="t", record_key_fields="id", partition_fields="part",
                     ordering_field="ts", table_type=table_type)  # fmt: skip
    first = HudiTable.open(str(path)).insert(
        pa.concat_tables([rows(["a1", "a2"], "a", 1), rows(["b1"], "b", 1), rows(["c1"], "c", 1)])
    )
    HudiTable.open(str(path)).upsert(pa.concat_tables([rows(["a1"], "a", 2), rows(["c1", "c2"], "c", 2)]))

    mor = table_type == "MERGE_ON_READ"
    expected = {  # (glob, start) -> values, as Hudi answered them
        ("/a/*", "000"): ["a1@2", "a2@1"],
        ("/{a,c}/*", first.instant): ["a1@2", "c1@2", "c2@2"],
        ("/[bc]/*", "000"): ["b1@1", "c1@2", "c2@2"],
        ("/[!a]/*", "000"): ["a1@2", "a2@1", "b1@1", "c1@2", "c2@2"],  # "*/[!a]/*" matches "/t/a/..."
        ("/b/*", first.instant): [],
        # a merge-on-read slice counts by the files the range wrote: partition a's update went
        # to a log file, c's new key into a new version of its base file
        ("*.parquet", first.instant): ["c1@2", "c2@2"] if mor else ["a1@2", "c1@2", "c2@2"],
        ("*.log.*", first.instant): ["a1@2"] if mor else [],
    }
    for (glob, start), values in expected.items():
        q = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": start,
             GLOB: glob}  # fmt: skip
        theirs = _answer(hudi.oracle.read(path, q))
        mine = _answer(HudiTable.open(str(path), options={GLOB: glob}).read("incremental", start=start))
        assert mine == theirs == values, (glob, start)
