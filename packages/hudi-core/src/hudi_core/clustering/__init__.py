"""Clustering: small file slices rewritten into fewer, larger file groups, optionally sorted
(schedule -> plan -> execute -> replacecommit), as Apache Hudi 0.15 plans and runs it.

>>> from hudi_core.clustering import schedule_clustering, run_clustering  # doctest: +SKIP
>>> t = schedule_clustering(table)  # doctest: +SKIP
>>> run_clustering(table, t)  # doctest: +SKIP
"""

from __future__ import annotations

from hudi_core.clustering.errors import ClusteringError
from hudi_core.clustering.plan import (
    ClusteringGroup,
    ClusteringPlan,
    ClusteringSlice,
    build_plan,
    pending_clusterings,
    read_plan,
)
from hudi_core.clustering.runner import (
    ClusteringResult,
    cluster,
    maybe_cluster_inline,
    rollback_inflight_clustering,
    run_clustering,
    schedule_clustering,
)

__all__ = [
    "ClusteringError",
    "ClusteringGroup",
    "ClusteringPlan",
    "ClusteringResult",
    "ClusteringSlice",
    "build_plan",
    "cluster",
    "maybe_cluster_inline",
    "pending_clusterings",
    "read_plan",
    "rollback_inflight_clustering",
    "run_clustering",
    "schedule_clustering",
]
