"""Hollow commits: a write still requested or inflight while a later one has completed.

Writers run side by side (optimistic concurrency control) or one failed and is not rolled back
yet, so the timeline has a hole. An incremental query that reads past the hole would never see
the hollow commit's records once it completes: its instant time is before the query's end.
``hoodie.read.timeline.holes.resolution.policy`` says what a query does there, as in Apache
Hudi 0.14+ (``TimelineUtils.handleHollowCommitIfNeeded``): FAIL (a batch query's default)
raises, BLOCK (a streaming read's default) reads only the commits before the hole, and
USE_TRANSITION_TIME takes the range by the instants' completion times (the completed files'
modification times), in which a commit that completes late comes late.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

from hudi_core.config.property import HoodieConfig
from hudi_core.config.read import ReaderOptions
from hudi_core.errors import ConfigError, HudiError
from hudi_core.fs_view.view import clustering_file_groups
from hudi_core.timeline.instant import Action, Instant
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

__all__ = [
    "BLOCK",
    "FAIL",
    "USE_TRANSITION_TIME",
    "HollowCommitError",
    "blocked_at",
    "by_completion",
    "hollow_policy",
    "latest_completion",
    "transition_time",
]

FAIL, BLOCK, USE_TRANSITION_TIME = "FAIL", "BLOCK", "USE_TRANSITION_TIME"
_POLICIES = (FAIL, BLOCK, USE_TRANSITION_TIME)
#: the writes whose pending instant makes a hole (not a compaction's, not a clustering's)
_WRITES = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


class HollowCommitError(HudiError):
    """An incremental query would read past a write that has not completed."""


def hollow_policy(options: Mapping[str, Any], default: str = FAIL) -> str:
    """The policy ``options`` set (its value in any case), else ``default``."""
    value = HoodieConfig(options).raw(ReaderOptions.HOLLOW_COMMITS)
    if value is None:
        return default
    text = str(value).strip().upper()
    if text not in _POLICIES:
        raise ConfigError(
            f"{ReaderOptions.HOLLOW_COMMITS.key}={value!r} is not one of {', '.join(_POLICIES)}"
        )
    return text


def first_hollow(timeline: Timeline, later: Timeline) -> Instant | None:
    """The oldest write still pending (a commit, delta commit or replacecommit other than a
    clustering's) when ``later`` holds an instant after it; None without one."""
    for inst in timeline.pending():
        if inst.action not in _WRITES:
            continue
        if inst.action == Action.REPLACE_COMMIT and clustering_file_groups(timeline, inst):
            continue
        return inst if len(later.after(inst.timestamp)) else None
    return None


def blocked_at(timeline: Timeline, later: Timeline, policy: str) -> str | None:
    """The instant time a query under ``policy`` must stay before: a hollow commit's under
    BLOCK; None where it reads on (no hole, or USE_TRANSITION_TIME). FAIL raises at a hole.
    ``later`` holds the instants that make a pending write hollow when one is after it."""
    if policy == USE_TRANSITION_TIME:
        return None
    hole = first_hollow(timeline, later)
    if hole is None:
        return None
    if policy == FAIL:
        raise HollowCommitError(
            f"Found hollow commit: '{hole.timestamp}' ({hole.action}, {hole.state.name.lower()}, "
            f"before a completed commit). An incremental query past it would miss its records "
            f"once it completes; set {ReaderOptions.HOLLOW_COMMITS.key} to BLOCK (read up to it) "
            f"or USE_TRANSITION_TIME (ranges by completion time)"
        )
    return hole.timestamp


def by_completion(timeline: Timeline, completed: Timeline, start: str, end: str | None) -> Timeline:
    """The instants of ``completed`` that completed in ``(start, end]`` (USE_TRANSITION_TIME);
    ``end`` defaults to the completion of the newest instant (by instant time), as Hudi's."""
    times = {i.timestamp: transition_time(timeline, i) for i in completed}
    last = completed.last()
    end = end if end is not None else (times[last.timestamp] if last is not None else None)
    if end is None:
        return Timeline([])
    return Timeline(i for i in completed if (t := times[i.timestamp]) is not None and start < t <= end)


def latest_completion(timeline: Timeline, instants: Timeline) -> str | None:
    """The latest completion time of ``instants`` (:func:`transition_time`), None without one."""
    return max((t for i in instants if (t := transition_time(timeline, i)) is not None), default=None)


def transition_time(timeline: Timeline, inst: Instant) -> str | None:
    """When ``inst`` reached its state, as an instant time: its file's modification time in the
    timeline's zone, as Hudi's ``HoodieInstant.getStateTransitionTime``; None where the listing
    gave no time."""
    if not isinstance(timeline, ActiveTimeline):
        return None
    mtime = timeline.state_transition_time(inst)
    if mtime is None:
        return None
    millis = round(mtime * 1_000_000) // 1000  # through micros: a float of whole ms stays whole
    zone = _dt.timezone.utc if timeline.utc else None
    when = _dt.datetime.fromtimestamp(millis // 1000, zone)
    return when.strftime("%Y%m%d%H%M%S") + f"{millis % 1000:03d}"
