from __future__ import annotations

import json
from pathlib import Path

import pytest
from hudi_core.errors import CommitConflictError, TimelineError
from hudi_core.storage import LocalStorage
from hudi_core.testing.corpus import corpus_root
from hudi_core.timeline import Action, ActiveTimeline, CommitMetadata, State


@pytest.fixture
def meta(tmp_path: Path) -> str:
    (tmp_path / ".hoodie").mkdir()
    return str(tmp_path / ".hoodie")


def test_requested_inflight_completed_writes_each_state_file(meta: str) -> None:
    tl = ActiveTimeline(LocalStorage(), meta)
    t = tl.new_instant_time()
    req = tl.create_requested(t, Action.COMMIT)
    infl = tl.transition_to_inflight(req, b'{"a": 1}')
    tl.complete(infl, CommitMetadata(operation_type="INSERT").to_bytes())
    names = sorted(p.name for p in Path(meta).iterdir())
    assert names == [f"{t}.commit", f"{t}.commit.requested", f"{t}.inflight"]
    assert Path(meta, f"{t}.commit.requested").read_bytes() == b""
    loaded = ActiveTimeline(LocalStorage(), meta)
    assert [(i.timestamp, i.action, i.state) for i in loaded] == [(t, "commit", State.COMPLETED)]
    assert CommitMetadata.from_json(loaded.read_details(loaded[0])).operation_type == "INSERT"


def test_illegal_transitions_are_refused(meta: str) -> None:
    tl = ActiveTimeline(LocalStorage(), meta)
    t = tl.new_instant_time()
    req = tl.create_requested(t, Action.DELTA_COMMIT)
    with pytest.raises(TimelineError, match="not INFLIGHT"):
        tl.complete(req, b"{}")  # requested -> completed skips inflight
    infl = tl.transition_to_inflight(req)
    with pytest.raises(TimelineError, match="only REQUESTED"):
        tl.transition_to_inflight(infl)
    done = tl.complete(infl, b"{}")
    with pytest.raises(TimelineError):
        tl.complete(done, b"{}")
    with pytest.raises(TimelineError, match="already exists"):
        tl.create_requested(t, Action.DELTA_COMMIT)


def test_a_second_writer_completing_the_same_instant_gets_a_conflict(meta: str) -> None:
    a = ActiveTimeline(LocalStorage(), meta)
    t = a.new_instant_time()
    inst = a.transition_to_inflight(a.create_requested(t, Action.COMMIT))
    b = ActiveTimeline(LocalStorage(), meta)
    b.complete(b.find(t), b"{}")  # type: ignore[arg-type]
    with pytest.raises(CommitConflictError):
        a.complete(inst, b"{}")


def test_load_ignores_unknown_files_and_dirs_and_dedupes_states(meta: str) -> None:
    m = Path(meta)
    for name in ["hoodie.properties", ".DS_Store", "20240101000000000.commit.crc", "garbage"]:
        (m / name).write_text("x")
    (m / ".temp").mkdir()
    (m / "archived").mkdir()
    for name in ["20240101000000000.commit.requested", "20240101000000000.inflight",
                 "20240101000000000.commit", "20240102000000000.deltacommit.requested",
                 "20240103000000000.compaction.requested", "20240103000000000.compaction.inflight",
                 "20240103000000000.commit", "20240104000000000.compaction.requested",
                 "20240105000000000.clean.requested", "20240105000000000.clean.inflight"]:  # fmt: skip
        (m / name).write_text("{}")
    tl = ActiveTimeline(LocalStorage(), meta)
    got = [(i.timestamp, i.action, i.state.name) for i in tl]
    assert got == [
        ("20240101000000000", "commit", "COMPLETED"),
        ("20240102000000000", "deltacommit", "REQUESTED"),
        ("20240103000000000", "compaction", "COMPLETED"),
        ("20240104000000000", "compaction", "REQUESTED"),
        ("20240105000000000", "clean", "INFLIGHT"),
    ]
    assert tl.completed_commits().timestamps() == ["20240101000000000", "20240103000000000"]
    assert tl.pending_compactions().timestamps() == ["20240104000000000"]
    assert tl.filter(actions=["clean"]).timestamps() == ["20240105000000000"]
    assert tl.filter(states=[State.REQUESTED]).timestamps() == ["20240102000000000", "20240104000000000"]
    assert tl.commits().timestamps() == [
        "20240101000000000",
        "20240102000000000",
        "20240103000000000",
        "20240104000000000",
    ]
    assert tl.completed_commits().contains_or_before_start("20231231000000000")
    assert not tl.completed_commits().contains_or_before_start("20240102000000000")


def test_revert_and_delete(meta: str) -> None:
    tl = ActiveTimeline(LocalStorage(), meta)
    t = tl.new_instant_time()
    infl = tl.transition_to_inflight(tl.create_requested(t, Action.COMPACTION, b"plan"))
    assert Path(meta, f"{t}.compaction.inflight").exists()
    req = tl.revert_to_requested(infl)
    assert req.state is State.REQUESTED and not Path(meta, f"{t}.compaction.inflight").exists()
    tl.delete_instant(req)
    assert list(Path(meta).iterdir()) == []


def test_corpus_timelines_and_commit_metadata_round_trip() -> None:
    root = corpus_root()
    assert root is not None
    seen = 0
    for meta in sorted(root.glob("tables/*/v6_*/.hoodie")):
        tl = ActiveTimeline(LocalStorage(), str(meta))
        summary = json.loads(
            (root / "expected" / meta.parent.parent.name / meta.parent.name / "summary.json").read_text()
        )
        expected = [(i["timestamp"], i["action"], i["state"]) for i in summary["timeline"]]
        assert [(i.timestamp, i.display_action, i.state.name) for i in tl] == expected
        for inst in tl.completed_commits():
            raw = json.loads(tl.read_details(inst))
            md = CommitMetadata.from_json(tl.read_details(inst))
            assert md.schema
            again = json.loads(md.to_json())
            assert again["operationType"] == raw["operationType"]
            assert again["partitionToWriteStats"] == raw["partitionToWriteStats"]
            assert again.get("partitionToReplaceFileIds") == raw.get("partitionToReplaceFileIds")
            seen += 1
    assert seen >= 10
