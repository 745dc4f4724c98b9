"""A table with ``hoodie.datasource.write.drop.partition.columns=true`` (chosen at creation, as in
Apache Hudi): COPY_ON_WRITE files and commit schemas leave the partition columns out, MERGE_ON_READ
writes keep them as text (as Hudi's upserts there do), compacted and clustered base files leave
them out on either type, and every query answers them from the partition path, as strings, as
Hudi's readers do. The Apache Hudi tier checks Hudi's answers on such tables
(``tests/interop/test_hudi_table_features.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ConfigError
from hudi_core.log.reader import read_log_file
from hudi_core.storage import storage_for
from hudi_core.table.file_names import BaseFileName

BOTH_TYPES = pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
DROP = {"hoodie.datasource.write.drop.partition.columns": "true"}
PARTITIONS = {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
              "hoodie.datasource.write.hive_style_partitioning": "true"}  # fmt: skip
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}  # MOR updates go to log files


def _create(path: Path, table_type: str, **more: str) -> HudiTable:
    return HudiTable.create(str(path), name="t", table_type=table_type, record_key_fields="id",
                            partition_fields="city,zone", ordering_field="ts",
                            options={**PARTITIONS, **DROP, **more})  # fmt: skip


def _rows(ids: list[str], city: str, zone: int, ts: int) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "city": [city] * n, "zone": pa.array([zone] * n, pa.int32()),
                     "ts": pa.array([ts] * n, pa.int64()), "v": [f"v{ts}"] * n})  # fmt: skip


def _answer(t: HudiTable, query_type: str = "snapshot") -> list[tuple[object, ...]]:
    got = t.read(query_type, columns=["id", "city", "zone", "ts", "v"])
    assert got.schema.field("zone").type == pa.string()  # as Hudi's readers and its writers type it
    return sorted(tuple(r.values()) for r in got.to_pylist())


def _stored_columns(path: Path, instants: set[str]) -> set[str]:
    """Every column a data file of ``instants`` holds, and every field of their commit schemas."""
    names: set[str] = set()
    for f in path.rglob("*.parquet"):
        if BaseFileName.parse(f.name).instant_time in instants:
            names |= set(pq.read_schema(f).names)
    storage = storage_for(str(path), {})
    for f in path.rglob(".*.log.*"):
        for block in read_log_file(storage, str(f)):
            if block.schema and block.instant_time in instants:
                names |= {field["name"] for field in json.loads(block.schema)["fields"]}
    for f in (path / ".hoodie").glob("*commit"):
        schema = json.loads(f.read_bytes() or b"{}").get("extraMetadata", {}).get("schema")
        if schema and f.name.split(".")[0] in instants:
            names |= {field["name"] for field in json.loads(schema)["fields"]}
    return names


@BOTH_TYPES
def test_files_leave_the_partition_columns_out_and_reads_take_them_from_the_path(
    tmp_path: Path, table_type: str
) -> None:
    t = _create(tmp_path / "t", table_type)
    assert t.config.drops_partition_columns
    inserted = t.upsert(pa.concat_tables([_rows(["a", "b"], "sf", 1, 1), _rows(["c"], "la", 2, 1)])).instant
    HudiTable.open(str(tmp_path / "t")).upsert(_rows(["a", "d"], "sf", 1, 2), options=NO_SMALL_FILES)
    HudiTable.open(str(tmp_path / "t")).delete(_rows(["c"], "la", 2, 3))
    t = HudiTable.open(str(tmp_path / "t"))
    expected = [("a", "sf", "1", 2, "v2"), ("b", "sf", "1", 1, "v1"), ("d", "sf", "1", 2, "v2")]
    assert _answer(t) == expected
    # MOR: the update of a and the delete of c in log files, the new d in a base file
    unmerged = [("a", "sf", "1", 1, "v1"), ("b", "sf", "1", 1, "v1"), ("c", "la", "2", 1, "v1"), expected[-1]]
    assert _answer(t, "read_optimized") == (expected if table_type == "COPY_ON_WRITE" else unmerged)
    assert t.read(filters=[("zone", "=", "1")]).num_rows == 3
    writes = {i.timestamp for i in t.timeline.completed_commits()}
    if table_type == "MERGE_ON_READ":
        assert list((tmp_path / "t").rglob(".*.log.*")), "the update went to a log file"
        assert t.compact()
        t = HudiTable.open(str(tmp_path / "t"))
        assert _answer(t) == _answer(t, "read_optimized") == expected
    t.cluster({"hoodie.clustering.plan.strategy.small.file.limit": str(1 << 30),
               "hoodie.clustering.plan.strategy.sort.columns": "zone,v"})  # fmt: skip
    t = HudiTable.open(str(tmp_path / "t"))
    assert _answer(t) == expected
    services = {i.timestamp for i in t.timeline.completed_commits()} - writes
    assert {i.action for i in t.timeline.completed_commits() if i.timestamp in services} >= {"replacecommit"}
    # compacted and clustered base files: no partition column, on either table type
    rewritten = _stored_columns(tmp_path / "t", services)
    assert {"id", "ts", "v", "_hoodie_partition_path"} <= rewritten and not rewritten & {"city", "zone"}
    written = _stored_columns(tmp_path / "t", writes)
    if table_type == "COPY_ON_WRITE":
        assert {"id", "ts", "v"} <= written and not written & {"city", "zone"}
    else:  # MOR writes keep them, as Hudi's upserts do: its readers answer a log record with its own
        assert {"city", "zone"} <= _stored_columns(tmp_path / "t", writes - {inserted})


@BOTH_TYPES
def test_a_key_moved_by_a_global_index_answers_its_new_partition(tmp_path: Path, table_type: str) -> None:
    t = _create(tmp_path / "t", table_type)
    opts = {"hoodie.index.type": "GLOBAL_SIMPLE", **NO_SMALL_FILES}
    t.upsert(_rows(["a", "b"], "sf", 1, 1), options=opts)
    HudiTable.open(str(tmp_path / "t")).upsert(_rows(["a"], "la", 2, 2), options=opts)
    assert _answer(HudiTable.open(str(tmp_path / "t"))) == [
        ("a", "la", "2", 2, "v2"),
        ("b", "sf", "1", 1, "v1"),
    ]


def test_the_choice_is_the_tables_and_what_would_lose_data_is_refused(tmp_path: Path) -> None:
    t = _create(tmp_path / "t", "COPY_ON_WRITE")
    t.upsert(_rows(["a"], "sf", 1, 1))
    with pytest.raises(ConfigError, match=r"drop\.partition\.columns='false' conflicts"):
        HudiTable.open(str(tmp_path / "t")).upsert(
            _rows(["a"], "sf", 1, 2), options={"hoodie.datasource.write.drop.partition.columns": "false"}
        )
    kept = HudiTable.create(str(tmp_path / "kept"), name="k", table_type="COPY_ON_WRITE", record_key_fields="id",
                            partition_fields="city", ordering_field="ts")  # fmt: skip
    kept.upsert(_rows(["a"], "sf", 1, 1))
    with pytest.raises(ConfigError, match=r"drop\.partition\.columns='true' conflicts"):
        HudiTable.open(str(tmp_path / "kept")).upsert(_rows(["a"], "sf", 1, 2), options=DROP)
    assert "city" in pq.read_schema(next((tmp_path / "kept").rglob("*.parquet"))).names
    # the ordering field among the partition fields: merges would order by values the files lack
    with pytest.raises(ConfigError, match="ordering field 'ts' is a partition field"):
        HudiTable.create(str(tmp_path / "o"), name="o", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="ts", ordering_field="ts", options=DROP)  # fmt: skip
    with pytest.raises(ConfigError, match=r"populate\.meta\.fields=false"):
        _create(tmp_path / "v", "COPY_ON_WRITE", **{"hoodie.populate.meta.fields": "false"})
    assert not (tmp_path / "o").exists() or not (tmp_path / "o" / ".hoodie" / "hoodie.properties").exists()
