from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hudi_core.errors import ConfigError
from hudi_executors import BoundedInMemoryExecutor


class SlowCollect:
    def __init__(self, delay_s: float = 0.001) -> None:
        self.rows = 0
        self.delay_s = delay_s

    def consume(self, item: Any) -> None:
        time.sleep(self.delay_s)
        self.rows += item.num_rows

    def finish(self) -> int:
        return self.rows


def _batch(i: int, rows: int = 1000) -> pa.RecordBatch:
    return pa.record_batch({"id": np.arange(i * rows, (i + 1) * rows, dtype=np.int64)})


def test_peak_queued_bytes_stays_within_limit_with_slow_consumer() -> None:
    item = _batch(0).nbytes  # 8000 bytes
    limit = 5 * item + 100
    ex = BoundedInMemoryExecutor({"hoodie.write.buffer.limit.bytes": limit})
    assert ex.execute(range(60), _batch, SlowCollect(0.003)) == 60_000
    stats = ex.last_stats
    assert stats.items == 60
    assert stats.peak_queued_bytes <= limit + item
    # The producer runs ahead of the slow consumer until the limit stops it (5 items fit).
    assert 3 <= stats.peak_queued_items <= 5


def test_item_larger_than_limit_passes_alone() -> None:
    ex = BoundedInMemoryExecutor({"hoodie.write.buffer.limit.bytes": 100})
    assert ex.execute(range(20), _batch, SlowCollect(0)) == 20_000
    assert ex.last_stats.peak_queued_items == 1
    assert ex.last_stats.peak_queued_bytes == _batch(0).nbytes


def test_several_producers_each_get_a_thread_and_share_the_bound() -> None:
    from hudi_core.executor import Producers

    item = _batch(0).nbytes
    limit = 4 * item
    ex = BoundedInMemoryExecutor({"hoodie.write.executor.buffer.limit.bytes": limit})
    rows = ex.execute(Producers([range(0, 10), range(10, 25), range(25, 30)]), _batch, SlowCollect())
    assert rows == 30_000
    assert ex.last_stats.producers == 3
    assert ex.last_stats.peak_queued_bytes <= limit + item


@pytest.mark.parametrize(
    "options",
    [{"hoodie.write.buffer.limit.bytes": "0"}, {"hoodie.write.buffer.record.sampling.rate": "0"}],
)
def test_bad_options_name_the_key(options: dict[str, str]) -> None:
    (key,) = options
    with pytest.raises(ConfigError, match=key):
        BoundedInMemoryExecutor(options)
