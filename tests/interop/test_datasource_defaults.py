"""What Apache Hudi 0.15's Spark datasource writer (``df.write.format("hudi")``) does beyond its
write client, and ``hudi_spark.write`` (our ``format("hudi")`` too) does as it does:

- a batch write to a MERGE_ON_READ table compacts inline unless the write says otherwise
  (before, our Spark writes never compacted unless asked, and a table Hudi's writer kept
  compacted grew log files without end under ours);
- options whose keys start with ``hoodie.datasource.write.commitmeta.key.prefix`` (``_``) go
  into the commit's extra metadata (before, ours left them out).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.hollow import rows
from hudi_core.timeline.commit_metadata import CommitMetadata

pytestmark = pytest.mark.interop

BASE = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.metadata.enable": "false"}  # fmt: skip


def _batches() -> list[pa.Table]:
    """Inserts, then updates: log files (a new key would rewrite its small file group instead)."""
    first = pa.concat_tables([rows(["a1", "a2"], "a", 1), rows(["b1"], "b", 1)])
    return [first] + [pa.concat_tables([rows(["a1"], "a", i), rows(["b1"], "b", i)]) for i in range(2, 8)]


def _actions(path: Path) -> list[str]:
    return [i.action for i in HudiTable.open(str(path)).timeline if i.action != "clean"]


@pytest.mark.parametrize("inline", [None, "false"])
def test_spark_writes_compact_a_merge_on_read_table_as_hudis(
    hudi: Any, spark: Any, tmp_path: Path, inline: str | None
) -> None:
    import hudi_spark

    opts = {**BASE, **({"hoodie.compact.inline": inline} if inline else {})}
    theirs, ours = tmp_path / "hudi", tmp_path / "ours"
    for batch in _batches():
        hudi.oracle.write(theirs, batch, opts)
        hudi_spark.write(spark.createDataFrame(batch), str(ours), operation="upsert", options=opts)

    expected = (
        ["deltacommit"] * 5 + ["compaction"] + ["deltacommit"] * 2 if inline is None else ["deltacommit"] * 7
    )
    assert _actions(theirs) == expected
    assert _actions(ours) == expected

    def answer(t: pa.Table) -> list[tuple[str, str]]:
        return sorted(zip(t.column("id").to_pylist(), t.column("v").to_pylist(), strict=True))

    assert (
        answer(hudi.oracle.read(ours))
        == answer(HudiTable.open(str(ours)).read())
        == answer(hudi.oracle.read(theirs))
    )
    if inline is None:  # the compaction's base files hold what the five deltacommits wrote
        ro = hudi.oracle.read(ours, {"hoodie.datasource.query.type": "read_optimized"})
        assert answer(ro) == answer(
            hudi.oracle.read(theirs, {"hoodie.datasource.query.type": "read_optimized"})
        )


@pytest.mark.parametrize("prefix", [None, "job."])
def test_prefixed_options_go_into_the_commit_metadata_as_in_hudis(
    hudi: Any, spark: Any, tmp_path: Path, prefix: str | None
) -> None:
    import hudi_spark

    given = {"_run_id": "42", "_source": "kafka:trips", "job.owner": "etl", "other.key": "x"}
    opts = {**BASE, **given, **({"hoodie.datasource.write.commitmeta.key.prefix": prefix} if prefix else {})}
    theirs, ours = tmp_path / "hudi", tmp_path / "ours"
    batch = _batches()[0]
    hudi.oracle.write(theirs, batch, opts)
    hudi_spark.write(spark.createDataFrame(batch), str(ours), operation="upsert", options=opts)

    def extra(path: Path) -> dict[str, str]:
        table = HudiTable.open(str(path))
        meta = CommitMetadata.from_json(table.timeline.read_details(table.timeline.completed_commits()[-1]))
        return {k: v for k, v in meta.extra_metadata.items() if k in given}

    expected = {k: v for k, v in given.items() if k.startswith(prefix or "_")}
    assert extra(theirs) == expected
    assert extra(ours) == expected
