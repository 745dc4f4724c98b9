"""Table services a write client runs after its commit (Hudi's ``postCommit``): inline
compaction after a delta commit, then the automatic clean (``hoodie.clean.automatic``, on by
default as in Hudi, keeping ``hoodie.cleaner.commits.retained`` = 10 commits), then archival
(``hoodie.archive.automatic``, on by default: the active timeline keeps 20-30 commits)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hudi_core.config.clean import CleanOptions

if TYPE_CHECKING:
    from hudi_core.table.hudi_table import HudiTable

__all__ = ["run_post_commit_services"]


def run_post_commit_services(table: HudiTable, options: Mapping[str, Any], *, delta_commit: bool) -> None:
    """Inline compaction (MOR delta commits only), then the automatic clean, then archival."""
    opts = dict(options)
    if delta_commit:
        from hudi_core.compaction import maybe_compact_inline

        maybe_compact_inline(table, opts)
    _automatic_clean(table, opts)
    from hudi_core.archival import maybe_archive

    maybe_archive(table, opts)


def _automatic_clean(table: HudiTable, opts: dict[str, Any]) -> None:
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
    clean(table, config=opts)
