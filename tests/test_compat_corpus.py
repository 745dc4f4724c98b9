"""Every query of the shared compat corpus, read by hudi_core and compared with the expected
result per the corpus README (rows matched on ``compare.keys``, values compared by value)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.errors import HudiError, UnsupportedTableVersionError
from hudi_core.testing.corpus import corpus_root, corpus_tables


def _cases() -> list[Any]:
    out = []
    for t in corpus_tables():
        for q in t["queries"]:
            out.append(pytest.param(t, q["id"], id=f"{t['category']}/{t['name']}::{q['id']}"))
    return out


def _query(root: Path, table: dict[str, Any], query_id: str) -> dict[str, Any]:
    summary = json.loads((root / table["summary"]).read_text())
    query = next(q for q in summary["queries"] if q["id"] == query_id)
    return {"summary": summary, "query": query}


def _run(table: HudiTable, q: dict[str, Any]) -> pa.Table:
    kind = q["kind"]
    if kind == "snapshot":
        return table.read()
    if kind == "read_optimized":
        return table.read("read_optimized")
    if kind == "time_travel":
        return table.read(as_of=q["as_of"])
    if kind == "incremental":
        return table.read("incremental", start=q["start_exclusive"], end=q["end_inclusive"])
    raise AssertionError(f"unknown query kind {kind}")


# -- comparison per the README ---------------------------------------------------------------------


def _norm(value: Any, t: pa.DataType) -> Any:
    """A comparable Python value: ints by value, timestamps as UTC instants, maps as entry sets."""
    if value is None:
        return None
    if pa.types.is_timestamp(t):
        if value.tzinfo is None:  # a zone-less timestamp holds UTC wall time here
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc)
    if pa.types.is_map(t):
        entries = [(_norm(k, t.key_type), _norm(v, t.item_type)) for k, v in value]
        return sorted(entries, key=repr)
    if pa.types.is_struct(t):
        return {
            t.field(i).name: _norm(value.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields)
        }
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_norm(v, t.value_type) for v in value]
    if pa.types.is_decimal(t):
        return decimal.Decimal(value)
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytes(value)
    return value


def _column(tbl: pa.Table, name: str) -> list[Any]:
    col = tbl.column(name)
    return [_norm(v, col.type) for v in col.to_pylist()]


def _compare(expected: pa.Table, actual: pa.Table, compare: dict[str, Any]) -> None:
    keys = compare["keys"]
    ignore = set(compare.get("ignore") or [])
    missing_cols = [c for c in expected.column_names if c not in actual.column_names and c not in ignore]
    assert not missing_cols, f"columns missing from the result: {missing_cols}"
    if not compare.get("allow_extra_columns"):
        extra_cols = [c for c in actual.column_names if c not in expected.column_names]
        assert not extra_cols, f"columns the expected result does not have: {extra_cols}"

    def key_rows(t: pa.Table) -> list[tuple[Any, ...]]:
        return list(zip(*[_column(t, k) for k in keys], strict=False)) if t.num_rows else []

    exp_keys, act_keys = key_rows(expected), key_rows(actual)
    dupes = sorted({k for k in act_keys if act_keys.count(k) > 1}, key=repr)
    assert not dupes, f"keys occurring more than once: {dupes}"
    assert sorted(set(exp_keys) - set(act_keys), key=repr) == [], "keys missing from the result"
    assert sorted(set(act_keys) - set(exp_keys), key=repr) == [], "keys the expected result does not have"
    exp_sorted = expected.sort_by([(k, "ascending") for k in keys])
    act_sorted = actual.sort_by([(k, "ascending") for k in keys])
    for name in expected.column_names:
        if name in ignore:
            continue
        exp_vals, act_vals = _column(exp_sorted, name), _column(act_sorted, name)
        assert act_vals == exp_vals, f"column {name!r} differs"


@pytest.mark.parametrize(("table_info", "query_id"), _cases())
def test_corpus_query(table_info: dict[str, Any], query_id: str) -> None:
    root = corpus_root()
    assert root is not None
    info = _query(root, table_info, query_id)
    summary, q = info["summary"], info["query"]
    path = root / table_info["table_path"]
    if table_info["table_version"] != 6:
        with pytest.raises(
            UnsupportedTableVersionError,
            match=f"table version {table_info['table_version']} is not supported yet",
        ):
            _run(HudiTable.open(str(path)), q)
        return
    table = HudiTable.open(str(path))
    if q.get("flag"):
        message = q["spark_expectation"]["error"]
        with pytest.raises(HudiError, match=message):
            _run(table, q)
        return
    actual = _run(table, q)
    expected = pq.read_table(root / table_info["expected_dir"] / q["file"])
    assert actual.num_rows == q["row_count"]
    _compare(expected, actual, summary["compare"])
    if summary["populate_meta_fields"]:
        assert actual.column_names[:5] == [
            "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
            "_hoodie_partition_path", "_hoodie_file_name",
        ]  # fmt: skip


def test_corpus_is_present() -> None:
    # A missing corpus would silently parametrise nothing.
    assert len(_cases()) >= 50


def test_comparison_catches_a_wrong_value_a_missing_key_and_a_missing_column() -> None:
    root = corpus_root()
    assert root is not None
    expected = pq.read_table(root / "expected/trips_mor_avro/v6_trips_8i1u/snapshot.parquet")
    compare = {"keys": ["_hoodie_record_key", "_hoodie_partition_path"], "allow_extra_columns": False}
    _compare(expected, expected, compare)
    fares = expected.column("fare").to_pylist()
    wrong = expected.set_column(
        expected.schema.get_field_index("fare"), "fare", pa.array([fares[0] + 1, *fares[1:]])
    )
    with pytest.raises(AssertionError, match="fare"):
        _compare(expected, wrong, compare)
    with pytest.raises(AssertionError, match="missing"):
        _compare(expected, expected.slice(1), compare)
    with pytest.raises(AssertionError, match="columns missing"):
        _compare(expected, expected.drop_columns(["rider"]), compare)
