"""A ``hudi_spark.read`` DataFrame's own methods (``hudi_spark.collect``): ``toArrow`` and
``toPandas`` on a local master take the read tasks' Arrow files, ``count()`` counts in the read
tasks without the columns, ``filter``/``where`` and ``select`` plan the read again with what they
narrow. Each answers exactly as Spark's own."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

OPTS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}


def _batch(keys: list[str], ts: int) -> pa.Table:
    n = len(keys)
    return pa.table({
        "key": keys,
        "ts": pa.array([ts] * n, pa.int64()),
        "part": ["p1" if i % 2 else "p2" for i in range(n)],
        "at": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5, i) for i in range(n)], pa.timestamp("us", "UTC")),
        "day": pa.array([datetime.date(2024, 1, 1 + i % 28) for i in range(n)], pa.date32()),
        "price": pa.array([decimal.Decimal(f"{i}.{ts % 100:02d}") for i in range(n)], pa.decimal128(10, 2)),
        "raw": [f"b{i}".encode() for i in range(n)],
        "tags": [[f"t{i}", None] for i in range(n)],
        "attrs": pa.array([[("a", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
        "point": pa.array([{"x": float(i), "y": None} for i in range(n)],
                          pa.struct([("x", pa.float64()), ("y", pa.float64())])),
    })  # fmt: skip


@pytest.fixture
def table(tmp_path: Path) -> str:
    """A merge-on-read table with a log in each of its file groups (merged in Python tasks): 40
    keys, then 20 of which 14 update and 6 are new: 46 rows, 20 of them with ts 2."""
    path = str(tmp_path / "t")
    t = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                         partition_fields="part", ordering_field="ts", options=OPTS)  # fmt: skip
    t.bulk_insert(_batch([f"k{i:03d}" for i in range(40)], 1), options=OPTS)
    HudiTable.open(path).upsert(_batch([f"k{i:03d}" for i in range(0, 60, 3)], 2), options=OPTS)
    return path


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows each collection through the read tasks' files gave."""
    from hudi_spark import collect

    seen: list[int] = []
    original = collect.collect_batches

    def spy(*args: Any, **kwargs: Any) -> list[pa.RecordBatch]:
        batches = original(*args, **kwargs)
        seen.append(sum(b.num_rows for b in batches))
        return batches

    monkeypatch.setattr(collect, "collect_batches", spy)
    return seen


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """What each count through the read tasks gave."""
    from hudi_spark import collect

    seen: list[int] = []
    original = collect.count_rows

    def spy(*args: Any, **kwargs: Any) -> int:
        n = original(*args, **kwargs)
        seen.append(n)
        return n

    monkeypatch.setattr(collect, "count_rows", spy)
    return seen


def _texts(t: pa.Table) -> list[str]:
    return [str(r) for r in t.sort_by("key").to_pylist()]


def _leftovers(spark: Any) -> list[str]:
    local = Path(spark.sparkContext.getConf().get("spark.local.dir"))
    return [p.name for p in local.rglob("hudi-spark-collect-*")]


def test_to_arrow_and_to_pandas_answer_as_spark_collects(spark: Any, table: str, calls: list[int]) -> None:
    import hudi_spark

    df = hudi_spark.read(spark, table)
    expected = df.select("*").toArrow() if hasattr(df, "toArrow") else None
    spark_pandas = df.select("*").toPandas()
    assert calls == []  # a derived DataFrame is Spark's own
    if expected is not None:  # PySpark 4
        got = df.toArrow()
        assert got.schema == expected.schema
        assert got.sort_by("key").to_pylist() == expected.sort_by("key").to_pylist()
        assert got.num_rows == 46 and got.column("ts").to_pylist().count(2) == 20
    ours = df.toPandas()
    assert calls[-1] == 46
    assert list(ours.columns) == list(spark_pandas.columns) and list(ours.dtypes) == list(spark_pandas.dtypes)
    scalars = ["key", "ts", "part", "at", "day", "price", "raw"]
    assert (
        ours[scalars].sort_values("key").reset_index(drop=True).equals(
            spark_pandas[scalars].sort_values("key").reset_index(drop=True)
        )
    )  # fmt: skip
    assert _leftovers(spark) == []


def test_to_pandas_in_another_session_time_zone(spark: Any, table: str, calls: list[int]) -> None:
    """Timestamps come to pandas in the session's time zone, as Spark's collection gives them."""
    import hudi_spark

    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        df = hudi_spark.read(spark, table)
        expected = df.select("*").select("key", "at").toPandas().sort_values("key").reset_index(drop=True)
        got = df.toPandas()[["key", "at"]].sort_values("key").reset_index(drop=True)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert calls == [46]
    assert got.equals(expected)
    assert str(got["at"][0]) == "2024-01-01 22:04:05"  # 03:04:05 UTC, five hours behind


def test_a_read_collects_the_slices_it_was_planned_with(spark: Any, table: str, calls: list[int]) -> None:
    """A commit after the read leaves its answer alone, as Spark's collection of the planned
    slices does."""
    import hudi_spark
    from hudi_spark.compat import to_arrow

    df = hudi_spark.read(spark, table)
    HudiTable.open(table).upsert(_batch(["k000", "new"], 9), options=OPTS)
    got = to_arrow(df)
    assert calls == [46]
    assert df.count() == df.select("*").count() == 46
    assert 9 not in got.column("ts").to_pylist() and got.num_rows == 46
    assert sorted(to_arrow(df.select("*")).column("key").to_pylist()) == sorted(got.column("key").to_pylist())
    assert to_arrow(hudi_spark.read(spark, table)).num_rows == 47


def test_a_cached_read_collects_from_its_cache(
    spark: Any, table: str, calls: list[int], counts: list[int]
) -> None:
    """The cache outlives the files: Spark's collection and count read it, even after a clean."""
    import shutil

    import hudi_spark
    from hudi_spark.compat import to_arrow

    df = hudi_spark.read(spark, table).cache()
    try:
        assert df.count() == 46
        expected = to_arrow(df.select("*"))
        shutil.rmtree(Path(table) / "p1")  # the files of one partition gone
        got = to_arrow(df)
        assert calls == []
        assert got.sort_by("key").to_pylist() == expected.sort_by("key").to_pylist() and got.num_rows == 46
        assert df.count() == 46 and counts == []
    finally:
        df.unpersist()


def test_filtered_reads_collect_what_spark_keeps(
    spark: Any, tmp_path: Path, calls: list[int], counts: list[int]
) -> None:
    """``filters`` on text, integer, date, decimal and boolean columns with nulls among their
    values are applied to the read tasks' rows as Spark applies them (nulls never kept, NOT IN
    included), collected and counted; on a floating point column, with a null among the values or
    one the column's type cannot hold, the collection and the count are Spark's."""
    import hudi_spark
    from hudi_spark.compat import has_data_source_api, to_arrow

    path = str(tmp_path / "f")
    t = HudiTable.create(path, name="f", table_type="MERGE_ON_READ", record_key_fields="key",
                         partition_fields="part", ordering_field="ts", options=OPTS)  # fmt: skip
    n = 12
    rows = pa.table({
        "key": [f"k{i:02d}" for i in range(n)],
        "ts": pa.array([1] * n, pa.int64()),
        "part": ["p1", "p2", "p3"] * 4,
        "i": pa.array([None if i % 4 == 0 else i % 3 for i in range(n)], pa.int8()),
        "s": [None if i % 5 == 0 else "abc"[i % 3] for i in range(n)],
        "d": pa.array([None if i % 6 == 0 else datetime.date(2024, 1, 1 + i % 3) for i in range(n)]),
        "price": pa.array([None if i % 7 == 0 else decimal.Decimal(f"{i}.25") for i in range(n)],
                          pa.decimal128(6, 2)),
        "flag": [None if i % 3 == 0 else i % 2 == 0 for i in range(n)],
        "f": [float("nan") if i % 4 == 1 else float(i) for i in range(n)],
    })  # fmt: skip
    t.bulk_insert(rows, options=OPTS)
    HudiTable.open(path).upsert(
        rows.slice(0, 6).set_column(1, "ts", pa.array([2] * 6, pa.int64())), options=OPTS
    )
    taken = [
        [("part", "=", "p1")],
        [("i", ">=", 1), ("part", "!=", "p3")],
        [("i", "not in", [1])],
        [("i", "=", 300)],
        [("s", "in", ["a", "b"])],
        [("s", "<", "b")],
        [("d", "=", datetime.date(2024, 1, 2))],
        [("price", ">", decimal.Decimal("5.5"))],
        [("flag", "=", True)],
    ]
    for filters in taken:
        df = hudi_spark.read(spark, path, filters=filters)
        expected, got = to_arrow(df.select("*")), to_arrow(df)
        assert got.schema == expected.schema, filters
        assert _texts(got) == _texts(expected), filters  # (NaN is no value equal to itself)
        assert df.count() == expected.num_rows, filters
    assert len(calls) == len(counts) == len(taken) and sum(calls) > 0
    for filters in ([("f", ">", 1.0)], [("i", "in", [1, None])], [("i", "in", [2**40, 1])]):
        df = hudi_spark.read(spark, path, filters=filters)
        assert to_arrow(df).num_rows == to_arrow(df.select("*")).num_rows == df.count()
    assert len(calls) == len(counts) == len(taken)  # Spark's collection and count
    # NaN passes `f > 1.0` in Spark, in the slices merged in Python too (core leaves that filter
    # to Spark's where), and in format("hudi"), which does not push it
    nan_rows = to_arrow(hudi_spark.read(spark, path).select("*").filter("f > 1.0"))
    assert "nan" in str(nan_rows.column("f").to_pylist())
    reads = [
        hudi_spark.read(spark, path, filters=[("f", ">", 1.0)]),
        hudi_spark.read(spark, path).filter("f > 1.0"),
    ]
    if has_data_source_api():
        reads.append(spark.read.format("hudi").load(path).filter("f > 1.0"))
    for df in reads:
        assert _texts(to_arrow(df)) == _texts(nan_rows)


def test_the_options_and_empty_reads(
    spark: Any, table: str, tmp_path: Path, calls: list[int], counts: list[int]
) -> None:
    import hudi_spark
    from hudi_spark.compat import to_arrow

    # with the options off, Spark's collection and count
    off = hudi_spark.read(
        spark, table, {"hoodie.spark.read.collect.local": "false", "hoodie.spark.read.count.narrow": "false"}
    )
    assert to_arrow(off).num_rows == off.count() == 46
    assert calls == [] and counts == []
    # nothing to read: Spark's schema, no rows
    empty = str(tmp_path / "empty")
    HudiTable.create(empty, name="e", record_key_fields="key", partition_fields="part", ordering_field="ts")
    HudiTable.open(empty).bulk_insert(_batch(["a"], 1))
    none = hudi_spark.read(spark, empty, {"hoodie.datasource.query.type": "incremental",
                                          "hoodie.datasource.read.begin.instanttime": "99991231000000000"})  # fmt: skip
    got = to_arrow(none)
    assert got.num_rows == 0 and got.schema == to_arrow(none.select("*")).schema
    assert none.toPandas().empty
    assert none.count() == 0 and counts == [0]


def test_count_reads_no_column_and_counts_what_the_merge_keeps(
    spark: Any, table: str, counts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``count()`` of a read: the rows Spark counts (updates once, deleted keys gone), from tasks
    that decode no data column (core's projected splits need none); also on read_optimized,
    incremental and time-travel reads, and with ``hoodie.datasource.read.columns``."""
    import hudi_core.read
    import hudi_spark

    first = HudiTable.open(table).timeline.completed_commits()[0].timestamp  # the bulk_insert
    HudiTable.open(table).delete(pa.table({"key": ["k000", "k003"], "part": ["p2", "p1"]}), options=OPTS)
    needed: list[tuple[str, ...]] = []
    original = hudi_core.read.projected_splits

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        needed.extend({s.context.needed for s in out})
        return out

    monkeypatch.setattr(hudi_core.read, "projected_splits", spy)
    queries = [
        {},
        {"hoodie.datasource.query.type": "read_optimized"},
        {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first},
        {"as.of.instant": first},
        {"hoodie.datasource.read.columns": "key,ts"},
    ]
    for options in queries:
        df = hudi_spark.read(spark, table, options)
        assert df.count() == df.select("*").count(), options
    # 46 rows, two keys deleted; 18 rows of the upsert after the first commit; 40 rows as of it
    assert [counts[0], counts[2], counts[3], counts[4]] == [44, 18, 40, 44]
    assert len(counts) == len(queries)
    assert set(needed) <= {(), ("_hoodie_commit_time",)}  # the incremental range's column


@pytest.fixture
def replans(monkeypatch: pytest.MonkeyPatch) -> list[list[Any]]:
    """The filters of each read planned again by a filter."""
    from hudi_spark import reading

    seen: list[list[Any]] = []
    original = reading.plan

    def spy(*args: Any, **kwargs: Any) -> list[Any]:
        seen.append(list(kwargs.get("filters") or []))
        return original(*args, **kwargs)

    monkeypatch.setattr(reading, "plan", spy)
    return seen


def test_a_filter_after_the_read_prunes(spark: Any, table: str, replans: list[list[Any]]) -> None:
    """``filter``/``where`` of a read: the same rows as Spark's filter, from a read planned again
    with the comparisons and IN lists core can take from the condition (ANDed), on the read's
    snapshot; a condition core takes whole gives a read's DataFrame (counted in the read tasks)."""
    import hudi_spark
    from hudi_spark.compat import to_arrow
    from pyspark.sql import functions as F

    df = hudi_spark.read(spark, table)
    HudiTable.open(table).upsert(_batch(["k000", "late"], 9), options=OPTS)  # after the read: not seen
    at = datetime.datetime(2024, 1, 2, 3, 4, 5, 7, tzinfo=datetime.timezone.utc)
    cases = [
        ("part = 'p1'", [("part", "=", "p1")], True),
        (F.col("ts") >= 2, [("ts", ">=", 2)], True),
        (F.lit(2) <= F.col("ts"), [("ts", ">=", 2)], True),
        (F.col("key").isin("k001", "k003", "x"), [("key", "in", ["k001", "k003", "x"])], True),
        (~F.col("key").isin("k001"), [("key", "not in", ["k001"])], True),
        ("key != 'k002' AND part = 'p2'", [("key", "!=", "k002"), ("part", "=", "p2")], True),
        ("day = DATE'2024-01-03'", [("day", "=", datetime.date(2024, 1, 3))], True),
        (F.col("at") < F.lit(at), [("at", "<", at)], True),
        (F.col("price") > F.lit(decimal.Decimal("5.50")), [("price", ">", decimal.Decimal("5.50"))], True),
        ("part = 'p1' AND (ts = 2 OR key = 'k004')", [("part", "=", "p1")], False),
        ("upper(key) = 'K001' AND ts = 1", [("ts", "=", 1)], False),
        ("key LIKE 'k00%' AND key NOT LIKE 'k000'", [("key", ">=", "k00"), ("key", "<", "k01")], False),
        (F.col("key").startswith("k00"), [("key", ">=", "k00"), ("key", "<", "k01")], False),
    ]
    for condition, filters, whole in cases:
        replans.clear()
        got = df.filter(condition)
        assert replans == [filters], condition
        expected = to_arrow(df.select("*").filter(condition))  # Spark's filter of the planned read
        assert _texts(to_arrow(got)) == _texts(expected) and expected.num_rows > 0, condition
        assert 9 not in expected.column("ts").to_pylist()
        assert got.count() == expected.num_rows, condition
        assert hasattr(got, "_hudi_methods") == whole, condition
    # chained, and where: the filters add up
    replans.clear()
    both = df.where("part = 'p1'").filter(F.col("ts") == 2)
    assert replans == [[("part", "=", "p1")], [("part", "=", "p1"), ("ts", "=", 2)]]
    assert both.count() == df.select("*").filter("part = 'p1' AND ts = 2").count() > 0
    # nothing core can take (a float, an OR alone): Spark's filter, no new plan
    replans.clear()
    neither = "point.x > 1.5 OR ts = 2"
    assert df.filter(neither).count() == df.select("*").filter(neither).count()
    assert replans == []


def test_a_filter_of_other_reads_and_the_option(spark: Any, table: str, replans: list[list[Any]]) -> None:
    """Read-optimized, incremental and time-travel reads keep their query when filtered; a cached
    read and the option off filter as Spark does."""
    import hudi_spark
    from hudi_spark.compat import to_arrow

    first = HudiTable.open(table).timeline.completed_commits()[0].timestamp
    for options in (
        {"hoodie.datasource.query.type": "read_optimized"},
        {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first},
        {"as.of.instant": first},
    ):
        df = hudi_spark.read(spark, table, options)
        got = to_arrow(df.filter("part = 'p2'"))
        expected = to_arrow(df.select("*").filter("part = 'p2'"))
        assert _texts(got) == _texts(expected) and got.num_rows > 0, options
    assert len(replans) == 3 * 2  # each read, then its filter
    replans.clear()
    off = hudi_spark.read(spark, table, {"hoodie.spark.read.filter.pushdown": "false"})
    assert off.filter("part = 'p2'").count() == 23
    cached = hudi_spark.read(spark, table).cache()
    try:
        assert cached.count() == 46
        assert cached.filter("part = 'p2'").count() == 23
    finally:
        cached.unpersist()
    assert replans == [[], []]  # the two reads; their filters planned nothing


def test_a_selection_of_the_read_decodes_those_columns_alone(
    spark: Any, table: str, replans: list[list[Any]]
) -> None:
    """``select`` of a read's columns by name: Spark's projection of the read (the same snapshot),
    from a read planned again with those columns alone, which its tasks decode alone; anything
    else selected (an expression, ``*``, a filter's column left out) is Spark's projection."""
    import hudi_spark
    from hudi_spark.compat import to_arrow
    from pyspark.sql import functions as F

    df = hudi_spark.read(spark, table)
    HudiTable.open(table).upsert(_batch(["k000", "late"], 9), options=OPTS)  # after the read: not seen
    replans.clear()
    narrow = df.select("ts", "key")
    assert replans == [[]] and narrow.columns == ["ts", "key"]
    contexts = {s.context for g in narrow._hudi_methods.query.groups for s in g}
    assert {c.needed for c in contexts} == {("key", "ts")}  # (in the table's order)
    expected = to_arrow(df.select("*").select("ts", "key"))  # Spark's projection of the read
    got = to_arrow(narrow)
    assert got.schema == expected.schema and _texts(got) == _texts(expected) and got.num_rows == 46
    assert narrow.count() == 46 and narrow.filter("ts = 2").count() == 20
    for spark_own in (df.select("key", F.col("ts")), df.select("*"), df.select("key", "key")):
        assert not hasattr(spark_own, "_hudi_methods") and spark_own.count() == 46
    filtered = hudi_spark.read(spark, table, filters=[("part", "=", "p1")])
    assert not hasattr(filtered.select("key"), "_hudi_methods")
    replans.clear()
    both = filtered.select(["key", "part"])
    assert replans == [[("part", "=", "p1")]] and both.count() == both.select("*").count() == 24  # late too


def test_an_aggregate_of_the_read_decodes_the_columns_it_uses(
    spark: Any, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``groupBy(...).agg/count/sum/...`` of a read: Spark's aggregate of the read (the same
    snapshot), from a read planned again with the columns the aggregate uses, which its tasks
    decode alone; a column bound to the read (``df.part``, ``df["ts"]``) leaves the aggregate Spark's,
    with no read planned again."""
    import hudi_spark
    from hudi_spark import reading
    from pyspark.sql import functions as F

    planned: list[list[str]] = []
    original = reading.plan

    def spy(spec: Any, columns: Any, *args: Any, **kwargs: Any) -> list[Any]:
        planned.append(list(columns))
        return original(spec, columns, *args, **kwargs)

    monkeypatch.setattr(reading, "plan", spy)
    df = hudi_spark.read(spark, table)
    HudiTable.open(table).upsert(_batch(["k000", "late"], 9), options=OPTS)  # after the read: not seen
    cases = [
        (lambda d: d.groupBy("part").agg(F.sum("ts"), F.count("*")), ["ts", "part"]),
        (lambda d: d.groupBy("part").count(), ["part"]),
        (lambda d: d.groupby(F.col("part")).max("ts"), ["ts", "part"]),
        (lambda d: d.groupBy().agg(F.countDistinct("key")), ["key"]),
        (lambda d: d.groupBy("day").agg({"price": "sum"}), ["day", "price"]),
    ]
    for i, (aggregate, columns) in enumerate(cases):
        planned.clear()
        got = aggregate(df).collect()
        assert [[n for n in p if n in df.columns] for p in planned] == [columns], i
        expected = aggregate(df.select("*")).collect()  # Spark's aggregate of the read
        assert sorted(map(tuple, got)) == sorted(map(tuple, expected)) and got, i
    assert all(r[1] != 9 for r in cases[2][0](df).collect())  # the upsert after the read: not seen
    for bound in (lambda d: d.groupBy(d.part).count(), lambda d: d.groupBy("part").agg(F.max(d["ts"]))):
        planned.clear()
        got = bound(df).collect()
        assert planned == []  # Spark's aggregate of the read: no read planned again
        assert sorted(map(tuple, got)) == sorted(map(tuple, bound(df.select("*")).collect())) and got
