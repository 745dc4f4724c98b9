"""Asynchronous compaction next to a Spark ingestion (streamer, Structured Streaming).

The driver schedules a plan with core's ``schedule_compaction`` once N deltacommits have
accumulated; core's ``run_compaction`` executes it on a background thread with the ``spark``
engine (one Spark task per compaction operation) while the next micro-batches keep writing.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from hudi_spark.errors import task_error

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["AsyncCompactor"]


class AsyncCompactor:
    """``maybe_schedule()`` after each deltacommit; ``wait()`` before shutting down."""

    def __init__(self, spark: SparkSession, base_uri: str, *, every: int = 5, options: Mapping[str, str] | None = None,
                 run_async: bool = True) -> None:  # fmt: skip
        self.spark = spark
        self.base_uri = base_uri
        self.every = max(1, int(every))
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.run_async = run_async
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hudi-spark-compaction")
        self._running: Future[Any] | None = None
        self._lock = threading.Lock()
        self.completed: list[str] = []
        self.errors: list[BaseException] = []

    def _config(self) -> dict[str, str]:
        return {
            **self.options,
            "hoodie.engine": "spark",
            "hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
            "hoodie.compact.inline.max.delta.commits": str(self.every),
        }

    def maybe_schedule(self) -> str | None:
        """Start a compaction when none is running: a pending one first (a plan whose run failed
        or whose process died, as Hudi's async compaction service retries them), else a new
        one when the trigger fires. Returns the instant started."""
        from hudi_core import HudiTable
        from hudi_core.compaction.runner import pending_compactions
        from hudi_core.compaction.scheduler import schedule_compaction

        with self._lock:
            if self._running is not None and not self._running.done():
                return None  # one at a time: the next deltacommit asks again
            table = HudiTable.open(self.base_uri, options=self.options)
            if not table.config.is_mor:
                return None
            pending = pending_compactions(table)
            instant = pending[0].timestamp if pending else schedule_compaction(table, config=self._config())
            if instant is None:
                return None
            if self.run_async:
                self._running = self._pool.submit(self._run, instant)
            else:
                self._run(instant)
            return instant

    def _run(self, instant: str) -> str:
        from hudi_core import HudiTable
        from hudi_core.compaction.runner import run_compaction

        try:
            run_compaction(
                HudiTable.open(self.base_uri, options=self.options), instant, config=self._config()
            )
        except BaseException as e:  # kept for the caller: the plan stays requested and is retried
            self.errors.append(task_error(e))
            raise
        self.completed.append(instant)
        return instant

    def wait(self) -> None:
        """Block until the running compaction (if any) is finished."""
        running = self._running
        if running is not None:
            try:
                running.result()
            except BaseException:
                pass

    def close(self) -> None:
        self.wait()
        self._pool.shutdown(wait=True)
