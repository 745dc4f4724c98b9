"""MySqlDebeziumAvroPayload and PostgresDebeziumAvroPayload, as Apache Hudi 0.15 answers them.

The expected rows are Apache Hudi Spark's own answers to the same writes (seen through the
Apache Hudi tier, ``tests/interop/test_debezium_payloads.py``, which also has Hudi read our
tables and us read Hudi's):

- In a batch, and between a key's log records, the greater ordering value wins (the ordering
  field here is the source position itself, compared as Hudi compares it: ``_event_seq`` as
  text, so ``9.000`` beats ``10.000``).
- Against the stored record (a base file's row, in a merge or a read) the source position
  decides: MySQL's ``_event_seq`` as two numbers ``file.pos``, a tie keeping the stored record;
  Postgres's ``_event_lsn``, a tie taking the incoming one. A stored record that wins stays,
  even against a delete, except where the delete went to a log's delete block (merge-on-read):
  a delete block's record always wins over the base row.
- ``_change_operation_type`` ``d`` deletes; a new key's delete writes nothing.
- Postgres: a text field holding ``__debezium_unavailable_value`` (a TOASTed value the
  connector did not read) keeps the value of the record it replaces: the base row, not an
  earlier log record.
- After a delete in a log, a later record of the key with an older position loses to the base
  row, which comes back (k3 below).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import InvalidRecordError, SchemaMismatchError

DEBEZIUM = "org.apache.hudi.common.model.debezium."
MYSQL = DEBEZIUM + "MySqlDebeziumAvroPayload"
POSTGRES = DEBEZIUM + "PostgresDebeziumAvroPayload"
ORDERING = {MYSQL: "_event_seq", POSTGRES: "_event_lsn"}
T = "__debezium_unavailable_value"
#: no small files: merge-on-read updates go to the log, not into a new base file
LOGS = {"hoodie.parquet.small.file.limit": "0"}

#: (id, _event_seq, _event_lsn, a, b, _change_operation_type)
STEPS = [
    [(f"k{i}", "1.100", 100, i, f"b{i}", "c") for i in range(7)] + [("kd", "1.100", 100, 0, "z", "d")],
    [("k0", "1.200", 200, 10, "u0", "u"), ("k1", "1.050", 50, 11, "u1", "u"), ("k2", "1.100", 100, 12, "u2", "u"),
     ("k3", "1.300", 300, 13, "u3", "d"), ("k4", "1.010", 10, 14, "u4", "D"), ("n1", "1.200", 200, 15, "nb", "c"),
     ("n2", "1.200", 200, 16, "nb2", "d"), ("k6", "1.200", 200, 17, T, "u")],
    [("k5", "9.000", 900, 51, "x51", "u"), ("k5", "10.000", 1000, 52, "x52", "u"), ("k0", "2.5", 250, 20, T, "u"),
     ("k1", "1.060", 60, 21, "v1", "u"), ("k2", "0.999", 99, 22, "v2", "u")],
    [("k4", "3.0", 3000, 40, "back", "c"), ("k3", "0.1", 1, 30, "old", "u")],
]  # fmt: skip

_KEPT = [("k1", "1.100", 100, 1, "b1", "c"), ("k2", "1.100", 100, 2, "b2", "c")]
_LATE = [("k4", "3.0", 3000, 40, "back", "c"), ("k5", "9.000", 900, 51, "x51", "u"),
         ("k6", "1.200", 200, 17, T, "u"), ("n1", "1.200", 200, 15, "nb", "c")]  # fmt: skip
_PG_LATE = [("k4", "3.0", 3000, 40, "back", "c"), ("k5", "10.000", 1000, 52, "x52", "u"),
            ("k6", "1.200", 200, 17, "b6", "u"), ("n1", "1.200", 200, 15, "nb", "c")]  # fmt: skip
_PG_KEPT = [("k1", "1.100", 100, 1, "b1", "c"), ("k2", "1.100", 100, 12, "u2", "u")]
HUDI_ANSWERS = {
    (MYSQL, "COPY_ON_WRITE"): [("k0", "2.5", 250, 20, T, "u"), *_KEPT, ("k3", "0.1", 1, 30, "old", "u"), *_LATE],
    (MYSQL, "MERGE_ON_READ"): [("k0", "2.5", 250, 20, T, "u"), *_KEPT, ("k3", "1.100", 100, 3, "b3", "c"), *_LATE],
    (POSTGRES, "COPY_ON_WRITE"): [("k0", "2.5", 250, 20, "u0", "u"), *_PG_KEPT, ("k3", "0.1", 1, 30, "old", "u"),
                                  *_PG_LATE],
    (POSTGRES, "MERGE_ON_READ"): [("k0", "2.5", 250, 20, "b0", "u"), *_PG_KEPT, ("k3", "1.100", 100, 3, "b3", "c"),
                                  *_PG_LATE],
}  # fmt: skip
#: after the first upsert, merge-on-read: k3 and k4 deleted (delete blocks), k1 kept (an older
#: position), k2 too under MySQL (a tie keeps the stored record; Postgres takes the incoming one)
AFTER_FIRST = {
    MYSQL: [("k0", "1.200", 200, 10, "u0", "u"), *_KEPT, ("k5", "1.100", 100, 5, "b5", "c"),
            ("k6", "1.200", 200, 17, T, "u"), ("n1", "1.200", 200, 15, "nb", "c")],
    POSTGRES: [("k0", "1.200", 200, 10, "u0", "u"), *_PG_KEPT, ("k5", "1.100", 100, 5, "b5", "c"),
               ("k6", "1.200", 200, 17, "b6", "u"), ("n1", "1.200", 200, 15, "nb", "c")],
}  # fmt: skip

COLUMNS = ["id", "_event_seq", "_event_lsn", "a", "b", "_change_operation_type"]


def _batch(rows: list[tuple]) -> pa.Table:
    columns = [list(c) for c in zip(*rows, strict=True)]
    types = [pa.string(), pa.string(), pa.int64(), pa.int64(), pa.string(), pa.string()]
    table = pa.table([pa.array(c, t) for c, t in zip(columns, types, strict=True)], names=COLUMNS)
    return table.append_column("p", pa.array(["x"] * len(rows)))


def _create(path: Path, table_type: str, payload: str, **options: str) -> HudiTable:
    return HudiTable.create(str(path), name="t", table_type=table_type, record_key_fields="id",
                            partition_fields="p", ordering_field=ORDERING[payload],
                            options={"hoodie.datasource.write.payload.class": payload, **options})  # fmt: skip


def _rows(t: HudiTable) -> list[tuple]:
    return sorted(tuple(r.values()) for r in t.read(columns=COLUMNS).to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("payload", [MYSQL, POSTGRES])
def test_updates_and_deletes_as_hudi_answers_them(tmp_path: Path, payload: str, table_type: str) -> None:
    path = str(tmp_path / "t")
    options = LOGS if table_type == "MERGE_ON_READ" else {}
    _create(tmp_path / "t", table_type, payload).insert(_batch(STEPS[0]), options=options)
    HudiTable.open(path).upsert(_batch(STEPS[1]), options=options)
    if table_type == "MERGE_ON_READ":
        assert _rows(HudiTable.open(path)) == AFTER_FIRST[payload]
        assert any(s.log_files for s in HudiTable.open(path).file_slices())  # the updates are in a log
    for rows in STEPS[2:]:
        HudiTable.open(path).upsert(_batch(rows), options=options)
    assert _rows(HudiTable.open(path)) == HUDI_ANSWERS[(payload, table_type)]
    if table_type == "MERGE_ON_READ":  # compaction merges as the reader does
        HudiTable.open(path).compact()
        compacted = HudiTable.open(path)
        assert not any(s.log_files for s in compacted.file_slices())
        assert _rows(compacted) == HUDI_ANSWERS[(payload, table_type)]


@pytest.mark.parametrize("payload", [MYSQL, POSTGRES])
def test_an_upsert_without_a_source_position_is_refused_and_writes_nothing(
    tmp_path: Path, payload: str
) -> None:
    path = str(tmp_path / "t")
    _create(tmp_path / "t", "COPY_ON_WRITE", payload).insert(_batch(STEPS[0]))
    before = _rows(HudiTable.open(path))
    field = ORDERING[payload]
    batch = _batch(STEPS[1])
    blank = batch.set_column(
        COLUMNS.index(field), field, pa.nulls(batch.num_rows, batch.schema.field(field).type)
    )
    for bad in (blank, batch.drop_columns([field])):
        with pytest.raises((InvalidRecordError, SchemaMismatchError), match=field):
            HudiTable.open(path).upsert(bad)
    assert _rows(HudiTable.open(path)) == before


def test_a_mysql_position_that_is_not_file_dot_pos_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _create(tmp_path / "t", "COPY_ON_WRITE", MYSQL).insert(_batch(STEPS[0]))
    before = _rows(HudiTable.open(path))
    for seq in ("1200", "1.x", "a.1"):
        batch = _batch([("k0", seq, 200, 10, "u0", "u")])
        with pytest.raises(InvalidRecordError, match="binlog position"):
            HudiTable.open(path).upsert(batch)
    assert _rows(HudiTable.open(path)) == before
