"""Table services a write client runs after its commit (Hudi's ``postCommit``): inline
compaction after a delta commit, inline clustering (``hoodie.clustering.inline``, off by
default), then the automatic clean (``hoodie.clean.automatic``, on by
default as in Hudi, keeping ``hoodie.cleaner.commits.retained`` = 10 commits), then archival
(``hoodie.archive.automatic``, on by default: the active timeline keeps 20-30 commits)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hudi_core.clustering.errors import ClusteringError
from hudi_core.compaction.errors import CompactionError
from hudi_core.config.clean import CleanOptions
from hudi_core.config.concurrency import ConcurrencySettings
from hudi_core.errors import LockTimeoutError, TimelineError

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.timeline.timeline import ActiveTimeline

__all__ = ["run_post_commit_services"]

log = logging.getLogger(__name__)


def run_post_commit_services(
    table: MetaClient,
    options: Mapping[str, Any],
    *,
    delta_commit: bool,
    timeline: ActiveTimeline | None = None,
) -> None:
    """Inline compaction (MOR delta commits only), inline clustering, then the automatic clean,
    then archival.

    Among concurrent writers the commit has already succeeded when these run: a service that
    another writer's service got in the way of (it planned the same compaction, cleaned or
    archived first) is logged and left to that writer, not raised to the caller.

    ``timeline``: the load the commit was made on, holding it (optimistic concurrency control:
    the transaction's). The clean's and archival's first look, whether anything is due, reads it
    instead of listing ``.hoodie`` twice more (a request each on S3); what they then do, they plan
    on fresh loads under the table lock. Once a service has changed the timeline, the next ones
    load it again. Another writer's commit since then is its own services' to act on."""
    opts = dict(options)
    concurrent = ConcurrencySettings.of(table.write_config(opts)).occ
    table.reload()  # a pinned timeline too: an async compaction of this process may have moved it
    services: list[Callable[[MetaClient, dict[str, Any], ActiveTimeline | None], Any]]
    services = [_inline_clustering, _automatic_clean, _archival]
    if delta_commit and (concurrent or not _pending_clustering(table)):
        # a single writer cannot schedule a compaction after a pending clustering (Hudi's check:
        # every pending write is later than the compaction); Hudi's own write then schedules
        # none and succeeds, checked with the oracle; so does ours
        services.insert(0, _inline_compaction)
    seen = timeline
    for service in services:
        try:
            if service(table, opts, seen) is not None:
                seen = None  # it (may have) moved the timeline: the next ones load it
        except (TimelineError, LockTimeoutError, CompactionError, ClusteringError) as e:
            if not concurrent:
                raise
            seen = None
            log.warning("%s after the commit left to another writer: %s", service.__name__, e)


def _pending_clustering(table: MetaClient) -> bool:
    from hudi_core.fs_view import FileSystemView

    return bool(FileSystemView(table).pending_clustering_file_groups())


def _inline_clustering(table: MetaClient, opts: dict[str, Any], _seen: ActiveTimeline | None) -> bool | None:
    from hudi_core.clustering import maybe_cluster_inline
    from hudi_core.config.clustering import ClusteringOptions

    cfg = table.write_config(opts)
    if not bool(cfg.get(ClusteringOptions.INLINE)) and not bool(cfg.get(ClusteringOptions.SCHEDULE_INLINE)):
        return None
    maybe_cluster_inline(table, opts)
    return True


def _inline_compaction(table: MetaClient, opts: dict[str, Any], _seen: ActiveTimeline | None) -> bool | None:
    from hudi_core.compaction import maybe_compact_inline
    from hudi_core.config.compaction import CompactionOptions

    cfg = table.write_config(opts)
    maybe_compact_inline(table, opts)
    # on, it may have moved the timeline though it scheduled nothing (it ran an older plan)
    return bool(cfg.get(CompactionOptions.INLINE)) or bool(cfg.get(CompactionOptions.SCHEDULE_INLINE)) or None


def _archival(table: MetaClient, opts: dict[str, Any], seen: ActiveTimeline | None) -> Any:
    from hudi_core.archival import maybe_archive

    return maybe_archive(table, opts, timeline=seen)


def _automatic_clean(table: MetaClient, opts: dict[str, Any], seen: ActiveTimeline | None) -> Any:
    cfg = table.write_config(opts)
    if not bool(cfg.get(CleanOptions.AUTOMATIC)) or bool(cfg.get(CleanOptions.ASYNC)):
        return None
    from hudi_core.clean import clean, earliest_commit_to_retain

    tl = seen if seen is not None else table.timeline
    policy = str(cfg.get_str(CleanOptions.POLICY) or "KEEP_LATEST_COMMITS").upper()
    # Cheap check first: with fewer commits than retained there is nothing to clean, and
    # planning a clean lists every partition.
    if (
        policy != "KEEP_LATEST_FILE_VERSIONS"
        and earliest_commit_to_retain(tl, cfg, utc=table.config.utc_timeline) is None
        and not tl.filter(actions=["clean"]).pending()
    ):
        return None
    return clean(table, config=opts, timeline=tl)
