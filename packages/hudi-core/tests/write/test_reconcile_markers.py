"""Commit deletes the files of dead task attempts found through markers, log files included."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.client.write_client import WriteClient
from hudi_core.log.reader import read_log_file
from hudi_core.table.file_names import LogFileName
from hudi_core.write.handles import TaskAttempt, write_bucket


class DeadAttemptFirst:
    """An engine whose every task first runs an attempt that writes its files and then dies
    (its statuses are lost), then a retry with another write token."""

    def __init__(self) -> None:
        self.dead_tokens: set[str] = set()

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        out = []
        for ctx, bucket, records in items:
            dead = TaskAttempt(bucket.number, 1, bucket.number)  # the local engine's own token
            write_bucket(ctx, bucket, records, attempt=dead)
            self.dead_tokens.add(dead.token)
            out.append(
                write_bucket(ctx, bucket, records, attempt=TaskAttempt(bucket.number, 1, 500 + bucket.number))
            )
        return out


def _rows(t: HudiTable) -> list[tuple[Any, ...]]:
    out = t.read().select(["id", "p", "v"])
    return sorted(zip(*(out.column(c).to_pylist() for c in out.column_names), strict=True))


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_commit_removes_files_of_dead_attempts(tmp_path: Path, ttype: str) -> None:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=ttype, record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    t.insert(pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1] * 4, "v": ["x"] * 4}))
    # a committed update written with the local token: a later dead attempt reuses that token
    t.upsert(pa.table({"id": [2, 4], "p": ["a", "b"], "ts": [2, 2], "v": ["y", "y"]}))
    before = {p.name for p in Path(t.base_uri).glob("[ab]/*") if not p.name.startswith(".hoodie_partition")}
    engine = DeadAttemptFirst()
    res = WriteClient(HudiTable.open(t.base_uri), engine=engine).write(
        pa.table({"id": [1, 3, 9], "p": ["a", "b", "b"], "ts": [3] * 3, "v": ["z"] * 3}), operation="upsert"
    )
    t = HudiTable.open(t.base_uri)
    assert _rows(t) == [(1, "a", "z"), (2, "a", "y"), (3, "b", "z"), (4, "b", "y"), (9, "b", "z")]
    files = {p.name for p in Path(t.base_uri).glob("[ab]/*") if not p.name.startswith(".hoodie_partition")}
    new = files - before
    written = {s.stat.path.rsplit("/", 1)[-1] for s in res.statuses}
    assert new == written  # nothing of the dead attempts is left, nothing of the retry is lost
    assert before <= files  # earlier commits' files sharing a dead token are kept
    logs = [LogFileName.parse(n) for n in files]
    if ttype == "MERGE_ON_READ":
        assert any(
            lf is not None and lf.write_token in engine.dead_tokens for lf in logs
        )  # the kept earlier ones
        for path in Path(t.base_uri).glob("*/.*.log.*"):
            lf = LogFileName.parse(path.name)
            if lf is not None and lf.write_token in engine.dead_tokens:
                assert res.instant not in {b.instant_time for b in read_log_file(t.storage, str(path))}
        for s in res.statuses:
            assert all(LogFileName.parse(f.rsplit("/", 1)[-1]).write_token not in engine.dead_tokens  # type: ignore[union-attr]
                       or f.rsplit("/", 1)[-1] in before for f in s.stat.log_files or [])  # fmt: skip
    # hudi-rs sees the same rows
    import hudi

    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(t.base_uri).build().read())
    assert sorted(rs.column("id").to_pylist()) == [1, 2, 3, 4, 9]
