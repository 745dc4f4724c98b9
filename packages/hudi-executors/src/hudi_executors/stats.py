"""What an execution buffered: the figures tests and the benchmark read back."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ExecutionStats"]


@dataclass
class ExecutionStats:
    """Counts of the last ``execute`` of an executor (bytes are the executor's estimates)."""

    items: int = 0
    producers: int = 0
    peak_queued_items: int = 0
    peak_queued_bytes: int = 0
