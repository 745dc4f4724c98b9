"""Compaction together with the write client: interleaved writes, inline compaction."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.compaction import (
    maybe_compact_inline,
    pending_compactions,
    run_compaction,
    schedule_compaction,
)

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.int64()), ("part", pa.string())])


def batch(ids: range, ts: int, val: int) -> pa.Table:
    n = len(ids)
    return pa.table({"id": [f"k{i:04d}" for i in ids], "ts": [ts] * n, "val": [val + i for i in ids],
                     "part": ["a" if i % 2 else "b" for i in ids]}, schema=SCHEMA)  # fmt: skip


@pytest.fixture()
def mor(tmp_path: Path) -> HudiTable:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip
    t.insert(batch(range(40), 1, 0))
    t.upsert(batch(range(0, 20), 2, 1000))
    return t


def values(t: HudiTable) -> dict[str, int]:
    d = t.read(columns=["id", "val"]).to_pydict()
    return dict(zip(d["id"], d["val"], strict=True))


def test_writes_during_pending_compaction_are_not_lost(mor: HudiTable) -> None:
    tc = schedule_compaction(mor, force=True)
    assert tc is not None
    mor.upsert(batch(range(10, 30), 3, 5000))  # lands while the plan is pending
    expected = {f"k{i:04d}": (5000 + i if 10 <= i < 30 else 1000 + i if i < 10 else i) for i in range(40)}
    assert values(mor) == expected
    # the new writes went to logs of the new slice (base instant Tc)
    new_logs = [lf for s in mor.file_slices() for lf in s.log_files if lf.base_instant == tc]
    assert new_logs
    run_compaction(mor, tc)
    assert values(mor) == expected
    slices = mor.file_slices()
    assert all(s.base_instant == tc and s.base_file is not None for s in slices)
    # logs written after scheduling stay on top of the compacted base file
    assert {lf.name for s in slices for lf in s.log_files} == {lf.name for lf in new_logs}
    mor.compact()
    assert values(mor) == expected
    ro = mor.read("read_optimized", columns=["id", "val"]).to_pydict()
    assert dict(zip(ro["id"], ro["val"], strict=True)) == expected


def test_inline_compaction_fires_on_the_trigger(mor: HudiTable) -> None:
    opts = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    assert maybe_compact_inline(mor, opts) is None  # 2 delta commits so far
    mor.upsert(batch(range(5), 3, 7000))
    t = maybe_compact_inline(mor, opts)
    assert t is not None and pending_compactions(mor) == []
    assert mor.commit_metadata(t).compacted
    assert values(mor)["k0003"] == 7003


def test_schedule_inline_only_schedules(mor: HudiTable) -> None:
    mor.upsert(batch(range(5), 3, 7000))
    t = maybe_compact_inline(mor, {"hoodie.compact.schedule.inline": "true",
                                   "hoodie.compact.inline.max.delta.commits": "3"})  # fmt: skip
    assert t is not None and [i.timestamp for i in pending_compactions(mor)] == [t]


def test_hudi_rs_reads_compacted_table_like_before(mor: HudiTable) -> None:
    hudi = pytest.importorskip("hudi")

    def rs() -> dict[str, int]:
        out = hudi.HudiTableBuilder.from_base_uri(mor.base_uri).build().read()
        tbl = pa.Table.from_batches(out) if isinstance(out, list) else out
        return dict(zip(tbl["id"].to_pylist(), tbl["val"].to_pylist(), strict=True))

    before = rs()
    assert before == values(mor)
    mor.compact()
    assert rs() == before
