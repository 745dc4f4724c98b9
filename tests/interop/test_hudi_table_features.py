"""Tables Apache Hudi wrote with table features this writer does not write, read as Hudi reads them.

``hoodie.datasource.write.drop.partition.columns=true``: the base files do not hold the partition
columns, and readers take their values from the partition path.

Before, our readers returned nulls for them in every row read from a base file (found by hand
with the oracle), and left them out of the answer where the commit's schema lacks them (COW). Now
the local reader and ``hudi_spark.read`` answer as Hudi does (two partition columns, one of them
an int in the input, both strings from the path in the answer; hive-style paths; COW and MOR with
log files). Our writers refused such a table until 2026-12-07; they now write it as Hudi's insert
does (no partition column in a file or commit schema), and Hudi reads and writes on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from workloads import table_options

pytestmark = pytest.mark.interop

COLUMNS = ["id", "city", "zone", "ts", "v"]


def _options(table_type: str, operation: str) -> dict[str, str]:
    return table_options("dropped", table_type, operation, {
        "hoodie.datasource.write.partitionpath.field": "city,zone",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.drop.partition.columns": "true",
    })  # fmt: skip


def _rows(ids: list[str], city: str, zone: int, ts: int) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "city": [city] * n, "zone": pa.array([zone] * n, pa.int32()),
                     "ts": pa.array([ts] * n, pa.int64()), "v": [f"v{ts}"] * n})  # fmt: skip


def _answer(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in table.select(COLUMNS).to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_we_read_a_table_without_partition_columns_in_its_files(
    hudi: Any, spark: Any, collected: Any, tmp_path: Path, table_type: str
) -> None:
    import hudi_spark

    oracle, path = hudi.oracle, str(tmp_path / "t")
    oracle.write(path, pa.concat_tables([_rows(["a", "b"], "sf", 1, 1), _rows(["c"], "la", 2, 1)]),
                 _options(table_type, "insert"))  # fmt: skip
    oracle.write(path, _rows(["a"], "sf", 1, 2), _options(table_type, "upsert"))
    assert HudiTable.open(path).config.drops_partition_columns
    expected = _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"}))
    # Hudi's reader gives the partition columns from the path, as strings
    assert expected == [("a", "sf", "1", 2, "v2"), ("b", "sf", "1", 1, "v1"), ("c", "la", "2", 1, "v1")]
    assert _answer(HudiTable.open(path).read()) == expected
    assert _answer(collected(hudi_spark.read(spark, path))) == expected
    filtered = HudiTable.open(path).read(filters=[("zone", "=", "2")])
    assert _answer(filtered) == [("c", "la", "2", 1, "v1")]
    ro = {"hoodie.datasource.query.type": "read_optimized"}
    assert _answer(HudiTable.open(path).read("read_optimized")) == _answer(oracle.read(path, ro))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_our_writes_to_a_table_without_partition_columns_read_alike_in_hudi(
    hudi: Any, spark: Any, collected: Any, tmp_path: Path, table_type: str
) -> None:
    """Hudi creates the table; our local engine and ``hudi_spark.write`` upsert (updates and new
    keys; MOR: into log files, then our compaction), then Hudi upserts again: after each, Hudi's
    snapshot and read_optimized answers are our readers'. Our COW files and commit schemas hold
    no partition column; on MOR our upserts keep them, as text, as Hudi's own upserts there do
    (its reader answers a log record with the partition values it holds: nulls, before, for the
    records of our logs), and our compaction's base files leave them out."""
    import hudi_spark
    from hudi_core.table.file_names import BaseFileName

    oracle, path = hudi.oracle, str(tmp_path / "t")
    oracle.write(path, pa.concat_tables([_rows(["a", "b"], "sf", 1, 1), _rows(["c"], "la", 2, 1)]),
                 _options(table_type, "insert"))  # fmt: skip
    hudis = set(HudiTable.open(path).timeline.completed_commits().timestamps())
    ours = {**_options(table_type, "upsert"), "hoodie.parquet.small.file.limit": "0"}

    def same_answers() -> list[tuple[Any, ...]]:
        for query in ("snapshot", "read_optimized"):
            expected = _answer(oracle.read(path, {"hoodie.datasource.query.type": query}))
            assert _answer(HudiTable.open(path).read(query)) == expected, query
            spark_read = hudi_spark.read(spark, path, {"hoodie.datasource.query.type": query})
            assert _answer(collected(spark_read)) == expected, query
        return _answer(HudiTable.open(path).read())

    HudiTable.open(path).upsert(pa.concat_tables([_rows(["b"], "sf", 1, 3), _rows(["e"], "la", 2, 3)]),
                                options=ours)  # fmt: skip
    same_answers()
    hudi_spark.write(spark.createDataFrame(pa.concat_tables([_rows(["c"], "la", 2, 4), _rows(["f"], "sf", 1, 4)])),
                     path, operation="upsert", options=ours)  # fmt: skip
    same_answers()
    if table_type == "MERGE_ON_READ":
        assert list(tmp_path.rglob(".*.log.*")) and HudiTable.open(path).compact()
        same_answers()
    mine = set(HudiTable.open(path).timeline.completed_commits().timestamps()) - hudis
    oracle.write(path, pa.concat_tables([_rows(["a", "g"], "sf", 1, 5)]), _options(table_type, "upsert"))
    assert same_answers() == [("a", "sf", "1", 5, "v5"), ("b", "sf", "1", 3, "v3"), ("c", "la", "2", 4, "v4"),
                              ("e", "la", "2", 3, "v3"), ("f", "sf", "1", 4, "v4"), ("g", "sf", "1", 5, "v5")]  # fmt: skip
    # COW: no file or commit schema of ours holds a partition column; MOR: our upserts keep them,
    # as text (as Hudi's upserts do there), our compaction's base files do not
    for instant in mine:
        (commit,) = (tmp_path / "t" / ".hoodie").glob(f"{instant}.*commit")
        fields = json.loads(json.loads(commit.read_text())["extraMetadata"]["schema"])["fields"]
        kept = {f["name"]: f["type"] for f in fields if f["name"] in ("city", "zone")}
        files = [f for f in tmp_path.rglob("*.parquet") if BaseFileName.parse(f.name).instant_time == instant]
        in_files = {n for f in files for n in pq.read_schema(f).names} & {"city", "zone"}
        if table_type == "COPY_ON_WRITE" or commit.name.endswith(".commit"):
            assert not kept and not in_files, commit.name
        else:
            assert kept == {"city": ["null", "string"], "zone": ["null", "string"]}, commit.name


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_cdc_table_is_read_past_its_cdc_files(hudi: Any, tmp_path: Path, table_type: str) -> None:
    """``hoodie.table.cdc.enabled=true``: Hudi writes a CDC log file (``....log.1_<token>.cdc``)
    beside each COW merge. Before, our reader warned about every such file on every read (found
    by hand with the oracle); now it passes them by. Our writes to such tables, and Hudi's CDC
    query over them: ``tests/interop/test_cdc.py``."""
    oracle, path = hudi.oracle, str(tmp_path / "t")
    opts = {**_options(table_type, "insert"), "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.table.cdc.enabled": "true"}  # fmt: skip
    oracle.write(path, _rows(["a", "b"], "sf", 1, 1), opts)
    oracle.write(path, _rows(["a"], "sf", 1, 2), {**opts, "hoodie.datasource.write.operation": "upsert"})
    if table_type == "COPY_ON_WRITE":
        assert list(tmp_path.rglob(".*.cdc"))
    expected = _answer(oracle.read(path, {"hoodie.datasource.query.type": "snapshot"}))
    assert _answer(HudiTable.open(path).read()) == expected


@pytest.mark.slow
def test_a_log_compacted_table_answers_every_query_as_hudi(hudi: Any, tmp_path: Path) -> None:
    """``hoodie.log.compaction.inline=true``: Hudi's log compaction (a ``logcompaction`` instant,
    completed as a delta commit) rewrites a file slice's log blocks into one more block whose
    header lists the instants it merged (``COMPACTED_BLOCK_TIMES``); the older blocks stay. We
    read that block as any other: merged again with the blocks it came from, it gives the same
    records. After our upsert and compaction of the table, every query (snapshot,
    read_optimized, incremental from each commit, time travel to each, which reads the slices
    Hudi log-compacted) equals Hudi's."""
    from runner import Query, compare_all, hudi_write, queries
    from workloads import generate

    w = generate(7106, table_type="MERGE_ON_READ", index="BUCKET", payload="default",
                 keygen="simple", compaction="none", clean=False, metadata=False, first="insert",
                 ops=["upsert", "upsert", "delete", "upsert", "upsert", "upsert"])  # fmt: skip
    logc = {"hoodie.log.compaction.inline": "true", "hoodie.log.compaction.blocks.threshold": "2",
            "hoodie.parquet.small.file.limit": "0"}  # fmt: skip
    path = tmp_path / "t"
    for step in w.steps:
        hudi_write(hudi.oracle, path, w, step, logc)
    assert list((path / ".hoodie").glob("*.logcompaction.requested")), "Hudi log-compacted"

    def every_start(p: Path, w: Any) -> list[Query]:
        starts = HudiTable.open(str(p)).timeline.completed_commits().timestamps()[1:-1]
        more = {"hoodie.datasource.query.type": "incremental"}
        return queries(p, w) + [
            Query(
                f"incremental({s},]",
                {**more, "hoodie.datasource.read.begin.instanttime": s},
                {"query_type": "incremental", "start": s},
            )
            for s in starts
        ]

    last = w.steps[-1].data
    HudiTable.open(str(path)).upsert(
        last.slice(0, len(last) // 2), options={**w.options(), "hoodie.compact.inline": "false"}
    )
    assert HudiTable.open(str(path)).compact()
    assert compare_all(hudi.oracle, path, w, every_start) == {}


def test_a_table_with_hfile_log_blocks_reads_and_takes_our_writes(
    hudi: Any, spark: Any, collected: Any, tmp_path: Path
) -> None:
    """``hoodie.logfile.data.block.format=hfile``: Hudi's updates and inserts go to HFile data
    blocks (the metadata table's format: an HFile of Avro records keyed by record key), its
    deletes to a delete block. Our readers give Hudi's answer; our upsert (Avro blocks beside
    them) and compaction, then Hudi's next write: equal."""
    import hudi_spark

    path = str(tmp_path / "t")
    options = table_options("hf", "MERGE_ON_READ", "upsert", {
        "hoodie.logfile.data.block.format": "hfile", "hoodie.parquet.small.file.limit": "0",
    })  # fmt: skip

    def rows(ids: str, v: str | None, ts: int) -> pa.Table:
        return pa.table({"id": list(ids), "p": ["p1"] * len(ids), "v": [v] * len(ids),
                         "ts": pa.array([ts] * len(ids), pa.int64())})  # fmt: skip

    def answer(table: pa.Table) -> list[tuple[Any, ...]]:
        return sorted(
            tuple(r.values()) for r in table.select(["id", "v", "ts", "_hoodie_commit_time"]).to_pylist()
        )

    hudi.oracle.write(path, rows("abcd", "v1", 1), options)
    hudi.oracle.write(path, rows("bc", "v2", 2), options)
    hudi.oracle.write(path, rows("c", None, 3), {**options, "hoodie.datasource.write.operation": "delete"})
    assert {b.block_type.name for b in _log_blocks(path)} == {"HFILE_DATA", "DELETE"}
    expected = answer(hudi.oracle.read(path))
    assert [r[:3] for r in expected] == [("a", "v1", 1), ("b", "v2", 2), ("d", "v1", 1)]
    assert answer(HudiTable.open(path).read()) == expected
    assert answer(collected(hudi_spark.read(spark, path))) == expected
    # (our writer writes Avro blocks: it refuses hoodie.logfile.data.block.format=hfile)
    ours = {k: v for k, v in options.items() if k != "hoodie.logfile.data.block.format"}
    HudiTable.open(path).upsert(rows("ae", "v4", 4), options=ours)
    assert answer(HudiTable.open(path).read()) == answer(hudi.oracle.read(path))
    HudiTable.open(path).compact(options=ours)
    hudi.oracle.write(path, rows("d", "v5", 5), options)
    final = answer(hudi.oracle.read(path))
    assert [r[:3] for r in final] == [("a", "v4", 4), ("b", "v2", 2), ("d", "v5", 5), ("e", "v4", 4)]
    assert answer(HudiTable.open(path).read()) == final


def _log_blocks(path: str) -> list[Any]:
    from hudi_core.log.reader import read_log_file

    table = HudiTable.open(path)
    logs = [f for f in Path(path).rglob(".*.log.*") if not f.name.endswith(".crc")]
    return [b for f in logs for b in read_log_file(table.storage, str(f))]


def test_a_log_record_answers_the_partition_values_it_holds(hudi: Any, tmp_path: Path) -> None:
    """On merge-on-read with ``drop.partition.columns``, Hudi's reader answers a log record's
    partition columns with the values the record holds (its upserts keep them there), a base
    row's from the path. ``explore.py --drop`` seed 19507 (GLOBAL_BLOOM, PartialUpdate, hive-style
    paths) has a key moved with its stored data into a partition its ``city`` does not name, in a
    log until the next compaction: every query, time travel to before it among them, answers as
    Hudi's does (ours answered the path's value there before)."""
    from runner import compare_all, our_write
    from workloads import generate

    w = generate(19507, drop=True, first="bulk_insert", keygen="simple")
    assert (w.table_type, w.index, w.payload, w.keygen) == (
        "MERGE_ON_READ",
        "GLOBAL_BLOOM",
        "partial",
        "simple",
    )
    path = tmp_path / "t"
    for step in w.steps:
        our_write(path, w, step)
    assert compare_all(hudi.oracle, path, w) == {}
