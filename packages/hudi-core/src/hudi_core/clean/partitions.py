"""Which partitions a commit- or hour-based clean looks at (spec 11.1; Hudi's incremental
cleaner, ``hoodie.cleaner.incremental.mode``).

A partition can only hold something to clean when a commit wrote to it between the earliest
commit the last clean retained and the one this clean retains: every older slice was already
weighed by that clean, and newer ones are all retained. So the plan reads the metadata of those
few commits instead of listing every partition. All partitions are listed, as Hudi does, when
there is no completed clean, it recorded no earliest commit to retain, or that commit is older
than the active timeline (archived: its successors' metadata is gone with it).
"""

from __future__ import annotations

from hudi_core.clean.metadata import CleanMetadata
from hudi_core.fs_view.view import FileSystemView
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.completed import CompletedDetails
from hudi_core.timeline.instant import Action, Instant
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

__all__ = ["partitions_to_clean", "previous_earliest_retained"]


def partitions_to_clean(view: FileSystemView, ectr: Instant | None, *, incremental: bool) -> list[str]:
    """Partitions to plan for a clean retaining ``ectr`` (None: nothing is due, none)."""
    if ectr is None:
        return []
    tl = view.timeline
    # (a timeline without storage cannot read the last clean's metadata: plan in full)
    if incremental and isinstance(tl, ActiveTimeline):
        since = previous_earliest_retained(tl)
        if since is not None:
            return _written_between(tl, since, ectr.timestamp)
    return view.partitions()


def previous_earliest_retained(timeline: ActiveTimeline) -> str | None:
    """The earliest commit the latest completed clean retained, when incremental planning can
    start from it (see the module docstring); None means "list every partition"."""
    last = timeline.filter(actions=[Action.CLEAN]).completed().last()
    if last is None:
        return None
    raw = timeline.read_details(last)
    if not raw:
        return None  # an empty clean file (Hudi deletes it and plans in full)
    ectr = CleanMetadata.from_bytes(raw, what=timeline.path_of(last)).earliest_commit_to_retain
    if not ectr or ectr < (_first_commit(timeline) or ""):
        return None
    return ectr


def _first_commit(timeline: Timeline) -> str | None:
    """First write instant that is not a savepoint's (Hudi's ``getFirstNonSavepointCommit``)."""
    saved = {i.timestamp for i in timeline if i.action == Action.SAVEPOINT}
    return next((i.timestamp for i in timeline.commits() if i.timestamp not in saved), None)


def _written_between(timeline: ActiveTimeline, start: str, end: str) -> list[str]:
    """Partitions written or replaced by completed commits in ``[start, end)``."""
    out: set[str] = set()
    for inst in timeline.completed_commits():
        if start <= inst.timestamp < end:
            out.update(_WRITTEN.get(timeline, inst))
    return sorted(out)


def _partitions_written(raw: bytes) -> frozenset[str]:
    meta = CommitMetadata.from_json(raw)
    return frozenset(meta.partition_to_write_stats) | frozenset(meta.partition_to_replace_file_ids or ())


#: the partitions each completed commit wrote or replaced: between two cleans that delete files
#: (once a compaction cycle on a MOR table) every commit would otherwise parse the same few JSON
#: documents again
_WRITTEN = CompletedDetails(_partitions_written)
