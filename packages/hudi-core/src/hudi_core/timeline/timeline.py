"""The active timeline: instants loaded from ``.hoodie/`` and the write-once state transitions."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence

from hudi_core.errors import CommitConflictError, TimelineError
from hudi_core.storage.base import Storage
from hudi_core.timeline.instant import Action, Instant, State, new_instant_time, parse_instant_file_name

__all__ = ["ActiveTimeline", "Timeline"]


class Timeline(Sequence[Instant]):
    """An ordered, immutable set of instants with the filters readers and writers need."""

    def __init__(self, instants: Iterable[Instant]) -> None:
        self._instants: list[Instant] = sorted(instants, key=Instant.sort_key)

    # Sequence protocol
    def __getitem__(self, i):  # type: ignore[no-untyped-def,override]
        return self._instants[i]

    def __len__(self) -> int:
        return len(self._instants)

    def __iter__(self) -> Iterator[Instant]:
        return iter(self._instants)

    def __repr__(self) -> str:
        return f"Timeline({', '.join(map(str, self._instants))})"

    # filters
    def filter(
        self, *, actions: Iterable[str] | None = None, states: Iterable[State] | None = None
    ) -> Timeline:
        acts = set(actions) if actions is not None else None
        sts = set(states) if states is not None else None
        return Timeline(
            i
            for i in self._instants
            if (acts is None or i.action in acts or i.comparable_action in acts)
            and (sts is None or i.state in sts)
        )

    def completed(self) -> Timeline:
        return self.filter(states=[State.COMPLETED])

    def pending(self) -> Timeline:
        return self.filter(states=[State.REQUESTED, State.INFLIGHT])

    def commits(self) -> Timeline:
        """commit, deltacommit, replacecommit and (log) compaction instants."""
        return self.filter(actions=Action.WRITES)

    def completed_commits(self) -> Timeline:
        return self.commits().completed()

    def pending_compactions(self) -> Timeline:
        return Timeline(i for i in self._instants if i.action == Action.COMPACTION and not i.is_completed)

    def timestamps(self) -> list[str]:
        return [i.timestamp for i in self._instants]

    def first(self) -> Instant | None:
        return self._instants[0] if self._instants else None

    def last(self) -> Instant | None:
        return self._instants[-1] if self._instants else None

    def find(self, timestamp: str) -> Instant | None:
        for i in self._instants:
            if i.timestamp == timestamp:
                return i
        return None

    def contains(self, timestamp: str) -> bool:
        return self.find(timestamp) is not None

    def before(self, timestamp: str) -> Timeline:
        return Timeline(i for i in self._instants if i.timestamp < timestamp)

    def before_or_on(self, timestamp: str) -> Timeline:
        return Timeline(i for i in self._instants if i.timestamp <= timestamp)

    def after(self, timestamp: str) -> Timeline:
        return Timeline(i for i in self._instants if i.timestamp > timestamp)

    def between(self, start: str, end: str) -> Timeline:
        """Instants in ``(start, end]``."""
        return Timeline(i for i in self._instants if start < i.timestamp <= end)

    def is_before_start(self, timestamp: str) -> bool:
        first = self.first()
        return first is not None and timestamp < first.timestamp

    def contains_or_before_start(self, timestamp: str) -> bool:
        """Committed here, or older than the first instant (and so archived, hence committed)."""
        ts = self.timestamps()
        k = bisect.bisect_left(ts, timestamp)
        return (k < len(ts) and ts[k] == timestamp) or self.is_before_start(timestamp)


class ActiveTimeline(Timeline):
    """The timeline of one table, loaded from its ``.hoodie/`` folder.

    Layout version 1: every transition writes a new file (requested, inflight, completed) and
    the completed file, created last and exclusively, is what makes an instant complete.
    """

    def __init__(self, storage: Storage, meta_path: str, *, utc: bool = False) -> None:
        self.storage = storage
        self.meta_path = meta_path.rstrip("/")
        self.utc = utc
        super().__init__(self._load())

    def _load(self) -> list[Instant]:
        groups: dict[tuple[str, str], list[Instant]] = {}
        self._mtimes: dict[str, float | None] = {}
        for info in self.storage.list(self.meta_path):
            if info.is_dir:
                continue
            inst = parse_instant_file_name(info.name)
            if inst is None:
                continue
            self._mtimes[info.name] = info.mtime
            groups.setdefault((inst.timestamp, inst.comparable_action), []).append(inst)
        out = []
        for (ts, _), insts in groups.items():
            # Layout 1 keeps every state's file; the highest state wins. A compaction keeps its
            # identity once it completes as a commit (and a log compaction as a deltacommit).
            state = max(i.state for i in insts)
            special = [i.action for i in insts if i.action in (Action.COMPACTION, Action.LOG_COMPACTION)]
            out.append(Instant(ts, special[0] if special else insts[0].action, state))
        return out

    def reload(self) -> ActiveTimeline:
        return ActiveTimeline(self.storage, self.meta_path, utc=self.utc)

    # -- file access -----------------------------------------------------------------------------

    def path_of(self, instant: Instant) -> str:
        return f"{self.meta_path}/{instant.file_name}"

    def read_details(self, instant: Instant) -> bytes:
        """The content of the instant's file in its current state."""
        return self.storage.read_bytes(self.path_of(instant))

    def state_transition_time(self, instant: Instant) -> float | None:
        return self._mtimes.get(instant.file_name)

    # -- transitions -----------------------------------------------------------------------------

    def new_instant_time(self) -> str:
        """A new instant time greater than every instant on this timeline."""
        last = self.last()
        return new_instant_time(last.timestamp if last else "", utc=self.utc)

    def _create(self, instant: Instant, content: bytes) -> Instant:
        if not self.storage.create_if_absent(self.path_of(instant), content):
            raise CommitConflictError(
                f"{instant.file_name} already exists in {self.meta_path}: another writer got there first"
            )
        self._instants = sorted(
            [i for i in self._instants if not _same(i, instant)] + [instant], key=Instant.sort_key
        )
        return instant

    def create_requested(self, timestamp: str, action: str, content: bytes = b"") -> Instant:
        """Start an instant. Refused if an instant with that time and action already exists."""
        instant = Instant(timestamp, action, State.REQUESTED)
        if any(_same(i, instant) for i in self._instants):
            raise TimelineError(f"instant {timestamp} ({action}) already exists")
        return self._create(instant, content)

    def transition_to_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        """REQUESTED -> INFLIGHT (a savepoint starts inflight)."""
        current = self.current(instant)
        if current is None and instant.action != Action.SAVEPOINT:
            raise TimelineError(f"cannot move {instant} to INFLIGHT: it is not on the timeline")
        if current is not None and current.state is not State.REQUESTED:
            raise TimelineError(
                f"cannot move {current} to INFLIGHT: only REQUESTED instants can become INFLIGHT"
            )
        return self._create(instant.with_state(State.INFLIGHT), content)

    def complete(self, instant: Instant, content: bytes) -> Instant:
        """INFLIGHT -> COMPLETED: writes the completed file last, exclusively."""
        current = self.current(instant)
        if current is None or current.state is not State.INFLIGHT:
            state = current.state.name if current else "absent"
            raise TimelineError(
                f"cannot complete {instant.timestamp} ({instant.action}): it is {state}, not INFLIGHT"
            )
        return self._create(instant.with_state(State.COMPLETED), content)

    def revert_to_requested(self, instant: Instant) -> Instant:
        """INFLIGHT -> REQUESTED by deleting the inflight file (a compaction to be retried)."""
        current = self.current(instant)
        if current is None or current.state is not State.INFLIGHT:
            raise TimelineError(f"cannot revert {instant}: it is not INFLIGHT")
        self.storage.delete(self.path_of(current))
        reverted = current.with_state(State.REQUESTED)
        self._instants = sorted(
            [i for i in self._instants if not _same(i, current)] + [reverted], key=Instant.sort_key
        )
        return reverted

    def delete_instant(self, instant: Instant) -> None:
        """Remove every file of an instant (completed file first, so it never looks complete
        with its earlier states gone)."""
        for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
            if state is State.REQUESTED and instant.action in (Action.SAVEPOINT,):
                continue
            self.storage.delete(self.path_of(instant.with_state(state)))
        self._instants = [i for i in self._instants if not _same(i, instant)]

    def current(self, instant: Instant) -> Instant | None:
        """``instant`` in its state on this timeline (same time and action; another action of the
        same time, which two writers picking times apart can make, is another instant), or None."""
        for i in self._instants:
            if _same(i, instant):
                return i
        return None


def _same(a: Instant, b: Instant) -> bool:
    return a.timestamp == b.timestamp and a.comparable_action == b.comparable_action
