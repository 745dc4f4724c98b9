"""BoundedInMemory and Disruptor executors for hudi-py (seed 5.2.2).

Installed, they register through the ``hudi_py`` entry point; choose one with
``hoodie.write.executor.type`` = ``BOUNDED_IN_MEMORY`` or ``DISRUPTOR``.
"""

from __future__ import annotations

from hudi_executors.bounded_in_memory import BoundedInMemoryExecutor, BoundedInMemoryQueue
from hudi_executors.disruptor import DisruptorExecutor
from hudi_executors.sizing import SizeEstimator
from hudi_executors.stats import ExecutionStats

__version__ = "0.1.0"

__all__ = [
    "BoundedInMemoryExecutor",
    "BoundedInMemoryQueue",
    "DisruptorExecutor",
    "ExecutionStats",
    "SizeEstimator",
    "__version__",
]
