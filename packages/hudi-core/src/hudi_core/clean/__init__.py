"""Cleaning: delete file slices no retained query needs (spec 11). Archival is not done here.

>>> from hudi_core.clean import clean  # doctest: +SKIP
>>> clean(table, config={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})  # doctest: +SKIP
"""

from __future__ import annotations

from hudi_core.clean.errors import CleanError
from hudi_core.clean.metadata import CleanerPlan, CleanMetadata, PartitionCleanStat
from hudi_core.clean.planner import POLICIES, earliest_commit_to_retain, plan_clean
from hudi_core.clean.runner import clean, execute_clean

__all__ = [
    "POLICIES",
    "CleanError",
    "CleanMetadata",
    "CleanerPlan",
    "PartitionCleanStat",
    "clean",
    "earliest_commit_to_retain",
    "execute_clean",
    "plan_clean",
]
