"""``spark.read.format("hudi")`` returns what core's reader returns, on every corpus table, read as
``hudi_spark.read`` (a driver that imported ``hudi_spark``) and through PySpark 4's Python Data
Source API (``hoodie.spark.read.format.fast=false``, or a driver that never imported it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core.testing.corpus import corpus_tables

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

V6 = [t for t in corpus_tables() if t["table_version"] == 6]


def _sorted(t: pa.Table) -> pa.Table:
    keys = [c for c in ("_hoodie_record_key", "_hoodie_commit_time", "id", "uuid") if c in t.column_names]
    return t.sort_by([(k, "ascending") for k in keys]) if t.num_rows else t


def _same(spark_table: pa.Table, core_table: pa.Table) -> None:
    assert spark_table.column_names == core_table.column_names
    a, b = _sorted(spark_table), _sorted(core_table)
    for name in a.column_names:
        # Spark's Arrow types may differ in nullability / list field names only: compare values
        assert a.column(name).to_pylist() == b.column(name).to_pylist(), name


#: format("hudi") through PySpark's Python Data Source API rather than as hudi_spark.read
DATA_SOURCE = {"hoodie.spark.read.format.fast": "false"}


@pytest.mark.parametrize("fast", [True, False], ids=["as_read", "data_source"])
@pytest.mark.parametrize("entry", V6, ids=[f"{t['category']}/{t['name']}" for t in V6])
def test_snapshot_equals_core_reader(
    spark: Any, compat_root: Path, entry: dict[str, Any], fast: bool, collected: Any
) -> None:
    from hudi_core import HudiTable

    path = str(compat_root / entry["table_path"])
    core = HudiTable.open(path).read()
    df = spark.read.format("hudi").options(**({} if fast else DATA_SOURCE)).load(path)
    assert hasattr(df, "_hudi_methods") == fast  # hudi_spark.read's DataFrame, or the data source's
    got = collected(df)
    assert got.num_rows == entry["rows"]
    _same(got, core)


def test_query_types_time_travel_and_pruning(spark: Any, compat_root: Path, collected: Any) -> None:
    from hudi_core import HudiTable

    entry = next(t for t in V6 if t["category"] == "trips_mor_avro")
    path = str(compat_root / entry["table_path"])
    table = HudiTable.open(path)
    commits = [i.timestamp for i in table.timeline.completed_commits()]
    first, last = commits[0], commits[-1]
    reader = spark.read.format("hudi")

    ro = collected(reader.option("hoodie.datasource.query.type", "read_optimized").load(path))
    _same(ro, table.read("read_optimized"))

    tt = collected(reader.option("as.of.instant", first).load(path))
    _same(tt, table.read(as_of=first))
    assert set(tt.column("_hoodie_commit_time").to_pylist()) == {first}

    inc = collected(
        spark.read.format("hudi")
        .option("hoodie.datasource.query.type", "incremental")
        .option("hoodie.datasource.read.begin.instanttime", first)
        .option("hoodie.datasource.read.end.instanttime", last)
        .load(path)
    )
    _same(inc, table.read("incremental", start=first, end=last))
    assert inc.num_rows > 0 and first not in inc.column("_hoodie_commit_time").to_pylist()

    pruned = spark.read.format("hudi").option("hoodie.datasource.read.columns", "uuid,fare").load(path)
    assert pruned.columns == ["uuid", "fare"]
    assert sorted(pruned.toArrow().column("uuid").to_pylist()) == sorted(
        table.read().column("uuid").to_pylist()
    )

    by_schema = spark.read.format("hudi").schema("uuid string, city string").load(path)
    assert by_schema.count() == table.read().num_rows
    assert by_schema.toArrow().column_names == ["uuid", "city"]


COW = "tables/sample_cow/v6_simplekeygen_nonhivestyle"  # 3 rows at FIRST, 1 more + 1 update at LAST
FIRST, LAST = "20240418172802262", "20240418172804498"


def _incremental(spark: Any, path: str, begin: str, end: str | None = None) -> Any:
    reader = (
        spark.read.format("hudi")
        .option("hoodie.datasource.query.type", "incremental")
        .option("hoodie.datasource.read.begin.instanttime", begin)
    )
    if end is not None:
        reader = reader.option("hoodie.datasource.read.end.instanttime", end)
    return reader.load(path)


def test_incremental_from_000_and_ranges_without_commits(spark: Any, compat_root: Path) -> None:
    from hudi_core import HudiTable

    path = str(compat_root / COW)
    every = _incremental(spark, path, "000").toArrow()
    _same(every, HudiTable.open(path).read("incremental", start="000"))
    assert every.num_rows == 4 and _incremental(spark, path, "0").count() == 4
    # nothing new since the begin instant: no rows (Hudi's incremental pull loop), same columns
    for begin, end in [(LAST, None), ("20250101000000000", None), (LAST, FIRST)]:
        df = _incremental(spark, path, begin, end)
        assert (df.count(), df.columns) == (0, every.column_names), (begin, end)


def test_as_of_instant_in_hudis_forms_only(spark: Any, compat_root: Path) -> None:
    path = str(compat_root / COW)
    at = spark.read.format("hudi").option("as.of.instant", "2024-04-18 17:28:02").load(path)
    assert set(at.toArrow().column("_hoodie_commit_time").to_pylist()) == {FIRST}
    for bad in ("2024-13-45", "202404181728"):
        with pytest.raises(Exception, match=rf"as\.of\.instant='{bad}' is not an instant time") as err:
            spark.read.format("hudi").option("as.of.instant", bad).load(path).count()
        assert "'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'" in str(err.value)


def test_bad_query_type_names_the_value(spark: Any, compat_root: Path) -> None:
    path = str(compat_root / V6[0]["table_path"])
    with pytest.raises(Exception, match="bogus"):
        spark.read.format("hudi").option("hoodie.datasource.query.type", "bogus").load(path).count()


def test_reads_across_a_pending_compaction(spark: Any, tmp_path: Path, collected: Any) -> None:
    """Under a pending compaction the latest slice has no base file yet: Spark's reader merges
    it with the slice before (base + logs of both), as core's reader does."""
    from hudi_core import HudiTable

    path = str(tmp_path / "t")
    opts = {"hoodie.parquet.small.file.limit": "0", "hoodie.compact.inline": "false"}
    t = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=opts)  # fmt: skip
    t.upsert(
        pa.table({"id": list(range(10)), "p": ["a", "b"] * 5, "ts": [1] * 10, "v": ["v1"] * 10}), options=opts
    )
    t.upsert(
        pa.table({"id": [0, 1, 2, 3], "p": ["a", "b", "a", "b"], "ts": [2] * 4, "v": ["v2"] * 4}),
        options=opts,
    )
    compaction = HudiTable.open(path).schedule_compaction(opts, force=True)
    assert compaction is not None
    t = HudiTable.open(path)
    t.upsert(pa.table({"id": [0, 5, 20], "p": ["a", "b", "a"], "ts": [3] * 3, "v": ["v3"] * 3}), options=opts)
    t = HudiTable.open(path)
    assert any(s.base_file is None for s in t.file_slices())  # the compaction's slice: logs only
    for query_type in ("snapshot", "read_optimized"):
        core = t.read(query_type=query_type)
        got = collected(
            spark.read.format("hudi").option("hoodie.datasource.query.type", query_type).load(path)
        )
        _same(got, core)
    got = collected(spark.read.format("hudi").load(path).select("id", "v"))
    rows = dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True))
    assert rows == {**{i: "v1" for i in range(10)}, 1: "v2", 2: "v2", 3: "v2", 0: "v3", 5: "v3", 20: "v3"}


def _plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_format_hudi_loads_as_hudi_spark_read(spark: Any, tmp_path: Path, collected: Any) -> None:
    """In a driver that imported hudi_spark, ``spark.read.format("hudi").load(path)`` in each of
    PySpark's forms is ``hudi_spark.read``'s DataFrame for the reader's options: log-free slices
    through Spark's parquet scan, a count and a filter planned into the read; a schema of the
    user's or ``hoodie.spark.read.format.fast=false`` read through the Python data source. Both
    answer alike."""
    from hudi_core import HudiTable

    path = str(tmp_path / "t")
    t = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    t.bulk_insert(
        pa.table({"id": list(range(12)), "p": ["a", "b", "c"] * 4, "ts": [1] * 12, "v": ["v1"] * 12})
    )
    HudiTable.open(path).upsert(pa.table({"id": [0, 1], "p": ["a", "b"], "ts": [2, 2], "v": ["v2", "v2"]}))
    ro = {"hoodie.datasource.query.type": "read_optimized"}
    forms = {
        "format().load(path)": spark.read.format("hudi").load(path),
        "load(path, format=, **options)": spark.read.load(path, format="HUDI", **ro),
        "option('path').load()": spark.read.format("hudi").option("path", path).options(**ro).load(),
        "load([path])": spark.read.format("hudi").load([path]),
    }
    for form, df in forms.items():
        assert hasattr(df, "_hudi_methods"), form
    snapshot, read_optimized = forms["format().load(path)"], forms["load(path, format=, **options)"]
    assert "FileScan parquet" in _plan(snapshot) and "MapInArrow" in _plan(snapshot)  # partition c: no logs
    assert "MapInArrow" not in _plan(read_optimized)  # every base file through Spark's reader
    t = HudiTable.open(path)
    expected = {"snapshot": t.read(), "read_optimized": t.read("read_optimized")}
    for form, df in forms.items():
        query = (
            "read_optimized"
            if form in ("load(path, format=, **options)", "option('path').load()")
            else "snapshot"
        )
        _same(collected(df), expected[query])
    data_source = spark.read.format("hudi").options(**DATA_SOURCE).load(path)
    by_schema = spark.read.format("hudi").schema("id long, v string").load(path)
    for df in (data_source, by_schema):
        assert not hasattr(df, "_hudi_methods") and "BatchScan hudi" in _plan(df)  # the data source's scan
    _same(collected(data_source), expected["snapshot"])
    assert by_schema.count() == 12 and by_schema.columns == ["id", "v"]
    for condition in ("p = 'a'", "id IN (0, 3) AND v = 'v2'", "ts > 1 OR id = 5"):
        fast = snapshot.filter(condition)
        assert fast.count() == data_source.filter(condition).count() > 0, condition
        assert sorted(collected(fast).column("id").to_pylist()) == sorted(
            collected(data_source.filter(condition)).column("id").to_pylist()
        ), condition


def test_read_stream_reads_every_new_commit_once(spark: Any, tmp_path: Path) -> None:
    """``spark.readStream.format("hudi")``: each micro-batch holds the records changed since the
    last one (their latest values, MOR logs merged); a restart from the checkpoint reads nothing
    twice; ``startOffset=latest`` skips what is already there."""
    import hudi_spark

    path, opts = str(tmp_path / "t"), {
        "hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "uuid", "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
    }  # fmt: skip

    def upsert(rows: list[tuple[str, int]]) -> str:
        data = pa.table(
            {"uuid": [k for k, _ in rows], "ts": [v for _, v in rows], "city": ["sf"] * len(rows)}
        )
        return str(
            hudi_spark.write(spark.createDataFrame(data), path, operation="upsert", options=opts).instant
        )

    def run(checkpoint: str, **options: str) -> list[tuple[str, int, str]]:
        got: list[pa.Table] = []
        stream = spark.readStream.format("hudi").options(**options).load(path)
        query = (
            stream.writeStream.foreachBatch(lambda df, _: got.append(df.select("uuid", "ts", "_hoodie_commit_time").toArrow()))
            .option("checkpointLocation", str(tmp_path / checkpoint))
            .trigger(availableNow=True)
            .start()
        )  # fmt: skip
        query.awaitTermination()
        rows = [r for t in got for r in zip(*t.to_pydict().values(), strict=True)]
        return sorted(rows)

    c1, c2 = upsert([("a", 1), ("b", 1)]), upsert([("b", 2), ("c", 2)])
    assert run("q1") == [("a", 1, c1), ("b", 2, c2), ("c", 2, c2)]
    assert run("q2", **{"hoodie.datasource.streaming.startOffset": "latest"}) == []
    c3 = upsert([("a", 3), ("d", 3)])
    assert run("q1") == [("a", 3, c3), ("d", 3, c3)]  # restarted from its checkpoint: only the new commit
    assert run("q1") == []
    assert run("q2") == [("a", 3, c3), ("d", 3, c3)]
    assert run("q3", **{"hoodie.datasource.streaming.startOffset": c1}) == [
        ("a", 3, c3),
        ("b", 2, c2),
        ("c", 2, c2),
        ("d", 3, c3),
    ]


def test_sql_over_a_temporary_view_and_create_table_refused_clearly(spark: Any, compat_root: Path) -> None:
    """SQL: a temporary view over format("hudi") (by DataFrame or by SQL) answers queries as
    core's reader; CREATE TABLE ... USING hudi is refused with what to do instead, since Spark
    4.3 hands a Python data source no options (not even the path) when it reads a catalog table."""
    from hudi_core import HudiTable

    path = str(compat_root / COW)
    session = spark.newSession()
    session.read.format("hudi").load(path).createOrReplaceTempView("trips_df")
    session.sql(f"CREATE TEMPORARY VIEW trips_sql USING hudi OPTIONS (path '{path}')")
    core = HudiTable.open(path).read()
    expected = sorted(core.column("_hoodie_record_key").to_pylist())
    for view in ("trips_df", "trips_sql"):
        got = session.sql(f"SELECT _hoodie_record_key AS k FROM {view} ORDER BY k").collect()
        assert [r.k for r in got] == expected
    with pytest.raises(Exception, match=r"CREATE TABLE \.\.\. USING hudi: .*CREATE TEMPORARY VIEW"):
        session.sql(f"CREATE TABLE trips_catalog USING hudi LOCATION '{path}'")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_cdc_queries_answer_core_read_changes(
    spark: Any, tmp_path: Path, collected: Any, table_type: str
) -> None:
    """``hoodie.datasource.query.incremental.format=cdc`` on a table with
    ``hoodie.table.cdc.enabled``: ``hudi_spark.read``, ``format("hudi")`` through the Data Source
    API and a ``readStream`` answer core's ``read_changes`` (op, ts_ms, before, after); the
    stream a micro-batch of each commit's changes. Before, the option was ignored and the
    answer was the commits' records as they stand. ``hoodie.spark.read.cdc.images=struct``
    answers ``read_changes(images="struct")``."""
    import hudi_spark
    from hudi_core import HudiTable

    path = str(tmp_path / "t")
    t = HudiTable.create(path, name="t", table_type=table_type, record_key_fields="id", partition_fields="city",
                         ordering_field="ts", options={"hoodie.table.cdc.enabled": "true"})  # fmt: skip

    def rows(ids: list[str], ts: int) -> pa.Table:
        return pa.table(
            {"id": ids, "city": ["sf"] * len(ids), "ts": [ts] * len(ids), "v": [f"{i}{ts}" for i in ids]}
        )

    t.bulk_insert(rows(["a", "b"], 1))
    first = t.timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    t.upsert(rows(["a", "c"], 2))
    t.delete(rows(["b"], 3))
    expected = _rows_of(t.read_changes())
    assert [r[0] for r in expected] == ["d", "i", "i", "i", "u"]
    opts = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "000",
            "hoodie.datasource.query.incremental.format": "cdc"}  # fmt: skip
    assert _rows_of(collected(hudi_spark.read(spark, path, opts))) == expected
    source = spark.read.format("hudi").options(**opts, **DATA_SOURCE).load(path)
    assert source.columns == ["op", "ts_ms", "before", "after"]
    assert _rows_of(collected(source)) == expected
    later = {**opts, "hoodie.datasource.read.begin.instanttime": first}
    assert _rows_of(collected(hudi_spark.read(spark, path, later))) == _rows_of(t.read_changes(first))
    # the images as typed structs (our option): both entry points answer core's typed changes
    typed = {**opts, "hoodie.spark.read.cdc.images": "struct"}
    expected_typed = _rows_of(t.read_changes(images="struct"))
    assert {"id": "a", "city": "sf", "ts": 1, "v": "a1"} in [r[2] for r in expected_typed]
    assert _rows_of(collected(hudi_spark.read(spark, path, typed))) == expected_typed
    typed_source = spark.read.format("hudi").options(**typed, **DATA_SOURCE).load(path)
    assert _rows_of(collected(typed_source)) == expected_typed
    got: list[pa.Table] = []
    stream = (
        spark.readStream.format("hudi").option("hoodie.datasource.query.incremental.format", "cdc").load(path)
    )
    query = (
        stream.writeStream.foreachBatch(lambda df, _: got.append(df.toArrow()))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )  # fmt: skip
    query.awaitTermination()
    assert _rows_of(pa.concat_tables(got)) == expected


def _rows_of(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(r.values()) for r in t.select(["op", "ts_ms", "before", "after"]).to_pylist()), key=repr
    )
