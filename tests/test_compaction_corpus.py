"""Compaction of a copy of every MOR table of the compat corpus leaves its snapshot unchanged,
read by us and by hudi-rs; read-optimized then equals snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.testing.corpus import copy_corpus_table, corpus_tables

hudi = pytest.importorskip("hudi")

MOR = [t for t in corpus_tables() if t["table_type"] == "MERGE_ON_READ" and t["table_version"] == 6]


def _rs_snapshot(base: Path) -> pa.Table:
    out: Any = hudi.HudiTableBuilder.from_base_uri(str(base)).build().read()
    return pa.Table.from_batches(out) if isinstance(out, list) else out


def _canon(t: pa.Table, key_cols: list[str]) -> pa.Table:
    # _hoodie_file_name changes by design; everything else must be identical
    cols = [c for c in t.column_names if c != "_hoodie_file_name"]
    return t.select(cols).sort_by([(k, "ascending") for k in key_cols])


@pytest.mark.skipif(not MOR, reason="compat corpus not available")
@pytest.mark.parametrize("entry", MOR, ids=[t["name"] for t in MOR])
def test_compaction_keeps_snapshot(entry: dict[str, Any], tmp_path: Path) -> None:
    base = copy_corpus_table(entry["table_path"], tmp_path)
    table = HudiTable.open(str(base))
    before = table.read()
    keys = ["_hoodie_record_key"] if table.config.populate_meta_fields else [before.column_names[0]]
    rs_before = _rs_snapshot(base) if before.num_rows else None
    slices_with_logs = [s for s in table.file_slices() if s.log_files]

    results = table.compact()

    assert len(results) == (1 if slices_with_logs else 0)
    after = table.read()
    assert _canon(after, keys).equals(_canon(before, keys))
    assert _canon(table.read("read_optimized"), keys).equals(_canon(after, keys))
    if rs_before is not None:
        rs_after = _rs_snapshot(base)
        assert _canon(rs_after, keys).equals(_canon(rs_before, keys))
    if slices_with_logs:
        t = results[0].instant_time
        compacted = {s.file_id for s in slices_with_logs}
        now = {s.file_id: s for s in table.file_slices()}
        for fid in compacted:
            assert now[fid].base_instant == t and not now[fid].log_files
            assert now[fid].base_file is not None and now[fid].base_file.name.endswith(f"_{t}.parquet")
        meta = table.commit_metadata(t)
        assert meta.compacted and meta.operation_type == "COMPACT" and meta.schema
        assert {s.file_id for s in meta.all_write_stats()} == compacted
        assert sum(s.num_writes for s in meta.all_write_stats()) > 0
        assert not (base / ".hoodie" / ".temp" / t).exists()
