"""Errors of the clustering service."""

from __future__ import annotations

from hudi_core.errors import HudiError

__all__ = ["ClusteringError"]


class ClusteringError(HudiError):
    """A clustering could not be scheduled, run or committed (the table is left as it was)."""
