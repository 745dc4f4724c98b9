"""Random upsert/delete sequences on small tables agree with a dict model (ours and hudi-rs)."""

from __future__ import annotations

import tempfile
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

hudi = pytest.importorskip("hudi")

KEYS = st.integers(min_value=0, max_value=7)
OP = st.tuples(st.sampled_from(["upsert", "delete"]), st.lists(KEYS, min_size=1, max_size=6, unique=True))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ttype=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
    index=st.sampled_from(["SIMPLE", "BUCKET", "GLOBAL_SIMPLE"]),
    ops=st.lists(OP, min_size=1, max_size=4),
)
def test_random_sequences_match_dict_model(ttype: str, index: str, ops: list[tuple[str, list[int]]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        base = f"{d}/t"
        t = HudiTable.create(base, name="t", table_type=ttype, record_key_fields="id", partition_fields="p",
                             ordering_field="ts", options={"hoodie.index.type": index,
                                                           "hoodie.bucket.index.num.buckets": "2"})  # fmt: skip
        model: dict[int, tuple[str, int]] = {}
        for step, (op, keys) in enumerate(ops, start=1):
            parts = [f"p{k % 2}" for k in keys]
            if op == "upsert":
                t.upsert(
                    pa.table({"id": keys, "p": parts, "ts": [step] * len(keys), "v": [step] * len(keys)})
                )
                model.update({k: (p, step) for k, p in zip(keys, parts, strict=True)})
            else:
                t.delete(pa.table({"id": keys, "p": parts}))
                for k in keys:
                    model.pop(k, None)
            expected = sorted((k, p, v) for k, (p, v) in model.items())
            assert _rows(t.read()) == expected
            batches = hudi.HudiTableBuilder.from_base_uri(base).build().read()
            assert (_rows(pa.Table.from_batches(batches)) if batches else []) == expected


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    if table.num_rows == 0:
        return []  # a table nothing was committed to has no schema yet
    return sorted(
        zip(
            table.column("id").to_pylist(),
            table.column("p").to_pylist(),
            table.column("v").to_pylist(),
            strict=True,
        )
    )
