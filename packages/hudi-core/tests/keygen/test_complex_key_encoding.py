"""A write with the complex key generator over one record key field keys its records as the
table's stored keys are (``write.key_encoding``): Apache Hudi 0.14.1 and 0.15.0 stored the bare
value, the releases before and after ``<field>:<value>`` (HUDI-7001); a writer of the other
encoding would add a duplicate of every stored key it upserts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.write.key_encoding import AUX_FILE

COMPLEX = {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"}
BARE = {"hoodie.write.complex.keygen.new.encoding": "true"}


def _table(tmp_path: Path, table_type: str = "COPY_ON_WRITE") -> HudiTable:
    return HudiTable.create(str(tmp_path / "t"), name="t", table_type=table_type, record_key_fields="id",
                            partition_fields="p", ordering_field="ts", options=COMPLEX)  # fmt: skip


def _batch(ids: list[str], ts: int) -> pa.Table:
    return pa.table({"id": ids, "p": ["x"] * len(ids), "ts": [ts] * len(ids), "v": [f"v{ts}"] * len(ids)})


def _keys(tmp_path: Path) -> list[tuple[str, str, int]]:
    got = HudiTable.open(str(tmp_path / "t")).read(columns=["_hoodie_record_key", "id", "ts"])
    return sorted(tuple(r.values()) for r in got.to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_an_upsert_takes_the_bare_keys_hudi_015_stored(tmp_path: Path, table_type: str) -> None:
    _table(tmp_path, table_type).upsert(_batch(["a", "b"], 1), options=BARE)  # as Hudi 0.15.0 writes
    HudiTable.open(str(tmp_path / "t")).upsert(_batch(["b", "c"], 2))
    assert _keys(tmp_path) == [("a", "a", 1), ("b", "b", 2), ("c", "c", 2)]
    # recorded where Hudi's fixed releases record it, for the writes after
    recorded = (tmp_path / "t" / ".hoodie" / AUX_FILE).read_text().splitlines()
    assert "hoodie.write.complex.keygen.new.encoding=true" in recorded
    HudiTable.open(str(tmp_path / "t")).delete(_batch(["a"], 3))
    assert _keys(tmp_path) == [("b", "b", 2), ("c", "c", 2)]


def test_the_field_prefixed_keys_stay_so_and_a_new_table_starts_with_them(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.upsert(_batch(["a"], 1))  # a new table: the default, <field>:<value>
    HudiTable.open(str(tmp_path / "t")).upsert(_batch(["a", "b"], 2))
    assert _keys(tmp_path) == [("id:a", "a", 2), ("id:b", "b", 2)]


def test_hudis_record_of_the_encoding_and_the_writers_own_choice_win(tmp_path: Path) -> None:
    _table(tmp_path).upsert(_batch(["a"], 1))  # <field>:<value>
    # Hudi's fixed releases record the encoding they deduced in .hoodie/.aux: read before the data
    (tmp_path / "t" / ".hoodie" / AUX_FILE).write_text(
        "#Complex key generator encoding format\nhoodie.write.complex.keygen.new.encoding=true\n"
    )
    HudiTable.open(str(tmp_path / "t")).upsert(_batch(["a"], 2))
    assert _keys(tmp_path) == [("a", "a", 2), ("id:a", "a", 1)]
    (tmp_path / "t" / ".hoodie" / AUX_FILE).unlink()
    # an encoding the write sets, or a write that turns the deduction off, is taken as given
    HudiTable.open(str(tmp_path / "t")).upsert(
        _batch(["b"], 3), options={"hoodie.write.complex.keygen.auto.deduce.encoding": "false"}
    )
    HudiTable.open(str(tmp_path / "t")).upsert(_batch(["a"], 4), options=BARE)
    assert _keys(tmp_path) == [("a", "a", 4), ("id:a", "a", 1), ("id:b", "b", 3)]


@pytest.mark.parametrize("bare", [False, True])
def test_virtual_keys_deletes_hold_and_take_either_encoding(tmp_path: Path, bare: bool) -> None:
    """Without meta columns nothing stored tells the encoding: our delete blocks hold each key in
    both forms, and our reader takes a delete block's keys in either form (``read.keys.delete_keys``),
    whichever encoding this table's reads compute; each key is deleted once."""
    from hudi_core.log.format import BlockType
    from hudi_core.log.reader import read_log_file
    from hudi_core.read.keys import delete_keys
    from hudi_core.table.config import TableConfig

    opts = {**COMPLEX, "hoodie.populate.meta.fields": "false", "hoodie.parquet.small.file.limit": "0",
            **(BARE if bare else {})}  # fmt: skip
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=opts)  # fmt: skip
    t.bulk_insert(_batch(["a", "b", "c"], 1), options=opts)
    t.delete(_batch(["a"], 2), options=opts)
    blocks = [b for f in (tmp_path / "t" / "x").glob(".*.log.*")
              for b in read_log_file(t.storage, str(f)) if b.block_type is BlockType.DELETE]  # fmt: skip
    assert sorted(blocks[0].deletes().column("_hoodie_record_key").to_pylist()) == ["a", "id:a"]
    config = TableConfig({**t.config.to_dict(), **(BARE if bare else {})})
    mixed = pa.table({"_hoodie_record_key": ["b", "id:b", "id:c"], "_hoodie_partition_path": ["x"] * 3})
    want = ["b", "c"] if bare else ["id:b", "id:c"]
    assert sorted(delete_keys(mixed, config).column("_hoodie_record_key").to_pylist()) == want
    assert sorted(HudiTable.open(str(tmp_path / "t"), options=opts).read().column("id").to_pylist()) == [
        "b",
        "c",
    ]
