"""Table services a write client runs after its commit (Hudi's ``postCommit``): inline
compaction after a delta commit, then the automatic clean (``hoodie.clean.automatic``, on by
default as in Hudi, keeping ``hoodie.cleaner.commits.retained`` = 10 commits), then archival
(``hoodie.archive.automatic``, on by default: the active timeline keeps 20-30 commits)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hudi_core.compaction.errors import CompactionError
from hudi_core.config.clean import CleanOptions
from hudi_core.config.concurrency import ConcurrencySettings
from hudi_core.errors import LockTimeoutError, TimelineError

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["run_post_commit_services"]

log = logging.getLogger(__name__)


def run_post_commit_services(table: MetaClient, options: Mapping[str, Any], *, delta_commit: bool) -> None:
    """Inline compaction (MOR delta commits only), then the automatic clean, then archival.

    Among concurrent writers the commit has already succeeded when these run: a service that
    another writer's service got in the way of (it planned the same compaction, cleaned or
    archived first) is logged and left to that writer, not raised to the caller."""
    from hudi_core.archival import maybe_archive
    from hudi_core.compaction import maybe_compact_inline

    opts = dict(options)
    concurrent = ConcurrencySettings.of(table.write_config(opts)).occ
    table.reload()  # a pinned timeline too: an async compaction of this process may have moved it
    services: list[Callable[[MetaClient, dict[str, Any]], Any]] = [_automatic_clean, maybe_archive]
    if delta_commit and (concurrent or not _pending_clustering(table)):
        # a single writer cannot schedule a compaction after a pending clustering (Hudi's check:
        # every pending write is later than the compaction); Hudi's own write then schedules
        # none and succeeds, checked with the oracle; so does ours
        services.insert(0, maybe_compact_inline)
    for service in services:
        try:
            service(table, opts)
        except (TimelineError, LockTimeoutError, CompactionError) as e:
            if not concurrent:
                raise
            log.warning("%s after the commit left to another writer: %s", service.__name__, e)


def _pending_clustering(table: MetaClient) -> bool:
    from hudi_core.fs_view import FileSystemView

    return bool(FileSystemView(table).pending_clustering_file_groups())


def _automatic_clean(table: MetaClient, opts: dict[str, Any]) -> None:
    cfg = table.write_config(opts)
    if not bool(cfg.get(CleanOptions.AUTOMATIC)) or bool(cfg.get(CleanOptions.ASYNC)):
        return
    from hudi_core.clean import clean, earliest_commit_to_retain

    tl = table.timeline
    policy = str(cfg.get_str(CleanOptions.POLICY) or "KEEP_LATEST_COMMITS").upper()
    # Cheap check first: with fewer commits than retained there is nothing to clean, and
    # planning a clean lists every partition.
    if (
        policy != "KEEP_LATEST_FILE_VERSIONS"
        and earliest_commit_to_retain(tl, cfg, utc=table.config.utc_timeline) is None
        and not tl.filter(actions=["clean"]).pending()
    ):
        return
    clean(table, config=opts, timeline=tl)
