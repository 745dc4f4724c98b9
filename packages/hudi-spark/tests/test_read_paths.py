"""``hudi_spark.read``'s three paths give core's answers: base files with nothing to merge read by
Spark's parquet reader, slices with log files merged whole in Python tasks (the default) or, with
``hoodie.spark.read.jvm.delta``, told as a delta (the JVM reads the base file, an anti-join drops
the rows the merge replaces, Python adds the log's rows)."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.corpus import corpus_tables

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OFF = {"hoodie.spark.read.jvm.parquet": "false"}
DELTA = {"hoodie.spark.read.jvm.delta": "true"}
#: a frame per partition however small the partitions (the default wants 64 MB each)
FRAMES = {"hoodie.spark.read.partition.frame.bytes": "1"}


def _rows(t: pa.Table) -> list[dict[str, Any]]:
    return sorted(t.to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def _paths(path: str, options: dict[str, str], filters: Any = None) -> tuple[int, int, int]:
    """How many file slices each path reads: (plain in the JVM, as a delta, whole in Python)."""
    from hudi_spark.reading import ReadSpec, jvm_readable, plan, read_schema

    spec = ReadSpec.from_options({**options, "path": path})
    schema = read_schema(spec)
    splits = plan(spec, schema.names, filters=filters)
    plain, delta = jvm_readable(spec, splits, schema)
    return len(plain), len(delta), len(splits) - len(plain) - len(delta)


def _trips(n: int, part: str, ts: int, prefix: str = "k") -> pa.Table:
    return pa.table({
        "key": [f"{prefix}{part}{i:03d}" for i in range(n)],
        "ts": pa.array([ts] * n, pa.int64()),
        "v": [float(i) for i in range(n)],
        "part": [part] * n,
    })  # fmt: skip


@pytest.fixture(scope="module")
def mixed_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A MERGE_ON_READ table (BUCKET index, event-time payload) with untouched file groups, log
    files holding updates that win and lose on ``ts``, inserts, a delete block, and a key stored
    twice in a base file; returns its path and its first commit."""
    path = str(tmp_path_factory.mktemp("paths") / "t")
    opts = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
            "hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD}  # fmt: skip
    table = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                             partition_fields="part", ordering_field="ts", options=opts)  # fmt: skip
    first = pa.concat_tables([_trips(60, "a", 100), _trips(60, "b", 100), _trips(40, "c", 100)])
    first = pa.concat_tables([first, first.slice(1, 1)])  # bulk_insert keeps the duplicate
    table.bulk_insert(first, options=opts)
    updates = pa.concat_tables([
        _trips(20, "a", 200),  # newer ts: the log wins
        _trips(30, "b", 50).slice(10),  # older ts: the base rows win (DefaultHoodieRecordPayload)
        _trips(5, "a", 300, prefix="n"),  # inserts
    ])  # fmt: skip
    HudiTable.open(path).upsert(updates, options=opts)
    HudiTable.open(path).delete(_trips(5, "b", 0).slice(2).select(["key", "part"]), options=opts)
    HudiTable.open(path).upsert(_trips(2, "a", 400).slice(1), options=opts)  # the duplicated key
    commits = [i.timestamp for i in HudiTable.open(path).timeline.completed_commits()]
    return path, commits[0]


@pytest.mark.parametrize(
    "options",
    [{}, {"hoodie.datasource.query.type": "read_optimized"}, {"hoodie.datasource.read.columns": "key,v"}],
    ids=["snapshot", "read_optimized", "columns"],
)
def test_every_path_answers_as_core(
    spark: Any, mixed_table: tuple[str, str], options: dict[str, str], collected: Any
) -> None:
    import hudi_spark

    path, _ = mixed_table
    query = options.get("hoodie.datasource.query.type", "snapshot")
    columns = options.get("hoodie.datasource.read.columns")
    expected = HudiTable.open(path).read(query, columns=columns.split(",") if columns else None)
    plain, delta, whole = _paths(path, options)
    assert plain > 0 and delta == 0
    assert whole > 0 if query == "snapshot" else whole == 0  # slices with logs: merged in Python
    plain, delta, whole = _paths(path, {**options, **DELTA})
    assert plain > 0 and whole == 0
    assert delta > 0 if query == "snapshot" else delta == 0
    got = collected(hudi_spark.read(spark, path, options))
    assert got.column_names == expected.column_names
    assert _rows(got) == _rows(expected.cast(got.schema))
    for other in (OFF, DELTA):
        assert _rows(collected(hudi_spark.read(spark, path, {**options, **other}))) == _rows(got)
    assert hudi_spark.read(spark, path, options).count() == expected.num_rows
    assert hudi_spark.read(spark, path, {**options, **DELTA}).count() == expected.num_rows


@pytest.mark.parametrize("more", [{}, DELTA, OFF], ids=["default", "delta", "python"])
def test_skip_merge_gives_base_rows_and_log_records_as_core(
    spark: Any, mixed_table: tuple[str, str], more: dict[str, str], collected: Any
) -> None:
    """``hoodie.datasource.merge.type=skip_merge``: base files read as stored (in the JVM where
    it may), the log files' merged records beside them (in Python), on every path."""
    import hudi_spark

    path, _ = mixed_table
    options = {"hoodie.datasource.merge.type": "skip_merge", **more}
    expected = HudiTable.open(path).read(merge_type="skip_merge")
    merged = HudiTable.open(path).read()
    assert expected.num_rows > merged.num_rows  # the logs' keys twice, the deleted keys' base rows
    plain, delta, whole = _paths(path, options)
    assert delta == 0 and whole > 0  # no slice has a base file and logs to merge
    assert plain == 0 if more is OFF else plain > 0
    got = collected(hudi_spark.read(spark, path, options))
    assert _rows(got) == _rows(expected.cast(got.schema))
    assert hudi_spark.read(spark, path, options).count() == expected.num_rows
    via_format = spark.read.format("hudi").options(**options).load(path)
    assert via_format.count() == expected.num_rows


def test_delta_path_merges_as_core(spark: Any, mixed_table: tuple[str, str]) -> None:
    """The values the merge decides: newer log rows, older ones losing to the base, deletes, the
    duplicated key merged into its first copy only; and time travel before any log."""
    import hudi_spark

    path, first = mixed_table
    df = hudi_spark.read(spark, path, DELTA)
    rows = {(r.key, r.ts) for r in df.select("key", "ts").collect()}
    assert ("ka000", 200) in rows and ("kb015", 100) in rows and ("kb015", 50) not in rows
    assert not any(k in {"kb002", "kb003", "kb004"} for k, _ in rows)
    assert {ts for k, ts in rows if k == "ka001"} == {400, 100}  # the second copy passes through
    assert ("na000", 300) in rows
    assert df.filter("part = 'c'").count() == 40
    old = hudi_spark.read(spark, path, {"as.of.instant": first, **DELTA})
    assert old.count() == 161 and old.filter("ts != 100").count() == 0


def test_corpus_tables_answer_as_core_on_every_path(spark: Any, compat_root: Path, collected: Any) -> None:
    """Apache Hudi's own tables: each read with the JVM paths and without gives core's rows."""
    import hudi_spark

    took_jvm = 0
    for entry in (t for t in corpus_tables() if t.get("table_version") == 6):
        path = str(compat_root / entry["table_path"])
        for options in ({}, DELTA, {"hoodie.datasource.query.type": "read_optimized"}):
            query = options.get("hoodie.datasource.query.type", "snapshot")
            expected = HudiTable.open(path).read(query)
            plain, delta, _ = _paths(path, options)
            took_jvm += plain + delta
            got = collected(hudi_spark.read(spark, path, options))
            assert got.num_rows == expected.num_rows, entry["table_path"]
            assert _rows(got) == _rows(expected.cast(got.schema)), entry["table_path"]
    assert took_jvm > 0


def test_filters_prune_partitions_on_every_read(spark: Any, mixed_table: tuple[str, str]) -> None:
    """``hudi_spark.read(filters=...)`` and a filter of ``format("hudi")`` (as ``hudi_spark.read``)
    leave out the other partitions' file slices, with core's rows."""
    import hudi_spark
    from hudi_spark.compat import to_arrow

    path, _ = mixed_table
    expected = HudiTable.open(path).read(filters=[("part", "=", "c"), ("v", ">=", 10.0)])
    got = to_arrow(hudi_spark.read(spark, path, filters=[("part", "=", "c"), ("v", ">=", 10.0)]))
    assert _rows(got) == _rows(expected.cast(got.schema)) and got.num_rows == 30
    assert _paths(path, {}) != _paths(path, {}, [("part", "=", "c")]) == (2, 0, 0)
    with_logs = [("part", "=", "a"), ("ts", ">=", 200)]  # rows of the log files only
    from_logs = HudiTable.open(path).read(filters=with_logs)
    assert _paths(path, DELTA, with_logs)[1] > 0 and from_logs.num_rows == 25
    for options in ({}, DELTA):
        got_logs = to_arrow(hudi_spark.read(spark, path, options, filters=with_logs))
        assert _rows(got_logs) == _rows(from_logs.cast(got_logs.schema))
    narrow = spark.read.format("hudi").load(path).filter("part = 'c' AND v >= 10.0")
    assert _rows(to_arrow(narrow)) == _rows(expected.cast(got.schema))
    files = narrow.inputFiles()  # partition c's two base files, read by Spark's parquet scan
    assert len(files) == 2 and all("/c/" in f for f in files)


def test_the_data_source_answers_each_query_of_a_dataframe_alike(
    spark: Any, mixed_table: tuple[str, str]
) -> None:
    """``format("hudi")`` through the Python data source, with Spark's filter pushdown on: each
    query of one DataFrame gets its own rows. (PySpark 4.1-4.3 keep the read a pushdown planned
    for every later query of the relation; the reader takes no filters, so none is baked in.)"""
    import pyarrow.compute as pc
    from hudi_spark.compat import has_data_source_api, to_arrow

    if not has_data_source_api():
        pytest.skip("PySpark 3.5 has no Python data sources")
    path, _ = mixed_table
    full = HudiTable.open(path).read()
    key = "spark.sql.python.filterPushdown.enabled"
    spark.conf.set(key, "true")
    try:
        df = spark.read.format("hudi").option("hoodie.spark.read.format.fast", "false").load(path)
        assert not hasattr(df, "_hudi_methods")
        part_c, ka001 = pc.equal(full.column("part"), "c"), pc.equal(full.column("key"), "ka001")
        assert df.filter("part = 'c'").count() == full.filter(part_c).num_rows == 40
        assert df.filter("key = 'ka001'").count() == full.filter(ka001).num_rows == 2  # (the duplicate)
        assert df.count() == full.num_rows
        either = to_arrow(df.filter("part = 'c' OR ts >= 400"))
        expected = full.filter(pc.or_(part_c, pc.greater_equal(full.column("ts"), 400)))
        assert expected.num_rows > 40 and _rows(either) == _rows(expected.cast(either.schema))
        assert _rows(to_arrow(df)) == _rows(full.cast(either.schema))
    finally:
        spark.conf.unset(key)


def test_a_key_filter_reads_only_the_base_files_that_may_hold_the_key(
    spark: Any, mixed_table: tuple[str, str]
) -> None:
    """A filter on the record key leaves out the base files whose footer (min/max keys, bloom
    filter) rules the key out; their slices' log files are still merged. ``hudi_spark.read`` and
    ``format("hudi")`` give the full read's rows of the key: in a base file only, updated by a
    log record that wins or loses on ``ts``, stored twice, deleted, inserted by a log, absent."""
    import hudi_spark
    import pyarrow.compute as pc
    from hudi_spark.compat import to_arrow
    from hudi_spark.reading import ReadSpec, plan, read_schema

    path, _ = mixed_table
    full = HudiTable.open(path).read()
    spec = ReadSpec.from_options({"path": path})
    names = read_schema(spec).names
    for key, bases in (("kc007", 1), ("ka005", 1), ("kb015", 1), ("ka001", 1), ("kb003", 1), ("na002", 0),
                       ("zz999", 0)):  # fmt: skip
        expected = full.filter(pc.equal(full.column("key"), key))
        splits = plan(spec, names, filters=[("key", "=", key)])
        assert sum(s.base_file is not None for s in splits) == bases, key
        assert sum(bool(s.log_files) for s in splits) == 4, key  # every slice with logs stays
        got = to_arrow(hudi_spark.read(spark, path, filters=[("key", "=", key)]))
        assert _rows(got) == _rows(expected.cast(got.schema)), key
        pushed = to_arrow(spark.read.format("hudi").load(path).filter(f"key = '{key}'"))
        assert _rows(pushed) == _rows(expected.cast(pushed.schema)), key
    assert full.filter(pc.equal(full.column("key"), "ka001")).num_rows == 2  # (the duplicate)
    for prefix in ("kc0", "ka00", "n", "kb01"):  # a prefix is planned as the range of text it lies in
        pushed = to_arrow(spark.read.format("hudi").load(path).filter(f"key LIKE '{prefix}%'"))
        expected = full.filter(pc.starts_with(full.column("key"), prefix))
        assert pushed.num_rows > 0 and _rows(pushed) == _rows(expected.cast(pushed.schema)), prefix


def test_date_time_and_decimal_filters_pushed_into_format_hudi_answer_as_spark(
    spark: Any, tmp_path: Path
) -> None:
    """Filters on date, timestamp and decimal columns reach core (partition pruning, statistics)
    and keep Spark's answer: a filter of format("hudi") planned into the read with Spark's
    literals (a timestamp read in a session time zone other than UTC), and given to
    hudi_spark.read(filters=) as text."""
    import hudi_spark
    from hudi_spark.compat import to_arrow

    path = str(tmp_path / "t")
    utc = datetime.timezone.utc
    rows = pa.table({
        "key": [f"k{i}" for i in range(6)],
        "ts": pa.array([1] * 6, pa.int64()),
        "at": pa.array([datetime.datetime(2024, 1, 1 + i, 12, tzinfo=utc) for i in range(6)], pa.timestamp("us", "UTC")),
        "price": pa.array([decimal.Decimal(i) / 4 for i in range(6)], pa.decimal128(10, 2)),
        "day": pa.array([datetime.date(2024, 1, 1 + i // 2) for i in range(6)]),
    })  # fmt: skip
    table = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                             partition_fields="day", ordering_field="ts")  # fmt: skip
    table.bulk_insert(rows)
    HudiTable.open(path).upsert(rows.slice(0, 2).set_column(1, "ts", pa.array([2, 2], pa.int64())))
    conditions = ["day = DATE'2024-01-02'", "day IN (DATE'2024-01-01', DATE'2024-01-03')", "day < DATE'2024-01-02'",
                  "at >= TIMESTAMP'2024-01-04 04:00:00'", "at < TIMESTAMP'2024-01-02 05:00:00'",
                  "price > 0.5", "price = 0.25", "price IN (1.0, 1.25)"]  # fmt: skip
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")  # 04:00 there is 12:00 UTC
    try:
        for condition in conditions:
            pushed = to_arrow(spark.read.format("hudi").load(path).filter(condition))
            spark_side = to_arrow(hudi_spark.read(spark, path).select("*").filter(condition))
            assert pushed.num_rows > 0 and _rows(pushed) == _rows(spark_side), condition
        later = to_arrow(spark.read.format("hudi").load(path).filter("at >= TIMESTAMP'2024-01-04 04:00:00'"))
        assert sorted(later.column("key").to_pylist()) == ["k3", "k4", "k5"]
        # the same written as text (and a number on the decimal) through hudi_spark.read(filters=)
        given = [(("day", ">=", "2024-01-02"), "day >= DATE'2024-01-02'"),
                 (("at", "<", "2024-01-02T05:00:00-08:00"), "at < TIMESTAMP'2024-01-02 05:00:00'"),
                 (("price", ">", 0.5), "price > 0.5"), (("price", "in", [1, "1.25"]), "price IN (1.0, 1.25)")]  # fmt: skip
        for f, condition in given:
            got = to_arrow(hudi_spark.read(spark, path, filters=[f]))
            spark_side = to_arrow(hudi_spark.read(spark, path).select("*").filter(condition))
            assert got.num_rows > 0 and _rows(got) == _rows(spark_side), f
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def _merged_frames(df: Any) -> int:
    """How many ``mapInArrow`` frames (file slices merged in Python tasks) Spark's optimized plan keeps."""
    return str(df._jdf.queryExecution().optimizedPlan()).count("MapInArrow")


def test_a_spark_filter_on_the_partition_column_merges_only_its_partitions(
    spark: Any, mixed_table: tuple[str, str]
) -> None:
    """``hudi_spark.read`` merges each partition's slices in a frame of their own whose partition
    column is the partition's value (partitions of ``hoodie.spark.read.partition.frame.bytes`` and
    more): a filter on that column in Spark (no ``filters=``) leaves the other partitions' merges
    out of the plan, with core's rows."""
    import hudi_spark
    from hudi_spark.compat import to_arrow

    path, _ = mixed_table
    assert _merged_frames(hudi_spark.read(spark, path)) == 1  # small partitions: one frame
    df = hudi_spark.read(spark, path, FRAMES)
    assert _merged_frames(df) == 2  # partitions a and b have log files, c has none
    spark_only = df.select("*")  # Spark's own filter (a read's filter plans the read again)
    assert _merged_frames(spark_only.filter("part = 'a'")) == 1
    assert _merged_frames(spark_only.filter("part = 'c'")) == 0
    assert _merged_frames(spark_only.filter("part IN ('a', 'b') AND v > 3")) == 2
    for part in ("a", "b", "c"):
        expected = HudiTable.open(path).read(filters=[("part", "=", part)])
        got = to_arrow(spark_only.filter(f"part = '{part}'"))
        assert got.num_rows == expected.num_rows > 0
        assert _rows(got) == _rows(expected.cast(got.schema))


def test_partition_values_the_path_cannot_tell_stay_in_the_rows(
    spark: Any, tmp_path: Path, collected: Any
) -> None:
    """Rows with a null partition value live under ``__HIVE_DEFAULT_PARTITION__``: their merged
    frame keeps the column as read (null), not the path's text."""
    import hudi_spark

    path = str(tmp_path / "t")
    opts = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}
    table = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                             partition_fields="part", ordering_field="ts", options=opts)  # fmt: skip
    rows = pa.table({"key": ["a", "b", "c"], "ts": pa.array([1, 1, 1], pa.int64()), "part": ["x", None, "x"]})
    table.bulk_insert(rows, options=opts)
    HudiTable.open(path).upsert(rows.set_column(1, "ts", pa.array([2, 2, 2], pa.int64())), options=opts)
    assert sorted(p.name for p in Path(path).iterdir() if not p.name.startswith(".")) == [
        "__HIVE_DEFAULT_PARTITION__",
        "x",
    ]
    df = hudi_spark.read(spark, path, FRAMES)
    assert _merged_frames(df) == 2
    got = collected(df)
    assert sorted((r["key"], r["part"], r["ts"]) for r in got.to_pylist()) == [
        ("a", "x", 2),
        ("b", None, 2),
        ("c", "x", 2),
    ]
    assert df.filter("part IS NULL").count() == 1 and df.filter("part = 'x'").count() == 2


def test_a_payload_that_fills_nulls_is_merged_whole_in_python(
    spark: Any, tmp_path: Path, collected: Any
) -> None:
    """OverwriteNonDefaults fills an update's null fields from the base row it replaces, so a
    slice with logs is never told as a delta (the JVM's base rows would lose those values), even
    when asked: every path gives core's rows, the filled values included."""
    import hudi_spark

    path = str(tmp_path / "t")
    opts = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
            "hoodie.datasource.write.payload.class":
                "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload"}  # fmt: skip
    table = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                             partition_fields="part", ordering_field="ts", options=opts)  # fmt: skip
    table.bulk_insert(_trips(20, "a", 100), options=opts)
    update = _trips(10, "a", 200)
    HudiTable.open(path).upsert(update.set_column(2, "v", pa.nulls(10, pa.float64())), options=opts)
    expected = HudiTable.open(path).read()
    updated = sorted((r["key"], r["v"]) for r in expected.to_pylist() if r["ts"] == 200)
    assert updated == [(f"ka{i:03d}", float(i)) for i in range(10)]  # kept from the base rows
    assert _paths(path, DELTA) == (0, 0, 2)  # both slices have logs, neither told as a delta
    for options in ({}, DELTA):
        got = collected(hudi_spark.read(spark, path, options))
        assert _rows(got) == _rows(expected.cast(got.schema))


@pytest.mark.parametrize(
    ("payload", "delta"), [("MySqlDebeziumAvroPayload", True), ("PostgresDebeziumAvroPayload", False)]
)
def test_debezium_slices_read_alike_on_every_path(
    spark: Any, tmp_path: Path, payload: str, delta: bool, collected: Any
) -> None:
    """Under the Debezium payloads the source position decides between a log record and the
    base row. MySQL's slices are told as deltas (the JVM reads the base file, core names the rows
    the log replaces); Postgres's, whose TOASTed text takes the base row's value, merge whole in
    Python. Every path gives core's rows: stale updates lose, newer ones win, filled where TOASTed."""
    import hudi_spark

    path = str(tmp_path / "t")
    opts = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
            "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.debezium." + payload}  # fmt: skip

    def rows(n: int, seq: list[int], text: str) -> pa.Table:
        t = _trips(n, "a", 0)
        t = t.append_column("_event_seq", pa.array([f"1.{s:06d}" for s in seq]))
        t = t.append_column("_event_lsn", pa.array(seq, pa.int64()))
        return t.append_column("s", pa.array([text] * n))

    table = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                             partition_fields="part", ordering_field="ts", options=opts)  # fmt: skip
    table.bulk_insert(rows(20, [100] * 20, "stored"), options=opts)
    HudiTable.open(path).upsert(rows(10, [50] * 5 + [200] * 5, "__debezium_unavailable_value"), options=opts)
    expected = HudiTable.open(path).read()
    got = {r["key"]: (r["_event_lsn"], r["s"]) for r in expected.to_pylist()}
    assert [got[f"ka{i:03d}"][0] for i in range(10)] == [100] * 5 + [200] * 5  # stale updates lost
    assert {got[f"ka{i:03d}"][1] for i in range(5, 10)} == {
        "__debezium_unavailable_value" if delta else "stored"
    }
    assert _paths(path, DELTA) == ((0, 2, 0) if delta else (0, 0, 2))
    for options in ({}, DELTA):
        answer = collected(hudi_spark.read(spark, path, options))
        assert _rows(answer) == _rows(expected.cast(answer.schema))


def test_files_written_before_a_type_change_read_alike_on_every_path(spark: Any, tmp_path: Path) -> None:
    """A copy-on-write file keeps a double and a float column that a later insert (a file of its
    own) took to text and to double: Spark's parquet reader cannot give them in the new types, so
    those slices are read in Python, where the numbers become Java's text and the float its
    double through its text, as Apache Hudi reads them."""
    import hudi_spark

    path = str(tmp_path / "t")
    t = HudiTable.create(path, name="t", record_key_fields="id", partition_fields="p", ordering_field="ts")
    no_small = {"hoodie.parquet.small.file.limit": "0"}
    t.insert(pa.table({"id": ["a", "b"], "p": ["p1"] * 2, "ts": [1, 1], "c": [100.0, 1e10],
                       "f": pa.array([1.1, 2.5], pa.float32())}), options=no_small)  # fmt: skip
    HudiTable.open(path).insert(
        pa.table({"id": ["z"], "p": ["p1"], "ts": [2], "c": ["x"], "f": [0.1]}), options=no_small
    )
    expected = [
        {"id": "a", "c": "100.0", "f": 1.1},
        {"id": "b", "c": "1.0E10", "f": 2.5},
        {"id": "z", "c": "x", "f": 0.1},
    ]
    assert _rows(HudiTable.open(path).read(columns=["id", "c", "f"])) == expected
    for query in ("snapshot", "read_optimized"):
        options = {"hoodie.datasource.query.type": query}
        for df in (
            hudi_spark.read(spark, path, options),
            spark.read.format("hudi").options(**options).load(path),
        ):
            assert sorted((r.asDict() for r in df.select("id", "c", "f").collect()), key=str) == expected, (
                query
            )
