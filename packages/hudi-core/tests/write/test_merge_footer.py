"""A base file rewritten by the merge handle (updates and inserts packed into a small file)
carries the footer a fresh build over its keys gives: the same bloom filter bytes and min/max
keys, whether the handle continued the old file's filter (nothing deleted; a dynamic filter past
its cap too) or rebuilt it (a delete)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.io.base_file import BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, MAX_KEY, MIN_KEY
from hudi_core.write.handles import parquet_out
from hudi_core.write.handles.parquet_out import footer_of

#: 60 keys take this dynamic filter past its cap (2 rows of 10): Java's round robin over the rows
CAPPED = {"hoodie.index.bloom.num_entries": "10", "hoodie.bloom.index.filter.dynamic.max.entries": "20"}


def _rows(keys: list[str], ts: int, deleted: list[str] = ()) -> pa.Table:  # type: ignore[assignment]
    return pa.table({
        "id": keys, "ts": [ts] * len(keys), "v": [f"v{ts}"] * len(keys), "p": ["x"] * len(keys),
        "_hoodie_is_deleted": [k in deleted for k in keys],
    })  # fmt: skip


def _footer_matches_a_fresh_build(path: Path, options: dict[str, str]) -> None:
    pf = pq.ParquetFile(path)
    meta = {k.decode(): v.decode() for k, v in pf.metadata.metadata.items()}
    keys = pf.read(columns=["_hoodie_record_key"]).column(0)
    fresh = footer_of(keys, {"type": "record", "name": "x", "fields": []}, options)
    for key in (BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, MIN_KEY, MAX_KEY):
        assert meta[key] == fresh[key], f"{key} of {path.name} differs from a build over its keys"


@pytest.mark.parametrize(
    ("case", "options", "continued"),
    [
        ("updates and inserts", {}, True),
        ("a delete", {}, False),
        ("SIMPLE filters", {"hoodie.bloom.index.filter.type": "SIMPLE"}, True),
        ("a dynamic filter past its cap", CAPPED, True),
    ],
)
def test_a_rewritten_base_file_has_the_footer_of_its_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, options: dict[str, str], continued: bool
) -> None:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                             partition_fields="p", ordering_field="ts", options=options)  # fmt: skip
    first = [f"k{i:03d}" for i in range(0, 120, 2)]
    table.insert(_rows(first, 1), options=options)
    usable: list[bool] = []
    real = parquet_out.write_parquet

    def spy(*args: object, growing: parquet_out.GrowingFooter | None = None) -> parquet_out.BaseFileOut:
        out = real(*args, growing=growing)  # type: ignore[arg-type]
        usable.append(growing is not None and growing.usable)
        return out

    monkeypatch.setattr(parquet_out, "write_parquet", spy)
    deleted = ["k010"] if case == "a delete" else []
    batch = _rows(
        ["k004", "k001", "k200", "k050", "a000", *deleted], 2, deleted
    )  # updates, inserts below and above
    HudiTable.open(table.base_uri).upsert(batch, options=options)
    assert usable == [continued]  # one merge: the small file took the inserts
    (rewritten,) = [
        p for p in (tmp_path / "t" / "x").glob("*.parquet") if p.name.endswith(f"_{_latest(table)}.parquet")
    ]
    _footer_matches_a_fresh_build(rewritten, options)
    got = HudiTable.open(table.base_uri).read(columns=["id", "v"]).to_pydict()
    expected = {k: "v1" for k in first} | {k: "v2" for k in ["k004", "k001", "k200", "k050", "a000"]}
    for k in deleted:
        expected.pop(k)
    assert dict(zip(got["id"], got["v"], strict=True)) == expected


def _latest(table: HudiTable) -> str:
    return HudiTable.open(table.base_uri).timeline.completed_commits()[-1].timestamp


@pytest.mark.parametrize("deleted", [[], ["k010", "k100"]])
def test_a_rewritten_base_file_keeps_the_old_rows_in_place(tmp_path: Path, deleted: list[str]) -> None:
    """Hudi's merge handle writes the old file's rows in their order, an updated row where it
    was (new values, commit time and seqno) and a deleted one gone, then the inserts; rows it did
    not touch keep their commit time and seqno."""
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="COPY_ON_WRITE", record_key_fields="id",
                             partition_fields="p", ordering_field="ts")  # fmt: skip
    first = [f"k{i:03d}" for i in range(0, 120, 2)]
    table.insert(_rows(first, 1))
    before = pq.read_table(next((tmp_path / "t" / "x").glob("*.parquet"))).to_pylist()
    updates = ["k058", "k004", "k118", "k000"]
    HudiTable.open(table.base_uri).upsert(_rows([*updates, "k001", "a000", *deleted], 2, deleted))
    (rewritten,) = (tmp_path / "t" / "x").glob(f"*_{_latest(table)}.parquet")
    after = pq.read_table(rewritten).to_pylist()
    kept = [r for r in before if r["id"] not in deleted]
    assert [r["id"] for r in after] == [r["id"] for r in kept] + ["k001", "a000"]
    instant = _latest(table)
    for old, new in zip(kept, after, strict=False):
        if old["id"] in updates:
            assert (new["v"], new["ts"], new["_hoodie_commit_time"]) == ("v2", 2, instant)
        else:
            assert {k: v for k, v in new.items() if k != "_hoodie_file_name"} == {
                k: v for k, v in old.items() if k != "_hoodie_file_name"
            }
        assert new["_hoodie_file_name"] == rewritten.name
    seqnos = [r["_hoodie_commit_seqno"] for r in after if r["_hoodie_commit_time"] == instant]
    # the updates' seqnos in file order, then the inserts'
    assert seqnos == [f"{instant}_0_{i}" for i in range(len(updates) + 2)]
