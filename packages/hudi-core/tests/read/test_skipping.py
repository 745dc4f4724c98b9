"""Data skipping by record key: a query filtered on the key reads only the base files whose
footer may hold it, and the log files of the other slices; its rows are those of the full read."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.io.base_file import footer_may_hold, key_span
from hudi_core.read import plan_splits
from hudi_core.read.filters import FilterError, to_expression
from hudi_core.read.skipping import _KEY_COLUMN_PROBE, filter_keys
from hudi_core.testing.corpus import corpus_root, corpus_tables

BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}
CITIES = ["berlin", "chennai", "lima"]


def _rows(start: int, n: int, ts: int, fare: float) -> pa.Table:
    ids = np.arange(start, start + n)
    return pa.table({
        "uuid": pa.array([f"key-{i:05d}" for i in ids]),
        "ts": pa.array(np.full(n, ts, dtype=np.int64)),
        "fare": pa.array(np.full(n, fare)),
        "city": pa.array([CITIES[i % 3] for i in ids]),
    })  # fmt: skip


@pytest.fixture
def table(tmp_path: Path) -> HudiTable:
    """A MERGE_ON_READ table of 3 partitions x 4 hash buckets (12 file groups, each base file
    with its own bloom filter) of keys 0-599; then, in log files: keys 0-49 updated (fare 2.0),
    keys 600-629 inserted (fare 3.0), keys 50-59 deleted."""
    t = HudiTable.create(str(tmp_path / "t"), name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                         partition_fields="city", ordering_field="ts", options=BUCKET)  # fmt: skip
    t.bulk_insert(_rows(0, 600, 1, 1.0), options=BUCKET)
    t.upsert(pa.concat_tables([_rows(0, 50, 2, 2.0), _rows(600, 30, 2, 3.0)]), options=BUCKET)
    t.delete(_rows(50, 10, 3, 0.0).select(["uuid", "city"]), options=BUCKET)
    return HudiTable.open(t.base_uri)


def _by_key(data: pa.Table) -> list[tuple[str, float]]:
    return sorted(zip(data.column("uuid").to_pylist(), data.column("fare").to_pylist(), strict=True))


def _bases_read(table: HudiTable, filters: list, query_type: str = "snapshot") -> list[str]:
    splits = plan_splits(table, query_type, filters=filters)
    return sorted(s.base_file.path for s in splits if s.base_file is not None)


def test_the_fixture_has_a_base_file_and_log_files_in_every_file_group(table: HudiTable) -> None:
    slices = table.file_slices()
    assert len(slices) == 12
    assert all(s.base_file is not None and s.log_files for s in slices)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([("uuid", "=", "key-00123")], [("key-00123", 1.0)]),  # in a base file only
        ([("uuid", "=", "key-00007")], [("key-00007", 2.0)]),  # updated in a log file
        ([("uuid", "=", "key-00612")], [("key-00612", 3.0)]),  # inserted in a log file only
        ([("uuid", "=", "key-00055")], []),  # deleted
        ([("uuid", "=", "key-99999")], []),  # nowhere
        ([("_hoodie_record_key", "=", "key-00007")], [("key-00007", 2.0)]),
        ([("uuid", "in", ["key-00001", "key-00300", "key-00620", "key-00052"])],
         [("key-00001", 2.0), ("key-00300", 1.0), ("key-00620", 3.0)]),
        ([("uuid", "in", ["key-00001", "key-00300"]), ("uuid", "=", "key-00300")], [("key-00300", 1.0)]),
        ([("uuid", "=", "key-00301"), ("fare", ">", 5.0)], []),
        ([("uuid", "in", [])], []),
    ],
)  # fmt: skip
def test_a_key_filter_returns_the_rows_of_the_full_read(
    table: HudiTable, filters: list, expected: list[tuple[str, float]]
) -> None:
    got = table.read(filters=filters)
    assert _by_key(got) == expected
    assert got.schema == table.read().schema


def test_only_the_base_file_holding_the_key_is_read(table: HudiTable) -> None:
    everything = table.read(columns=["uuid", "_hoodie_file_name"])
    holder = pc.filter(
        everything.column("_hoodie_file_name"), pc.equal(everything.column("uuid"), "key-00123")
    )
    [name] = holder.to_pylist()
    assert [p.rsplit("/", 1)[1] for p in _bases_read(table, [("uuid", "=", "key-00123")])] == [name]
    # a key no base file holds: the log files alone; a read_optimized query reads nothing
    assert _bases_read(table, [("uuid", "=", "key-00612")]) == []
    assert len(plan_splits(table, "snapshot", filters=[("uuid", "=", "key-00612")])) == 12
    assert plan_splits(table, "read_optimized", filters=[("uuid", "=", "key-00612")]) == []
    # a range every base file reaches reads them all
    assert len(_bases_read(table, [("fare", ">", 0.0)])) == 12


def test_the_footers_alone_rule_out_keys_between_and_beyond_the_stored_ones(tmp_path: Path) -> None:
    """Past a few keys no key column is read: the footers' bloom filters (a key between two
    stored ones) and min/max keys (one beyond them all) decide, for files of more rows than keys."""
    t = HudiTable.create(str(tmp_path / "b"), name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                         partition_fields="city", ordering_field="ts", options=BUCKET)  # fmt: skip
    rows = _rows(0, 2000, 1, 1.0)
    t.bulk_insert(rows.set_column(3, "city", pa.array(["berlin"] * 2000)), options=BUCKET)
    absent = [f"key-{i:05d}x" for i in range(0, 2000, 20)] + ["zzz"]
    rows_per_file = [pq.ParquetFile(s.base_file.path).metadata.num_rows for s in t.file_slices()]
    assert _KEY_COLUMN_PROBE < len(absent) < min(rows_per_file)
    assert len(t.file_slices()) == 4 and _bases_read(t, [("uuid", "in", absent)]) == []
    assert t.read(filters=[("uuid", "in", absent)]).num_rows == 0
    with_one = [*absent, "key-00123"]
    assert len(_bases_read(t, [("uuid", "in", with_one)])) == 1
    assert _by_key(t.read(filters=[("uuid", "in", with_one)])) == [("key-00123", 1.0)]


def test_the_key_column_decides_where_a_full_bloom_filter_says_maybe(tmp_path: Path) -> None:
    """A file of more keys than its filter was sized for (Hudi's default caps it at 100k keys)
    answers "maybe" to most keys: a few wanted keys are then looked for in its key column."""
    full = {"hoodie.index.bloom.num_entries": "2", "hoodie.index.bloom.fpp": "0.5",
            "hoodie.bloom.index.filter.dynamic.max.entries": "4"}  # fmt: skip
    t = HudiTable.create(str(tmp_path / "f"), name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                         partition_fields="city", ordering_field="ts", options={**BUCKET, **full})  # fmt: skip
    t.bulk_insert(_rows(0, 600, 1, 1.0), options={**BUCKET, **full})
    between = [f"key-{i:05d}x" for i in range(100, 110)]
    meta = pq.ParquetFile(t.file_slices()[0].base_file.path).metadata
    assert footer_may_hold(meta, *key_span(pa.array(between)))  # the filter cannot tell
    assert _bases_read(t, [("uuid", "in", between)]) == []
    assert [p.rsplit("/", 1)[1] for p in _bases_read(t, [("uuid", "in", [*between, "key-00123"])])] == [
        n for n in t.read(columns=["uuid", "_hoodie_file_name"]).filter(pc.field("uuid") == "key-00123")
        .column("_hoodie_file_name").to_pylist()
    ]  # fmt: skip
    assert _by_key(t.read(filters=[("uuid", "in", [*between, "key-00123"])])) == [("key-00123", 1.0)]


def test_read_optimized_reads_the_base_files_version_of_a_key(table: HudiTable) -> None:
    def ro(filters: list) -> list[tuple[str, float]]:
        return _by_key(table.read(query_type="read_optimized", filters=filters))

    assert ro([("uuid", "=", "key-00007")]) == [("key-00007", 1.0)]
    assert ro([("uuid", "=", "key-00612")]) == []
    assert ro([("uuid", "in", ["key-00055", "key-00400"])]) == [("key-00055", 1.0), ("key-00400", 1.0)]


def test_every_key_reads_as_the_full_read_filtered(table: HudiTable) -> None:
    full = {k: f for k, f in _by_key(table.read())}
    for i in range(0, 640, 7):
        key = f"key-{i:05d}"
        assert _by_key(table.read(filters=[("uuid", "=", key)])) == (
            [(key, full[key])] if key in full else []
        )


def test_filters_that_do_not_pin_the_key_skip_nothing(table: HudiTable) -> None:
    cfg, schema = table.config, table.read().schema
    assert filter_keys(cfg, schema, [("uuid", ">", "key-00100")]) is None
    assert filter_keys(cfg, schema, [("uuid", "!=", "key-00100")]) is None
    assert filter_keys(cfg, schema, [("city", "=", "berlin")]) is None
    assert filter_keys(cfg, schema, [("uuid", "=", "a"), ("uuid", "in", ["a", "b"])]).to_pylist() == ["a"]


def test_a_complex_key_is_not_the_columns_text_and_is_not_skipped_on(tmp_path: Path) -> None:
    t = HudiTable.create(str(tmp_path / "c"), name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                         partition_fields="city", ordering_field="ts",
                         options={"hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"})  # fmt: skip
    t.bulk_insert(_rows(0, 30, 1, 1.0))
    assert filter_keys(t.config, t.read().schema, [("uuid", "=", "key-00003")]) is None
    assert _by_key(t.read(filters=[("uuid", "=", "key-00003")])) == [("key-00003", 1.0)]


DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def _by_city_fares(tmp_path: Path, payload: str | None) -> HudiTable:
    """12 file groups whose fares lie apart by city (berlin 0-199, chennai 200-399, lima 400-599);
    then, in log files: berlin keys 0, 3, 6 moved to fare 1000 at ts 0 (older than the base rows'
    ts 1), chennai key 301 deleted."""
    options = {**BUCKET, **({"hoodie.datasource.write.payload.class": payload} if payload else {})}
    t = HudiTable.create(str(tmp_path / "r"), name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                         partition_fields="city", ordering_field="ts", options=options)  # fmt: skip
    rows = _rows(0, 600, 1, 0.0)
    city = pa.array([CITIES[i // 200] for i in range(600)])
    t.bulk_insert(rows.set_column(2, "fare", pa.array(np.arange(600, dtype=float))).set_column(3, "city", city),
                  options=options)  # fmt: skip
    moved = _rows(0, 7, 0, 1000.0).take([0, 3, 6])
    t.upsert(moved.set_column(3, "city", pa.array(["berlin"] * 3)), options=options)
    t.delete(pa.table({"uuid": ["key-00301"], "city": ["chennai"]}), options=options)
    return HudiTable.open(t.base_uri)


def _filtered(full: pa.Table, column: str, low: float) -> list[tuple[str, float]]:
    return _by_key(full.filter(pc.greater_equal(full.column(column), low)))


@pytest.mark.parametrize("query_type", ["snapshot", "read_optimized"])
def test_a_range_reads_only_the_base_files_whose_statistics_reach_it(tmp_path: Path, query_type: str) -> None:
    """Row group min/max statistics rule out berlin's base files for ``fare >= 300``; with the
    default payload a log record replaces its base row whatever it holds, so berlin's log files
    are merged alone and the keys they move into the range are found."""
    t = _by_city_fares(tmp_path, None)
    ranged = [("fare", ">=", 300.0)]
    bases = _bases_read(t, ranged, query_type)
    assert len(bases) == 8 and not any("/berlin/" in p for p in bases)
    full = t.read(query_type)
    got = _by_key(t.read(query_type, filters=ranged))
    assert got == _filtered(full, "fare", 300.0)
    moved = [("key-00000", 1000.0), ("key-00003", 1000.0), ("key-00006", 1000.0)]
    snapshot = query_type == "snapshot"
    assert (set(moved) <= set(got)) == snapshot and (("key-00301", 301.0) in got) != snapshot
    assert len(got) == 299 + (3 if query_type == "snapshot" else 1)
    for low in (0.0, 150.0, 200.0, 599.0, 600.0, 1000.0, 1001.0):  # every split of the files
        assert _by_key(t.read(query_type, filters=[("fare", ">=", low)])) == _filtered(full, "fare", low)
    ops = {"<": pc.less, "<=": pc.less_equal, ">": pc.greater, "=": pc.equal}
    # at the files' bounds: berlin's fares end at 199.0, lima's start at 400.0
    bounds = {("<", 200.0): "berlin", ("<=", 199.0): "berlin", (">", 399.0): "lima", (">=", 400.0): "lima"}
    for (op, value), city in bounds.items():
        read = _bases_read(t, [("fare", op, value)], query_type)
        assert len(read) == 4 and all(f"/{city}/" in p for p in read), (op, value)  # its 4 file groups
    assert len(_bases_read(t, [("fare", "=", 200.0)], query_type)) == 1  # the file whose least fare it is
    for op, value in (("<", 200.0), ("<=", 199.0), ("<=", 200.0), (">", 399.0), (">", 599.0), ("=", 250.0),
                      ("=", 200.0), ("=", 199.0)):  # fmt: skip
        want = _by_key(full.filter(ops[op](full.column("fare"), value)))
        assert _by_key(t.read(query_type, filters=[("fare", op, value)])) == want, (op, value)
    some = [10.0, 450.0, 1000.0]
    assert _by_key(t.read(query_type, filters=[("fare", "in", some)])) == _by_key(
        full.filter(pc.is_in(full.column("fare"), pa.array(some)))
    )
    assert _by_key(t.read(query_type, filters=[("ts", "=", 7)])) == []
    assert _bases_read(t, [("ts", "in", [5, 7])], query_type) == []


def test_a_log_record_that_loses_on_ordering_keeps_its_base_file_in_the_read(tmp_path: Path) -> None:
    """With an event-time payload a log record older than its base row loses to it: berlin's
    moved keys stay at their base fares, so a range that rules berlin's base files out must
    still read them with their logs, or the losing records would stand in for the base rows."""
    t = _by_city_fares(tmp_path, DEFAULT_PAYLOAD)
    full = t.read()
    assert _by_key(full.filter(pc.field("uuid") == "key-00003")) == [("key-00003", 3.0)]
    ranged = [("fare", ">=", 300.0)]
    got = _by_key(t.read(filters=ranged))
    assert got == _filtered(full, "fare", 300.0) and ("key-00003", 1000.0) not in got
    bases = _bases_read(t, ranged)
    assert sum("/berlin/" in p for p in bases) == 3  # berlin's file groups with log files


_DAY0 = datetime.date(2024, 1, 1)
_UTC = datetime.timezone.utc


def _typed_rows(ids: np.ndarray, ts: int, offset: int = 0) -> pa.Table:
    """Rows whose string, date, timestamp and decimal columns rise with the key (shifted by
    ``offset``): each city's base file holds a range of each apart from the others'."""
    at = [datetime.datetime(2024, 1, 1, tzinfo=_UTC) + datetime.timedelta(hours=int(i + offset)) for i in ids]
    return pa.table({
        "uuid": pa.array([f"key-{i:05d}" for i in ids]),
        "ts": pa.array(np.full(len(ids), ts, dtype=np.int64)),
        "rider": pa.array([f"rider-{i + offset:05d}" for i in ids]),
        "day": pa.array([_DAY0 + datetime.timedelta(days=int(i + offset)) for i in ids], pa.date32()),
        "at": pa.array(at, pa.timestamp("us", tz="UTC")),
        "amount": pa.array([decimal.Decimal(int(i) + offset) / 4 for i in ids], pa.decimal128(10, 2)),
        "city": pa.array([CITIES[i // 200] for i in ids]),
    })  # fmt: skip


@pytest.fixture
def typed(tmp_path: Path) -> HudiTable:
    """berlin holds keys 0-199, chennai 200-399, lima 400-599, one base file each; then, in log
    files, berlin keys 0-2 moved into lima's ranges (offset 500) and chennai key 301 deleted."""
    t = HudiTable.create(str(tmp_path / "typed"), name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                         partition_fields="city", ordering_field="ts")  # fmt: skip
    t.bulk_insert(_typed_rows(np.arange(600), 1))
    t.upsert(_typed_rows(np.arange(3), 2, offset=500))
    t.delete(pa.table({"uuid": ["key-00301"], "city": ["chennai"]}))
    return HudiTable.open(t.base_uri)


def _at(hours: int) -> datetime.datetime:
    return datetime.datetime(2024, 1, 1, tzinfo=_UTC) + datetime.timedelta(hours=hours)


# each column's values at berlin's last row (199) and chennai's first (200), and one only lima reaches
_TYPED_BOUNDS = {
    "rider": ("rider-00199", "rider-00200", "rider-00450"),
    "day": (_DAY0 + datetime.timedelta(days=199), _DAY0 + datetime.timedelta(days=200),
            _DAY0 + datetime.timedelta(days=450)),
    "at": (_at(199), _at(200), _at(450)),
    "amount": (decimal.Decimal("49.75"), decimal.Decimal(50), decimal.Decimal("112.5")),
}  # fmt: skip


@pytest.mark.parametrize("column", sorted(_TYPED_BOUNDS))
@pytest.mark.parametrize("query_type", ["snapshot", "read_optimized"])
def test_a_range_on_a_string_date_timestamp_or_decimal_column_skips_by_statistics(
    typed: HudiTable, column: str, query_type: str
) -> None:
    """Each column's row group statistics rule out the cities its range cannot reach; every
    answer equals the full read filtered by Arrow, the moved keys found through berlin's logs."""
    last_berlin, first_chennai, lima = _TYPED_BOUNDS[column]
    full = typed.read(query_type)
    cases = {
        ("<", first_chennai): {"berlin"},
        ("<=", last_berlin): {"berlin"},
        ("<=", first_chennai): {"berlin", "chennai"},
        (">", last_berlin): {"chennai", "lima"},
        (">=", lima): {"lima"},
        ("=", first_chennai): {"chennai"},
        ("in", (last_berlin, lima)): {"berlin", "lima"},
    }
    for (op, value), cities in cases.items():
        f = (column, op, list(value) if op == "in" else value)
        read = _bases_read(typed, [f], query_type)
        assert {p.split("/")[-2] for p in read} == cities, f
        got = typed.read(query_type, filters=[f])
        want = full.filter(to_expression([f]))
        assert _by_key_of(got) == _by_key_of(want) and got.num_rows > 0, f
    moved = typed.read(query_type, filters=[(column, ">=", lima)]).filter(pc.field("city") == "berlin")
    assert moved.num_rows == (3 if query_type == "snapshot" else 0)


def _by_key_of(data: pa.Table) -> list[tuple[str, str]]:
    return sorted(zip(data.column("uuid").to_pylist(), data.column("rider").to_pylist(), strict=True))


@pytest.mark.parametrize(
    ("column", "value"),
    [("at", datetime.datetime(2030, 1, 1)), ("rider", 7), ("amount", datetime.date(2030, 1, 1))],
)
def test_a_value_the_column_cannot_be_compared_with_is_still_refused_when_no_file_reaches_it(
    typed: HudiTable, column: str, value: object
) -> None:
    """Beyond every file's range, a value of the wrong kind (a naive time against a UTC column, a
    number against text, a date against a decimal) skips nothing, so the row filter still says
    what is wrong."""
    with pytest.raises(FilterError):
        typed.read(filters=[(column, ">", value)])
    assert len(_bases_read(typed, [(column, ">", value)])) == 3


@pytest.mark.parametrize("column", ["day", "at", "amount"])
def test_text_on_a_date_time_or_decimal_column_reads_as_its_type_and_skips(
    typed: HudiTable, column: str
) -> None:
    """As Spark SQL reads ``day >= '2024-07-19'`` (and the CLI's --filter gives text): each
    column's bounds written as text give the typed filter's rows and base files; text that does
    not read as the type is refused, naming the forms that do."""
    last_berlin, first_chennai, lima = _TYPED_BOUNDS[column]

    def text(v: object) -> str:
        return v.isoformat() if isinstance(v, (datetime.date, datetime.datetime)) else str(v)

    for op, value in (("<", first_chennai), (">=", lima), ("=", first_chennai), ("in", [last_berlin, lima])):
        typed_f = (column, op, value)
        text_f = (column, op, [text(v) for v in value] if op == "in" else text(value))
        assert _by_key_of(typed.read(filters=[text_f])) == _by_key_of(typed.read(filters=[typed_f])), text_f
        assert _bases_read(typed, [text_f]) == _bases_read(typed, [typed_f]) != _bases_read(typed, []), text_f
    with pytest.raises(FilterError, match="decimal number" if column == "amount" else "2024-01-31"):
        typed.read(filters=[(column, ">", "tomorrow")])
    if column == "at":  # a UTC column's time needs its offset
        with pytest.raises(FilterError, match="offset"):
            typed.read(filters=[(column, ">", "2024-01-01 10:00:00")])


def test_a_range_of_the_key_rules_base_files_out_as_a_key_does_whatever_the_payload(tmp_path: Path) -> None:
    """Under an event-time payload too, a base file whose keys all lie outside a range of the key
    is left out with its log files merged alone: a log record in range has no base row to meet."""
    t = _by_city_fares(tmp_path, DEFAULT_PAYLOAD)
    full = t.read()
    for op, value, cities in ((">=", "key-00400", {"lima"}), ("<", "key-00200", {"berlin"})):
        ranged = [("uuid", op, value)]
        assert {p.split("/")[-2] for p in _bases_read(t, ranged)} == cities
        want = full.filter(to_expression(ranged))
        assert _by_key(t.read(filters=ranged)) == _by_key(want) and want.num_rows == 200
    splits = plan_splits(t, "snapshot", filters=[("uuid", ">=", "key-00400")])
    logs_alone = sum(s.base_file is None and bool(s.log_files) for s in splits)
    assert logs_alone == 3 + 1  # berlin's moves, chennai's delete


def _corpus_ranges() -> list[dict]:
    return [t for t in corpus_tables() if t["table_version"] == 6 and t["rows"] > 0]


@pytest.mark.parametrize("spec", _corpus_ranges(), ids=lambda t: t["table_path"].split("tables/")[-1])
def test_every_range_on_the_corpus_tables_reads_as_the_full_read_filtered(spec: dict) -> None:
    """Apache Hudi's files (parquet-mr's statistics of ints, floats, decimals, dates, UTC times,
    strings; Hudi's partition paths and log files): each column's least, middle and greatest
    value under ``=``, ``<``, ``>=`` and ``in`` gives the full read's rows that pass, in both
    queries."""
    root = corpus_root()
    assert root is not None, "the shared compat corpus is missing"
    table = HudiTable.open(str(root / spec["table_path"]))
    queries = ["snapshot", "read_optimized"] if spec["table_type"] == "MERGE_ON_READ" else ["snapshot"]
    skipped = 0
    for query in queries:
        full = table.read(query)
        every = len(_bases_read(table, [], query))
        for field in full.schema:
            kind = field.type
            if field.name.startswith("_hoodie") or not (
                pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_string(kind)
                or pa.types.is_decimal(kind) or pa.types.is_date32(kind) or pa.types.is_timestamp(kind)
            ):  # fmt: skip
                continue
            values = sorted(v for v in full.column(field.name).to_pylist() if v is not None)
            for value in {values[0], values[len(values) // 2], values[-1]} if values else ():
                for op in ("=", "<", ">=", "in"):
                    f = (field.name, op, [value] if op == "in" else value)
                    got = table.read(query, filters=[f])
                    want = full.filter(to_expression([f]))
                    assert _rows_of(got) == _rows_of(want), (query, f)
                    if op == "=":
                        skipped += every - len(_bases_read(table, [f], query))
    assert skipped > 0 or spec["rows"] < 2 or len(table.file_slices()) < 2


def _rows_of(data: pa.Table) -> list[tuple]:
    return sorted(tuple(str(v) for v in row.values()) for row in data.to_pylist())


def test_a_partition_filter_is_left_to_the_paths_and_reads_no_footer(
    table: HudiTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter on the partition column prunes partitions by their paths; the footers of the
    partitions kept could not rule out more, so planning opens none (a GET or two each on an
    object store), while a range on a data column opens them."""
    import hudi_core.read.skipping as skipping

    opened: list[str] = []
    real = skipping.pq.ParquetFile

    def counting(path: str, **kwargs: object) -> pq.ParquetFile:
        opened.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(skipping.pq, "ParquetFile", counting)
    splits = plan_splits(table, "snapshot", filters=[("city", "=", "lima")])
    assert len(splits) == 4 and opened == []
    assert len(plan_splits(table, "snapshot", filters=[("city", "in", ["lima"]), ("fare", ">", 1.5)])) == 4
    assert len(opened) == 4  # lima's base files, for the fare
