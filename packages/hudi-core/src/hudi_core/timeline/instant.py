"""Instants: time, action and state, and their file names in ``.hoodie/`` (spec section 3)."""

from __future__ import annotations

import datetime as _dt
import enum
import re
import threading
import time
from dataclasses import dataclass

from hudi_core.errors import ConfigError, TimelineError

__all__ = [
    "QUERY_INSTANT_FORMATS",
    "Action",
    "Instant",
    "InstantTimeGenerator",
    "State",
    "format_query_instant",
    "format_range_instant",
    "new_instant_time",
    "parse_instant_file_name",
]


class State(enum.IntEnum):
    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


class Action:
    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    RESTORE = "restore"
    SAVEPOINT = "savepoint"
    INDEXING = "indexing"

    ALL = (
        COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION,
        CLEAN, ROLLBACK, RESTORE, SAVEPOINT, INDEXING,
    )  # fmt: skip
    #: actions whose completed instants make data visible
    WRITES = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION)


# Compaction completes as a commit, log compaction as a deltacommit (same instant time).
_COMPLETED_AS = {Action.COMPACTION: Action.COMMIT, Action.LOG_COMPACTION: Action.DELTA_COMMIT}
_NO_REQUESTED = {Action.SAVEPOINT}

_FILE_RE = re.compile(r"^(\d+)(\.\w+)(\.\D+)?$")
_INSTANT_RE = re.compile(r"^\d{14}(\d{3})?$")


@dataclass(frozen=True, order=False)
class Instant:
    """One instant on the timeline. Ordered by time, then comparable action, then state."""

    timestamp: str
    action: str
    state: State

    def __post_init__(self) -> None:
        if not _INSTANT_RE.match(self.timestamp):
            raise TimelineError(f"bad instant time {self.timestamp!r}: want yyyyMMddHHmmssSSS")
        if self.action not in Action.ALL:
            raise TimelineError(f"unknown action {self.action!r}; known: {', '.join(Action.ALL)}")

    @property
    def comparable_action(self) -> str:
        return _COMPLETED_AS.get(self.action, self.action)

    def sort_key(self) -> tuple[str, str, int]:
        return (self.timestamp, self.comparable_action, int(self.state))

    def __lt__(self, other: Instant) -> bool:
        return self.sort_key() < other.sort_key()

    @property
    def display_action(self) -> str:
        """The action as Hudi's tools show it: a completed compaction is a ``commit``."""
        return self.comparable_action if self.is_completed else self.action

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_requested(self) -> bool:
        return self.state is State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        return self.state is State.INFLIGHT

    def with_state(self, state: State) -> Instant:
        return Instant(self.timestamp, self.action, state)

    @property
    def file_name(self) -> str:
        """The ``.hoodie/`` file name of this instant in this state (layout version 1)."""
        t, a = self.timestamp, self.action
        if self.state is State.COMPLETED:
            return f"{t}.{_COMPLETED_AS.get(a, a)}"
        if self.state is State.INFLIGHT:
            return f"{t}.inflight" if a == Action.COMMIT else f"{t}.{a}.inflight"
        if a in _NO_REQUESTED:
            raise TimelineError(f"{a} instants have no requested state")
        return f"{t}.{a}.requested"

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.name}]"


def parse_instant_file_name(name: str) -> Instant | None:
    """The instant a ``.hoodie/`` file stands for, or None for any other file.

    A completed ``commit`` file may be the result of a compaction; the timeline resolves that
    by grouping on (time, comparable action), see :class:`~hudi_core.timeline.Timeline`.
    """
    m = _FILE_RE.match(name)
    if not m:
        return None
    ts, ext, state_ext = m.group(1), m.group(2)[1:], m.group(3)
    if not _INSTANT_RE.match(ts):
        return None
    if ext == "inflight" and state_ext is None:
        return Instant(ts, Action.COMMIT, State.INFLIGHT)
    if ext not in Action.ALL:
        return None
    if state_ext is None:
        state = State.COMPLETED
    elif state_ext == ".requested":
        state = State.REQUESTED
    elif state_ext == ".inflight":
        state = State.INFLIGHT
    else:
        return None
    if state is State.COMPLETED and ext in _COMPLETED_AS:
        return None  # no such file name: compactions complete as commit/deltacommit
    return Instant(ts, ext, state)


class InstantTimeGenerator:
    """Strictly increasing ``yyyyMMddHHmmssSSS`` times, in UTC or local time.

    Two calls in one millisecond wait for the next one, as Java does; a time is also kept
    greater than a floor (the newest instant already on the timeline).
    """

    def __init__(self, *, utc: bool = False) -> None:
        self.utc = utc
        self._last = ""
        self._lock = threading.Lock()

    def _format(self, now: float) -> str:
        dt = (
            _dt.datetime.fromtimestamp(now, _dt.timezone.utc) if self.utc else _dt.datetime.fromtimestamp(now)
        )
        return dt.strftime("%Y%m%d%H%M%S") + f"{dt.microsecond // 1000:03d}"

    def next(self, floor: str = "") -> str:
        with self._lock:
            bound = max(self._last, floor)
            t = self._format(time.time())
            if t <= bound:
                # Same millisecond as the last one (or a floor ahead of the clock): the next
                # millisecond after the bound keeps times unique and increasing without waiting.
                t = _plus_one_ms(bound)
            self._last = t
            return t


def _plus_one_ms(ts: str) -> str:
    dt = instant_to_datetime(ts) + _dt.timedelta(milliseconds=1)
    return dt.strftime("%Y%m%d%H%M%S") + f"{dt.microsecond // 1000:03d}"


_GENERATORS = {True: InstantTimeGenerator(utc=True), False: InstantTimeGenerator(utc=False)}


def new_instant_time(floor: str = "", *, utc: bool = False) -> str:
    """A new instant time greater than ``floor`` and than any made before in this process."""
    return _GENERATORS[utc].next(floor)


def instant_to_datetime(ts: str, *, utc: bool = False) -> _dt.datetime:
    """Parse an instant time (14 or 17 digits); 14-digit legacy times get 999 ms like Java."""
    if len(ts) == 14:
        ts = ts + "999"
    dt = _dt.datetime.strptime(ts[:14], "%Y%m%d%H%M%S").replace(microsecond=int(ts[14:17]) * 1000)
    return dt.replace(tzinfo=_dt.timezone.utc) if utc else dt


#: the forms a time-travel instant may take (Hudi's ``HoodieSqlCommonUtils.formatQueryInstant``)
QUERY_INSTANT_FORMATS = "yyyyMMddHHmmssSSS, yyyyMMddHHmmss, 'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'"

_DIGITS_RE = re.compile(r"^[0-9]{14}(?:[0-9]{3})?$")
_DATE_TIME_RE = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})(?: ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{3}))?)?$"
)
_RANGE_DIGITS_RE = re.compile(r"^[0-9]{1,17}$")


def format_query_instant(value: str, *, option: str = "as_of") -> str:
    """A time-travel instant as 17 digits, from the forms Hudi accepts (anything else raises
    :class:`ConfigError` naming ``option``)::

        20240418172802262        -> 20240418172802262
        20240418172802           -> 20240418172802000
        2024-04-18 17:28:02.262  -> 20240418172802262
        2024-04-18 17:28:02      -> 20240418172802999  (the whole second, as Hudi pads it)
        2024-04-18               -> 20240418000000000
    """
    text = str(value).strip()
    if _DIGITS_RE.match(text):
        parts = [text[0:4], text[4:6], text[6:8], text[8:10], text[10:12], text[12:14], text[14:] or "000"]
    elif m := _DATE_TIME_RE.match(text):
        y, mo, d, h, mi, s, ms = m.groups()
        if h is None:
            h, mi, s, ms = "00", "00", "00", "000"
        # Hudi completes "yyyy-MM-dd HH:mm:ss" with 999 ms: the whole second is included
        parts = [y, mo, d, h, mi, s, ms or "999"]
    else:
        raise ConfigError(f"{option}={value!r} is not an instant time; use {QUERY_INSTANT_FORMATS}")
    year, month, day, hour, minute, second = (int(p) for p in parts[:6])
    try:
        _dt.datetime(year, month, day, hour, minute, second)
    except ValueError as e:
        raise ConfigError(
            f"{option}={value!r} is not an instant time ({e}); use {QUERY_INSTANT_FORMATS}"
        ) from None
    return "".join(parts)


def format_range_instant(value: str, *, option: str) -> str:
    """The begin or end of an incremental range. Hudi compares these with instant times as
    strings, so any run of up to 17 digits is kept as given (``000``: from the beginning); the
    date forms of :func:`format_query_instant` are converted to 17 digits."""
    text = str(value).strip()
    if _RANGE_DIGITS_RE.match(text):
        return text
    if "-" in text:
        return format_query_instant(text, option=option)
    raise ConfigError(
        f"{option}={value!r} is not an instant time; use up to 17 digits of yyyyMMddHHmmssSSS "
        f"(000 for the beginning) or 'yyyy-MM-dd[ HH:mm:ss[.SSS]]'"
    )
