"""Tables Apache Hudi bootstrapped from a plain parquet table (its ``run_bootstrap`` procedure).
A FULL_RECORD bootstrap rewrites the rows into Hudi's files. A METADATA_ONLY bootstrap (Hudi's
default selector) writes skeleton files holding only the meta columns, the data staying in the
source files, which Hudi's HFile bootstrap index names: our readers stitch each skeleton to its
source file row for row, and our writes and compaction rewrite such file groups whole. Both kinds
are read and written, both readers equal."""

from __future__ import annotations

import uuid
from pathlib import Path

import hudi_spark
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from workloads import table_options

pytestmark = pytest.mark.interop

FULL = "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector"
METADATA_ONLY = "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector"


def _bootstrap(
    hudi, tmp_path: Path, selector: str, table_type: str = "COPY_ON_WRITE"
) -> tuple[Path, dict[str, str]]:
    """The table bootstrapped from a parquet table of three rows, and the write options for it."""
    src, dst = tmp_path / "src", tmp_path / "t"
    for p, ids in (("p1", ["a", "b"]), ("p2", ["c"])):
        (src / p).mkdir(parents=True)
        pq.write_table(pa.table({"id": ids, "ts": [1] * len(ids), "v": [f"{i}1" for i in ids], "p": [p] * len(ids)}),
                       src / p / "part-0.parquet")  # fmt: skip
    name = f"b_{uuid.uuid4().hex[:8]}"
    hudi.oracle.sql(
        f"call run_bootstrap(table => '{name}', table_type => '{table_type}', bootstrap_path => '{src}', "
        f"base_path => '{dst}', rowKey_field => 'id', partition_path_field => 'p', precombine_field => 'ts', "
        f"selector_class => '{selector}', bootstrap_overwrite => true, enable_hive_sync => false, "
        "key_generator_class => 'org.apache.hudi.keygen.SimpleKeyGenerator')"
    )
    hudi.oracle.sql(f"DROP TABLE IF EXISTS {name}")
    options = table_options(name, table_type, "upsert")
    del options["hoodie.datasource.write.precombine.field"]  # (the procedure stores none)
    return dst, options


def _rows(table: pa.Table) -> list[tuple[str, int, str, str]]:
    return sorted(tuple(r.values()) for r in table.select(["id", "ts", "v", "p"]).to_pylist())


def test_a_full_record_bootstrap_reads_and_takes_writes(hudi, tmp_path: Path) -> None:
    path, options = _bootstrap(hudi, tmp_path, FULL)
    expected = [("a", 1, "a1", "p1"), ("b", 1, "b1", "p1"), ("c", 1, "c1", "p2")]
    assert _rows(hudi.oracle.read(path)) == _rows(HudiTable.open(str(path)).read()) == expected
    HudiTable.open(str(path)).upsert(
        pa.table({"id": ["b"], "ts": [2], "v": ["b2"], "p": ["p1"]}), options=options
    )
    expected[1] = ("b", 2, "b2", "p1")
    assert _rows(hudi.oracle.read(path)) == _rows(HudiTable.open(str(path)).read()) == expected


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_metadata_only_bootstrap_reads_its_source_files(
    hudi, spark, collected, tmp_path: Path, table_type: str
) -> None:
    """Every column Hudi's reader gives, from the skeleton files and the source files the
    bootstrap index names; then our upsert (COW: a merge of a skeleton's file group; MOR: logs
    on it, then our compaction), then Hudi's write: both readers equal throughout."""
    path, options = _bootstrap(hudi, tmp_path, METADATA_ONLY, table_type)
    if table_type == "MERGE_ON_READ":  # the update goes to a log file on the skeleton's file group
        options["hoodie.parquet.small.file.limit"] = "0"
    assert _everything(HudiTable.open(str(path)).read()) == _everything(hudi.oracle.read(path))
    expected = [("a", 1, "a1", "p1"), ("b", 1, "b1", "p1"), ("c", 1, "c1", "p2")]
    assert (
        _rows(HudiTable.open(str(path)).read())
        == _rows(collected(hudi_spark.read(spark, str(path))))
        == expected
    )
    if table_type == "MERGE_ON_READ":
        ro = HudiTable.open(str(path)).read("read_optimized")
        assert _everything(ro) == _everything(
            hudi.oracle.read(path, {"hoodie.datasource.query.type": "read_optimized"})
        )
    HudiTable.open(str(path)).upsert(
        pa.table({"id": ["b", "d"], "ts": [2, 2], "v": ["b2", "d2"], "p": ["p1", "p1"]}), options=options
    )
    if table_type == "MERGE_ON_READ":  # the skeleton and its source merged with the log, then compacted
        assert _everything(HudiTable.open(str(path)).read()) == _everything(hudi.oracle.read(path))
        HudiTable.open(str(path)).compact()
    expected = [("a", 1, "a1", "p1"), ("b", 2, "b2", "p1"), ("c", 1, "c1", "p2"), ("d", 2, "d2", "p1")]
    assert _rows(HudiTable.open(str(path)).read()) == expected
    assert _everything(HudiTable.open(str(path)).read()) == _everything(hudi.oracle.read(path))
    hudi.oracle.write(path, pa.table({"id": ["c"], "ts": [3], "v": ["c3"], "p": ["p2"]}), options)
    expected[2] = ("c", 3, "c3", "p2")
    assert _rows(hudi.oracle.read(path)) == _rows(HudiTable.open(str(path)).read()) == expected


def _everything(table: pa.Table) -> list[tuple]:
    """Every row with every column Hudi gives (meta columns included), by name."""
    names = sorted(table.column_names)
    return sorted(tuple(r[n] for n in names) for r in table.select(names).to_pylist())
