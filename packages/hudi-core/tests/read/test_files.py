"""Base files are read with the values pyarrow reads; a column whose chunks are byte for byte
another's (the record key beside its key field) is decoded once, and only then."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.read.files import iter_parquet, read_parquet, same_columns
from hudi_core.storage import LocalStorage


def _same(path: Path) -> dict[str, str]:
    with pa.OSFile(str(path)) as f:
        return same_columns(pq.ParquetFile(f), f)


def _reads(path: Path, columns: list[str] | None = None) -> list[pa.Table]:
    storage = LocalStorage()
    whole = read_parquet(storage, str(path), columns)
    batches = pa.concat_tables(iter_parquet(storage, str(path), columns, 7))
    return [whole, batches]


def test_a_base_file_reads_its_key_once_and_answers_as_pyarrow(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 5000
    keys = [f"{k:032x}" for k in rng.integers(0, 2**62, n)]
    data = pa.table(
        {"uuid": keys, "ts": rng.integers(0, 10**12, n), "city": rng.choice(["berlin", "chennai"], n)}
    )
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts")  # fmt: skip
    table.bulk_insert(data)
    files = sorted((tmp_path / "t").rglob("*.parquet"))
    assert files
    for path in files:
        assert _same(path) == {"uuid": "_hoodie_record_key", "city": "_hoodie_partition_path"}
        expected = pq.read_table(path)
        for got in _reads(path):
            assert got.schema == expected.schema
            assert got.equals(expected)
        projected = ["ts", "uuid", "_hoodie_commit_time"]  # the copy without its original
        for got in _reads(path, projected):
            assert got.equals(pq.read_table(path, columns=projected))
    rows = HudiTable.open(str(tmp_path / "t")).read()
    assert sorted(rows.column("uuid").to_pylist()) == sorted(keys)
    assert rows.column("_hoodie_record_key").to_pylist() == rows.column("uuid").to_pylist()


def _write(path: Path, table: pa.Table, **kwargs: object) -> Path:
    pq.write_table(table, path, compression="none", use_dictionary=False, **kwargs)  # type: ignore[arg-type]
    return path


@pytest.mark.parametrize(
    ("a", "b", "b_nullable"),
    [
        # same length and sizes, one value apart
        (pa.array(["k-000", "k-001", "k-002"]), pa.array(["k-000", "k-001", "k-003"]), True),
        # the same bytes under another type
        (pa.array([1, 2, 3], pa.int64()), pa.array([1, 2, 3], pa.timestamp("us")), True),
        # the same values, one column required (no definition levels)
        (pa.array(["x", "y", "z"]), pa.array(["x", "y", "z"]), False),
    ],
    ids=["one-value-apart", "other-type", "other-levels"],
)
def test_columns_that_only_look_alike_are_each_decoded(
    tmp_path: Path, a: pa.Array, b: pa.Array, b_nullable: bool
) -> None:
    schema = pa.schema([pa.field("a", a.type), pa.field("b", b.type, nullable=b_nullable)])
    table = pa.Table.from_arrays([a, b], schema=schema)
    path = _write(tmp_path / "f.parquet", table)
    assert _same(path) == {}
    for got in _reads(path):
        assert got.equals(pq.read_table(path))


def test_equal_columns_in_every_row_group_are_shared_and_a_differing_group_stops_it(tmp_path: Path) -> None:
    values = pa.array([f"v{i % 50:03d}" for i in range(300)])
    equal = _write(tmp_path / "equal.parquet", pa.table({"a": values, "b": values}), row_group_size=100)
    assert _same(equal) == {"b": "a"}
    other = values.to_pylist()
    other[250] = "v999"  # only the third row group differs
    differing = _write(tmp_path / "diff.parquet", pa.table({"a": values, "b": other}), row_group_size=100)
    assert _same(differing) == {}
    for path in (equal, differing):
        for got in _reads(path):
            assert got.equals(pq.read_table(path))


def _buffers(column: pa.ChunkedArray) -> list[int]:
    return [b.address for chunk in column.chunks for b in chunk.buffers() if b is not None]


def test_a_merged_slice_keeps_the_key_and_its_field_shared(tmp_path: Path) -> None:
    """Merging a slice with its log filters the base rows; a column the base file holds twice is
    filtered once, so the kept rows' key and key field still share one copy, and the values are
    the ones a plain merge gives. The log's rows, decoded apart, are shared after the read
    compares them (``read.query.share_copies``): the answer holds each key once."""
    n = 4000
    keys = [f"{k:08d}-key" for k in range(n)]
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts")  # fmt: skip
    table.bulk_insert(pa.table({"uuid": keys, "ts": [1] * n, "v": ["old"] * n, "city": ["berlin"] * n}))
    updated = keys[::7]
    HudiTable.open(table.base_uri).upsert(
        pa.table({"uuid": updated, "ts": [2] * len(updated), "v": ["new"] * len(updated), "city": ["berlin"] * len(updated)})
    )  # fmt: skip
    assert list((tmp_path / "t" / "berlin").glob(".*.log.*")), "the updates went to a log file"
    rows = HudiTable.open(table.base_uri).read()
    assert sorted(rows.column("uuid").to_pylist()) == keys
    assert rows.column("_hoodie_record_key").to_pylist() == rows.column("uuid").to_pylist()
    got = dict(zip(rows.column("uuid").to_pylist(), rows.column("v").to_pylist(), strict=True))
    assert got == {k: "new" if k in set(updated) else "old" for k in keys}
    kept = rows.column("uuid").chunk(0)  # the base rows the merge kept come first
    assert len(kept) == n - len(updated)
    assert set(_buffers(rows.column("_hoodie_record_key"))) & set(_buffers(rows.column("uuid"))) >= {
        b.address for b in kept.buffers() if b is not None
    }
    assert _buffers(rows.column("_hoodie_record_key")) == _buffers(rows.column("uuid"))
    assert _buffers(rows.column("_hoodie_partition_path")) == _buffers(rows.column("city"))
    for batch in HudiTable.open(table.base_uri).read_batches():
        key, field = (pa.chunked_array([batch.column(c)]) for c in ("_hoodie_record_key", "uuid"))
        assert _buffers(key) == _buffers(field)


def test_meta_columns_that_differ_from_their_field_are_answered_as_written(tmp_path: Path) -> None:
    """Hive-style paths (``city=berlin``) and a key of two fields (``uuid:a,n:1``) are not copies
    of a column: those meta columns keep their own values, row for row."""
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="uuid,n",
                             partition_fields="city", ordering_field="ts",
                             options={"hoodie.datasource.write.hive_style_partitioning": "true"})  # fmt: skip
    table.bulk_insert(pa.table({"uuid": ["a", "b"], "n": [1, 2], "ts": [1, 1], "city": ["berlin", "paris"]}))
    HudiTable.open(table.base_uri).upsert(pa.table({"uuid": ["a"], "n": [1], "ts": [2], "city": ["berlin"]}))
    rows = HudiTable.open(table.base_uri).read().sort_by("uuid")
    assert rows.column("_hoodie_partition_path").to_pylist() == ["city=berlin", "city=paris"]
    assert rows.column("_hoodie_record_key").to_pylist() == ["uuid:a,n:1", "uuid:b,n:2"]
    assert rows.column("ts").to_pylist() == [2, 1]


def test_share_copies_keeps_a_column_that_differs_in_one_row() -> None:
    from hudi_core.read.query import share_copies

    data = pa.table({"_hoodie_record_key": ["a", "b", "x"], "uuid": ["a", "b", "c"]})
    same = share_copies(data, [("_hoodie_record_key", "uuid")])
    assert same.column("_hoodie_record_key").to_pylist() == ["a", "b", "x"]
    copied = pa.table({"_hoodie_record_key": ["a", "b", "c"], "uuid": ["a", "b", "c"]})
    shared = share_copies(copied, [("_hoodie_record_key", "uuid")])
    assert shared.column("_hoodie_record_key").to_pylist() == ["a", "b", "c"]
    assert _buffers(shared.column("_hoodie_record_key")) == _buffers(shared.column("uuid"))


def test_only_columns_of_dictionary_indices_are_read_as_dictionaries(tmp_path: Path) -> None:
    """A string column every chunk of which is dictionary indices is read as a dictionary
    array, with the values pyarrow reads; a column whose dictionary overflowed into plain pages,
    one written without a dictionary, and a number column are read as they are."""
    from hudi_core.read.files import indexed_columns

    n = 30_000
    rng = np.random.default_rng(5)
    data = pa.table({
        "city": pa.array(rng.choice(["berlin", "chennai", None], n)),  # type: ignore[list-item]
        "unique": [f"{k:020d}" for k in rng.integers(0, 2**62, n)],
        "plain": rng.choice(["a", "b"], n),
        "n": rng.integers(0, 3, n),
    })  # fmt: skip
    path = tmp_path / "f.parquet"
    pq.write_table(data, path, use_dictionary=["city", "unique", "n"], dictionary_pagesize_limit=4096,
                   row_group_size=10_000)  # fmt: skip
    pf = pq.ParquetFile(path)
    assert indexed_columns(pf.metadata, pf.schema_arrow, set(data.column_names)) == ["city"]
    assert indexed_columns(pf.metadata, pf.schema_arrow, {"unique", "plain"}) == []
    storage = LocalStorage()
    for got in (
        read_parquet(storage, str(path), as_dictionary={"city", "unique", "plain", "n"}),
        pa.concat_tables(iter_parquet(storage, str(path), None, 7000, as_dictionary={"city", "unique"})),
    ):
        assert got.schema.field("city").type == pa.dictionary(pa.int32(), pa.string())
        assert got.schema.field("unique").type == pa.string()
        assert got.column("city").cast(pa.string()).equals(data.column("city"))
        assert got.drop_columns(["city"]).equals(data.drop_columns(["city"]))


def test_a_merge_filters_dictionary_columns_and_answers_plain_strings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merged slice's base rows are filtered while their dictionary-encoded columns are
    indices; the answer (read whole, read in batches, compacted) is the one of a merge that
    decodes every string first: same types, same values, in the same order."""
    from hudi_core.read import merge

    n = 6000
    rng = np.random.default_rng(11)
    keys = [f"{k:06d}" for k in range(n)]
    rider = pa.array(rng.choice(["r1", "r2", None], n))  # type: ignore[list-item]
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts")  # fmt: skip
    table.bulk_insert(pa.table({"uuid": keys, "ts": [1] * n, "rider": rider, "city": ["berlin"] * n}))
    for round_ in range(2):
        changed = keys[round_::5]
        HudiTable.open(table.base_uri).upsert(pa.table({
            "uuid": changed, "ts": [2 + round_] * len(changed), "rider": [f"u{round_}"] * len(changed),
            "city": ["berlin"] * len(changed),
        }))  # fmt: skip
    assert list((tmp_path / "t" / "berlin").glob(".*.log.*")), "the updates went to a log file"

    def answers() -> list[pa.Table]:
        t = HudiTable.open(table.base_uri)
        return [t.read(), pa.Table.from_batches(list(t.read_batches()))]

    encoded = answers()
    with monkeypatch.context() as m:
        m.setattr(merge, "_encodable", lambda table, schema: frozenset())
        plain = answers()
    for got, expected in zip(encoded, plain, strict=True):
        assert not any(pa.types.is_dictionary(t) for t in got.schema.types)
        assert got.schema == expected.schema
        assert got.equals(expected)
    riders = dict(
        zip(encoded[0].column("uuid").to_pylist(), encoded[0].column("rider").to_pylist(), strict=True)
    )
    assert riders["000000"] == "u0" and riders["000001"] == "u1" and riders["000002"] == rider[2].as_py()
    assert len(riders) == n

    compacted = tmp_path / "c"
    shutil.copytree(tmp_path / "t", compacted)
    HudiTable.open(str(compacted)).compact()
    after = HudiTable.open(str(compacted)).read()
    columns = [c for c in after.column_names if c != "_hoodie_file_name"]
    assert after.select(columns).sort_by("uuid").equals(encoded[0].select(columns).sort_by("uuid"))


def _held(column: pa.ChunkedArray) -> int:
    """Bytes of memory the column's chunks hold, each buffer counted once."""
    buffers = {(b.address, b.size) for chunk in column.chunks for b in chunk.buffers() if b is not None}
    return sum(size for _, size in buffers)


def test_a_value_in_long_runs_is_held_once_and_answers_every_row() -> None:
    """Dictionary chunks of long runs (a base file's file name) decode to slices of one array
    per value; a chunk of short runs, with nulls, or of a few rows is decoded value by value.
    Every row answers as a plain decode; the long runs' bytes are held once."""
    from hudi_core.read.align import SHARED_RUN_CHUNK, SHARED_RUN_ROWS, decode

    name = "0c9e6f1d-4bb0-4f4c-9a4e-1b5f1a7a5e1f-0_0-12-34_20261205101112123.parquet"
    runs = pa.DictionaryArray.from_arrays(
        pa.array([0] * 70_000 + [1] * 5_000 + [0] * 9_000, pa.int32()), pa.array([name, "b" * 80])
    )
    short = pa.DictionaryArray.from_arrays(
        pa.array(np.arange(10_000) % 3, pa.int32()), pa.array(["x", "y", "z"])
    )
    nulls = pa.DictionaryArray.from_arrays(pa.array([0] * 9_999 + [None], pa.int32()), pa.array([name]))
    few = pa.DictionaryArray.from_arrays(pa.array([0] * (SHARED_RUN_ROWS - 1), pa.int32()), pa.array([name]))
    for chunks in ([runs], [runs, short, nulls, few], [runs.slice(7, 80_000)]):
        column = pa.chunked_array(chunks)
        got = decode(column)
        assert got.type == pa.string()
        assert got.equals(column.cast(pa.string()))
    # 168k rows held as one array per value, as long as its longest run: values and offsets
    twice = pa.chunked_array([runs, runs])
    longest = SHARED_RUN_CHUNK * len(name) + (SHARED_RUN_CHUNK + 1) * 4 + 5_000 * 80 + 5_001 * 4
    assert _held(decode(twice)) <= longest < _held(twice.cast(pa.string())) / 2
    for dtype in (pa.large_string(), pa.binary()):
        typed = pa.DictionaryArray.from_arrays(runs.indices, runs.dictionary.cast(dtype))
        assert decode(pa.chunked_array([typed])).equals(pa.chunked_array([typed]).cast(dtype))


def test_a_merge_holds_each_file_name_and_commit_time_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot of a merge-on-read table, base files alone and merged with their logs: the
    answer equals a read that decodes every value, and its commit time, file name and partition
    path (the same value for long runs of rows) hold a fraction of one string per row (each
    value's array is 1024 rows here, so that runs of 10k rows share one)."""
    from hudi_core.read import align

    monkeypatch.setattr(align, "SHARED_RUN_CHUNK", 1024)

    n = 40_000
    keys = [f"{k:08d}" for k in range(n)]
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts")  # fmt: skip
    table.bulk_insert(pa.table({"uuid": keys, "ts": [1] * n, "city": ["berlin", "chennai"] * (n // 2)}))
    answers = [HudiTable.open(table.base_uri).read()]  # base files alone
    changed = keys[: n // 2]
    HudiTable.open(table.base_uri).upsert(pa.table({
        "uuid": changed, "ts": [2] * len(changed), "city": ["berlin", "chennai"] * (len(changed) // 2),
    }))  # fmt: skip
    assert list((tmp_path / "t" / "berlin").glob(".*.log.*")), "the updates went to a log file"
    answers.append(HudiTable.open(table.base_uri).read())  # merged with the logs
    rows = answers[1].sort_by("uuid")
    assert rows.column("uuid").to_pylist() == keys
    assert rows.column("ts").to_pylist() == [2] * len(changed) + [1] * (n - len(changed))
    monkeypatch.setattr(align, "SHARED_RUN_ROWS", 10**12)  # every value decoded on its own
    plain = HudiTable.open(table.base_uri).read()
    assert answers[1].equals(plain)
    for got in answers:
        for column in ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name"):
            assert _held(got.column(column)) < 0.2 * _held(plain.column(column)), column


def test_kept_footers_stay_within_their_byte_budget(tmp_path: Path) -> None:
    """Remote base files' footers kept per process (``open_parquet``) drop the least recently
    used past the budget, and one larger than the whole budget is not kept at all."""
    from hudi_core.storage.kept import Kept

    metas = []
    for i in range(3):
        pq.write_table(pa.table({"x": [i]}), tmp_path / f"{i}.parquet")
        metas.append(pq.read_metadata(tmp_path / f"{i}.parquet"))
    size = metas[0].serialized_size
    kept = Kept(2 * size + size // 2, lambda meta: int(meta.serialized_size))  # room for two
    keys = [("s3", f"bucket/{i}.parquet", 100 + i) for i in range(3)]
    kept.put(keys[0], metas[0])
    kept.put(keys[1], metas[1])
    assert kept.get(keys[0]) is metas[0]  # now the most recently used
    kept.put(keys[2], metas[2])
    assert [kept.get(k) for k in keys] == [metas[0], None, metas[2]]
    assert kept.get(("s3", "bucket/0.parquet", 99)) is None  # another size: another file
    tiny = Kept(size - 1, lambda meta: int(meta.serialized_size))
    tiny.put(keys[0], metas[0])
    assert tiny.get(keys[0]) is None


@pytest.mark.parametrize(
    "columns", [[], ["_hoodie_record_key"], ["v"], None], ids=["none", "meta", "data", "all"]
)
def test_a_bootstrap_skeleton_reads_its_rows_whatever_the_columns(
    tmp_path: Path, columns: list[str] | None
) -> None:
    """A METADATA_ONLY bootstrap's skeleton (meta columns) stitched to its source file (data
    columns), row for row, whole and in batches: with no column asked (a count) the rows are
    there, 5 of them, not none nor a batch's worth (pyarrow slices a table of no column to any
    length asked)."""
    skeleton, source = tmp_path / "skeleton.parquet", tmp_path / "source.parquet"
    keys = [f"k{i}" for i in range(5)]
    pq.write_table(pa.table({"_hoodie_commit_time": ["1"] * 5, "_hoodie_record_key": keys}), skeleton)
    pq.write_table(pa.table({"id": keys, "v": [float(i) for i in range(5)]}), source)
    storage = LocalStorage()
    whole = read_parquet(storage, str(skeleton), columns, source=str(source))
    batches = list(iter_parquet(storage, str(skeleton), columns, 2, source=str(source)))
    assert whole.num_rows == 5 and [b.num_rows for b in batches] == [2, 2, 1]
    expected = ["_hoodie_commit_time", "_hoodie_record_key", "id", "v"] if columns is None else columns
    assert whole.column_names == expected
    if columns != []:  # (pyarrow concatenates tables of no column into no row)
        assert pa.concat_tables(batches).equals(whole)
    if columns is None:
        assert whole.column("_hoodie_record_key").to_pylist() == whole.column("id").to_pylist() == keys
