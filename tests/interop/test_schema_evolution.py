"""Schema evolution both ways: a new nullable column and int -> long widening, written by one
writer and read and extended by the other; every reader answers the model. Also the type changes
Hudi's writer takes (numbers to text, float to double), each engine after the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import SchemaMismatchError
from hudi_spark.table_ops import open_or_create
from oracle import OracleError
from workloads import differences

pytestmark = pytest.mark.interop


def _options(table_type: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "evolving",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.index.type": "SIMPLE",
        "hoodie.compact.inline": "false",
    }


def _batch(keys: range, ts: int, *, seq_type: pa.DataType, tip: bool = False, note: bool = False) -> pa.Table:
    cols: dict[str, Any] = {
        "uuid": [f"k{i:03d}" for i in keys],
        "ts": pa.array([ts] * len(keys), pa.int64()),
        "seq": pa.array([i * 1000 + ts for i in keys], seq_type),
        "city": [("sf", "la")[i % 2] for i in keys],
    }
    if tip:
        cols["tip"] = [float(i) / 4 for i in keys]
    if note:
        cols["note"] = [f"note-{ts}-{i}" for i in keys]
    return pa.table(cols)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("first", ["hudi", "ours"])
def test_each_writer_extends_the_others_schema(hudi, tmp_path: Path, table_type: str, first: str) -> None:
    path = tmp_path / f"{first}-{table_type.lower()}"
    opts = _options(table_type)
    model: dict[str, dict[str, Any]] = {}

    def write(who: str, data: pa.Table) -> None:
        if who == "hudi":
            hudi.oracle.write(path, data, opts)
        else:
            open_or_create(str(path), opts, data.schema)[0].upsert(data, options=opts)
        for r in data.to_pylist():
            model[r["uuid"]] = {**model.get(r["uuid"], {}), **r}

    def check(step: str) -> None:
        names = sorted({c for r in model.values() for c in r})
        rows = [{c: r.get(c) for c in names} for r in sorted(model.values(), key=lambda r: r["uuid"])]
        expected = pa.Table.from_pylist(rows)
        ours = HudiTable.open(str(path)).read(columns=names)
        theirs = hudi.oracle.read(path).select(names)
        for who, answer in (("ours", ours), ("hudi", theirs)):
            diff = differences(answer, expected.cast(answer.schema))
            assert not diff, f"after {step}: {who}: {diff}"
        assert theirs.schema.field("seq").type == ours.schema.field("seq").type, step

    other = "ours" if first == "hudi" else "hudi"
    write(first, _batch(range(0, 20), 1, seq_type=pa.int32()))
    check(f"{first} wrote v1 (seq int)")
    # the other adds a nullable column and widens seq to long; untouched rows read tip as null
    write(other, _batch(range(10, 30), 2, seq_type=pa.int64(), tip=True))
    for r in model.values():
        r.setdefault("tip", None)
    check(f"{other} added tip and widened seq")
    # the first writer extends the evolved schema again
    write(first, _batch(range(25, 40), 3, seq_type=pa.int64(), tip=True, note=True))
    for r in model.values():
        r.setdefault("note", None)
    check(f"{first} added note")


#: a struct column's versions: v2 widens a field (int -> long) and adds one, v3 adds a nested struct
_INFO = [
    pa.struct([("note", pa.string()), ("n", pa.int32())]),
    pa.struct([("note", pa.string()), ("n", pa.int64()), ("extra", pa.int64())]),
    pa.struct([("note", pa.string()), ("n", pa.int64()), ("extra", pa.int64()),
               ("deep", pa.struct([("x", pa.int32())]))]),
]  # fmt: skip


def _info_batch(keys: range, ts: int, version: int) -> pa.Table:
    def info(i: int) -> dict[str, Any] | None:
        if i % 7 == 3:
            return None
        value: dict[str, Any] = {"note": None if i % 5 == 1 else f"n{ts}-{i}", "n": i * ts}
        if version >= 1:
            value["extra"] = None if i % 3 == 0 else i + 1000 * ts
        if version >= 2:
            value["deep"] = None if i % 4 == 0 else {"x": i}
        return value

    return pa.table({
        "uuid": [f"k{i:03d}" for i in keys], "ts": pa.array([ts] * len(keys), pa.int64()),
        "city": [("sf", "la")[i % 2] for i in keys],
        "info": pa.array([info(i) for i in keys], _INFO[version]),
    })  # fmt: skip


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("first", ["hudi", "ours"])
def test_a_struct_column_gains_and_widens_fields(hudi, tmp_path: Path, table_type: str, first: str) -> None:
    """A nested struct evolves as Hudi's schema on write takes it: one writer writes it, the other
    widens a field to long and adds one, the first adds a nested struct; the rows written before
    read the new fields as null. Both readers after each write (Hudi's with Spark's vectorized
    parquet reader off, which refuses a nested type change on merge-on-read), and after our
    compaction of the merge-on-read table."""
    path = tmp_path / f"{first}-{table_type.lower()}"
    opts = {**_options(table_type), "hoodie.parquet.small.file.limit": "0"}  # updates into log files
    other = "ours" if first == "hudi" else "hudi"
    model: dict[str, dict[str, Any]] = {}
    hudi.oracle.sql("SET spark.sql.parquet.enableVectorizedReader=false")
    try:
        for version, (who, keys) in enumerate([(first, range(0, 20)), (other, range(10, 30)),
                                               (first, range(25, 40))]):  # fmt: skip
            data = _info_batch(keys, version + 1, version)
            if who == "hudi":
                hudi.oracle.write(path, data, opts)
            else:
                open_or_create(str(path), opts, data.schema)[0].upsert(data, options=opts)
            model.update({r["uuid"]: r for r in data.to_pylist()})
            expected = pa.Table.from_pylist(
                sorted(model.values(), key=lambda r: r["uuid"]), schema=data.schema
            )
            last = version == len(_INFO) - 1
            for compacted in (False, True) if last and table_type == "MERGE_ON_READ" else (False,):
                if compacted:
                    now = {**opts, "hoodie.compact.inline.max.delta.commits": "1"}
                    assert HudiTable.open(str(path), options=now).compact(now)
                ours = HudiTable.open(str(path)).read(columns=expected.column_names)
                theirs = hudi.oracle.read(path).select(expected.column_names)
                for reader, answer in (("ours", ours), ("hudi", theirs)):
                    assert answer.schema.field("info").type == _INFO[version], (version, reader)
                    diff = differences(answer, expected)
                    assert not diff, f"{who} wrote v{version + 1} (compacted {compacted}): {reader}: {diff}"
    finally:
        hudi.oracle.sql("SET spark.sql.parquet.enableVectorizedReader=true")


#: (writer, type of the column it writes) per step; the column keeps the first write's type
_TEXT_AND_BYTES = {
    "hudi-text-ours-bytes": [("hudi", pa.string()), ("ours", pa.binary())],
    "ours-text-ours-bytes": [("ours", pa.string()), ("ours", pa.binary())],
    "hudi-bytes-ours-text": [("hudi", pa.binary()), ("ours", pa.string())],
    "ours-bytes-hudi-text": [("ours", pa.binary()), ("hudi", pa.string())],
}


@pytest.mark.parametrize("case", list(_TEXT_AND_BYTES))
def test_text_and_bytes_written_into_each_others_column(hudi, tmp_path: Path, case: str) -> None:
    """Avro promotes text to bytes and bytes to text, and Hudi's writer then keeps the column's
    type, casting the input to it: text into a bytes column is stored as its UTF-8 bytes, bytes
    into a text column as the text they encode. (Apache Hudi 0.15 writes the latter as the
    Java ``ByteBuffer``'s ``toString()``, "java.nio.HeapByteBuffer[pos=0 lim=8 cap=8]": so only
    our writer writes bytes into a text column here.) Merge-on-read; both readers after each
    write and after our compaction."""
    path = tmp_path / case
    opts = {**_options("MERGE_ON_READ"), "hoodie.parquet.small.file.limit": "0"}  # updates into log files
    steps = _TEXT_AND_BYTES[case]
    kept = steps[0][1]
    model: dict[str, str] = {}
    for step, (who, kind) in enumerate(steps, start=1):
        keys = range(3 * step - 3, 3 * step + 3)
        notes = [f"note-{step}-{i}-ü" for i in keys]
        data = pa.table({
            "uuid": [f"k{i:03d}" for i in keys], "ts": pa.array([step] * len(keys), pa.int64()),
            "city": [("sf", "la")[i % 2] for i in keys],
            "note": pa.array(notes if kind == pa.string() else [n.encode() for n in notes], kind),
        })  # fmt: skip
        if who == "hudi":
            hudi.oracle.write(path, data, opts)
        else:
            open_or_create(str(path), opts, data.schema)[0].upsert(data, options=opts)
        model.update(zip(data.column("uuid").to_pylist(), notes, strict=True))
        for compacted in (False, True) if step == len(steps) else (False,):
            if compacted:
                now = {**opts, "hoodie.compact.inline.max.delta.commits": "1"}
                assert HudiTable.open(str(path), options=now).compact(now)
            expected = [(k, n if kept == pa.string() else n.encode()) for k, n in sorted(model.items())]
            ours = HudiTable.open(str(path)).read(columns=["uuid", "note"])
            theirs = hudi.oracle.read(path).select(["uuid", "note"])
            for reader, answer in (("ours", ours), ("hudi", theirs)):
                assert answer.schema.field("note").type == kept, (step, reader)
                got = sorted(
                    zip(answer.column("uuid").to_pylist(), answer.column("note").to_pylist(), strict=True)
                )
                assert got == expected, f"step {step} ({who} wrote {kind}, compacted {compacted}): {reader}"


_LEFT_OUT = {  # what the second write leaves out: a column, or a field of a struct column
    "column": (pa.string(), pa.string(), "n1", None),
    "struct field": (
        pa.struct([("a", pa.int64()), ("b", pa.string())]),
        pa.struct([("a", pa.int64())]),
        {"a": 1, "b": "n1"},
        {"a": 7},
    ),
}


@pytest.mark.parametrize("left_out", list(_LEFT_OUT))
@pytest.mark.parametrize("writer", ["hudi", "ours"])
def test_a_batch_without_one_of_the_tables_columns(hudi, tmp_path: Path, writer: str, left_out: str) -> None:
    """Both writers refuse an upsert that leaves out a column of the table, or a field of one of
    its struct columns (it would blank it in the rows it updates), and take it with
    hoodie.write.set.null.for.missing.columns, writing nulls there; both readers then agree."""
    path = tmp_path / writer
    opts = _options("MERGE_ON_READ")
    full_type, lacking_type, first_value, second_value = _LEFT_OUT[left_out]

    def upsert(data: pa.Table, more: dict[str, str] | None = None) -> None:
        options = {**opts, **(more or {})}
        if writer == "hudi":
            hudi.oracle.write(path, data, options)
        else:
            open_or_create(str(path), options, data.schema)[0].upsert(data, options=options)

    full = pa.table({"uuid": ["k1", "k2"], "ts": pa.array([1, 1], pa.int64()), "city": ["sf", "la"],
                     "tip": [1.0, 2.0], "note": pa.array([first_value, first_value], full_type)})  # fmt: skip
    upsert(full)
    lacking = pa.table({"uuid": ["k1"], "ts": pa.array([2], pa.int64()), "city": ["sf"], "tip": [9.0]})
    if second_value is not None:
        lacking = lacking.append_column("note", pa.array([second_value], lacking_type))
    named = "note" if second_value is None else r"note\.(note\.)?b\b"  # Hudi names the record too
    with pytest.raises(OracleError if writer == "hudi" else SchemaMismatchError, match=named):
        upsert(lacking)
    upsert(lacking, {"hoodie.write.set.null.for.missing.columns": "true"})
    blanked = None if second_value is None else {**second_value, "b": None}
    expected = [("k1", 9.0, blanked), ("k2", 2.0, first_value)]
    ours = HudiTable.open(str(path)).read(columns=["uuid", "tip", "note"]).sort_by("uuid")
    assert [tuple(r.values()) for r in ours.to_pylist()] == expected
    assert not differences(ours, hudi.oracle.read(path).select(["uuid", "tip", "note"]))


def test_micros_into_a_millis_column(hudi, tmp_path: Path) -> None:
    """Our millis column widened to micros by a later write (as Hudi's writer widens one): Hudi's
    snapshot and read_optimized answers equal ours, millis and micros values alike."""
    path = tmp_path / "t"
    opts = _options("MERGE_ON_READ")
    for ts, unit, keys, values in ((1, "ms", ["k1", "k2"], [1_000, 2_000]), (2, "us", ["k2"], [2_000_001])):
        data = pa.table({"uuid": keys, "ts": pa.array([ts] * len(keys), pa.int64()), "city": ["sf"] * len(keys),
                         "at": pa.array(values, pa.timestamp(unit, tz="UTC"))})  # fmt: skip
        open_or_create(str(path), opts, data.schema)[0].upsert(data, options=opts)
    for query in ("snapshot", "read_optimized"):
        ours = HudiTable.open(str(path)).read(query, columns=["uuid", "at"])
        theirs = hudi.oracle.read(path, {"hoodie.datasource.query.type": query}).select(["uuid", "at"])
        assert ours.schema.field("at").type == pa.timestamp("us", tz="UTC")
        assert not differences(ours, theirs), query
    micros = HudiTable.open(str(path)).read(columns=["uuid", "at"]).sort_by("uuid").column("at")
    assert micros.cast(pa.int64()).to_pylist() == [1_000_000, 2_000_001]


#: (the table's first column type and values, the later write's type and values, what both
#: readers give for every key after it): Apache Hudi 0.15's answers, probed
_DOUBLES = [100.0, 1e10, 1e-5, 0.001, 1234567.0, 12345678.9, -0.0, float("nan")]
_CHANGES: dict[str, tuple[pa.Array, pa.Array, list[Any]]] = {
    # a number column taken to text: the rows before read as Java's String.valueOf writes them
    "double->string": (pa.array(_DOUBLES, pa.float64()), pa.array(["x"]),
                       ["x", "1.0E10", "1.0E-5", "0.001", "1234567.0", "1.23456789E7", "-0.0", "NaN"]),
    "float->string": (pa.array([100.0, 1e10, 1e-5, 3.4e38, 16777216.0, 0.1, 2.5, float("inf")], pa.float32()),
                      pa.array(["x"]), ["x", "1.0E10", "1.0E-5", "3.4E38", "1.6777216E7", "0.1", "2.5", "Infinity"]),
    # numbers written into a text column: stored as the same text
    "string<-double": (pa.array(["s"] * 8), pa.array([100.0], pa.float64()), ["100.0", *["s"] * 7]),
    # a float column widened to double through each float's text: 1.1f reads as 1.1
    "float->double": (pa.array([1.1, 0.1, 2.2, 3.3, 1e10, 1e-5, 7.0, 0.3], pa.float32()),
                      pa.array([9.9], pa.float64()), [9.9, 0.1, 2.2, 3.3, 1e10, 1e-5, 7.0, 0.3]),
    # integers widened to a floating type: rounded to the nearest float as Java's conversion does
    "int->float": (pa.array([1, 2**24 + 1, -(2**24) - 1, 2**31 - 1, -(2**31), 3, 0, None], pa.int32()),
                   pa.array([2.5], pa.float32()),
                   [2.5, 16777216.0, -16777216.0, 2147483648.0, -2147483648.0, 3.0, 0.0, None]),
    "long->double": (pa.array([1, 2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63), 3, 0, None], pa.int64()),
                     pa.array([2.5], pa.float64()),
                     [2.5, 9007199254740992.0, -9007199254740992.0, 9.223372036854776e18,
                      -9.223372036854776e18, 3.0, 0.0, None]),
    # integers written into a floating column, rounded the same way
    "double<-long": (pa.array([0.5] * 8, pa.float64()), pa.array([2**53 + 1], pa.int64()),
                     [9007199254740992.0, *[0.5] * 7]),
}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "writers"),
    [("double->string", ("hudi", "ours")), ("double->string", ("ours", "hudi")),
     ("float->string", ("ours", "ours")), ("string<-double", ("ours", "hudi")),
     ("float->double", ("hudi", "ours")), ("int->float", ("hudi", "ours")), ("long->double", ("ours", "hudi")),
     ("double<-long", ("ours", "ours"))],
)  # fmt: skip
def test_a_type_change_hudi_takes(hudi, tmp_path: Path, change: str, writers: tuple[str, str]) -> None:
    """A later write changes a column's type as Apache Hudi's writer allows it (merge-on-read: the
    first key's update goes to a log, the other rows stay in the old type in their base file);
    both readers give Hudi's values after the write and after our compaction. Before, our
    writer refused these changes, and our reader gave Arrow's text of the old numbers
    (``1e+10``, ``100``) and a float's exact double (``1.100000023841858``)."""
    old, new, expected = _CHANGES[change]
    path = tmp_path / "t"
    opts = {
        **_options("MERGE_ON_READ"),
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.metadata.enable": "false",
    }
    keys = [f"k{i}" for i in range(8)]
    for who, (ids, values) in zip(writers, [(keys, old), (keys[:1], new)], strict=True):
        data = pa.table({"uuid": ids, "ts": pa.array([len(values)] * len(ids), pa.int64()),
                         "city": ["sf"] * len(ids), "c": values})  # fmt: skip
        if who == "hudi":
            hudi.oracle.write(path, data, opts)
        else:
            open_or_create(str(path), opts, data.schema)[0].upsert(data, options=opts)
    for compacted in (False, True):
        if compacted:
            now = {**opts, "hoodie.compact.inline.max.delta.commits": "1"}
            assert HudiTable.open(str(path), options=now).compact(now)
        for reader, answer in (("ours", HudiTable.open(str(path)).read(columns=["uuid", "c"])),
                               ("hudi", hudi.oracle.read(path).select(["uuid", "c"]))):  # fmt: skip
            got = [v for _, v in sorted(zip(answer.column("uuid").to_pylist(), answer.column("c").to_pylist(),
                                            strict=True))]  # fmt: skip
            assert [str(v) for v in got] == [str(v) for v in expected], (reader, compacted)


@pytest.mark.parametrize("writer", ["hudi", "ours"])
def test_timestamps_without_a_zone_are_refused(hudi, tmp_path: Path, writer: str) -> None:
    """A column of timestamps without a time zone (Spark's TIMESTAMP_NTZ): Apache Hudi 0.15's
    writer refuses it, and so does ours (its option aside); the same rows with a zone are taken
    by both, and both readers give them back."""
    path = tmp_path / writer
    opts = _options("COPY_ON_WRITE")
    at = [1_700_000_000_000_000, 1_700_000_000_000_001]

    def upsert(kind: pa.DataType) -> None:
        data = pa.table({"uuid": ["k1", "k2"], "ts": pa.array([1, 1], pa.int64()), "city": ["sf", "la"],
                         "at": pa.array(at, kind)})  # fmt: skip
        if writer == "hudi":
            hudi.oracle.write(path, data, opts)
        else:
            open_or_create(str(path), opts, data.schema)[0].upsert(data, options=opts)

    with pytest.raises(OracleError if writer == "hudi" else SchemaMismatchError, match=r"(?i)timestamp.?ntz"):
        upsert(pa.timestamp("us"))
    upsert(pa.timestamp("us", tz="UTC"))
    ours = HudiTable.open(str(path)).read(columns=["uuid", "at"])
    assert not differences(ours, hudi.oracle.read(path).select(["uuid", "at"]))
    assert sorted(ours.column("at").cast(pa.int64()).to_pylist()) == at
