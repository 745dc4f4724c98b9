"""A compacted base file's bloom filter and min/max keys: the old base file's continued with the
keys the log adds, as Apache Hudi's merge handle builds them (the old file's keys in its order,
then the new ones), so only new keys are hashed; built from every key of the new file where the
merge removed a row or the old footer cannot be continued (other bloom settings)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.bloom.filter import deserialize_bloom_filter
from hudi_core.io.base_file import BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, MAX_KEY, MIN_KEY
from hudi_core.write.handles.parquet_out import footer_of

#: inserts go to the log of the one file group, beside the updates
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}
#: rows of 10 keys: a dynamic filter's bytes depend on the order its keys came in
SMALL_ROWS = {"hoodie.index.bloom.num_entries": "10"}
#: 60 keys take this dynamic filter past its cap (2 rows of 10): Java's round robin over the rows
CAPPED = {**SMALL_ROWS, "hoodie.bloom.index.filter.dynamic.max.entries": "20"}
FIRST = [f"k{i:03d}" for i in range(0, 120, 2)]
_AVRO = {"type": "record", "name": "x", "fields": []}
_FOOTER_KEYS = (BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, MIN_KEY, MAX_KEY)


def _rows(keys: list[str], ts: int, deleted: tuple[str, ...] = ()) -> pa.Table:
    return pa.table({
        "id": keys, "ts": [ts] * len(keys), "v": [f"v{ts}"] * len(keys), "p": ["x"] * len(keys),
        "_hoodie_is_deleted": [k in deleted for k in keys],
    })  # fmt: skip


def _footer(path: Path) -> dict[str, str]:
    meta = pq.ParquetFile(path).metadata.metadata
    return {k.decode(): v.decode() for k, v in meta.items() if k.decode() in _FOOTER_KEYS}


def _keys(path: Path) -> list[str]:
    return pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()


@pytest.mark.parametrize(
    ("case", "write_options", "compact_options", "continued"),
    [
        ("updates", SMALL_ROWS, {}, True),
        ("updates and inserts", SMALL_ROWS, {}, True),
        ("a delete", SMALL_ROWS, {}, False),
        ("other bloom settings", SMALL_ROWS, {"hoodie.index.bloom.num_entries": "12"}, False),
        ("SIMPLE filters", {"hoodie.bloom.index.filter.type": "SIMPLE"}, {}, True),
        ("updates, a dynamic filter past its cap", CAPPED, {}, True),
        ("inserts, a dynamic filter past its cap", CAPPED, {}, True),
        (
            "inserts, a dynamic filter of another cap",
            CAPPED,
            {"hoodie.bloom.index.filter.dynamic.max.entries": "40"},
            False,
        ),
    ],
)
def test_a_compacted_base_file_has_the_footer_of_its_keys(
    tmp_path: Path, case: str, write_options: dict[str, str], compact_options: dict[str, str], continued: bool
) -> None:
    options = {**BUCKET, **write_options}
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts", options=options)  # fmt: skip
    table.bulk_insert(_rows(FIRST, 1), options=options)
    (old,) = (tmp_path / "t" / "x").glob("*.parquet")
    inserts = ["k001", "k200", "a000"] if "inserts" in case else []
    deleted = ("k010",) if case == "a delete" else ()
    updates = ["k004", "k118", "k050"]
    for batch in (_rows([*updates, *inserts], 2), _rows(["k050", *deleted], 3, deleted)):
        HudiTable.open(table.base_uri, options=options).upsert(batch, options=options)
    HudiTable.open(table.base_uri, options=options).compact({**options, **compact_options})

    (new,) = [p for p in (tmp_path / "t" / "x").glob("*.parquet") if p != old]
    footer, keys = _footer(new), _keys(new)
    assert sorted(keys) == sorted(k for k in [*FIRST, *inserts] if k not in deleted)
    bloom = deserialize_bloom_filter(footer[BLOOM_FILTER_KEY], footer[BLOOM_TYPE_KEY])
    assert bloom.might_contain(pa.array(keys)).all()
    assert (footer[MIN_KEY], footer[MAX_KEY]) == (min(keys), max(keys))
    settings = {**options, **compact_options}
    if continued:  # the old file's keys in its order, then the log's new keys in log order
        expected = footer_of(pa.array([*_keys(old), *inserts]), _AVRO, settings)
    else:  # built from the new file's keys in its order
        expected = footer_of(pa.array(keys), _AVRO, settings)
    assert footer == {k: expected[k] for k in _FOOTER_KEYS}
    if case == "updates":
        assert footer == _footer(old)  # no key added: the old filter as it was

    got = HudiTable.open(table.base_uri).read(columns=["id", "v"]).to_pydict()
    want = {k: "v1" for k in FIRST} | {k: "v2" for k in [*updates, *inserts]} | {"k050": "v3"}
    for k in deleted:
        want.pop(k)
    assert dict(zip(got["id"], got["v"], strict=True)) == want
