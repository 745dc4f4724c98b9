"""Tables without record key fields (Hudi 0.14's auto-generated keys): each write makes its
keys up as ``<instant>_<task>_<row>``, and rows read back from the table keep theirs, which is
how an update or a delete finds them. Apache Hudi and we take turns on one table, each starting
one, and both readers agree after every step."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ConfigError, InvalidRecordKeyError
from hudi_spark.table_ops import open_or_create
from workloads import table_options

pytestmark = pytest.mark.interop


def _options(table_type: str) -> dict[str, str]:
    """The harness's options of a test table, without a record key or ordering field."""
    options = table_options("t", table_type)
    for key in ("hoodie.datasource.write.recordkey.field", "hoodie.datasource.write.precombine.field"):
        del options[key]
    return options


def _rows(values: list[int]) -> pa.Table:
    return pa.table({"p": [f"p{v % 2}" for v in values], "v": pa.array(values, pa.int64())})


def _answers(hudi, path: Path) -> list[list[tuple[str, str, int]]]:
    """(key, partition, v) of every row, as Hudi's reader and ours give them."""
    columns = ["_hoodie_record_key", "_hoodie_partition_path", "v"]
    return [
        sorted(tuple(r.values()) for r in t.select(columns).to_pylist())
        for t in (hudi.oracle.read(path), HudiTable.open(str(path)).read())
    ]


def _where(table: pa.Table, v: int) -> pa.Table:
    return table.filter(pc.equal(table.column("v"), v))


def _changed(table: pa.Table, v: int, new: int) -> pa.Table:
    """The row holding ``v``, as read (meta columns and all), now holding ``new``."""
    row = _where(table, v)
    return row.set_column(row.schema.get_field_index("v"), "v", pa.array([new], pa.int64()))


@pytest.mark.parametrize(("first", "table_type"), [("hudi", "MERGE_ON_READ"), ("ours", "COPY_ON_WRITE")])
def test_writers_taking_turns_on_a_table_without_record_keys(
    hudi, tmp_path: Path, table_type: str, first: str
) -> None:
    path = tmp_path / "t"
    options = _options(table_type)
    if first == "hudi":  # no operation: Hudi's datasource chooses bulk_insert
        hudi.oracle.write(path, _rows([1, 2, 3]), options)
    else:
        HudiTable.create(str(path), name="t", table_type=table_type, partition_fields="p",
                         options=options).bulk_insert(_rows([1, 2, 3]))  # fmt: skip
    properties = (path / ".hoodie/hoodie.properties").read_text()
    assert (
        "recordkey" not in properties
        and "keygenerator.class=org.apache.hudi.keygen.SimpleKeyGenerator" in properties
    )
    hudi.oracle.write(path, _rows([4, 5]), {**options, "hoodie.datasource.write.operation": "insert"})
    ours, _ = open_or_create(str(path), options, _rows([]).schema)
    ours.insert(_rows([6, 7]))
    HudiTable.open(str(path)).upsert(_rows([8]))  # new rows: made-up keys again

    hudi_answer, our_answer = _answers(hudi, path)
    assert hudi_answer == our_answer
    assert sorted(v for _, _, v in our_answer) == [1, 2, 3, 4, 5, 6, 7, 8]
    commits = [i.timestamp for i in HudiTable.open(str(path)).timeline.completed_commits()]
    assert len(commits) == 4 and len({k for k, _, _ in our_answer}) == 8
    # every key is <instant>_<task>_<row> of the write that stored the row
    by_commit = {c: sorted(v for k, _, v in our_answer if k.split("_")[0] == c) for c in commits}
    assert list(by_commit.values()) == [[1, 2, 3], [4, 5], [6, 7], [8]]

    # rows read back keep their keys: our update of 2 and delete of 6, then Hudi's of 4 and 1
    stored = HudiTable.open(str(path)).read()
    HudiTable.open(str(path)).upsert(_changed(stored, 2, 20))
    HudiTable.open(str(path)).delete(_where(stored, 6))
    if table_type == "MERGE_ON_READ":
        HudiTable.open(str(path)).compact()
    hudi.oracle.write(
        path, _changed(stored, 4, 40), {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    hudi.oracle.write(path, _where(stored, 1), {**options, "hoodie.datasource.write.operation": "delete"})

    hudi_answer, our_answer = _answers(hudi, path)
    assert hudi_answer == our_answer
    before = {r["_hoodie_record_key"]: r["v"] for r in stored.to_pylist()}
    assert {k: v for k, _, v in our_answer} == {
        k: {2: 20, 4: 40}.get(v, v) for k, v in before.items() if v not in (1, 6)
    }


def test_what_made_up_keys_cannot_do_is_refused_before_the_write(hudi, tmp_path: Path) -> None:
    """As Hudi refuses them: combining or dropping duplicates by key, virtual keys, the BUCKET
    index; a delete needs the keys rows were read with."""
    path = tmp_path / "t"
    options = _options("MERGE_ON_READ")
    hudi.oracle.write(path, _rows([1, 2]), options)
    table = HudiTable.open(str(path))
    refused = {"hoodie.combine.before.insert": "true", "hoodie.datasource.write.insert.drop.duplicates": "true",
               "hoodie.index.type": "BUCKET"}  # fmt: skip
    for key, value in refused.items():
        with pytest.raises(ConfigError, match="without record key fields"):
            table.insert(_rows([3]), options={key: value})
    with pytest.raises(InvalidRecordKeyError, match="_hoodie_record_key"):
        table.delete(_rows([1]))
    hudi_answer, our_answer = _answers(hudi, path)
    assert hudi_answer == our_answer and sorted(v for _, _, v in our_answer) == [1, 2]
    assert len(HudiTable.open(str(path)).timeline.completed_commits()) == 1
