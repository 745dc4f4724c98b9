"""What completed instants' files say, remembered by the process (:class:`CompletedDetails`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from hudi_core.storage.kept import Kept
from hudi_core.timeline.instant import Instant
from hudi_core.timeline.timeline import ActiveTimeline

__all__ = ["CompletedDetails"]

T = TypeVar("T")


#: the bytes of the completed instants' files read last, by file and modification time, shared
#: by every :class:`CompletedDetails`: each parses a file its own way (the schema, the record
#: sizes, the partitions written), and the looks of one write would otherwise read the latest
#: commit's file once each
_RECENT: Kept[bytes] = Kept(16 * 1024 * 1024, len)


class CompletedDetails(Generic[T]):
    """``parse`` of completed instants' files, remembered by file and modification time (the
    timeline's listing gives both): a completed instant's file never changes, so a process that
    writes again and again (a stream's micro-batches, a service beside a writer) reads each file
    once for a given look instead of at every write, a GET request each on S3. An instant whose
    listing gave no modification time is read every time. At most ``size`` are kept, the least
    recently used dropped first."""

    def __init__(self, parse: Callable[[bytes], T], size: int = 4096) -> None:
        self._parse = parse
        # each value in a 1-tuple: a parse may give None (a commit without a schema)
        self._seen: Kept[tuple[T]] = Kept(size, lambda _: 1)

    def get(self, timeline: ActiveTimeline, inst: Instant) -> T:
        mtime = timeline.state_transition_time(inst)
        if mtime is None:
            return self._parse(timeline.read_details(inst))
        key = (timeline.path_of(inst), mtime)
        seen = self._seen.get(key)
        if seen is not None:
            return seen[0]
        data = _RECENT.get(key)
        if data is None:
            data = timeline.read_details(inst)
            _RECENT.put(key, data)
        found = self._parse(data)
        self._seen.put(key, (found,))
        return found
