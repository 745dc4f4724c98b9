"""The timeline: instant times, actions and states, transitions, commit metadata."""

from __future__ import annotations

from hudi_core.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_core.timeline.instant import (
    QUERY_INSTANT_FORMATS,
    Action,
    Instant,
    InstantTimeGenerator,
    State,
    format_query_instant,
    format_range_instant,
    instant_to_datetime,
    new_instant_time,
    parse_instant_file_name,
)
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

__all__ = [
    "QUERY_INSTANT_FORMATS",
    "Action",
    "ActiveTimeline",
    "CommitMetadata",
    "Instant",
    "InstantTimeGenerator",
    "State",
    "Timeline",
    "WriteStat",
    "format_query_instant",
    "format_range_instant",
    "instant_to_datetime",
    "new_instant_time",
    "parse_instant_file_name",
]
