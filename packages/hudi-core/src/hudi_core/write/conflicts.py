"""Conflict detection at commit under optimistic concurrency control (Hudi's
``SimpleConcurrentFileWritesConflictResolutionStrategy``, plus a key check Hudi lacks).

The candidates are the instants this write could not see when it started: write instants that
completed since (whatever their timestamps: a long write that started earlier and finished
later counts), and compaction or clustering plans scheduled since. A candidate conflicts when
it touched a file group this write touched (with the BUCKET index: the same bucket of a
partition, since two writers would otherwise open two file groups for one bucket). Hudi stops
there, so two writers inserting the same new key into different new file groups both succeed
and the key is duplicated; here the inserted keys are compared too (read from the candidate's
written files, only when a candidate wrote to a partition this write inserted into).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.errors import WriteConflictError
from hudi_core.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_core.timeline.instant import Action, Instant, State
from hudi_core.timeline.timeline import ActiveTimeline

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["TimelineSnapshot", "check_conflicts"]

_RECORD_KEY = "_hoodie_record_key"
FileGroup = tuple[str, str]  # (partition path, file id)


@dataclass(frozen=True)
class TimelineSnapshot:
    """What a write saw when its instant started: timestamps of completed and pending instants."""

    completed: frozenset[str]
    pending: frozenset[str]

    @classmethod
    def of(cls, timeline: ActiveTimeline) -> TimelineSnapshot:
        return cls(
            frozenset(i.timestamp for i in timeline if i.is_completed),
            frozenset(i.timestamp for i in timeline if not i.is_completed),
        )


def check_conflicts(
    table: MetaClient,
    timeline: ActiveTimeline,
    instant: str,
    started: TimelineSnapshot,
    stats: Sequence[WriteStat],
    replaced: Mapping[str, Sequence[str]] | None = None,
    *,
    bucket_index: bool = False,
    global_keys: bool = False,
) -> None:
    """Raise :class:`WriteConflictError` when a candidate instant conflicts with this write's
    ``stats`` (and ``replaced`` file groups); ``timeline`` is freshly loaded under the lock."""
    ours = {(s.partition_path or "", s.file_id) for s in stats if s.file_id}
    ours |= {(p, f) for p, ids in (replaced or {}).items() for f in ids}
    inserted_parts = {s.partition_path or "" for s in stats if s.num_inserts > 0}
    for cand in timeline:
        if cand.timestamp == instant or cand.timestamp in started.completed:
            continue
        if cand.is_completed and cand.action in Action.WRITES:
            if (
                cand.action in (Action.COMPACTION, Action.LOG_COMPACTION)
                and cand.timestamp in started.pending
            ):
                continue  # a compaction this write already knew of writes the slices it left alone
            meta = _metadata(timeline, cand)
            theirs = meta.file_ids() | {
                (p, f) for p, ids in (meta.partition_to_replace_file_ids or {}).items() for f in ids
            }
            _raise_on_overlap(instant, cand, ours, theirs, bucket_index)
            if inserted_parts and not bucket_index:
                _check_inserted_keys(table, instant, cand, stats, meta.all_write_stats(), global_keys)
        elif not cand.is_completed and cand.timestamp not in started.pending:
            planned = _planned_file_groups(timeline, cand)
            if planned:
                _raise_on_overlap(instant, cand, ours, planned, bucket_index)


def _metadata(timeline: ActiveTimeline, inst: Instant) -> CommitMetadata:
    try:
        return CommitMetadata.from_json(timeline.read_details(inst))
    except FileNotFoundError:  # archived or rolled back meanwhile: nothing to compare
        return CommitMetadata()


def _planned_file_groups(timeline: ActiveTimeline, inst: Instant) -> set[FileGroup]:
    """File groups of a compaction or clustering plan scheduled while this write ran."""
    from hudi_core.fs_view.view import _compaction_operations, clustering_file_groups

    if inst.action == Action.REPLACE_COMMIT:
        return clustering_file_groups(timeline, inst)
    if inst.action not in (Action.COMPACTION, Action.LOG_COMPACTION):
        return set()
    try:
        raw = timeline.read_details(inst.with_state(State.REQUESTED))
    except FileNotFoundError:
        return set()
    if not raw:
        return set()
    return {(op.partition_path, op.file_id) for op in _compaction_operations(timeline, inst)}


def _bucket(fg: FileGroup) -> FileGroup:
    """A BUCKET index file id starts with the bucket number (8 digits)."""
    return (fg[0], fg[1][:8])


def _raise_on_overlap(
    instant: str, cand: Instant, ours: set[FileGroup], theirs: Iterable[FileGroup], bucket_index: bool
) -> None:
    if bucket_index:
        mine = {_bucket(fg) for fg in ours}
        both = sorted(fg for fg in theirs if _bucket(fg) in mine)
    else:
        both = sorted(set(theirs) & ours)
    if both:
        shown = ", ".join(f"{p or '<root>'}/{f}" for p, f in both[:3]) + (" ..." if len(both) > 3 else "")
        raise WriteConflictError(
            f"write {instant} conflicts with {_describe(cand)}, which touched the same file "
            f"group{'s' if len(both) > 1 else ''} ({shown}) while this write ran; it was rolled "
            "back and nothing of it is visible: retry it"
        )


def _describe(cand: Instant) -> str:
    state = "completed" if cand.is_completed else "scheduled"
    return f"{cand.action} {cand.timestamp} ({state} by another writer)"


def _check_inserted_keys(
    table: MetaClient,
    instant: str,
    cand: Instant,
    ours: Sequence[WriteStat],
    theirs: Sequence[WriteStat],
    global_keys: bool,
) -> None:
    """Two concurrent writes inserting one key into different file groups would leave it twice."""
    parts = {s.partition_path or "" for s in ours if s.num_inserts > 0}
    their_files = [
        s for s in theirs
        if s.num_inserts > 0 and s.path and (global_keys or (s.partition_path or "") in parts)
    ]  # fmt: skip
    if not their_files:
        return
    their_keys = _keys_of(table, their_files, cand.timestamp)
    mine = _keys_of(table, [s for s in ours if s.num_inserts > 0 and s.path], instant)
    both = pc.is_in(mine, value_set=their_keys) if len(mine) and len(their_keys) else None
    if both is not None and pc.any(both).as_py():
        shown = pc.filter(mine, both).slice(0, 3).to_pylist()
        raise WriteConflictError(
            f"write {instant} conflicts with {_describe(cand)}: both inserted the key"
            f"{'s' if len(shown) > 1 else ''} {', '.join(map(repr, shown))} while this write ran; "
            "it was rolled back and nothing of it is visible: retry it"
        )


def _keys_of(table: MetaClient, stats: Sequence[WriteStat], instant: str) -> pa.Array:
    """Record keys of the files ``stats`` name (log files: the blocks ``instant`` wrote)."""
    from hudi_core.io.base_file import read_base_file
    from hudi_core.log.reader import read_log_file
    from hudi_core.table.file_names import LogFileName

    chunks: list[pa.Array] = []
    for s in stats:
        path = f"{table.base_uri}/{s.path}"
        if LogFileName.parse(str(s.path).rsplit("/", 1)[-1]) is not None:
            for block in read_log_file(table.storage, path):
                if block.is_data and block.instant_time == instant:
                    chunks.extend(block.records().column(_RECORD_KEY).chunks)
        else:
            chunks.extend(
                read_base_file(table.storage, path, columns=[_RECORD_KEY]).column(_RECORD_KEY).chunks
            )
    return pa.chunked_array(chunks, pa.string()).combine_chunks() if chunks else pa.array([], pa.string())
