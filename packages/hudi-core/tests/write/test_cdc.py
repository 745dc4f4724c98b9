"""Tables with ``hoodie.table.cdc.enabled=true``: a write that rewrites a base file writes what
changed in it (``i``, ``u``, ``d``, with the images the table's supplemental logging mode keeps)
into a CDC log file beside the new base file, listed in its write stat's ``cdcStats``; new file
groups, MERGE_ON_READ log appends and compactions write none (Apache Hudi's CDC query infers
those). The change files are decoded here with fastavro, not with our decoder. The Apache Hudi
tier checks Hudi's CDC query over our writes (``tests/interop/test_cdc.py``)."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import fastavro
import hudi_core.write.transaction as transaction_mod
import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ConfigError, HudiError
from hudi_core.log.format import BlockType
from hudi_core.log.reader import read_log_file
from hudi_core.storage import storage_for
from hudi_core.table.file_names import LogFileName

CDC = {"hoodie.table.cdc.enabled": "true"}


def _create(path: Path, table_type: str = "COPY_ON_WRITE", **more: str) -> HudiTable:
    return HudiTable.create(str(path), name="tbl", table_type=table_type, record_key_fields="id",
                            partition_fields="city", ordering_field="ts", options={**CDC, **more})  # fmt: skip


def _rows(ids: list[str], ts: int, city: str = "sf") -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "city": [city] * n, "ts": pa.array([ts] * n, pa.int64()),
                     "v": [f"{i}@{ts}" for i in ids]})  # fmt: skip


def _cdc_files(path: Path, instant: str | None = None) -> list[Path]:
    found = [f for f in path.rglob(".*.cdc") if (n := LogFileName.parse(f.name)) is not None and n.cdc]
    return sorted(f for f in found if instant is None or LogFileName.parse(f.name).base_instant == instant)  # type: ignore[union-attr]


def _changes(f: Path) -> list[dict[str, Any]]:
    """The records of a CDC log file, decoded by fastavro with each block's own schema."""
    out: list[dict[str, Any]] = []
    blocks = read_log_file(storage_for(str(f.parent), {}), str(f))
    assert blocks and all(b.block_type is BlockType.CDC_DATA for b in blocks)
    for block in blocks:
        schema = fastavro.parse_schema(json.loads(block.schema))
        content = block.content
        version, count = struct.unpack_from(">ii", content, 0)
        assert version == 3
        pos = 8
        for _ in range(count):
            (size,) = struct.unpack_from(">i", content, pos)
            out.append(fastavro.schemaless_reader(io.BytesIO(content[pos + 4 : pos + 4 + size]), schema))
            pos += 4 + size
    return out


def _by_op(records: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    def image(r: dict[str, Any] | None) -> tuple[Any, ...] | None:
        return None if r is None else (r["id"], r["ts"], r["v"])

    return sorted((r["op"], image(r["before"]), image(r["after"])) for r in records)


def _last(t: HudiTable) -> str:
    return t.timeline.completed_commits().last().timestamp  # type: ignore[union-attr]


def test_creation_records_the_logging_mode_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    _create(tmp_path / "a")
    props = (tmp_path / "a" / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.cdc.enabled=true" in props
    assert "hoodie.table.cdc.supplemental.logging.mode=DATA_BEFORE_AFTER" in props  # as Hudi writes it
    _create(tmp_path / "b", **{"hoodie.table.cdc.supplemental.logging.mode": "op_key_only"})
    assert "logging.mode=OP_KEY_ONLY" in (tmp_path / "b" / ".hoodie" / "hoodie.properties").read_text()
    with pytest.raises(ConfigError, match=r"logging\.mode"):
        _create(tmp_path / "c", **{"hoodie.table.cdc.supplemental.logging.mode": "everything"})


def test_upserts_and_deletes_log_what_they_change_beside_the_new_base_file(tmp_path: Path) -> None:
    t = _create(tmp_path / "t")
    t.bulk_insert(_rows(["a", "b", "c"], 1))
    assert _cdc_files(tmp_path / "t") == []  # a new file group: Hudi infers its inserts
    t.upsert(_rows(["a", "d"], 2))
    up = _last(t)
    t.delete(_rows(["b", "zz"], 3))
    gone = _last(t)
    assert [len(_cdc_files(tmp_path / "t", i)) for i in (up, gone)] == [1, 1]
    [up_file], [gone_file] = _cdc_files(tmp_path / "t", up), _cdc_files(tmp_path / "t", gone)
    assert _by_op(_changes(up_file)) == [
        ("i", None, ("d", 2, "d@2")), ("u", ("a", 1, "a@1"), ("a", 2, "a@2")),
    ]  # fmt: skip
    assert _by_op(_changes(gone_file)) == [("d", ("b", 1, "b@1"), None)]  # the unknown key changes nothing
    assert {r["ts_ms"] for r in _changes(up_file)} == {up}
    # the write stat lists the file, from the base path, with its size
    for instant, f in ((up, up_file), (gone, gone_file)):
        meta = json.loads((tmp_path / "t" / ".hoodie" / f"{instant}.commit").read_text())
        stats = [s["cdcStats"] for ss in meta["partitionToWriteStats"].values() for s in ss]
        assert stats == [{f"sf/{f.name}": f.stat().st_size}]
    assert sorted(r["id"] for r in t.read().to_pylist()) == ["a", "c", "d"]


def test_an_update_that_loses_to_the_stored_row_is_no_change(tmp_path: Path) -> None:
    t = _create(tmp_path / "t", **{"hoodie.datasource.write.payload.class":
                                   "org.apache.hudi.common.model.DefaultHoodieRecordPayload"})  # fmt: skip
    t.bulk_insert(_rows(["a", "b"], 5))
    t.upsert(_rows(["a"], 1))  # an older ordering value: the stored row stays
    [f] = _cdc_files(tmp_path / "t", _last(t))
    assert _changes(f) == []  # the file is written, empty: Hudi's CDC query needs one
    t.upsert(_rows(["a", "b"], 9))
    [f] = _cdc_files(tmp_path / "t", _last(t))
    assert [r["op"] for r in _changes(f)] == ["u", "u"]


@pytest.mark.parametrize(
    ("mode", "fields"),
    [("OP_KEY_ONLY", ["op", "record_key"]), ("DATA_BEFORE", ["op", "record_key", "before"])],
)
def test_each_logging_mode_keeps_its_fields(tmp_path: Path, mode: str, fields: list[str]) -> None:
    t = _create(tmp_path / "t", **{"hoodie.table.cdc.supplemental.logging.mode": mode})
    t.bulk_insert(_rows(["a", "b"], 1))
    t.upsert(_rows(["a", "c"], 2))
    t.delete(_rows(["b"], 3))
    got = [r for f in _cdc_files(tmp_path / "t") for r in _changes(f)]
    assert all(list(r) == fields for r in got)
    assert sorted((r["op"], r["record_key"]) for r in got) == [("d", "b"), ("i", "c"), ("u", "a")]
    if "before" in fields:
        assert sorted((r["record_key"], r["before"] and r["before"]["v"]) for r in got) == [
            ("a", "a@1"), ("b", "b@1"), ("c", None),
        ]  # fmt: skip


@pytest.mark.parametrize("small_files", ["packed", "none"])
def test_a_streamed_write_logs_each_key_once(tmp_path: Path, small_files: str) -> None:
    """A streamed write merges a file group again for each chunk that touches it: the CDC files
    hold each key once, its image before the write and after it (an insert and a later update
    of it in the same write: one insert). Without small files the new keys go to a new file
    group, which the next chunk's update then merges: all of its rows are the write's inserts."""
    more = {"hoodie.parquet.small.file.limit": "0"} if small_files == "none" else {}
    t = _create(tmp_path / "t", **more)
    t.bulk_insert(_rows(["a", "b"], 1))
    chunks = [_rows(["a", "n", "m"], 2), _rows(["a", "n"], 3), _rows(["b"], 4)]
    # a chunk per batch, each flushed into the files before the next
    t.upsert(iter(chunks), options={"hoodie.write.stream.chunk.max.bytes": "1",
                                    "hoodie.write.buffer.bucket.max.bytes": "1"})  # fmt: skip
    files = _cdc_files(tmp_path / "t", _last(t))
    assert len(files) == (1 if small_files == "packed" else 2)
    assert _by_op([r for f in files for r in _changes(f)]) == [
        ("i", None, ("m", 2, "m@2")), ("i", None, ("n", 3, "n@3")),
        ("u", ("a", 1, "a@1"), ("a", 3, "a@3")), ("u", ("b", 1, "b@1"), ("b", 4, "b@4")),
    ]  # fmt: skip
    rows = sorted((r["id"], r["ts"]) for r in t.read().to_pylist())
    assert rows == [("a", 3), ("b", 4), ("m", 2), ("n", 3)]


def test_rollbacks_and_the_cleaner_delete_the_cdc_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _create(tmp_path / "t", **{"hoodie.cleaner.commits.retained": "1", "hoodie.clean.automatic": "false"})
    t.bulk_insert(_rows(["a", "b"], 1))
    with monkeypatch.context() as m:  # a write that fails before its commit file

        def boom(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("injected failure before the commit file")

        m.setattr(transaction_mod, "commit", boom)
        with pytest.raises(RuntimeError, match="injected"):
            t.upsert(_rows(["a"], 2))
    failed = next(i.timestamp for i in t.timeline.commits() if not i.is_completed)
    assert len(_cdc_files(tmp_path / "t", failed)) == 1
    t.rollback(failed)
    assert _cdc_files(tmp_path / "t", failed) == []
    t.upsert(_rows(["a"], 3))
    first = _last(t)
    t.upsert(_rows(["b"], 4))
    second = _last(t)
    t.rollback(second)  # a completed write rolled back takes its CDC file too
    assert _cdc_files(tmp_path / "t", second) == []
    for ts in (5, 6, 7):
        t.upsert(_rows(["a"], ts))
    t.clean()  # the cleaned slices' CDC files go with them
    left = {LogFileName.parse(f.name).base_instant for f in _cdc_files(tmp_path / "t")}  # type: ignore[union-attr]
    assert first not in left and len(left) == 2
    with pytest.raises(HudiError, match="cleaner deleted"):  # the changes of cleaned commits are gone
        t.read_changes()
    kept = t.timeline.completed_commits().timestamps()[-3]
    assert [r["op"] for r in t.read_changes(kept).to_pylist()] == ["u", "u"]
    assert sorted((r["id"], r["ts"]) for r in t.read().to_pylist()) == [("a", 7), ("b", 1)]


def test_merge_on_read_writes_logs_and_compacts_without_cdc_files(tmp_path: Path) -> None:
    """Hudi's CDC query reads a delta commit's changes from its log files and the slice before
    them, and skips compactions: neither writes a CDC file."""
    t = _create(tmp_path / "t", "MERGE_ON_READ", **{"hoodie.parquet.small.file.limit": "0"})
    t.bulk_insert(_rows(["a", "b"], 1))
    t.upsert(_rows(["a", "c"], 2))
    t.delete(_rows(["b"], 3))
    assert list((tmp_path / "t" / "sf").glob(".*.log.*")) and _cdc_files(tmp_path / "t") == []
    t.compact()
    assert _cdc_files(tmp_path / "t") == []
    assert sorted((r["id"], r["ts"]) for r in t.read().to_pylist()) == [("a", 2), ("c", 2)]


def _read(t: HudiTable, start: str = "000") -> list[tuple[str, Any, Any]]:
    """``read_changes`` as (op, before, after) with the images parsed, without meta columns."""

    def image(text: str | None) -> tuple[Any, ...] | None:
        value = None if text is None else json.loads(text)
        return None if value is None else (value["id"], value["ts"], value["v"])

    got = t.read_changes(start).to_pylist()
    return sorted(((r["op"], image(r["before"]), image(r["after"])) for r in got), key=repr)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_read_changes_answers_every_kind_of_write(tmp_path: Path, table_type: str) -> None:
    """Our CDC query (Hudi's ``incremental.format=cdc``; the Apache Hudi tier checks it against
    Hudi's): inserts into new file groups, merges' CDC files (COW) or log files against the slice
    before them (MOR), a delete, an overwrite of a partition (its old rows deleted, the new
    inserted); a compaction changes nothing; ``start`` leaves out what came before."""
    t = _create(tmp_path / "t", table_type, **{"hoodie.parquet.small.file.limit": "0"})
    t.bulk_insert(pa.concat_tables([_rows(["a", "b"], 1), _rows(["c"], 1, "la")]))
    first = _last(t)
    t.upsert(_rows(["a", "d"], 2))
    t.delete(_rows(["b"], 3))
    if table_type == "MERGE_ON_READ":
        assert t.compact()
    t.insert_overwrite(_rows(["e"], 4, "la"))
    assert _read(t) == [
        ("d", ("b", 1, "b@1"), None), ("d", ("c", 1, "c@1"), None),
        ("i", None, ("a", 1, "a@1")), ("i", None, ("b", 1, "b@1")), ("i", None, ("c", 1, "c@1")),
        ("i", None, ("d", 2, "d@2")), ("i", None, ("e", 4, "e@4")), ("u", ("a", 1, "a@1"), ("a", 2, "a@2")),
    ]  # fmt: skip
    assert [op for op, *_ in _read(t, first)] == ["d", "d", "i", "i", "u"]
    stamps = set(t.read_changes().column("ts_ms").to_pylist())
    assert first in stamps and len(stamps) == 4  # the compaction is no change


def test_read_changes_needs_a_cdc_table(tmp_path: Path) -> None:
    t = HudiTable.create(str(tmp_path / "t"), name="t", record_key_fields="id", ordering_field="ts")
    t.bulk_insert(_rows(["a"], 1))
    with pytest.raises(ConfigError, match=r"cdc\.enabled"):
        t.read_changes()


def test_a_streamed_merge_on_read_write_lists_a_groups_log_append_first(tmp_path: Path) -> None:
    """A streamed write on MERGE_ON_READ packs new keys into a small file group (a merge: a new base
    file), then a later chunk's update appends a log on it: two write stats of one group in the
    delta commit. Apache Hudi's CDC query takes the slice a log changed from the group's first
    stat, which only a log append's names (``baseFile``, ``logFiles``; a base file's first failed
    its query, explore ``--cdc --stream`` seed 21302): log appends come first. The packed key
    reads as an insert (the merge's CDC file), the update as one (the log against the slice)."""
    t = _create(tmp_path / "t", "MERGE_ON_READ")
    t.bulk_insert(_rows(["a"], 1))
    chunks = [_rows(["n"], 2), _rows(["a"], 3)]
    t.upsert(iter(chunks), options={"hoodie.write.stream.chunk.max.bytes": "1",
                                    "hoodie.write.buffer.bucket.max.bytes": "1"})  # fmt: skip
    meta = json.loads((tmp_path / "t" / ".hoodie" / f"{_last(t)}.deltacommit").read_text())
    stats = [s for ss in meta["partitionToWriteStats"].values() for s in ss]
    assert len(stats) == 2 and stats[0]["fileId"] == stats[1]["fileId"]
    assert "logFiles" in stats[0] and "logFiles" not in stats[1]
    since = t.timeline.completed_commits().timestamps()[-2]
    assert _read(t, since) == [("i", None, ("n", 2, "n@2")), ("u", ("a", 1, "a@1"), ("a", 3, "a@3"))]


def test_images_render_as_json_column_by_column() -> None:
    """The JSON of the images is built column by column (``read.json_text.rows_json``): it parses to what
    ``json.dumps`` of each row gives (decimals as text, binaries base64, dates as days,
    timestamps as microseconds, Avro's values), escapes what JSON escapes, and keeps its rows
    where every value is null (compact: ``{}``; pyarrow's join that skips nulls drops them)."""
    import datetime as dt
    import decimal

    from hudi_core.read.json_text import images_json as _json_images
    from hudi_core.read.json_text import rows_json as _json

    rows = pa.table({
        "s": ['a"b', "c\\d", "e\nf\tg", "ü€", None, "x\x01y"],
        "i": pa.array([1, -2, None, 2**62, 0, 5], pa.int64()),
        "f": [1.0, 0.1, float("nan"), float("inf"), -0.0, 2.5e-5],
        "b": [True, False, None, True, False, True],
        "d": pa.array([dt.date(2024, 1, 2), None, dt.date(1969, 12, 31)] * 2),
        "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 678901), None] * 3, pa.timestamp("us", tz="UTC")),
        "dec": pa.array([decimal.Decimal("1.230"), None, decimal.Decimal("-5.000")] * 2, pa.decimal128(12, 3)),
        "bin": [b"\x00\x01", None, b"", b"abc", b"x", b"y"],
        "l": [["a"], None, [], ["b", "c"], ["d"], None],
        "st": [{"x": 1, "y": None}, None, {"x": None, "y": "q"}, {"x": 2, "y": "w"}, {"x": 3, "y": "e"}, None],
    })  # fmt: skip
    expected = [
        {"s": 'a"b', "i": 1, "f": 1.0, "b": True, "d": 19724, "ts": 1704164645678901, "dec": "1.230",
         "bin": "AAE=", "l": ["a"], "st": {"x": 1, "y": None}},
    ]  # fmt: skip
    assert [json.loads(j) for j in _json(rows).to_pylist()][:1] == expected
    for compact in (False, True):
        for got, row in zip(_json(rows, compact=compact).to_pylist(), rows.to_pylist(), strict=True):
            parsed = json.loads(got)
            assert parsed.keys() == ({k for k, v in row.items() if v is not None} if compact else row.keys())
            assert parsed.get("s") == row["s"]  # escaped and read back
    nulls = pa.table({"a": pa.array([None, 1], pa.int64()), "b": pa.array([None, "x"])})
    assert _json(nulls, compact=True).to_pylist() == ["{}", '{"b":"x","a":1}']  # (Hudi's hash map order)
    assert _json(nulls).to_pylist() == ['{"a": null, "b": null}', '{"a": 1, "b": "x"}']
    images = pa.array([{"x": 1, "y": "a"}, None], pa.struct([("x", pa.int64()), ("y", pa.string())]))
    assert _json_images(images).to_pylist() == ['{"x": 1, "y": "a"}', "null"]
    # strings without nulls, as they are (quoted by the literals around them) or escaped, from
    # an offset into their buffers; floats whole, fractional and not finite
    plain = pa.table({
        "k": pa.array(["a", "b", 'q"', "d\\", "e"], pa.large_string()),
        "v": ["x", "y", "z", "w", "ü"],
        "f": [1.0, -2.0, 0.5, float("nan"), float("-inf")],
    }).slice(1, 4)  # fmt: skip
    assert _json(plain, compact=True).to_pylist() == [
        '{"k":"b","v":"y","f":-2.0}',
        '{"k":"q\\"","v":"z","f":0.5}',
        '{"k":"d\\\\","v":"w","f":"NaN"}',
        '{"k":"e","v":"ü","f":"-Infinity"}',
    ]
    assert _json(plain.select(["v"])).to_pylist() == ['{"v": "y"}', '{"v": "z"}', '{"v": "w"}', '{"v": "ü"}']


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("mode", ["DATA_BEFORE_AFTER", "DATA_BEFORE", "OP_KEY_ONLY"])
def test_typed_images_hold_what_the_json_ones_do(tmp_path: Path, table_type: str, mode: str) -> None:
    """``read_changes(images="struct")``: the same changes, each image a struct of the table's
    data fields (the latest schema: a field added later is null in older images) where Hudi's
    answer has JSON text; whichever file an image comes from (a CDC file in each logging mode,
    a base file, a log file against its slice, a replaced group)."""
    t = _create(tmp_path / "t", table_type, **{"hoodie.table.cdc.supplemental.logging.mode": mode})
    t.bulk_insert(pa.concat_tables([_rows(["a", "b"], 1), _rows(["c"], 1, "la")]))
    t.upsert(_rows(["a", "d"], 2))
    t.delete(_rows(["b"], 3))
    t.upsert(_rows(["a", "e"], 4).append_column("w", pa.array([1.5, None])))  # a field added
    t.insert_overwrite(_rows(["f"], 5, "la").append_column("w", pa.array([2.5])))
    typed = t.read_changes(images="struct")
    fields = pa.struct([("id", pa.string()), ("city", pa.string()), ("ts", pa.int64()), ("v", pa.string()),
                        ("w", pa.float64())])  # fmt: skip
    assert typed.schema == pa.schema([("op", pa.string()), ("ts_ms", pa.string()), ("before", fields),
                                      ("after", fields)])  # fmt: skip

    def data(image: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if image is None else {f.name: image.get(f.name) for f in fields}

    as_json = [
        (r["op"], r["ts_ms"], data(json.loads(r["before"] or "null")), data(json.loads(r["after"] or "null")))
        for r in t.read_changes().to_pylist()
    ]
    as_struct = [(r["op"], r["ts_ms"], r["before"], r["after"]) for r in typed.to_pylist()]
    assert sorted(as_struct, key=repr) == sorted(as_json, key=repr)
    assert len(as_struct) == 10  # 3 + 2 + 1 + 2 + 2 changes
    assert {"id": "a", "city": "sf", "ts": 1, "v": "a@1", "w": None} in [r[2] for r in as_struct]
    with pytest.raises(ConfigError, match="images='xml'"):
        t.read_changes(images="xml")
