"""The engine-agnostic stages on their own: keys, dedupe, schema checks, bucket ids, assignment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.cli.main import main as cli_main
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError, InvalidRecordKeyError, SchemaMismatchError, UnsafePathError
from hudi_core.keygen.simple import SimpleKeyGenerator
from hudi_core.write.bucket_assigner import SmallFile, WorkloadProfile, assign
from hudi_core.write.dedupe import deduplicate
from hudi_core.write.index.bucket import BucketIndex, bucket_file_id, java_string_hashes
from hudi_core.write.records import prepare


def _new(tmp_path: Path, ttype: str = "COPY_ON_WRITE", **opts: str) -> HudiTable:
    return HudiTable.create(str(tmp_path / "t"), name="t", table_type=ttype, record_key_fields="id",
                            partition_fields="p", ordering_field="ts", options=opts)  # fmt: skip


def test_null_or_empty_key_rejected_before_anything_is_written(tmp_path: Path) -> None:
    t = _new(tmp_path)
    with pytest.raises(InvalidRecordKeyError, match="row 2"):
        t.insert(pa.table({"id": ["a", "b", None], "p": ["x"] * 3, "ts": [1, 1, 1]}))
    with pytest.raises(InvalidRecordKeyError, match="row 1"):
        t.insert(pa.table({"id": ["a", "", "c"], "p": ["x"] * 3, "ts": [1, 1, 1]}))
    assert list(t.timeline) == []
    assert not any(p.suffix == ".parquet" for p in Path(t.base_uri).rglob("*"))


def test_schema_mismatch_and_unsafe_partition_rejected_before_writing(tmp_path: Path) -> None:
    t = _new(tmp_path)
    t.insert(pa.table({"id": [1], "p": ["x"], "ts": [1], "v": ["s"]}))
    n = len(t.timeline)
    with pytest.raises(SchemaMismatchError, match="'id'"):
        t.upsert(pa.table({"p": ["x"], "ts": [1], "v": ["s"]}))
    with pytest.raises(SchemaMismatchError, match="'v'"):
        t.upsert(pa.table({"id": [1], "p": ["x"], "ts": [1], "v": [[1, 2]]}))
    with pytest.raises(UnsafePathError):
        t.upsert(pa.table({"id": [2], "p": [".."], "ts": [1], "v": ["s"]}))
    assert len(t.timeline) == n
    # widening int -> long is fine
    t.upsert(pa.table({"id": pa.array([1], pa.int64()), "p": ["x"], "ts": [2], "v": ["t"]}))
    assert t.read().column("v").to_pylist() == ["t"]


def test_dedupe_keeps_greatest_ordering_value_ties_to_later_row() -> None:
    data = pa.table({"_hoodie_record_key": ["k1", "k2", "k1", "k1", "k2"], "_hoodie_partition_path": ["p"] * 5,
                     "ts": [3, 1, 5, 5, 0], "v": ["a", "b", "c", "d", "e"]})  # fmt: skip
    out = deduplicate(data, HoodieConfig({"hoodie.datasource.write.precombine.field": "ts"}))
    assert sorted(
        zip(out.column("_hoodie_record_key").to_pylist(), out.column("v").to_pylist(), strict=True)
    ) == [("k1", "d"), ("k2", "b")]


def test_java_string_hash_and_bucket_file_ids() -> None:
    # values of java.lang.String#hashCode
    hashes = java_string_hashes(pa.array(["hello", "", "Aa", "BB", "ü"])).view("int32").tolist()
    assert hashes == [99162322, 0, 2112, 2112, 252]
    idx = BucketIndex(4, ("id",), ("id",))
    # List.of(s).hashCode() = 31 + s.hashCode()
    assert idx.bucket_ids(pa.array(["hello"])).tolist() == [(31 + 99162322) % 4]
    fid = bucket_file_id(3)
    assert fid.startswith("00000003-") and fid.endswith("-0") and len(fid) == 38


def test_bucket_assignment_packs_small_files_then_new_groups() -> None:
    cfg = HoodieConfig({"hoodie.parquet.max.file.size": "1000", "hoodie.parquet.small.file.limit": "600"})
    prof = WorkloadProfile(inserts={"p": 25})
    small = [SmallFile("p", "f1", "001", 900), SmallFile("p", "f2", "001", 500)]
    plan = assign(prof, small, cfg, is_mor=False, avg_record_size=100)
    kinds = [(b.file_id if not b.is_new else "new", b.io_type) for b in plan.buckets]
    # f2 (smallest) takes 5, f1 takes 1, then new groups of 10
    assert kinds == [("f2", "MERGE"), ("f1", "MERGE"), ("new", "CREATE"), ("new", "CREATE")]
    assert plan.insert_ranges["p"][0] == [5, 6, 16, 25]


def test_cow_small_file_receives_inserts_through_merge(tmp_path: Path) -> None:
    t = _new(tmp_path)
    t.insert(pa.table({"id": [1, 2], "p": ["x", "x"], "ts": [1, 1], "v": ["a", "b"]}))
    r = t.insert(pa.table({"id": [3], "p": ["x"], "ts": [1], "v": ["c"]}))
    assert r.inserted == 1 and r.files_written == 1
    assert len(t.file_slices()) == 1  # packed into the existing file group
    got = t.read()
    assert sorted(got.column("id").to_pylist()) == [1, 2, 3]
    # copied records keep their commit time
    times = dict(
        zip(got.column("id").to_pylist(), got.column("_hoodie_commit_time").to_pylist(), strict=True)
    )
    assert times[1] == times[2] != times[3] == r.instant


def test_commit_metadata_matches_files(tmp_path: Path) -> None:
    t = _new(tmp_path, "MERGE_ON_READ", **{"hoodie.parquet.small.file.limit": "0"})
    t.insert(pa.table({"id": [1, 2], "p": ["x", "x"], "ts": [1, 1], "v": ["a", "b"]}))
    r = t.upsert(pa.table({"id": [1], "p": ["x"], "ts": [2], "v": ["z"]}))
    meta = t.commit_metadata(r.instant)
    assert meta.operation_type == "UPSERT"
    schema = json.loads(meta.extra_metadata["schema"])
    assert [f["name"] for f in schema["fields"]] == ["id", "p", "ts", "v"]
    (stat,) = meta.all_write_stats()
    path = Path(t.base_uri, stat.path or "")
    assert path.name.startswith(".") and ".log.1_" in path.name
    assert stat.file_size_in_bytes == path.stat().st_size == stat.total_write_bytes
    assert stat.num_update_writes == 1 and stat.log_version == 1 and stat.log_offset == 0
    assert stat.base_file and stat.base_file.endswith(".parquet") and stat.log_files == [path.name]
    assert not (Path(t.base_uri) / ".hoodie" / ".temp" / r.instant).exists()
    assert (Path(t.base_uri) / "x" / ".hoodie_partition_metadata").read_text().endswith("partitionDepth=1\n")


def test_cli_write_creates_then_rejects_conflicting_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2], "p": ["a", "b"], "ts": [1, 1]}), src)
    base = str(tmp_path / "cli")
    args = ["write", base, "--operation", "insert", "--input", str(src), "--record-key", "id",
            "--partition-by", "p", "--ordering-field", "ts", "--type", "MERGE_ON_READ", "--name", "n"]  # fmt: skip
    assert cli_main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inserted"] == 2 and out["files_written"] == 2
    assert cli_main(args) == 0  # same flags again are fine
    assert cli_main([*args[:-4], "--type", "COPY_ON_WRITE"]) != 0
    assert "conflicts" in capsys.readouterr().err
    with pytest.raises(ConfigError):
        HudiTable.open(base).upsert(pa.table({"id": [1], "p": ["a"], "ts": [2]}),
                                    options={"hoodie.datasource.write.precombine.field": "id"})  # fmt: skip


#: a write may leave out some of the table's columns (nulls in its rows)
_NULLS = {"hoodie.write.set.null.for.missing.columns": "true"}


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_write_without_some_of_the_tables_columns_is_refused_unless_asked(
    tmp_path: Path, ttype: str
) -> None:
    """As Apache Hudi's writer (``hoodie.write.set.null.for.missing.columns``, false by default):
    an upsert that leaves a column out would blank it in every row it updates, so it is refused
    with the columns named and nothing written; with the option, those rows hold nulls there."""
    t = _new(tmp_path, ttype, **{"hoodie.compact.inline": "false"})
    t.upsert(
        pa.table({"id": ["k1", "k2"], "p": ["x", "x"], "ts": [1, 1], "a": ["a1", "a2"], "b": ["b1", "b2"]})
    )
    n = len(t.timeline)
    with pytest.raises(SchemaMismatchError, match=r"\['b'\].*hoodie.write.set.null.for.missing.columns"):
        t.upsert(pa.table({"id": ["k1"], "p": ["x"], "ts": [2], "a": ["A1"]}))
    assert len(t.timeline) == n
    t.upsert(pa.table({"id": ["k1"], "p": ["x"], "ts": [2], "a": ["A1"]}), options=_NULLS)
    rows = HudiTable.open(t.base_uri).read(columns=["id", "a", "b"]).sort_by("id").to_pylist()
    assert rows == [{"id": "k1", "a": "A1", "b": None}, {"id": "k2", "a": "a2", "b": "b2"}]


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_millis_timestamp_column_widens_to_micros(tmp_path: Path, ttype: str) -> None:
    """Micros written into a millis column widen it to micros (as Apache Hudi's writer does),
    where a cast down would lose the micros; millis written into a micros column stay micros."""
    t = _new(tmp_path, ttype, **{"hoodie.compact.inline": "false"})
    t.upsert(pa.table({"id": ["k1", "k2"], "p": ["x", "x"], "ts": [1, 1],
                       "t": pa.array([1_000, 2_000], pa.timestamp("ms", tz="UTC"))}))  # fmt: skip
    t.upsert(
        pa.table(
            {"id": ["k2"], "p": ["x"], "ts": [2], "t": pa.array([2_000_001], pa.timestamp("us", tz="UTC"))}
        )
    )
    t.upsert(
        pa.table({"id": ["k3"], "p": ["x"], "ts": [3], "t": pa.array([3_000], pa.timestamp("ms", tz="UTC"))})
    )
    answer = HudiTable.open(t.base_uri).read(columns=["id", "t"]).sort_by("id")
    assert answer.schema.field("t").type == pa.timestamp("us", tz="UTC")
    assert answer.column("t").cast(pa.int64()).to_pylist() == [1_000_000, 2_000_001, 3_000_000]


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_nested_fields_evolve_as_top_level_ones(tmp_path: Path, ttype: str) -> None:
    """Schema-on-write inside a struct, a list of structs and a map: a new nullable field, an
    int widened to long; rows written before read the new field as null. A nested type that
    cannot widen is still refused."""
    t = _new(tmp_path, ttype, **{"hoodie.compact.inline": "false"})
    old = pa.struct([("a", pa.int32())])
    new = pa.struct([("a", pa.int64()), ("c", pa.float64())])
    t.upsert(pa.table({"id": ["k1"], "p": ["x"], "ts": [1], "n": pa.array([{"a": 1}], old),
                       "l": pa.array([[{"a": 1}]], pa.list_(old)), "m": pa.array([[("k", {"a": 1})]], pa.map_(pa.string(), old))}))  # fmt: skip
    t.upsert(pa.table({"id": ["k2"], "p": ["x"], "ts": [2], "n": pa.array([{"a": 2**40, "c": 1.5}], new),
                       "l": pa.array([[{"a": 2, "c": 2.5}]], pa.list_(new)),
                       "m": pa.array([[("k", {"a": 3, "c": 3.5})]], pa.map_(pa.string(), new))}))  # fmt: skip
    rows = HudiTable.open(t.base_uri).read(columns=["id", "n", "l", "m"]).sort_by("id").to_pylist()
    assert rows == [
        {"id": "k1", "n": {"a": 1, "c": None}, "l": [{"a": 1, "c": None}], "m": [("k", {"a": 1, "c": None})]},
        {
            "id": "k2",
            "n": {"a": 2**40, "c": 1.5},
            "l": [{"a": 2, "c": 2.5}],
            "m": [("k", {"a": 3, "c": 3.5})],
        },
    ]
    with pytest.raises(SchemaMismatchError, match="'n'"):
        t.upsert(
            pa.table({"id": ["k3"], "p": ["x"], "ts": [3], "n": pa.array([{"a": True}])}), options=_NULLS
        )


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_write_without_a_field_of_a_struct_is_refused_unless_asked(tmp_path: Path, ttype: str) -> None:
    """A struct's field left out, in a struct column, a list's structs or a map's: refused as a
    column left out is (Apache Hudi's writer names the same fields), nothing written; with
    ``hoodie.write.set.null.for.missing.columns`` the rows written hold nulls there."""
    t = _new(tmp_path, ttype, **{"hoodie.compact.inline": "false"})
    full, part = pa.struct([("a", pa.int64()), ("b", pa.string())]), pa.struct([("a", pa.int64())])

    def rows(key: str, ts: int, kind: pa.DataType, value: dict[str, Any]) -> pa.Table:
        return pa.table({"id": [key], "p": ["x"], "ts": [ts], "n": pa.array([value], kind),
                         "l": pa.array([[value]], pa.list_(kind)),
                         "m": pa.array([[("k", value)]], pa.map_(pa.string(), kind))})  # fmt: skip

    t.upsert(rows("k1", 1, full, {"a": 1, "b": "one"}))
    t.upsert(rows("k2", 1, full, {"a": 2, "b": "two"}))
    n = len(t.timeline)
    with pytest.raises(SchemaMismatchError, match=r"\['n\.b', 'l\.element\.b', 'm\.value\.b'\]"):
        t.upsert(rows("k1", 2, part, {"a": 10}))
    assert len(t.timeline) == n
    t.upsert(rows("k1", 2, part, {"a": 10}), options=_NULLS)
    got = HudiTable.open(t.base_uri).read(columns=["id", "n", "l", "m"]).sort_by("id").to_pylist()
    blank, kept = {"a": 10, "b": None}, {"a": 2, "b": "two"}
    assert got == [{"id": "k1", "n": blank, "l": [blank], "m": [("k", blank)]},
                   {"id": "k2", "n": kept, "l": [kept], "m": [("k", kept)]}]  # fmt: skip


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_timestamps_without_a_zone_need_the_option(tmp_path: Path, ttype: str) -> None:
    """Apache Hudi 0.15's writer refuses timestamps without a time zone and its reader fails on
    a table that has them: a new column of them (top level or nested) is refused with its path and
    nothing written, unless hoodie.write.timestamp.ntz.enabled; a column the table has keeps its
    type without the option, and zoned timestamps need nothing."""
    t = _new(tmp_path, ttype, **{"hoodie.compact.inline": "false"})
    naive, zoned = pa.timestamp("us"), pa.timestamp("us", tz="UTC")
    at = 1_700_000_000_000_000

    def rows(key: str, ts: int, **cols: pa.Array) -> pa.Table:
        return pa.table({"id": [key], "p": ["x"], "ts": [ts], **cols})

    nested = {"n": pa.array([{"at": at}], pa.struct([("at", naive)])), "l": pa.array([[at]], pa.list_(naive))}
    with pytest.raises(SchemaMismatchError, match=r"\['at', 'n\.at', 'l\.element'\].*ntz\.enabled=true"):
        t.upsert(rows("k1", 1, at=pa.array([at], naive), **nested))
    assert list(t.timeline) == [] and not any(Path(t.base_uri).rglob("*.parquet"))
    t.upsert(rows("k1", 1, at=pa.array([at], naive)), options={"hoodie.write.timestamp.ntz.enabled": "true"})
    kept = pa.array([at + 1], naive)  # the column is the table's now
    t.upsert(rows("k2", 2, at=kept, z=pa.array([at], zoned)))
    with pytest.raises(SchemaMismatchError, match=r"\['n\.at', 'l\.element'\]"):
        t.upsert(rows("k3", 3, at=pa.array([at], naive), **nested))
    answer = HudiTable.open(t.base_uri).read(columns=["id", "at", "z"]).sort_by("id")
    assert answer.schema.field("at").type == naive and answer.schema.field("z").type == zoned
    assert answer.column("at").cast(pa.int64()).to_pylist() == [at, at + 1]
    schema = pa.schema([("id", pa.string()), ("p", pa.string()), ("ts", pa.int64()), ("at", naive)])
    with pytest.raises(SchemaMismatchError, match=r"\['at'\]"):  # a table created with such a schema
        HudiTable.create(str(tmp_path / "u"), name="u", record_key_fields="id", schema=schema)
    assert not (tmp_path / "u" / ".hoodie").exists()


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_text_and_bytes_are_written_into_each_others_columns(tmp_path: Path, ttype: str) -> None:
    """Avro promotes text to bytes and bytes to text; as Apache Hudi's writer, the column keeps
    its type and the input is cast to it (text as its UTF-8 bytes, bytes as the text they encode),
    inside a struct too. Bytes that are not UTF-8 are refused with their column and row, before
    anything is written."""
    t = _new(tmp_path, ttype, **{"hoodie.compact.inline": "false"})
    inner = lambda kind: pa.struct([("s", kind)])  # noqa: E731
    t.upsert(pa.table({"id": ["k1"], "p": ["x"], "ts": [1], "s": ["ü"], "b": pa.array([b"\x01"]),
                       "n": pa.array([{"s": "a"}], inner(pa.string()))}))  # fmt: skip
    t.upsert(pa.table({"id": ["k2"], "p": ["x"], "ts": [2], "s": pa.array(["é".encode()]), "b": ["text"],
                       "n": pa.array([{"s": b"b"}], inner(pa.binary()))}))  # fmt: skip
    answer = HudiTable.open(t.base_uri).read(columns=["id", "s", "b", "n"]).sort_by("id")
    assert answer.schema.field("s").type == pa.string() and answer.schema.field("b").type == pa.binary()
    assert answer.schema.field("n").type == inner(pa.string())
    assert answer.to_pylist() == [
        {"id": "k1", "s": "ü", "b": b"\x01", "n": {"s": "a"}},
        {"id": "k2", "s": "é", "b": b"text", "n": {"s": "b"}},
    ]
    n = len(t.timeline)
    with pytest.raises(SchemaMismatchError, match=r"'s'.*row 1"):
        t.upsert(
            pa.table({"id": ["k3", "k4"], "p": ["x"] * 2, "ts": [3, 3], "s": pa.array([b"ok", b"\xff\xfe"])}),
            options=_NULLS,
        )
    assert len(t.timeline) == n
    assert HudiTable.open(t.base_uri).read(columns=["id", "s"]).sort_by("id").column("s").to_pylist() == [
        "ü",
        "é",
    ]


class _PlainKeys:
    """A plugin key generator that computes its paths without checking them."""

    def record_keys(self, data: pa.Table) -> pa.Array:
        return data.column("id").combine_chunks().cast(pa.string())

    def partition_paths(self, data: pa.Table) -> pa.Array:
        return pa.array(["../outside"] * data.num_rows)


class _Overriding(SimpleKeyGenerator):
    """One of ours whose subclass replaces the checked ``partition_paths``."""

    def partition_paths(self, data: pa.Table) -> pa.Array:  # type: ignore[override]
        return pa.array(["/etc"] * data.num_rows)


_KEYS = HoodieConfig(
    {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p"}
)


@pytest.mark.parametrize("keygen", [_PlainKeys(), _Overriding(_KEYS)])
def test_a_plugin_key_generators_paths_are_checked_too(keygen: object) -> None:
    data = pa.table({"id": ["a", "b"], "p": ["x", "y"], "ts": [1, 2]})
    with pytest.raises(UnsafePathError):
        prepare(data, keygen)  # type: ignore[arg-type]
    ours = prepare(data, SimpleKeyGenerator(_KEYS))
    assert ours.column("_hoodie_partition_path").to_pylist() == ["x", "y"]


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_type_changes_hudi_takes(tmp_path: Path, ttype: str) -> None:
    """As Apache Hudi 0.15's writer (the Apache Hudi tier, test_schema_evolution.py, has each
    engine read the other's): a number column taken to text (the rows before read as Java writes
    the numbers), numbers written into a text column as the same text, a float column widened to
    double through each float's text. A boolean into a text column is refused, as Hudi refuses
    it."""
    t = _new(tmp_path, ttype, **{"hoodie.compact.inline": "false", "hoodie.parquet.small.file.limit": "0"})
    keys = ["k1", "k2", "k3"]
    t.upsert(pa.table({"id": keys, "p": ["x"] * 3, "ts": [1] * 3, "n": [100.0, 1e10, 1e-5],
                       "s": ["a", "b", "c"], "f": pa.array([1.1, 0.1, 3.3], pa.float32())}))  # fmt: skip
    HudiTable.open(t.base_uri).upsert(
        pa.table(
            {"id": ["k1"], "p": ["x"], "ts": [2], "n": ["x"], "s": pa.array([7], pa.int32()), "f": [9.9]}
        )
    )
    answer = HudiTable.open(t.base_uri).read(columns=["id", "n", "s", "f"]).sort_by("id")
    assert [answer.schema.field(c).type for c in ("n", "s", "f")] == [pa.string(), pa.string(), pa.float64()]
    assert answer.to_pylist() == [
        {"id": "k1", "n": "x", "s": "7", "f": 9.9},
        {"id": "k2", "n": "1.0E10", "s": "b", "f": 0.1},
        {"id": "k3", "n": "1.0E-5", "s": "c", "f": 3.3},
    ]
    before = HudiTable.open(t.base_uri).read(columns=["id", "n", "s", "f"]).sort_by("id")
    with pytest.raises(SchemaMismatchError, match="'n'"):  # Hudi refuses a boolean into text too
        HudiTable.open(t.base_uri).upsert(
            pa.table({"id": ["k2"], "p": ["x"], "ts": [3], "n": [True], "s": ["z"], "f": [1.0]})
        )
    assert HudiTable.open(t.base_uri).read(columns=["id", "n", "s", "f"]).sort_by("id").equals(before)
