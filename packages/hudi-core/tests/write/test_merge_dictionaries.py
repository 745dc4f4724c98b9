"""The merge handle carries the old file's dictionary-encoded columns to the new file as
dictionaries: the same rows and values as spelling every string out, in a file whose columns
are still dictionary indices page after page (no fall back to plain pages)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.read.files import indexed_columns
from hudi_core.write.handles import merge as merge_handle

CARRIED = ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name", "rider", "p"]


def _rows(keys: list[str], ts: int, rng: np.random.Generator) -> pa.Table:
    n = len(keys)
    riders = pa.array(rng.choice([f"rider-{i:040d}" for i in range(3)] + [None], n))  # type: ignore[list-item]
    return pa.table({"id": keys, "ts": [ts] * n, "rider": riders, "note": [f"{k}-{ts}" for k in keys],
                     "p": ["x"] * n})  # fmt: skip


def _upserted(root: Path, table_type: str) -> HudiTable:
    rng = np.random.default_rng(3)
    # uncompressed: a column chunk that fell back to plain pages shows in its size
    table = HudiTable.create(str(root), name="t", table_type=table_type, record_key_fields="id",
                             partition_fields="p", ordering_field="ts",
                             options={"hoodie.parquet.compression.codec": "uncompressed"})  # fmt: skip
    keys = [f"k{i:05d}" for i in range(0, 20000, 2)]
    table.insert(_rows(keys, 1, rng))
    # updates of every fifth key and new keys: packed into the small file, merged
    for ts, start in ((2, 0), (3, 1)):
        batch = keys[start::5] + [f"k{i:05d}" for i in range(2 * ts - 3, 4000, 4)]  # odd: new
        HudiTable.open(table.base_uri).upsert(_rows(batch, ts, rng))
    return HudiTable.open(table.base_uri)


def _column_bytes(root: Path) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for path in root.rglob("*.parquet"):
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            for i in range(meta.num_columns):
                chunk = meta.row_group(g).column(i)
                sizes[chunk.path_in_schema] = (
                    sizes.get(chunk.path_in_schema, 0) + chunk.total_uncompressed_size
                )
    return sizes


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_merged_file_keeps_its_dictionaries_and_its_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_type: str
) -> None:
    kept = _upserted(tmp_path / "kept", table_type)
    with monkeypatch.context() as m:  # every column read spelled out, as before the handle kept them
        plain = merge_handle.open_parquet
        m.setattr(
            merge_handle, "open_parquet", lambda s, path, size=0, as_dictionary=(): plain(s, path, size)
        )
        spelled = _upserted(tmp_path / "spelled", table_type)
    merged = [
        f for f in (tmp_path / "kept" / "x").glob("*.parquet") if pq.ParquetFile(f).metadata.num_rows > 10000
    ]
    assert merged, "a small file took the new keys"
    for path in merged:
        pf = pq.ParquetFile(path)
        assert set(indexed_columns(pf.metadata, pf.schema_arrow, CARRIED)) == set(CARRIED)
        assert not any(pa.types.is_dictionary(t) for t in pq.read_schema(path).types)
    # as small as the files written from strings: no chunk fell back to plain pages half-way
    kept_sizes, spelled_sizes = _column_bytes(tmp_path / "kept"), _column_bytes(tmp_path / "spelled")
    for name in CARRIED:
        assert kept_sizes[name] <= 1.05 * spelled_sizes[name], name
    got, expected = kept.read(), spelled.read()
    assert not any(pa.types.is_dictionary(t) for t in got.schema.types)
    names = [
        n
        for n in got.column_names
        if n not in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")
    ]
    assert got.select(names).sort_by("id").equals(expected.select(names).sort_by("id"))
    notes = dict(zip(got.column("id").to_pylist(), got.column("note").to_pylist(), strict=True))
    assert notes["k00000"] == "k00000-2" and notes["k00002"] == "k00002-3" and notes["k00004"] == "k00004-1"
    assert notes["k00001"] == "k00001-2" and notes["k00003"] == "k00003-3" and len(notes) == 12000
