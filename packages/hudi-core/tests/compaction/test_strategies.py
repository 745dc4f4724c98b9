from __future__ import annotations

import pytest
from hudi_core.compaction.plan import CompactionOperation
from hudi_core.compaction.scheduler import plan_strategy_for
from hudi_core.compaction.strategies import (
    BoundedIOStrategy,
    DayBasedStrategy,
    LogFileNumBasedStrategy,
    LogFileSizeBasedStrategy,
    UnboundedStrategy,
)
from hudi_core.config.property import HoodieConfig


def op(
    fid: str, *, part: str = "p", logs: int = 1, log_size: float = 100.0, io_mb: float = 10.0
) -> CompactionOperation:
    return CompactionOperation(part, fid, "001", f"{fid}_0-0-0_001.parquet",
                               tuple(f".{fid}_001.log.{i + 1}_0-0-0" for i in range(logs)),
                               {"TOTAL_LOG_FILES": float(logs), "TOTAL_LOG_FILES_SIZE": log_size,
                                "TOTAL_IO_MB": io_mb})  # fmt: skip


OPS = [op("a", logs=1, log_size=50), op("b", logs=3, log_size=500), op("c", logs=2, log_size=5000)]


def test_default_strategy_is_log_file_size_largest_first() -> None:
    s = plan_strategy_for(HoodieConfig())
    assert isinstance(s, LogFileSizeBasedStrategy)
    assert [o.file_id for o in s.select(OPS)] == ["c", "b", "a"]


def test_log_file_size_threshold_filters() -> None:
    s = LogFileSizeBasedStrategy(HoodieConfig({"hoodie.compaction.logfile.size.threshold": "500"}))
    assert [o.file_id for o in s.select(OPS)] == ["c", "b"]


def test_log_file_num_threshold_and_order() -> None:
    s = LogFileNumBasedStrategy(HoodieConfig({"hoodie.compaction.logfile.num.threshold": "2"}))
    assert [o.file_id for o in s.select(OPS)] == ["b", "c"]


def test_bounded_io_takes_the_slice_crossing_the_bound_then_stops() -> None:
    s = BoundedIOStrategy(HoodieConfig({"hoodie.compaction.target.io": "15"}))
    assert [o.file_id for o in s.select(OPS)] == ["a", "b"]


def test_unbounded_takes_all_in_order() -> None:
    assert [o.file_id for o in UnboundedStrategy().select(OPS)] == ["a", "b", "c"]


def test_day_based_keeps_latest_day_partitions() -> None:
    ops = [op("x", part="2024/01/01"), op("y", part="2024/03/02"), op("z", part="2024/02/15"),
           op("w", part="not-a-day")]  # fmt: skip
    s = DayBasedStrategy(HoodieConfig({"hoodie.compaction.daybased.target.partitions": "2"}))
    assert [o.file_id for o in s.select(ops)] == ["y", "z"]
    assert s.filter_partitions(["2024/01/01", "dt=2024-05-01", "x"]) == ["dt=2024-05-01", "2024/01/01"]


@pytest.mark.parametrize("name,cls", [
    ("org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy", LogFileSizeBasedStrategy),
    ("org.apache.hudi.table.action.compact.strategy.LogFileNumBasedCompactionStrategy", LogFileNumBasedStrategy),
    ("org.apache.hudi.table.action.compact.strategy.BoundedIOCompactionStrategy", BoundedIOStrategy),
    ("org.apache.hudi.table.action.compact.strategy.DayBasedCompactionStrategy", DayBasedStrategy),
    ("org.apache.hudi.table.action.compact.strategy.UnBoundedCompactionStrategy", UnboundedStrategy),
    ("unbounded", UnboundedStrategy),
])  # fmt: skip
def test_java_class_names_select_strategies(name: str, cls: type) -> None:
    assert type(plan_strategy_for(HoodieConfig({"hoodie.compaction.strategy": name}))) is cls
