"""Which completed instants an archival run moves out of the active timeline (Hudi 0.15's
``HoodieTimelineArchiver.getInstantsToArchive``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_core.config.archival import ArchivalOptions
from hudi_core.config.clean import CleanOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError
from hudi_core.timeline.avro_files import CLEAN_METADATA, read_avro_timeline_file
from hudi_core.timeline.instant import Action, Instant
from hudi_core.timeline.timeline import ActiveTimeline

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["archival_due", "instants_to_archive", "keep_bounds"]

_SAVEPOINT = "savepoint"


def keep_bounds(config: HoodieConfig) -> tuple[int, int]:
    """(``hoodie.keep.min.commits``, ``hoodie.keep.max.commits``), checked as Hudi checks them."""
    keep_min, keep_max = (
        int(config.get(ArchivalOptions.MIN_COMMITS)),
        int(config.get(ArchivalOptions.MAX_COMMITS)),
    )
    retained = int(config.get(CleanOptions.COMMITS_RETAINED))
    if not 0 < keep_min < keep_max:
        raise ConfigError(
            f"hoodie.keep.max.commits={keep_max} must be greater than hoodie.keep.min.commits={keep_min} (> 0)"
        )
    if keep_min <= retained:
        raise ConfigError(
            f"increase hoodie.keep.min.commits={keep_min} to be greater than hoodie.cleaner.commits.retained="
            f"{retained}: archival must never remove instants the cleaner still needs"
        )
    return keep_min, keep_max


def _completed_groups(timeline: ActiveTimeline) -> list[list[Instant]]:
    """The completed instants archival counts against ``keep.max``: cleans, rollbacks, commits."""
    completed = list(timeline.completed())
    return [
        [i for i in completed if i.action == Action.CLEAN],
        [i for i in completed if i.action == Action.ROLLBACK],
        list(timeline.completed_commits()),
    ]


def archival_due(timeline: ActiveTimeline, config: HoodieConfig) -> bool:
    """Whether a group of completed instants (cleans, rollbacks, commits) is longer than
    ``hoodie.keep.max.commits``: without that, :func:`instants_to_archive` selects nothing (with
    it, it still may: a pending write or a savepoint bounds what goes). Reads only the timeline
    it is given."""
    _, keep_max = keep_bounds(config)
    return any(len(group) > keep_max for group in _completed_groups(timeline))


def instants_to_archive(table: MetaClient, config: HoodieConfig) -> list[Instant]:
    """Completed instants to archive, oldest first.

    Cleans and rollbacks: beyond ``keep.max`` of one action, all but the latest ``keep.min``.
    Commits (commit, deltacommit, replacecommit, completed compactions): beyond ``keep.max``, all
    but the latest ``keep.min``, and never at or after the first pending write, pending
    compaction or replace, savepoint, or the earliest commit the latest clean retained.
    """
    keep_min, keep_max = keep_bounds(config)
    tl = table.timeline
    cleans, rollbacks, commits = _completed_groups(tl)
    out: list[Instant] = []
    for done in (cleans, rollbacks):
        if len(done) > keep_max:
            out.extend(done[: len(done) - keep_min])
    if len(commits) > keep_max:
        bound = _first_retained(table, tl, cleans)
        candidates = [c for c in commits if bound is None or c.timestamp < bound]
        out.extend(candidates[: len(commits) - keep_min])
    return sorted(out, key=lambda i: i.timestamp)


def _first_retained(table: MetaClient, tl: ActiveTimeline, cleans: list[Instant]) -> str | None:
    """The earliest instant archival must keep, with everything after it (None: no bound);
    ``cleans`` are the completed cleans, oldest first."""
    bounds = [i.timestamp for i in tl.commits().pending()]  # pending writes and compactions
    bounds += [i.timestamp for i in tl if i.action == _SAVEPOINT]
    if cleans:
        meta = read_avro_timeline_file(table.storage, tl.path_of(cleans[-1]), CLEAN_METADATA)
        if meta.get("earliestCommitToRetain"):
            bounds.append(str(meta["earliestCommitToRetain"]))
    return min(bounds) if bounds else None
