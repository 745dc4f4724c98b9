"""Incremental queries and streaming reads over a hollow commit (a write still inflight while a
later one completed, as optimistic concurrent writers leave the timeline), against Apache Hudi
0.15's answers on the same table under each ``hoodie.read.timeline.holes.resolution.policy``.

Before, our incremental queries and ``spark.readStream.format("hudi")`` read past the hole: a
stream's offset moved beyond the inflight commit, and once that commit completed its records
were never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.read.hollow import HollowCommitError, latest_completion, transition_time
from hudi_core.testing.hollow import hollow_table
from oracle import OracleError

pytestmark = pytest.mark.interop

POLICY = "hoodie.read.timeline.holes.resolution.policy"
INCREMENTAL = {"hoodie.datasource.query.type": "incremental"}


def _answer(table: pa.Table) -> list[tuple[str, str, str]]:
    return sorted(
        zip(*(table.column(c).to_pylist() for c in ("id", "v", "_hoodie_commit_time")), strict=True)
    )


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_incremental_queries_over_a_hollow_commit_answer_as_hudis(
    hudi: Any, tmp_path: Path, table_type: str
) -> None:
    hollow = hollow_table(tmp_path / "t", table_type)
    path = hollow.path
    c1, c2, c3 = hollow.instants

    def both(start: str, end: str | None = None, policy: str | None = None) -> tuple[list, list]:
        opts = {POLICY: policy} if policy else {}
        ends = {"hoodie.datasource.read.end.instanttime": end} if end else {}
        theirs = hudi.oracle.read(path, {**INCREMENTAL, "hoodie.datasource.read.begin.instanttime": start,
                                         **ends, **opts})  # fmt: skip
        mine = HudiTable.open(str(path), options=opts).read("incremental", start=start, end=end)
        return _answer(theirs), _answer(mine)

    with pytest.raises(OracleError, match=f"Found hollow commit: '{c2}'"):
        hudi.oracle.read(path, {**INCREMENTAL, "hoodie.datasource.read.begin.instanttime": "000"})
    with pytest.raises(HollowCommitError, match=f"Found hollow commit: '{c2}'"):
        HudiTable.open(str(path)).read("incremental", start="000")

    theirs, mine = both("000", policy="BLOCK")
    assert mine == theirs
    assert [v for _, v, _ in mine] == ["a1@1", "a2@1", "b1@1", "b2@1"]
    theirs, mine = both("000", policy="USE_TRANSITION_TIME")
    assert mine == theirs
    assert [v for _, v, _ in mine] == ["a1@1", "a2@1", "b1@1", "b2@3"]

    timeline = HudiTable.open(str(path)).timeline
    seen = latest_completion(timeline, timeline.completed_commits())
    assert seen is not None
    hollow.complete()
    timeline = HudiTable.open(str(path)).timeline
    late = transition_time(timeline, timeline.completed_commits().find(c2))  # type: ignore[arg-type]
    assert late is not None and late > seen
    theirs, mine = both(seen, end=late, policy="USE_TRANSITION_TIME")
    assert mine == theirs
    assert [v for _, v, _ in mine] == ["a1@2"], "the commit that completed late is read late"
    theirs, mine = both(seen, policy="USE_TRANSITION_TIME")
    assert mine == theirs
    theirs, mine = both(c1)
    assert mine == theirs
    assert [v for _, v, _ in mine] == ["a1@2", "b2@3"]
    theirs, mine = both(c3)
    assert mine == theirs == []


def _our_stream(spark: Any, path: Path, checkpoint: Path, options: dict[str, str]) -> list[pa.Table]:
    import hudi_spark  # noqa: F401  (registers the hudi format)

    batches: list[pa.Table] = []

    def sink(df: Any, batch_id: int) -> None:
        got = df.toArrow()
        if got.num_rows:
            batches.append(got)

    query = (
        spark.readStream.format("hudi").options(**options).load(str(path))
        .writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True).start()
    )  # fmt: skip
    query.awaitTermination()
    return batches


@pytest.mark.parametrize("policy", [None, "USE_TRANSITION_TIME"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_stream_reads_a_hollow_commit_once_it_completes_as_hudis_does(
    hudi: Any, spark: Any, tmp_path: Path, table_type: str, policy: str | None
) -> None:
    hollow = hollow_table(tmp_path / "t", table_type)
    opts = {POLICY: policy} if policy else {}

    def runs() -> tuple[list[list], list[list]]:
        theirs = hudi.oracle.read_stream(hollow.path, tmp_path / "hudi-ckpt", opts)
        mine = _our_stream(spark, hollow.path, tmp_path / "our-ckpt", opts)
        return [_answer(b) for b in theirs], [_answer(b) for b in mine]

    theirs, mine = runs()
    assert mine == theirs
    # the default (BLOCK) stops before the inflight write; by completion time the third write's
    # update comes first
    first = ["a1@1", "a2@1", "b1@1", "b2@3" if policy else "b2@1"]
    assert [[v for _, v, _ in b] for b in mine] == [first]
    hollow.complete()
    theirs, mine = runs()
    assert mine == theirs
    assert [[v for _, v, _ in b] for b in mine] == [["a1@2"] if policy else ["a1@2", "b2@3"]]
