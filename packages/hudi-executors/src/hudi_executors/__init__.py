"""BoundedInMemory and Disruptor executors for hudi-py (seed 5.2.2)."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
