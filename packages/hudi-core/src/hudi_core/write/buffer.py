"""The write buffer (seed 5.1): records are buffered per bucket and flushed as one batch.

Two limits: a bucket is flushed when its estimated size reaches
``hoodie.write.buffer.bucket.max.bytes``; when all buckets together exceed
``hoodie.write.buffer.total.max.bytes`` the largest bucket is flushed. The size of a record is
estimated by sampling: a batch's bytes per row is measured now and then and reused in between.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteBufferOptions

__all__ = ["WriteBuffer"]

Flush = Callable[[Hashable, pa.Table], None]


class WriteBuffer:
    """``add(bucket, batch)`` buffers; ``flush`` is called with ``(bucket, table)``."""

    def __init__(self, config: HoodieConfig, flush: Flush, *, seed: int | None = None) -> None:
        self.bucket_max = int(config.get(WriteBufferOptions.BUCKET_MAX_BYTES))
        self.total_max = int(config.get(WriteBufferOptions.TOTAL_MAX_BYTES))
        self.sample_rate = float(config.get(WriteBufferOptions.RECORD_SIZE_SAMPLE_RATE))
        self._flush = flush
        self._rng = random.Random(seed)
        self._record_size: float | None = None
        self._batches: dict[Hashable, list[pa.Table]] = {}
        self._sizes: dict[Hashable, float] = {}

    @property
    def total_bytes(self) -> float:
        return sum(self._sizes.values())

    def _estimate(self, batch: pa.Table) -> float:
        if self._record_size is None or self._rng.random() < self.sample_rate:
            self._record_size = batch.nbytes / max(1, batch.num_rows)
        return self._record_size * batch.num_rows

    def add(self, bucket: Hashable, batch: pa.Table) -> None:
        if batch.num_rows == 0:
            return
        self._batches.setdefault(bucket, []).append(batch)
        self._sizes[bucket] = self._sizes.get(bucket, 0.0) + self._estimate(batch)
        if self._sizes[bucket] >= self.bucket_max:
            self.flush(bucket)
        while self._sizes and self.total_bytes > self.total_max:
            self.flush(max(self._sizes, key=self._sizes.__getitem__))

    def flush(self, bucket: Hashable) -> None:
        batches = self._batches.pop(bucket, [])
        self._sizes.pop(bucket, None)
        if batches:
            self._flush(bucket, pa.concat_tables(batches))

    def flush_all(self) -> None:
        for bucket in list(self._batches):
            self.flush(bucket)

    def flush_where(self, predicate: Callable[[Hashable], bool]) -> None:
        for bucket in [b for b in self._batches if predicate(b)]:
            self.flush(bucket)
