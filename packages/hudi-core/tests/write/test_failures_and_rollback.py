"""A write that fails at any point leaves no completed instant; the next write rolls it back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hudi_core.client.write_client as client_mod
import hudi_core.write.handles.parquet_out as base_file_mod
import hudi_core.write.transaction as transaction_mod
import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import TimelineError
from hudi_core.log.format import BlockType
from hudi_core.log.reader import read_log_file
from hudi_core.storage import TEMP_PREFIX
from hudi_core.table.file_names import BaseFileName
from hudi_core.testing.crashes import killed_at_log_create
from hudi_core.timeline.avro_files import deserialize


def _table(tmp_path: Path, ttype: str) -> HudiTable:
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type=ttype, record_key_fields="id",
                         partition_fields="p", ordering_field="ts")  # fmt: skip
    t.insert(pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1, 1, 1, 1], "v": ["x"] * 4}))
    return t


def _rows(t: HudiTable) -> list[tuple[Any, ...]]:
    out = t.read().select(["id", "p", "v"])
    return sorted(zip(*(out.column(c).to_pylist() for c in out.column_names), strict=True))


def _update() -> pa.Table:
    # updates and inserts in both partitions: two file groups rewritten (COW, and MOR small files)
    return pa.table({"id": [1, 3, 9, 10], "p": ["a", "b", "b", "a"], "ts": [2] * 4, "v": ["y"] * 4})


class Boom(RuntimeError):
    pass


def _fail_on_call(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    real = base_file_mod.write_parquet
    calls = {"n": 0}

    def flaky(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] >= n:
            raise Boom(f"injected failure at base file write {calls['n']}")
        return real(*args, **kwargs)

    monkeypatch.setattr(base_file_mod, "write_parquet", flaky)


def _fail_before_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise Boom("injected failure before the commit file")

    monkeypatch.setattr(transaction_mod, "commit", boom)


def _failed_upsert(t: HudiTable, monkeypatch: pytest.MonkeyPatch, data: pa.Table) -> str:
    """An upsert of ``data`` that fails before its commit file; returns its pending instant."""
    with monkeypatch.context() as m:
        _fail_before_commit(m)
        with pytest.raises(Boom):
            t.upsert(data)
    return next(i.timestamp for i in t.timeline.commits() if not i.is_completed)


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("point", ["after_markers", "after_some_files", "before_commit"])
def test_failed_write_is_invisible_and_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   ttype: str, point: str) -> None:  # fmt: skip
    t = _table(tmp_path, ttype)
    before = _rows(t)
    with monkeypatch.context() as m:
        if point == "after_markers":
            _fail_on_call(m, 1)
        elif point == "after_some_files":
            _fail_on_call(m, 2)
            m.setattr(client_mod.WriteClient, "engine", property(lambda self: _Serial()))
        else:
            _fail_before_commit(m)
        with pytest.raises(Boom):
            t.upsert(_update())
    failed = [i for i in t.timeline.commits() if not i.is_completed]
    assert len(failed) == 1
    x = failed[0].timestamp
    assert _rows(t) == before
    hudi = pytest.importorskip("hudi")
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(t.base_uri).build().read())
    assert sorted(zip(rs.column("id").to_pylist(), rs.column("v").to_pylist(), strict=True)) == [
        (i, v) for i, _, v in before
    ]

    r = t.upsert(_update())  # EAGER: rolls back x first
    assert r.updated == 2 and r.inserted == 2
    tl = t.timeline
    assert not tl.contains(x)
    rollbacks = [i for i in tl if i.action == "rollback"]
    assert len(rollbacks) == 1 and rollbacks[0].is_completed
    meta = deserialize("HoodieRollbackMetadata", tl.read_details(rollbacks[0]))
    assert meta["commitsRollback"] == [x]
    assert not (Path(t.base_uri) / ".hoodie" / ".temp" / x).exists()
    # no file of the failed instant survives except MOR logs, whose blocks a command block cancels
    leftovers = [p for p in Path(t.base_uri).rglob(f"*{x}*") if ".hoodie" not in p.parts]
    assert leftovers == []
    assert _rows(t) == sorted(
        [(1, "a", "y"), (2, "a", "x"), (3, "b", "y"), (4, "b", "x"), (9, "b", "y"), (10, "a", "y")]
    )


class _Serial:
    name = "serial"
    parallelism = 1

    def map(self, fn: Any, items: Any) -> list[Any]:
        return [fn(x) for x in items]


def test_mor_log_append_rolled_back_with_command_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _table(tmp_path, "MERGE_ON_READ")
    before = _rows(t)
    x = _failed_upsert(t, monkeypatch, pa.table({"id": [1], "p": ["a"], "ts": [5], "v": ["z"]}))
    logs = sorted(Path(t.base_uri, "a").glob(".*.log.*"))
    assert len(logs) == 1
    res = t.rollback(x)
    logs = sorted(Path(t.base_uri, "a").glob(".*.log.*"))
    assert len(logs) == 2 and logs[1].name.endswith("_1-0-1")
    blocks = read_log_file(t.storage, str(logs[1]))
    assert [b.block_type for b in blocks] == [BlockType.COMMAND]
    assert blocks[0].target_instant_time == x and blocks[0].instant_time == res.rollback_instant
    assert _rows(t) == before


@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_failed_write_whose_markers_were_cut_short_leaves_none_of_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ttype: str
) -> None:
    """Apache Hudi's timeline server rewrites a whole ``MARKERS<n>`` file for each batch of
    markers, so a writer killed during a rewrite leaves that file cut short (here: empty), and its
    handles that had just created a base file or a log file (here: empty, their bytes not yet
    flushed) have no marker left. Apache Hudi's next writer lists every file, empty ones refused,
    to rebuild the metadata table we drop: the rollback leaves no base file of the failed instant
    and no empty file."""
    t = _table(tmp_path, ttype)
    before = _rows(t)
    x = _failed_upsert(t, monkeypatch, _update())
    marker_dir = Path(t.base_uri) / ".hoodie" / ".temp" / x
    written = sorted(Path(t.base_uri).rglob(f"*_{x}.parquet"))
    assert written and marker_dir.is_dir()
    for p in sorted(marker_dir.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    (marker_dir / "MARKERS.type").write_text("TIMELINE_SERVER_BASED")
    (marker_dir / "MARKERS0").write_text("")
    (Path(t.base_uri) / "b" / f"{'0' * 8}-0000-0000-0000-{'0' * 12}-0_1-9-9_{x}.parquet").write_bytes(b"")
    (first,) = [f for f in Path(t.base_uri, "a").glob("*.parquet") if x not in f.name]  # the first commit's
    slice_ = BaseFileName.parse(first.name)
    assert slice_ is not None
    empty_log = first.with_name(f".{slice_.file_id}_{slice_.instant_time}.log.7_0-9-8")
    empty_log.write_bytes(b"")

    r = t.upsert(_update())  # rolls back x first
    assert r.updated == 2 and r.inserted == 2
    assert list(Path(t.base_uri).rglob(f"*_{x}.parquet")) == [] and not empty_log.exists()
    data_files = [p for part in ("a", "b") for p in (Path(t.base_uri) / part).iterdir()]
    assert [p.name for p in data_files if p.stat().st_size == 0] == []
    assert _rows(t) == sorted(
        [(1, "a", "y"), (2, "a", "x"), (3, "b", "y"), (4, "b", "x"), (9, "b", "y"), (10, "a", "y")]
    )
    assert before != _rows(t)


def test_a_log_file_a_failed_write_left_empty_is_deleted_by_its_rollback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer killed between creating a log file and writing its first block leaves it empty
    beside the slice its APPEND marker names. The rollback deletes it (it holds nothing to cancel;
    Apache Hudi's metadata table bootstrap refuses an empty file) before it cancels the attempt's
    blocks with a command block in the slice's next log version."""
    t = _table(tmp_path, "MERGE_ON_READ")
    before = _rows(t)
    x = _failed_upsert(t, monkeypatch, pa.table({"id": [1], "p": ["a"], "ts": [5], "v": ["z"]}))
    (marker,) = (Path(t.base_uri) / ".hoodie" / ".temp" / x / "a").glob("*.marker.APPEND")
    slice_ = BaseFileName.parse(marker.name.split(".marker.")[0])
    assert slice_ is not None
    (written,) = Path(t.base_uri, "a").glob(".*.log.*")
    assert written.stat().st_size > 0
    empty = written.with_name(f".{slice_.file_id}_{slice_.instant_time}.log.9_{slice_.write_token}")
    empty.write_bytes(b"")

    res = t.rollback(x)
    assert not empty.exists() and str(empty) in res.deleted_files
    logs = sorted(Path(t.base_uri, "a").glob(".*.log.*"))
    assert [p.name for p in logs] == [written.name, f".{slice_.file_id}_{slice_.instant_time}.log.2_1-0-1"]
    blocks = read_log_file(t.storage, str(logs[1]))
    assert [(b.block_type, b.target_instant_time) for b in blocks] == [(BlockType.COMMAND, x)]
    assert _rows(t) == before


def test_rollback_latest_completed_commit(tmp_path: Path) -> None:
    t = _table(tmp_path, "COPY_ON_WRITE")
    before = _rows(t)
    r = t.upsert(_update())
    first = t.timeline.completed_commits()[0].timestamp
    with pytest.raises(TimelineError, match="later commits"):
        t.rollback(first)
    t.rollback(r.instant)
    assert _rows(t) == before
    assert not t.timeline.contains(r.instant)
    assert list(Path(t.base_uri).rglob(f"*_{r.instant}.parquet")) == []


@pytest.mark.parametrize("cut", ["before_the_target_is_removed", "before_the_rollback_completes"])
@pytest.mark.parametrize("ttype", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_rollback_cut_short_is_finished_by_the_next_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ttype: str, cut: str
) -> None:
    """As Hudi: the pending rollback runs again from its plan, under its own instant, and
    completes; no second rollback of the same write, nothing left pending."""
    from hudi_core.timeline.timeline import ActiveTimeline

    t = _table(tmp_path, ttype)
    before = _rows(t)
    failed = _failed_upsert(t, monkeypatch, _update())
    with monkeypatch.context() as m:
        if cut == "before_the_target_is_removed":

            def delete_instant(self: Any, instant: Any) -> None:
                raise Boom("the process dies while removing the failed instant")

            m.setattr(ActiveTimeline, "delete_instant", delete_instant)
        else:
            complete = ActiveTimeline.complete

            def complete_but_rollbacks(self: Any, instant: Any, content: bytes) -> Any:
                if instant.action == "rollback":
                    raise Boom("the process dies before the rollback completes")
                return complete(self, instant, content)

            m.setattr(ActiveTimeline, "complete", complete_but_rollbacks)
        with pytest.raises(Boom):
            t.rollback(failed)
    pending = {i.timestamp: i.action for i in HudiTable.open(t.base_uri).timeline.pending()}
    assert "rollback" in pending.values()  # cut short
    assert (failed in pending) == (cut == "before_the_target_is_removed")
    assert _rows(HudiTable.open(t.base_uri)) == before

    HudiTable.open(t.base_uri).upsert(pa.table({"id": [20], "p": ["a"], "ts": [3], "v": ["w"]}))
    tl = HudiTable.open(t.base_uri).timeline
    assert list(tl.pending()) == []
    rollbacks = [i for i in tl if i.action == "rollback"]
    assert len(rollbacks) == 1
    meta = deserialize("HoodieRollbackMetadata", tl.read_details(rollbacks[0]))
    assert meta["commitsRollback"] == [failed]
    assert _rows(HudiTable.open(t.base_uri)) == sorted([*before, (20, "a", "w")])


#: every upsert of a file group goes to its log (no small-file merge); archival keeps 2-3 commits
_ARCHIVING = {"hoodie.parquet.small.file.limit": "0", "hoodie.keep.min.commits": "2",
              "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}  # fmt: skip


def test_a_writer_killed_creating_a_log_file_leaves_nothing_a_reader_takes_for_data(tmp_path: Path) -> None:
    """Killed between a new log file's bytes (in the storage's temporary file) and its name: the
    temporary file is no Hudi file, and the rollback deletes it. (Its old name, ``.<log file
    name>.<uuid>.tmp``, was read by Apache Hudi and hudi-rs as a log file of another file group
    whose blocks, once archival passed their instant, counted as committed: the killed write's
    rows came back.)"""
    t = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options=_ARCHIVING)  # fmt: skip
    model = {i: (i % 2, 1) for i in range(20)}

    def rows(ids: range, ts: int) -> pa.Table:
        return pa.table({"id": list(ids), "p": [f"p{i % 2}" for i in ids], "ts": [ts] * len(ids),
                         "v": [f"v{ts}"] * len(ids)})  # fmt: skip

    t.bulk_insert(rows(range(20), 1), options=_ARCHIVING)
    x = killed_at_log_create(t, rows(range(0, 20, 3), 99), _ARCHIVING)
    temps = [p.name for p in Path(t.base_uri).rglob(f"{TEMP_PREFIX}*")]
    assert temps, "the killed create left its temporary file"
    for ts in range(2, 8):  # the first rolls x back; archival then passes x's time
        t.upsert(rows(range(ts, 20, 5), ts), options=_ARCHIVING)
        model.update({i: (i % 2, ts) for i in range(ts, 20, 5)})
    tl = HudiTable.open(t.base_uri).timeline
    assert min(i.timestamp for i in tl) > x, "archival passed the killed write's instant"
    assert [str(p) for p in Path(t.base_uri).rglob(f"*{TEMP_PREFIX}*")] == []
    expected = sorted((i, f"p{p}", ts) for i, (p, ts) in model.items())
    ours = t.read(columns=["id", "p", "ts"])
    assert sorted(zip(*(ours.column(c).to_pylist() for c in ("id", "p", "ts")), strict=True)) == expected
    hudi = pytest.importorskip("hudi")
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(t.base_uri).build().read())
    assert sorted(zip(*(rs.column(c).to_pylist() for c in ("id", "p", "ts")), strict=True)) == expected
