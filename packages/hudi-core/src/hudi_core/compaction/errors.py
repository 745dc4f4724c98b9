"""Errors of the compaction service."""

from __future__ import annotations

from hudi_core.errors import HudiError

__all__ = ["CompactionError", "CompactionValidationError"]


class CompactionError(HudiError):
    """A compaction could not be scheduled, executed or committed."""


class CompactionValidationError(CompactionError):
    """Scheduling refused: wrong table type or a conflicting instant on the timeline."""
