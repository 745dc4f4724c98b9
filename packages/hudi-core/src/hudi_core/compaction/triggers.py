"""Compaction triggers (spec 9.3): is it time to schedule a compaction?

A trigger looks at the timeline only. "Since the last compaction" counts from the newest
compaction instant, completed or pending; on a table that never compacted, from (and including)
its first delta commit.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Protocol

from hudi_core.config.compaction import CompactionOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.timeline.instant import Action, instant_to_datetime
from hudi_core.timeline.timeline import Timeline

__all__ = [
    "CompactionTrigger",
    "DeltaCommitInfo",
    "NumAndTimeTrigger",
    "NumCommitsAfterLastRequestTrigger",
    "NumCommitsTrigger",
    "NumOrTimeTrigger",
    "TimeElapsedTrigger",
    "delta_commit_info",
]


@dataclass(frozen=True)
class DeltaCommitInfo:
    """Completed delta commits since ``since`` (the last compaction, or the first delta commit)."""

    count: int
    since: str | None


def _last_compaction(timeline: Timeline, *, requested_only: bool = False) -> str | None:
    # On a MOR table every completed `commit` is a compaction (or a COW-style write we treat alike).
    ts = [i.timestamp for i in timeline if i.action == Action.COMPACTION]
    if not requested_only:
        ts += [i.timestamp for i in timeline.completed() if i.comparable_action == Action.COMMIT]
    return max(ts) if ts else None


def delta_commit_info(timeline: Timeline, *, after_last_request: bool = False) -> DeltaCommitInfo:
    """How many completed delta commits came after the last compaction (and since when)."""
    deltas = timeline.filter(actions=[Action.DELTA_COMMIT]).completed()
    deltas_ts = [i.timestamp for i in deltas if i.action == Action.DELTA_COMMIT]
    last = _last_compaction(timeline, requested_only=after_last_request)
    if last is not None:
        return DeltaCommitInfo(sum(1 for t in deltas_ts if t > last), last)
    if not deltas_ts:
        return DeltaCommitInfo(0, None)
    return DeltaCommitInfo(len(deltas_ts), deltas_ts[0])


def _elapsed_seconds(since: str | None, now: _dt.datetime | None, *, utc: bool) -> float:
    if since is None:
        return 0.0
    start = instant_to_datetime(since, utc=utc)
    current = now or (_dt.datetime.now(_dt.timezone.utc) if utc else _dt.datetime.now())
    if utc and current.tzinfo is None:
        current = current.replace(tzinfo=_dt.timezone.utc)
    if not utc and current.tzinfo is not None:
        current = current.astimezone().replace(tzinfo=None)
    return (current - start).total_seconds()


class CompactionTrigger(Protocol):
    name: str

    def should_schedule(self, timeline: Timeline, *, now: _dt.datetime | None = None) -> bool:
        """True when a compaction should be scheduled now."""
        ...


class _Base:
    name = ""

    def __init__(self, config: HoodieConfig | None = None, *, utc: bool = False) -> None:
        cfg = config if config is not None else HoodieConfig()
        self.max_delta_commits: int = int(cfg.get(CompactionOptions.MAX_DELTA_COMMITS))
        self.max_delta_seconds: int = int(cfg.get(CompactionOptions.MAX_DELTA_SECONDS))
        self.utc = utc or str(cfg.get("hoodie.table.timeline.timezone", "LOCAL")).upper() == "UTC"

    def _num(self, timeline: Timeline) -> bool:
        return delta_commit_info(timeline).count >= self.max_delta_commits

    def _time(self, timeline: Timeline, now: _dt.datetime | None) -> bool:
        info = delta_commit_info(timeline)
        if info.since is None:
            return False
        return _elapsed_seconds(info.since, now, utc=self.utc) >= self.max_delta_seconds

    def __repr__(self) -> str:
        return f"{type(self).__name__}(commits={self.max_delta_commits}, seconds={self.max_delta_seconds})"


class NumCommitsTrigger(_Base):
    """``NUM_COMMITS``: at least ``hoodie.compact.inline.max.delta.commits`` delta commits."""

    name = "NUM_COMMITS"

    def should_schedule(self, timeline: Timeline, *, now: _dt.datetime | None = None) -> bool:
        return self._num(timeline)


class NumCommitsAfterLastRequestTrigger(_Base):
    """``NUM_COMMITS_AFTER_LAST_REQUEST``: counted from the last *requested* compaction."""

    name = "NUM_COMMITS_AFTER_LAST_REQUEST"

    def should_schedule(self, timeline: Timeline, *, now: _dt.datetime | None = None) -> bool:
        return delta_commit_info(timeline, after_last_request=True).count >= self.max_delta_commits


class TimeElapsedTrigger(_Base):
    """``TIME_ELAPSED``: ``hoodie.compact.inline.max.delta.seconds`` since the last compaction."""

    name = "TIME_ELAPSED"

    def should_schedule(self, timeline: Timeline, *, now: _dt.datetime | None = None) -> bool:
        return self._time(timeline, now)


class NumAndTimeTrigger(_Base):
    """``NUM_AND_TIME``: both the commit count and the elapsed time are reached."""

    name = "NUM_AND_TIME"

    def should_schedule(self, timeline: Timeline, *, now: _dt.datetime | None = None) -> bool:
        return self._num(timeline) and self._time(timeline, now)


class NumOrTimeTrigger(_Base):
    """``NUM_OR_TIME``: either the commit count or the elapsed time is reached."""

    name = "NUM_OR_TIME"

    def should_schedule(self, timeline: Timeline, *, now: _dt.datetime | None = None) -> bool:
        return self._num(timeline) or self._time(timeline, now)
