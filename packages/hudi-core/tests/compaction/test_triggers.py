from __future__ import annotations

import datetime as dt

import pytest
from hudi_core.compaction.scheduler import trigger_for
from hudi_core.compaction.triggers import (
    NumAndTimeTrigger,
    NumCommitsAfterLastRequestTrigger,
    NumCommitsTrigger,
    NumOrTimeTrigger,
    TimeElapsedTrigger,
    delta_commit_info,
)
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import UnknownComponentError
from hudi_core.timeline import Instant, State, Timeline

C, INF, R = State.COMPLETED, State.INFLIGHT, State.REQUESTED


def tl(*items: tuple[str, str, State]) -> Timeline:
    return Timeline(Instant(ts, action, st) for ts, action, st in items)


def deltas(n: int, start: int = 1, state: State = C) -> list[tuple[str, str, State]]:
    return [(f"2024010100{start + i:02d}00000", "deltacommit", state) for i in range(n)]


def test_num_commits_counts_from_first_delta_commit_when_never_compacted() -> None:
    trig = NumCommitsTrigger(HoodieConfig({"hoodie.compact.inline.max.delta.commits": "3"}))
    assert not trig.should_schedule(tl(*deltas(2)))
    assert trig.should_schedule(tl(*deltas(3)))


def test_num_commits_counts_after_last_completed_or_pending_compaction() -> None:
    trig = NumCommitsTrigger(HoodieConfig({"hoodie.compact.inline.max.delta.commits": "2"}))
    done = tl(*deltas(3), ("20240101000350000", "compaction", C), *deltas(1, start=4))
    assert delta_commit_info(done).count == 1 and delta_commit_info(done).since == "20240101000350000"
    assert not trig.should_schedule(done)
    pending = tl(*deltas(3), ("20240101000350000", "compaction", R), *deltas(2, start=4))
    assert trig.should_schedule(pending)
    # inflight delta commits are not counted
    assert not trig.should_schedule(
        tl(
            *deltas(3),
            ("20240101000350000", "compaction", R),
            *deltas(1, start=4),
            *deltas(1, start=5, state=INF),
        )
    )


def test_num_commits_default_is_five() -> None:
    trig = NumCommitsTrigger(HoodieConfig())
    assert not trig.should_schedule(tl(*deltas(4)))
    assert trig.should_schedule(tl(*deltas(5)))


def test_after_last_request_ignores_completed_plain_commits() -> None:
    cfg = HoodieConfig({"hoodie.compact.inline.max.delta.commits": "2"})
    timeline = tl(*deltas(2), ("20240101000250000", "commit", C), *deltas(1, start=3))
    assert not NumCommitsTrigger(cfg).should_schedule(timeline)
    assert NumCommitsAfterLastRequestTrigger(cfg).should_schedule(timeline)


def test_time_elapsed_and_combinations() -> None:
    cfg = HoodieConfig(
        {"hoodie.compact.inline.max.delta.seconds": "600", "hoodie.compact.inline.max.delta.commits": "3"}
    )
    timeline = tl(*deltas(2))  # first delta commit 2024-01-01 00:01:00
    early = dt.datetime(2024, 1, 1, 0, 5)
    late = dt.datetime(2024, 1, 1, 0, 20)
    assert not TimeElapsedTrigger(cfg).should_schedule(timeline, now=early)
    assert TimeElapsedTrigger(cfg).should_schedule(timeline, now=late)
    assert not NumAndTimeTrigger(cfg).should_schedule(timeline, now=late)  # only 2 commits
    assert NumAndTimeTrigger(cfg).should_schedule(tl(*deltas(3)), now=late)
    assert NumOrTimeTrigger(cfg).should_schedule(timeline, now=late)
    assert not NumOrTimeTrigger(cfg).should_schedule(timeline, now=early)
    assert NumOrTimeTrigger(cfg).should_schedule(tl(*deltas(3)), now=early)


def test_time_elapsed_on_empty_timeline_never_fires() -> None:
    assert not TimeElapsedTrigger(HoodieConfig()).should_schedule(tl(), now=dt.datetime(2030, 1, 1))


@pytest.mark.parametrize(
    "name,cls",
    [
        ("NUM_COMMITS", NumCommitsTrigger),
        ("time_elapsed", TimeElapsedTrigger),
        ("NUM_AND_TIME", NumAndTimeTrigger),
        ("NUM_OR_TIME", NumOrTimeTrigger),
    ],
)
def test_trigger_selected_by_option(name: str, cls: type) -> None:
    trig = trigger_for(HoodieConfig({"hoodie.compact.inline.trigger.strategy": name}))
    assert isinstance(trig, cls)


def test_unknown_trigger_lists_installed_names() -> None:
    with pytest.raises(UnknownComponentError, match="NUM_OR_TIME"):
        trigger_for(HoodieConfig({"hoodie.compact.inline.trigger.strategy": "SOMETIMES"}))
