"""Tables with ``hoodie.table.cdc.enabled=true``: Apache Hudi's CDC query over our writes.

Hudi's CDC query (``hoodie.datasource.query.incremental.format=cdc``) answers each data commit's
changes: from the CDC log file a COPY_ON_WRITE merge writes beside its new base file, and by
inference for new file groups, replaced ones and MERGE_ON_READ log files. Until 2026-12-07 our
writers refused such tables, because they wrote no CDC log file, and Hudi's query fails on a
rewritten base file without one. Here a table Hudi creates takes writes from our local engine
and ``hudi_spark.write`` between Hudi's own, beside a twin table only Hudi writes: Hudi's CDC
query answers the same changes on both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from runner import CDC_QUERY, cdc_changes
from workloads import table_options

pytestmark = pytest.mark.interop


def _options(table_type: str, operation: str, mode: str = "DATA_BEFORE_AFTER") -> dict[str, str]:
    return table_options("cdc", table_type, operation, {
        "hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": mode,
    })  # fmt: skip


def _rows(ids: list[str], p: str, ts: int) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": [p] * n, "ts": pa.array([ts] * n, pa.int64()),
                     "v": [f"{i}@{ts}" for i in ids]})  # fmt: skip


@pytest.mark.parametrize(
    ("table_type", "mode"),
    [("COPY_ON_WRITE", "DATA_BEFORE_AFTER"), ("MERGE_ON_READ", "DATA_BEFORE_AFTER"),
     ("COPY_ON_WRITE", "OP_KEY_ONLY"), ("COPY_ON_WRITE", "DATA_BEFORE")],
)  # fmt: skip
def test_hudi_reads_the_changes_of_our_writes_as_of_its_own(
    hudi: Any, spark: Any, tmp_path: Path, table_type: str, mode: str
) -> None:
    """Steps: Hudi inserts; an upsert (an update, a new key: COW packs it into the small file,
    whose merge logs it); an upsert through ``hudi_spark.write``; a delete; Hudi upserts. Ours
    writes steps 2-4 (then, MOR, our compaction, which Hudi's query skips), Hudi writes all of
    them on the twin: Hudi's CDC answers are the same, and so are the snapshots, in each
    supplemental logging mode (``OP_KEY_ONLY`` and ``DATA_BEFORE`` take images from the files)."""
    import hudi_spark

    oracle = hudi.oracle
    ours, twin = str(tmp_path / "ours"), str(tmp_path / "twin")
    first = pa.concat_tables([_rows(["a", "b", "c"], "sf", 1), _rows(["d"], "la", 1)])
    steps = [
        ("insert", first),
        ("upsert", pa.concat_tables([_rows(["a", "e"], "sf", 2)])),
        ("upsert", pa.concat_tables([_rows(["b"], "sf", 3), _rows(["f"], "la", 3)])),
        ("delete", _rows(["c"], "sf", 4)),
        ("upsert", pa.concat_tables([_rows(["a", "g"], "sf", 5), _rows(["d"], "la", 5)])),
    ]

    def opts(op: str) -> dict[str, str]:
        return _options(table_type, op, mode)

    for op, rows in steps:
        oracle.write(twin, rows, opts(op))
    oracle.write(ours, steps[0][1], opts("insert"))
    assert HudiTable.open(ours).config.to_dict()["hoodie.table.cdc.supplemental.logging.mode"] == mode
    HudiTable.open(ours).upsert(steps[1][1], options=opts("upsert"))
    hudi_spark.write(spark.createDataFrame(steps[2][1]), ours, operation="upsert", options=opts("upsert"))
    HudiTable.open(ours).delete(steps[3][1], options=opts("delete"))
    if table_type == "MERGE_ON_READ":
        assert HudiTable.open(ours).compact()
    oracle.write(ours, steps[4][1], opts("upsert"))
    if table_type == "COPY_ON_WRITE":
        assert list(Path(ours).rglob(".*.cdc")), "our merges wrote CDC log files"

    expected = cdc_changes(oracle.read(twin, CDC_QUERY))
    assert cdc_changes(oracle.read(ours, CDC_QUERY)) == expected
    # our CDC reader answers as Hudi's query, on either table
    for path in (ours, twin):
        assert cdc_changes(HudiTable.open(path).read_changes()) == expected, path
    ops = [(n, op) for n, op, *_ in expected]
    assert ops.count((3, "d")) == 1 and (1, "u") in ops and (1, "i") in ops  # what the twin answered
    snapshot = {"hoodie.datasource.query.type": "snapshot"}
    columns = ["id", "p", "ts", "v"]
    assert sorted(oracle.read(ours, snapshot).select(columns).to_pylist(), key=str) == sorted(
        oracle.read(twin, snapshot).select(columns).to_pylist(), key=str
    )


def test_hudi_reads_the_changes_of_our_insert_into_a_small_file(hudi: Any, tmp_path: Path) -> None:
    """Hudi's own ``insert`` into a small file (duplicates allowed: its concat handle) writes no CDC
    log file, and its CDC query then fails on the rewritten file ("There should be a cdc log
    file"). Ours writes one: the query answers the new keys as inserts, and our delete of an old
    one after it as a delete."""
    oracle, path = hudi.oracle, str(tmp_path / "t")
    oracle.write(path, _rows(["a", "b"], "sf", 1), _options("COPY_ON_WRITE", "insert"))
    HudiTable.open(path).insert(_rows(["c", "d"], "sf", 2), options=_options("COPY_ON_WRITE", "insert"))
    HudiTable.open(path).delete(_rows(["a"], "sf", 3), options=_options("COPY_ON_WRITE", "delete"))
    got = cdc_changes(oracle.read(path, CDC_QUERY))
    assert cdc_changes(HudiTable.open(path).read_changes()) == got
    assert [(n, op, (after or before)[0][1]) for n, op, before, after in got] == [  # type: ignore[index]
        (0, "i", "a"), (0, "i", "b"), (1, "i", "c"), (1, "i", "d"), (2, "d", "a"),
    ]  # fmt: skip


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_an_overwrite_deletes_the_rows_it_replaced(hudi: Any, tmp_path: Path, table_type: str) -> None:
    """``insert_overwrite`` replaces the partition's file groups: the CDC query deletes each of
    their rows, as they stood (MOR: merged with their logs). Apache Hudi 0.15 answers as many
    deletes but one row's image for all of them (docs/interop.md, "Hudi quirks"): ours are the
    rows of Hudi's snapshot before the overwrite."""
    oracle, path = hudi.oracle, str(tmp_path / "t")
    oracle.write(path, pa.concat_tables([_rows(["a", "b", "c"], "sf", 1), _rows(["d"], "la", 1)]),
                 _options(table_type, "insert"))  # fmt: skip
    HudiTable.open(path).upsert(_rows(["b", "e"], "sf", 2), options=_options(table_type, "upsert"))
    before = oracle.read(path, {"hoodie.datasource.query.type": "snapshot"})
    HudiTable.open(path).insert_overwrite(
        _rows(["f"], "sf", 3), options=_options(table_type, "insert_overwrite")
    )
    last = HudiTable.open(path).timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    start = {
        **CDC_QUERY,
        "hoodie.datasource.read.begin.instanttime": HudiTable.open(path)
        .timeline.completed_commits()
        .timestamps()[-2],
    }
    theirs, ours = (
        oracle.read(path, start),
        HudiTable.open(path).read_changes(start["hoodie.datasource.read.begin.instanttime"]),
    )
    replaced = {(r["id"], r["ts"], r["v"]) for r in before.to_pylist() if r["p"] == "sf"}
    deleted = [json.loads(r["before"]) for r in ours.to_pylist() if r["op"] == "d"]
    assert sorted((d["id"], d["ts"], d["v"]) for d in deleted) == sorted(replaced)
    assert sum(1 for r in theirs.to_pylist() if r["op"] == "d") == len(replaced) == 4
    assert cdc_changes(ours, {last}) == cdc_changes(theirs, {last})


def test_we_read_hudis_changes_of_a_file_group_it_emptied_then_replaced(hudi: Any, tmp_path: Path) -> None:
    """Hudi's ``delete`` of every row of a file group writes no CDC file (its query takes the
    deletes from the file before); an ``insert_overwrite_table`` then replaces the group. Our
    reader looked for that file among the groups visible now, where the replaced group is not,
    and failed (explore ``--cdc --spark`` seed 21105); it now looks as of the commit."""
    oracle, path = hudi.oracle, str(tmp_path / "t")
    oracle.write(path, pa.concat_tables([_rows(["a", "b"], "sf", 1), _rows(["c"], "la", 1)]),
                 _options("COPY_ON_WRITE", "insert"))  # fmt: skip
    oracle.write(path, _rows(["a", "b"], "sf", 2), _options("COPY_ON_WRITE", "delete"))
    oracle.write(path, _rows(["d"], "sf", 3), _options("COPY_ON_WRITE", "insert_overwrite_table"))
    last = HudiTable.open(path).timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    theirs, ours = oracle.read(path, CDC_QUERY), HudiTable.open(path).read_changes()
    assert cdc_changes(ours, {last}) == cdc_changes(theirs, {last})
    assert sorted(r["op"] for r in ours.to_pylist()) == ["d", "d", "d", "i", "i", "i", "i"]


@pytest.mark.parametrize(
    "payload",
    ["org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
     "org.apache.hudi.common.model.DefaultHoodieRecordPayload"],
)  # fmt: skip
def test_we_read_a_later_logs_older_record_as_hudis_cdc_query_does(
    hudi: Any, tmp_path: Path, payload: str
) -> None:
    """MERGE_ON_READ, two log files updating one key, the second with the smaller ordering value.
    Hudi's snapshot folds the logs first (the greater ordering value wins); its CDC query merges
    the second log's record into the slice before it as into a base row, where
    OverwriteWithLatestAvroPayload lets it win. So Hudi answers an update its snapshot never
    shows, and ours answers the same (it followed the snapshot: explore ``--cdc`` seeds 21039,
    21405, 21407); under DefaultHoodieRecordPayload the older record is no change in either."""
    oracle, path = hudi.oracle, str(tmp_path / "t")
    options = {**_options("MERGE_ON_READ", "upsert"), "hoodie.datasource.write.payload.class": payload}
    oracle.write(path, _rows(["a", "b"], "sf", 1), {**options, "hoodie.datasource.write.operation": "insert"})
    oracle.write(path, _rows(["a"], "sf", 5), options)
    oracle.write(path, _rows(["a", "b"], "sf", 3), options)
    theirs, ours = oracle.read(path, CDC_QUERY), HudiTable.open(path).read_changes()
    assert cdc_changes(ours) == cdc_changes(theirs)
    last = max(r["ts_ms"] for r in ours.to_pylist())
    changed = sorted((r["op"], json.loads(r["before"])["ts"], json.loads(r["after"])["ts"])
                     for r in ours.to_pylist() if r["ts_ms"] == last)  # fmt: skip
    overwrites = payload.endswith("OverwriteWithLatestAvroPayload")
    assert changed == ([("u", 1, 3), ("u", 5, 3)] if overwrites else [("u", 1, 3)])
    snapshot = {r["id"]: r["ts"] for r in oracle.read(path).to_pylist()}
    assert snapshot == {"a": 5, "b": 3} == {r["id"]: r["ts"] for r in HudiTable.open(path).read().to_pylist()}


def test_our_cdc_json_is_hudis_text(hudi: Any, tmp_path: Path) -> None:
    """The images' text, not only their values: numbers as Java prints them (``1.0E7``,
    ``1.5E-4``, the integral ``2^60`` as ``1.15292150460684698E18``, a float's own digits) and
    NaN and the infinities as JSON strings, strings escaped as Avro (the CDC log's images) and
    Jackson (the rows read from base files) escape them, and the latter's fields in the order of
    the Scala hash map Hudi puts them in (26 of them: the map grows twice). Hudi inserts, Hudi
    upserts, ours upserts: on the one table, each row of our answer is Hudi's, text for text."""
    vals = [1e7, 1.5e-4, 123.456, 1e21, -12345678.9, 0.001, float("nan"), 1.0, -0.0, float("-inf"),
            9999999.0, 2.0**60, 0.1 + 0.2, 5e-324, float("inf"), 4.35e-10]  # fmt: skip
    strs = ["a/b", "€5", "x—y", "\x7f", "\x01", "\b\f", "é", "\u2028", "t\tn\n", "𝄞", 'q"b\\', "\x1f", "\x9f",
            "\u3000", "<>&'=", "z"]  # fmt: skip
    n = len(vals)

    def rows(ts: int, keys: range) -> pa.Table:
        return pa.table({
            "id": [f"k{i}" for i in keys], "p": ["sf"] * len(keys), "ts": pa.array([ts] * len(keys), pa.int64()),
            "v": pa.array([vals[i] for i in keys], pa.float64()), "f": pa.array([vals[i] for i in keys], pa.float32()),
            "s": [strs[i] for i in keys],
            **{f"c{c}": pa.array([None if (i + c) % 5 == 0 else i * c for i in keys], pa.int32()) for c in range(15)},
        })  # fmt: skip

    path = str(tmp_path / "t")
    hudi.oracle.write(path, rows(1, range(n)), _options("COPY_ON_WRITE", "insert"))
    hudi.oracle.write(path, rows(2, range(0, n, 2)), _options("COPY_ON_WRITE", "upsert"))
    HudiTable.open(path).upsert(rows(3, range(1, n, 2)), options=_options("COPY_ON_WRITE", "upsert"))

    def answer(t: pa.Table) -> list[tuple[Any, ...]]:
        return sorted((r["ts_ms"], r["op"], r["before"] or "", r["after"] or "") for r in t.to_pylist())

    theirs, ours = answer(hudi.oracle.read(path, CDC_QUERY)), answer(HudiTable.open(path).read_changes())
    assert ours == theirs
    assert [op for _, op, *_ in ours].count("u") == n and [op for _, op, *_ in ours].count("i") == n
    assert json.loads(ours[0][3])["c3"] == 0 and "c0" not in json.loads(ours[0][3])  # (k0's row: c0 null)
    updates = "\n".join(str(after) for _, op, _, after in ours if op == "u")
    for text in ('"v": 1.0E7', '"v": 1.15292150460684698E18', '"f": 1.1529215E18', '"v": "NaN"',
                 '"f": "-Infinity"', '"s": "\\u20AC5"', '"v": 4.9E-324', '"f": 4.35E-10'):  # fmt: skip
        assert text in updates, text


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_images_written_before_a_new_column_show_it_as_hudis_do(
    hudi: Any, tmp_path: Path, table_type: str
) -> None:
    """Hudi reads every image by the table's latest schema: a record its CDC file (or a file)
    holds from before a column was added shows the column, null (Avro's rendering writes
    ``"note": null``; Jackson's leaves a null out, but the field still takes its place in the
    hash map). Hudi inserts and upserts, our upsert adds a column, Hudi upserts again: on that
    table our answer is Hudi's, text for text."""
    path = str(tmp_path / "t")
    opts = lambda op: _options(table_type, op)  # noqa: E731
    hudi.oracle.write(
        path, pa.concat_tables([_rows(["a", "b"], "sf", 1), _rows(["c"], "la", 1)]), opts("insert")
    )
    hudi.oracle.write(path, _rows(["a", "d"], "sf", 2), opts("upsert"))
    later = _rows(["b", "e"], "sf", 3).append_column("note", pa.array(["x", None]))
    HudiTable.open(path).upsert(later, options=opts("upsert"))
    hudi.oracle.write(path, _rows(["c"], "la", 4).append_column("note", pa.array(["y"])), opts("upsert"))

    def answer(t: pa.Table) -> list[tuple[str, ...]]:
        return sorted((r["ts_ms"], r["op"], r["before"] or "", r["after"] or "") for r in t.to_pylist())

    theirs, ours = answer(hudi.oracle.read(path, CDC_QUERY)), answer(HudiTable.open(path).read_changes())
    assert ours == theirs
    if table_type == "COPY_ON_WRITE":  # the second write's CDC file, from before the column
        assert any(after.endswith('"v": "a@2", "note": null}') for _, op, _, after in ours if op == "u")
