"""Writes beside a pending clustering, as Apache Hudi's writers do them.

A clustering plan (a requested or inflight replacecommit with a ``clusteringPlan``, scheduled by
Apache Hudi) names file groups whose slices it will rewrite; when it completes, its replacecommit
replaces those file groups with what it read at planning time. A write that updated one of them
meanwhile would lose its records then. So, as Hudi's ``SparkRejectUpdateStrategy`` (the default
``hoodie.clustering.updates.strategy``), a write whose records are located in such a file group
is refused with :class:`~hudi_core.errors.ClusteringUpdateError` before anything is written (its
instant is rolled back), and new records are never packed into their small files (the write
client's small-file listing leaves them out). ``...AllowUpdateStrategy`` writes the updates, as
Hudi does under that setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hudi_core.config.write import WriteBehaviourOptions
from hudi_core.errors import ClusteringUpdateError, ConfigError

if TYPE_CHECKING:
    from hudi_core.config.property import HoodieConfig
    from hudi_core.fs_view import FileSystemView
    from hudi_core.write.bucket_assigner import WorkloadProfile

__all__ = ["clustered_file_groups", "reject_clustered_updates"]

FileGroupId = tuple[str, str]


def clustered_file_groups(view: FileSystemView | None, config: HoodieConfig) -> frozenset[FileGroupId]:
    """``(partition, file id)`` of the file groups this write may not update: those of pending
    clustering plans under the reject strategy, none under the allow strategy (or on a table
    without a view, i.e. without commits)."""
    strategy = str(config.get(WriteBehaviourOptions.CLUSTERING_UPDATES_STRATEGY)).rsplit(".", 1)[-1]
    if strategy.endswith("AllowUpdateStrategy"):
        return frozenset()
    if not strategy.endswith("RejectUpdateStrategy"):
        raise ConfigError(
            f"{WriteBehaviourOptions.CLUSTERING_UPDATES_STRATEGY.key}={strategy!r} is not an update "
            "strategy this writer knows: use a ...RejectUpdateStrategy (the default) or a "
            "...AllowUpdateStrategy class name"
        )
    return frozenset(view.pending_clustering_file_groups()) if view is not None else frozenset()


def reject_clustered_updates(profile: WorkloadProfile, clustered: frozenset[FileGroupId]) -> None:
    """Raise :class:`ClusteringUpdateError` when ``profile`` updates or deletes records (or, with
    the BUCKET index, adds records) in one of the ``clustered`` file groups."""
    if not clustered:
        return
    hit = sorted(_touched(profile) & clustered)
    if hit:
        part, file_id = hit[0]
        more = f" (and {len(hit) - 1} more)" if len(hit) > 1 else ""
        raise ClusteringUpdateError(
            f"Not allowed to update the clustering file group {file_id} in partition {part!r}{more}: "
            "a pending clustering plan holds it, and its commit would replace what this write adds "
            f"({WriteBehaviourOptions.CLUSTERING_UPDATES_STRATEGY.key} is a reject strategy, Apache "
            "Hudi's default). Run (or roll back) the clustering first; nothing of this write is kept"
        )


def _touched(profile: WorkloadProfile) -> set[FileGroupId]:
    located: Iterable[FileGroupId] = ((p, f) for p, f, _ in profile.updates)
    buckets = ((p, f) for p, _, f, _ in profile.hash_buckets if f is not None)
    return {*located, *buckets}
