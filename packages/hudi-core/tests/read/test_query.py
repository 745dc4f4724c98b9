"""Queries on corpus tables: projection, filters, pruning, errors."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import HudiError, UnsupportedTableVersionError
from hudi_core.fs_view import FileSystemView
from hudi_core.read import FilterError, QueryError
from hudi_core.read.query import _plan
from hudi_core.testing.corpus import corpus_root

HIVE_COW = "tables/sample_cow/v6_complexkeygen_hivestyle"
COW = "tables/sample_cow/v6_simplekeygen_nonhivestyle"  # 3 rows at FIRST, 1 more + 1 update at LAST
FIRST, LAST = "20240418172802262", "20240418172804498"
NO_META = "tables/sample_mor_parquet/v6_simplekeygen_hivestyle_no_metafields"


def _open(rel: str) -> HudiTable:
    root = corpus_root()
    assert root is not None, "the shared compat corpus is missing"
    return HudiTable.open(str(root / rel))


def test_projection_returns_exactly_the_columns_asked_in_order() -> None:
    out = _open(HIVE_COW).read(columns=["name", "_hoodie_commit_time", "id"])
    assert out.column_names == ["name", "_hoodie_commit_time", "id"]
    assert sorted(out.column("name").to_pylist()) == ["Alice", "Bob", "Carol", "Diana"]


def test_filters_on_data_and_partition_columns() -> None:
    table = _open(HIVE_COW)
    active = table.read(columns=["name"], filters=[("isActive", "=", True)])
    assert sorted(active.column("name").to_pylist()) == ["Carol", "Diana"]
    in_part = table.read(columns=["name", "byteField"], filters=[("byteField", "in", [10, 30])])
    assert sorted(in_part.column("byteField").to_pylist()) == [10, 10, 30]
    ranged = table.read(columns=["id"], filters=[("id", ">", 1), ("id", "<=", 3)])
    assert sorted(ranged.column("id").to_pylist()) == [2, 3]
    assert table.read(filters=[("name", "!=", "Alice"), ("shortField", ">=", 300)]).num_rows == 1


def test_partition_pruning_skips_file_slices_before_reading() -> None:
    table = _open(HIVE_COW)
    plan = _plan(table, query_type="snapshot", as_of=None, start=None, end=None, columns=None,
                 filters=[("byteField", "=", 20)])  # fmt: skip
    assert [s.partition_path for s in plan.slices] == ["byteField=20/shortField=100"]
    assert len(FileSystemView(table).latest_file_slices()) == 3


@pytest.mark.parametrize("float_type", [pa.float32(), pa.float64()])
def test_pruning_by_a_float_partition_keeps_the_partitions_its_rows_match(
    tmp_path: Path, float_type: pa.DataType
) -> None:
    """A float partition's path holds Java's text of the value (``1.07374182E9`` for the float
    2^30, ``0.1`` for the float 0.10000000149011612): pruning reads it as the column's type, so a
    filter keeps the partitions whose rows it matches."""
    values = [2.0**30, 0.1, 12345679.0, 1.5e-4, 0.5]
    n = len(values)
    rows = pa.table({"id": [f"k{i}" for i in range(n)], "f": pa.array(values, float_type),
                     "ts": pa.array([1] * n, pa.int64())})  # fmt: skip
    path = str(tmp_path / "t")
    HudiTable.create(path, name="t", record_key_fields="id", partition_fields="f", ordering_field="ts")
    HudiTable.open(path).insert(rows)
    table = HudiTable.open(path)
    stored = rows.column("f").to_pylist()  # (a float's values as doubles)
    assert [table.read(filters=[("f", "=", v)]).column("id").to_pylist() for v in stored] == [
        [f"k{i}"] for i in range(n)
    ]
    assert [table.read(filters=[("f", ">=", v)]).num_rows for v in stored] == [1, 4, 2, 5, 3]
    assert sorted(table.read(filters=[("f", "in", stored[:2])]).column("id").to_pylist()) == ["k0", "k1"]


def test_bad_filters_and_columns_raise_clear_errors() -> None:
    table = _open(HIVE_COW)
    with pytest.raises(FilterError, match="'nope' is not a column"):
        table.read(filters=[("nope", "=", 1)])
    with pytest.raises(FilterError, match="operator 'like'"):
        table.read(filters=[("name", "like", "A%")])
    with pytest.raises(QueryError, match=r"\['nope'\] are not columns"):
        table.read(columns=["nope"])
    with pytest.raises(QueryError, match="query type 'fast'"):
        table.read("fast")
    with pytest.raises(QueryError, match="not an instant time"):
        table.read(as_of="yesterday")


def test_tables_without_meta_fields_read_without_meta_columns_and_refuse_incremental() -> None:
    table = _open(NO_META)
    out = table.read()
    assert not [c for c in out.column_names if c.startswith("_hoodie_")]
    assert sorted(out.column("id").to_pylist()) == [1, 2, 3, 4]
    with pytest.raises(
        HudiError, match="Incremental queries are not supported when meta fields are disabled"
    ):
        table.read("incremental", start="0")


def test_table_version_8_is_refused_with_a_clear_error() -> None:
    with pytest.raises(UnsupportedTableVersionError, match="table version 8 is not supported yet"):
        _open("tables/stretch_v8_sample_cow/v8_nonpartitioned")


def test_time_travel_before_the_first_commit_is_empty_with_the_schema(tmp_path: Path) -> None:
    out = _open(HIVE_COW).read(as_of="20000101000000000")
    assert out.num_rows == 0
    assert "name" in out.column_names


def test_projection_on_a_merged_mor_slice_still_applies_log_updates() -> None:
    table = _open("tables/trips_mor_avro/v6_trips_8i1u")
    out = table.read(columns=["rider", "fare"], filters=[("city", "=", "san_francisco")])
    assert out.column_names == ["rider", "fare"]
    assert dict(zip(out.column("rider").to_pylist(), out.column("fare").to_pylist(), strict=True)) == {
        "rider-A": 19.1, "rider-C": 27.7, "rider-D": 25.0, "rider-E": 93.5,
    }  # fmt: skip
    inc = table.read("incremental", start="20250331030642808", columns=["rider"])
    assert inc.column("rider").to_pylist() == ["rider-D"]


@pytest.mark.parametrize("start", ["000", "0"])
def test_incremental_from_000_reads_every_commit(start: str) -> None:
    out = _open(COW).read("incremental", start=start, columns=["id", "_hoodie_commit_time"])
    assert out.num_rows == 4
    assert set(out.column("_hoodie_commit_time").to_pylist()) == {FIRST, LAST}


@pytest.mark.parametrize(
    ("start", "end"),
    [(LAST, None), ("20250101000000000", None), (LAST, FIRST), (FIRST, FIRST)],
    ids=["start-at-latest", "start-after-latest", "start-after-end", "start-equals-end"],
)
def test_incremental_range_without_commits_is_empty_with_the_tables_columns(
    start: str, end: str | None
) -> None:
    """An incremental pull that finds nothing new returns no rows, as Hudi does, not an error."""
    table = _open(COW)
    every = table.read("incremental", start="000")
    out = table.read("incremental", start=start, end=end)
    assert out.num_rows == 0
    assert out.schema == every.schema
    assert out.column_names[0] == "_hoodie_commit_time" and "name" in out.column_names
    projected = table.read("incremental", start=start, end=end, columns=["id", "_hoodie_commit_time"])
    assert (projected.num_rows, projected.column_names) == (0, ["id", "_hoodie_commit_time"])


@pytest.mark.parametrize(
    ("as_of", "rows"),
    [(FIRST, 3), ("20240418172802", 0), ("2024-04-18 17:28:02.262", 3), ("2024-04-18 17:28:02", 3),
     ("2024-04-18", 0), ("2024-04-19", 4)],
)  # fmt: skip
def test_time_travel_accepts_hudis_instant_forms(as_of: str, rows: int) -> None:
    # "yyyy-MM-dd HH:mm:ss" covers its whole second (Hudi completes it with 999 ms)
    assert _open(COW).read(as_of=as_of).num_rows == rows


@pytest.mark.parametrize(
    "as_of",
    ["2024-13-45", "2024-02-30", "202404181728", "20241345000000000", "2024-04-18T17:28:02", "yesterday"],
)
def test_time_travel_refuses_other_instant_forms_naming_the_accepted_ones(as_of: str) -> None:
    with pytest.raises(QueryError) as err:
        _open(COW).read(as_of=as_of)
    assert f"as_of={as_of!r} is not an instant time" in str(err.value)
    assert "yyyyMMddHHmmssSSS, yyyyMMddHHmmss, 'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'" in str(err.value)


def _table_with_commits(tmp_path: Path, n: int, options: dict[str, str]) -> tuple[HudiTable, list[str]]:
    import pyarrow as pa

    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="k",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    instants = []
    for i in range(n):
        data = pa.table({"k": ["a", "b"], "ts": [i, i], "v": [i, i + 10], "p": ["x", "x"]})
        instants.append(t.upsert(data, options=options).instant)
    return HudiTable.open(t.base_uri), instants


def test_time_travel_before_what_the_cleaner_retained_is_refused_as_hudi_refuses_it(tmp_path: Path) -> None:
    # Hudi's TimelineUtils.validateTimestampAsOf: the latest clean's earliestCommitToRetain bounds
    # time travel (the older slices' files may be gone); later instants still answer
    opts = {"hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "1",
            "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}  # fmt: skip
    t, instants = _table_with_commits(tmp_path, 5, opts)
    cleans = t.timeline.filter(actions=["clean"]).completed()
    assert len(cleans), "the workload must have cleaned"
    with pytest.raises(QueryError, match="retain more commits"):
        t.read(as_of=instants[0])
    assert t.read(as_of=instants[-1]).column("v").to_pylist() == [4, 14]


def test_time_travel_at_or_after_a_pending_write_is_refused(tmp_path: Path) -> None:
    t, instants = _table_with_commits(tmp_path, 2, {})
    pending = t.timeline.new_instant_time()
    t.timeline.create_requested(pending, "deltacommit")
    t = HudiTable.open(t.base_uri)
    with pytest.raises(QueryError, match="first incomplete commit"):
        t.read(as_of=pending)
    assert t.read(as_of=instants[1]).num_rows == 2


def test_time_travel_after_a_clean_by_file_versions_stops_at_the_active_timeline(tmp_path: Path) -> None:
    # Hudi: a clean with no earliestCommitToRetain (KEEP_LATEST_FILE_VERSIONS) bounds time travel
    # by the first completed write instant still on the active timeline
    opts = {"hoodie.clean.automatic": "true", "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1", "hoodie.compact.inline": "true",
            "hoodie.compact.inline.max.delta.commits": "2"}  # fmt: skip
    t, _ = _table_with_commits(tmp_path, 4, opts)
    assert len(t.timeline.filter(actions=["clean"]).completed())
    latest = t.timeline.completed_commits().last()
    assert latest is not None
    assert t.read(as_of=latest.timestamp).column("v").to_pylist() == [3, 13]
    with pytest.raises(QueryError, match="before the earliest commit"):
        t.read(as_of="20000101000000000")


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("day", [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), datetime.date(2024, 2, 1)]),
        ("price", [decimal.Decimal("1.50"), decimal.Decimal("2.00"), decimal.Decimal("10.25")]),
        ("at", [datetime.datetime(2024, 1, d, tzinfo=datetime.timezone.utc) for d in (1, 2, 3)]),
    ],
)
def test_a_date_decimal_or_time_partition_filter_returns_its_rows(
    tmp_path: Path, column: str, values: list
) -> None:
    """A date partition's path is its ISO text, a decimal's its digits: filters on them prune by
    value, not by text (they pruned every partition before: a path's text never equals a date);
    a time's path depends on a write setting, so the path is not asked."""
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="COPY_ON_WRITE", record_key_fields="k",
                         partition_fields=column, ordering_field="ts")  # fmt: skip
    t.bulk_insert(pa.table({"k": ["a", "b", "c"], "ts": [1, 1, 1], column: values}))
    t = HudiTable.open(t.base_uri)
    first, second, third = values
    cases = [("=", first, ["a"]), ("in", [first, third], ["a", "c"]), ("<", second, ["a"]),
             (">=", second, ["b", "c"]), ("!=", second, ["a", "c"]), ("not in", [third], ["a", "b"])]  # fmt: skip
    for op, value, keys in cases:
        assert sorted(t.read(filters=[(column, op, value)]).column("k").to_pylist()) == keys, (op, value)
    plan = _plan(t, query_type="snapshot", as_of=None, start=None, end=None, columns=None,
                 filters=[(column, "=", first)])  # fmt: skip
    assert len(plan.slices) == 1  # by its path; the time's by its file's statistics
