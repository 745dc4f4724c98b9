"""What completed instants' files say, remembered by the process (:class:`CompletedDetails`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
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
        self._size = size
        self._seen: OrderedDict[tuple[str, float], T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, timeline: ActiveTimeline, inst: Instant) -> T:
        mtime = timeline.state_transition_time(inst)
        key = (timeline.path_of(inst), mtime) if mtime is not None else None
        if key is not None:
            with self._lock:
                if key in self._seen:
                    self._seen.move_to_end(key)
                    return self._seen[key]
        data = _RECENT.get(key) if key is not None else None
        if data is None:
            data = timeline.read_details(inst)
            if key is not None:
                _RECENT.put(key, data)
        found = self._parse(data)
        if key is not None:
            with self._lock:
                self._seen[key] = found
                while len(self._seen) > self._size:
                    self._seen.popitem(last=False)
        return found
