"""Tables Apache Hudi bootstrapped from a plain parquet table (its ``run_bootstrap`` procedure).
A FULL_RECORD bootstrap rewrites the rows into Hudi's files: we read and write such a table. A
METADATA_ONLY bootstrap writes skeleton files holding only the meta columns, the data staying in
the source files (found through Hudi's HFile bootstrap index, which we do not read): our reader
gave every data column as null. Now such a table is refused, reads and writes, until Hudi has
rewritten its skeleton files."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.errors import UnsupportedTableError
from workloads import table_options

pytestmark = pytest.mark.interop

FULL = "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector"
METADATA_ONLY = "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector"


def _bootstrap(hudi, tmp_path: Path, selector: str) -> tuple[Path, dict[str, str]]:
    """The table bootstrapped from a parquet table of three rows, and the write options for it."""
    src, dst = tmp_path / "src", tmp_path / "t"
    for p, ids in (("p1", ["a", "b"]), ("p2", ["c"])):
        (src / p).mkdir(parents=True)
        pq.write_table(pa.table({"id": ids, "ts": [1] * len(ids), "v": [f"{i}1" for i in ids], "p": [p] * len(ids)}),
                       src / p / "part-0.parquet")  # fmt: skip
    name = f"b_{uuid.uuid4().hex[:8]}"
    hudi.oracle.sql(
        f"call run_bootstrap(table => '{name}', table_type => 'COPY_ON_WRITE', bootstrap_path => '{src}', "
        f"base_path => '{dst}', rowKey_field => 'id', partition_path_field => 'p', precombine_field => 'ts', "
        f"selector_class => '{selector}', bootstrap_overwrite => true, enable_hive_sync => false, "
        "key_generator_class => 'org.apache.hudi.keygen.SimpleKeyGenerator')"
    )
    hudi.oracle.sql(f"DROP TABLE IF EXISTS {name}")
    options = table_options(name, "COPY_ON_WRITE", "upsert")
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


def test_a_metadata_only_bootstrap_is_refused_until_hudi_rewrote_its_skeletons(hudi, tmp_path: Path) -> None:
    path, options = _bootstrap(hudi, tmp_path, METADATA_ONLY)
    assert _rows(hudi.oracle.read(path))[0] == ("a", 1, "a1", "p1")
    before = sorted(f.name for f in path.rglob("*") if f.is_file())
    with pytest.raises(UnsupportedTableError, match="skeleton"):
        HudiTable.open(str(path)).read()
    with pytest.raises(UnsupportedTableError, match="skeleton"):
        HudiTable.open(str(path)).upsert(pa.table({"id": ["b"], "ts": [2], "v": ["b2"], "p": ["p1"]}))
    assert sorted(f.name for f in path.rglob("*") if f.is_file()) == before  # nothing written
    # Hudi's updates rewrite both file groups with every column: then the table reads
    hudi.oracle.write(
        path, pa.table({"id": ["b", "c"], "ts": [2, 2], "v": ["b2", "c2"], "p": ["p1", "p2"]}), options
    )
    expected = [("a", 1, "a1", "p1"), ("b", 2, "b2", "p1"), ("c", 2, "c2", "p2")]
    assert _rows(hudi.oracle.read(path)) == _rows(HudiTable.open(str(path)).read()) == expected
