"""Plan strategies (spec 9.3): which candidate file slices go into a compaction plan.

Every strategy sees candidate operations (one per latest file slice that has log files and is
not already being compacted), each with its metrics, and returns the ones to compact, in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from hudi_core.compaction.plan import CompactionOperation
from hudi_core.config.compaction import CompactionOptions
from hudi_core.config.property import ConfigProperty, HoodieConfig
from hudi_core.fs_view.model import TOTAL_IO_MB, TOTAL_LOG_FILES, TOTAL_LOG_FILES_SIZE

__all__ = [
    "JAVA_PACKAGE",
    "BoundedIOStrategy",
    "CompactionPlanStrategy",
    "DayBasedStrategy",
    "LogFileNumBasedStrategy",
    "LogFileSizeBasedStrategy",
    "UnboundedStrategy",
]

JAVA_PACKAGE = "org.apache.hudi.table.action.compact.strategy"


class CompactionPlanStrategy(Protocol):
    name: str
    java_class: str

    def filter_partitions(self, partitions: Sequence[str]) -> list[str]:
        """The partitions worth looking at (all, for most strategies)."""
        ...

    def select(self, operations: Sequence[CompactionOperation]) -> list[CompactionOperation]:
        """The operations to put in the plan, in plan order."""
        ...


class UnboundedStrategy:
    """Every candidate slice (``UnBoundedCompactionStrategy``)."""

    name = "UNBOUNDED"
    java_class = f"{JAVA_PACKAGE}.UnBoundedCompactionStrategy"

    def __init__(self, config: HoodieConfig | None = None) -> None:
        self.config = config if config is not None else HoodieConfig()

    def filter_partitions(self, partitions: Sequence[str]) -> list[str]:
        return list(partitions)

    def select(self, operations: Sequence[CompactionOperation]) -> list[CompactionOperation]:
        return list(operations)


class BoundedIOStrategy(UnboundedStrategy):
    """Take slices in order until ``hoodie.compaction.target.io`` MB of IO is reached (the slice
    that crosses the bound is still taken, as in Java)."""

    name = "BOUNDED_IO"
    java_class = f"{JAVA_PACKAGE}.BoundedIOCompactionStrategy"

    def select(self, operations: Sequence[CompactionOperation]) -> list[CompactionOperation]:
        remaining = float(self.config.get(CompactionOptions.TARGET_IO_MB))
        out: list[CompactionOperation] = []
        for op in operations:
            if remaining <= 0:
                break
            remaining -= op.metrics.get(TOTAL_IO_MB, 0.0)
            out.append(op)
        return out


class _ThresholdStrategy(BoundedIOStrategy):
    """Slices whose ``metric`` is at least the ``threshold`` option, largest first, bounded by
    the target IO."""

    metric: ClassVar[str]
    threshold: ClassVar[ConfigProperty[Any]]

    def select(self, operations: Sequence[CompactionOperation]) -> list[CompactionOperation]:
        threshold = float(self.config.get(self.threshold))
        chosen = [op for op in operations if op.metrics.get(self.metric, 0.0) >= threshold]
        chosen.sort(key=lambda op: -op.metrics.get(self.metric, 0.0))
        return super().select(chosen)


class LogFileSizeBasedStrategy(_ThresholdStrategy):
    """Slices whose log files total >= ``hoodie.compaction.logfile.size.threshold`` bytes,
    largest first, bounded by the target IO (Hudi's default strategy)."""

    name = "LOG_FILE_SIZE"
    java_class = f"{JAVA_PACKAGE}.LogFileSizeBasedCompactionStrategy"
    metric = TOTAL_LOG_FILES_SIZE
    threshold = CompactionOptions.LOGFILE_SIZE_THRESHOLD


class LogFileNumBasedStrategy(_ThresholdStrategy):
    """Slices with >= ``hoodie.compaction.logfile.num.threshold`` log files, most first,
    bounded by the target IO."""

    name = "LOG_FILE_NUM"
    java_class = f"{JAVA_PACKAGE}.LogFileNumBasedCompactionStrategy"
    metric = TOTAL_LOG_FILES
    threshold = CompactionOptions.LOGFILE_NUM_THRESHOLD


_DAY_RE = re.compile(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})")


def _day_of(partition: str) -> tuple[int, int, int] | None:
    # Accepts yyyy/mm/dd (Java's default), yyyy-mm-dd and hive style dt=yyyy-mm-dd.
    m = _DAY_RE.search(partition)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


class DayBasedStrategy(BoundedIOStrategy):
    """Only the latest ``hoodie.compaction.daybased.target.partitions`` day partitions
    (``yyyy/mm/dd``), newest day first; partitions that are not dates are left out."""

    name = "DAY_BASED"
    java_class = f"{JAVA_PACKAGE}.DayBasedCompactionStrategy"

    def filter_partitions(self, partitions: Sequence[str]) -> list[str]:
        n = int(self.config.get(CompactionOptions.DAYBASED_TARGET_PARTITIONS))
        dated = [(d, p) for p in partitions if (d := _day_of(p)) is not None]
        dated.sort(reverse=True)
        return [p for _, p in dated[:n]]

    def select(self, operations: Sequence[CompactionOperation]) -> list[CompactionOperation]:
        keep = set(self.filter_partitions(sorted({op.partition_path for op in operations})))
        order = {p: i for i, p in enumerate(self.filter_partitions(sorted(keep)))}
        chosen = sorted((op for op in operations if op.partition_path in keep),
                        key=lambda op: order[op.partition_path])  # fmt: skip
        return super().select(chosen)


#: every built-in strategy, registered by :mod:`hudi_core.compaction.plugin`
BUILTIN_STRATEGIES: tuple[type[UnboundedStrategy], ...] = (
    UnboundedStrategy,
    BoundedIOStrategy,
    LogFileSizeBasedStrategy,
    LogFileNumBasedStrategy,
    DayBasedStrategy,
)
