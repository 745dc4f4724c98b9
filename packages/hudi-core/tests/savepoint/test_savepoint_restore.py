"""Savepoints and restores, as Apache Hudi 0.15's ``create_savepoint``, ``delete_savepoint`` and
``rollback_to_savepoint`` write them (the Apache Hudi tier, ``tests/interop/test_savepoints.py``,
has each engine restore the other's savepoints)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.cli.main import main
from hudi_core.errors import TimelineError
from hudi_core.table.file_names import BaseFileName, LogFileName
from hudi_core.timeline.avro_files import deserialize

NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}  # merge-on-read updates go to logs


def _rows(ids: list[str], ts: int, v: str, p: str = "p1") -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "p": [p] * n, "ts": pa.array([ts] * n, pa.int64()), "v": [v] * n})


def _answer(path: str) -> list[tuple[str, str, str]]:
    return sorted(
        (r["id"], r["p"], r["v"]) for r in HudiTable.open(path).read(columns=["id", "p", "v"]).to_pylist()
    )


def _timeline(path: str) -> list[str]:
    """The completed instants' files: ``<time>.<action>`` without the time."""
    names = (f.name for f in (Path(path) / ".hoodie").iterdir() if f.name[:1].isdigit())
    return [n.split(".", 1)[1] for n in sorted(names) if not n.endswith((".inflight", ".requested"))]


def _table(tmp_path: Path, table_type: str) -> tuple[str, str]:
    """A table with two commits and a savepoint of the second; returns its path and the savepoint."""
    path = str(tmp_path / "t")
    HudiTable.create(path, name="t", table_type=table_type, record_key_fields="id", partition_fields="p",
                     ordering_field="ts").insert(_rows(["a", "b"], 1, "one"), options=NO_SMALL_FILES)  # fmt: skip
    HudiTable.open(path).upsert(_rows(["a"], 2, "two"), options=NO_SMALL_FILES)
    return path, HudiTable.open(path).savepoint(user="ops", comments="before the backfill")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_restore_brings_back_the_savepoint_and_the_table_goes_on(tmp_path: Path, table_type: str) -> None:
    path, saved = _table(tmp_path, table_type)
    expected = _answer(path)
    assert expected == [("a", "p1", "two"), ("b", "p1", "one")]
    meta = deserialize(
        "HoodieSavepointMetadata", (Path(path) / ".hoodie" / f"{saved}.savepoint").read_bytes()
    )
    assert (meta["savepointedBy"], meta["comments"]) == ("ops", "before the backfill")
    listed = {n for pm in meta["partitionMetadata"].values() for n in pm["savepointDataFile"]}
    assert listed == {
        f.name for s in HudiTable.open(path).file_slices() for f in [s.base_file, *s.log_files] if f
    }

    # after it: updates, a new partition, a compaction, and (merge-on-read) a pending compaction
    # that a later write appends logs to
    HudiTable.open(path).upsert(_rows(["a", "c"], 3, "three"), options=NO_SMALL_FILES)
    if table_type == "MERGE_ON_READ":
        HudiTable.open(path).compact()
    HudiTable.open(path).upsert(_rows(["b", "d"], 4, "four", "p2"), options=NO_SMALL_FILES)
    HudiTable.open(path).upsert(_rows(["a"], 5, "five"), options=NO_SMALL_FILES)
    pending = HudiTable.open(path).schedule_compaction(force=True) if table_type == "MERGE_ON_READ" else None
    HudiTable.open(path).upsert(_rows(["a"], 6, "six"), options=NO_SMALL_FILES)
    later = [i.timestamp for i in HudiTable.open(path).timeline.commits() if i.timestamp > saved]
    assert len(later) == (6 if pending else 4)

    result = HudiTable.open(path).restore(saved)
    assert result.rolled_back == sorted(later, reverse=True)
    assert _answer(path) == expected
    assert _timeline(path)[-3:] == ["deltacommit" if table_type == "MERGE_ON_READ" else "commit", "savepoint",
                                    "restore"]  # fmt: skip
    plan = deserialize(
        "HoodieRestorePlan",
        (Path(path) / ".hoodie" / f"{result.restore_instant}.restore.requested").read_bytes(),
    )
    assert plan["savepointToRestoreTimestamp"] == saved
    assert [i["commitTime"] for i in plan["instantsToRollback"]] == result.rolled_back
    done = deserialize(
        "HoodieRestoreMetadata", (Path(path) / ".hoodie" / f"{result.restore_instant}.restore").read_bytes()
    )
    assert sorted(done["hoodieRestoreMetadata"]) == sorted(later)
    # no file of a rolled-back instant is left, not even a log on a slice it based
    for f in Path(path).glob("p*/*"):
        log, base = LogFileName.parse(f.name), BaseFileName.parse(f.name)
        assert (log.base_instant if log else base.instant_time if base else "") <= saved, f.name
    assert not [f for f in Path(path).glob("p2/*") if BaseFileName.parse(f.name) or LogFileName.parse(f.name)]

    HudiTable.open(path).upsert(_rows(["b", "e"], 9, "after"), options=NO_SMALL_FILES)
    assert _answer(path) == [("a", "p1", "two"), ("b", "p1", "after"), ("e", "p1", "after")]


def test_after_the_savepoint_goes_the_cleaner_keeps_the_restored_rows(tmp_path: Path) -> None:
    path, saved = _table(tmp_path, "MERGE_ON_READ")
    HudiTable.open(path).upsert(_rows(["a"], 3, "three"), options=NO_SMALL_FILES)
    HudiTable.open(path).compact()
    HudiTable.open(path).upsert(_rows(["a"], 4, "four"), options=NO_SMALL_FILES)
    HudiTable.open(path).restore(saved)
    HudiTable.open(path).delete_savepoint(saved)
    assert HudiTable.open(path).savepoints() == []
    for ts in range(5, 9):
        HudiTable.open(path).upsert(_rows(["c"], ts, f"c{ts}"), options=NO_SMALL_FILES)
        HudiTable.open(path).clean({"hoodie.cleaner.commits.retained": "1"})
    assert _answer(path) == [("a", "p1", "two"), ("b", "p1", "one"), ("c", "p1", "c8")]


def test_what_savepoint_and_restore_refuse(tmp_path: Path) -> None:
    path, saved = _table(tmp_path, "COPY_ON_WRITE")
    with pytest.raises(TimelineError, match="already savepointed"):
        HudiTable.open(path).savepoint(saved)
    with pytest.raises(TimelineError, match="not a completed commit"):
        HudiTable.open(path).savepoint("20200101000000000")
    with pytest.raises(TimelineError, match="no savepoint at"):
        HudiTable.open(path).restore("20200101000000000")
    with pytest.raises(TimelineError, match="no savepoint at"):
        HudiTable.open(path).delete_savepoint("20200101000000000")
    first = HudiTable.open(path).timeline.completed_commits().first()
    assert first is not None
    for ts in range(3, 6):
        HudiTable.open(path).upsert(_rows(["a"], ts, f"v{ts}"))
    HudiTable.open(path).delete_savepoint(saved)
    assert HudiTable.open(path).clean({"hoodie.cleaner.commits.retained": "1"}) is not None
    with pytest.raises(TimelineError, match="not retained"):  # the cleaner may have removed its files
        HudiTable.open(path).savepoint(first.timestamp)


def test_the_command_line_savepoints_lists_and_restores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, saved = _table(tmp_path, "MERGE_ON_READ")
    HudiTable.open(path).delete_savepoint(saved)
    assert main(["savepoint", path, "--user", "ops"]) == 0
    assert json.loads(capsys.readouterr().out) == {"savepoint": saved}
    assert main(["savepoint", path, "--list"]) == 0
    assert json.loads(capsys.readouterr().out) == {"savepoints": [saved]}
    HudiTable.open(path).upsert(_rows(["a"], 3, "three"), options=NO_SMALL_FILES)
    assert main(["restore", path, saved]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["savepoint"] == saved and len(out["rolled_back"]) == 1
    assert _answer(path) == [("a", "p1", "two"), ("b", "p1", "one")]
    assert main(["savepoint", path, saved, "--delete"]) == 0
    assert json.loads(capsys.readouterr().out) == {"deleted": saved}
    assert main(["restore", path, saved]) == 1
    assert "no savepoint at" in capsys.readouterr().err


def test_a_restore_cut_short_is_resumed_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hudi_core.savepoint as savepoint_module

    path, saved = _table(tmp_path, "MERGE_ON_READ")
    for ts in range(3, 6):
        HudiTable.open(path).upsert(_rows(["a", f"n{ts}"], ts, f"v{ts}"), options=NO_SMALL_FILES)
    later = [i.timestamp for i in HudiTable.open(path).timeline.commits() if i.timestamp > saved]
    HudiTable.open(path).savepoint(later[0])
    calls = []
    real = savepoint_module.rollback_instant

    def dies_on_the_second(*args: object, **kwargs: object) -> object:
        calls.append(args[1])
        if len(calls) == 2:
            raise RuntimeError("the restore dies")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(savepoint_module, "rollback_instant", dies_on_the_second)
        with pytest.raises(RuntimeError, match="the restore dies"):
            HudiTable.open(path).restore(saved)
    cut = HudiTable.open(path).timeline.filter(actions=["restore"]).pending()
    assert len(cut) == 1  # readable meanwhile: as of the newest write not yet rolled back
    assert _answer(path) == [("a", "p1", "v4"), ("b", "p1", "one"), ("n3", "p1", "v3"), ("n4", "p1", "v4")]
    with pytest.raises(TimelineError, match="restore to that savepoint again first"):
        HudiTable.open(path).restore(later[0])
    HudiTable.open(path).delete_savepoint(later[0])
    result = HudiTable.open(path).restore(saved)
    assert result.restore_instant == cut.last().timestamp  # type: ignore[union-attr]
    assert result.rolled_back == sorted(later, reverse=True)
    assert not HudiTable.open(path).timeline.pending()
    assert _timeline(path)[-2:] == ["savepoint", "restore"]
    assert _answer(path) == [("a", "p1", "two"), ("b", "p1", "one")]
