"""Table services in the background of a Spark ingestion (streamer, Structured Streaming):
asynchronous compaction and clustering, as Apache Hudi's streaming sink runs them.

After each commit the driver asks the service (``maybe_schedule``): a plan is scheduled with
core's scheduler once N commits have accumulated, and the oldest pending plan runs on a
background thread with the ``spark`` engine (one Spark task per compaction operation or
clustering group) while the next batches keep writing. One plan runs at a time; a plan left
pending (its run failed, or its process died) is run before a new one, as Hudi's async services
pick pending instants up.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from hudi_spark.errors import task_error

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from pyspark.sql import SparkSession

__all__ = ["AsyncClusterer", "AsyncCompactor", "AsyncService"]


class AsyncService:
    """``maybe_schedule()`` after each commit; ``wait()`` before shutting down."""

    kind = "service"

    def __init__(self, spark: SparkSession, base_uri: str, *, every: int = 5, options: Mapping[str, str] | None = None,
                 run_async: bool = True) -> None:  # fmt: skip
        self.spark = spark
        self.base_uri = base_uri
        self.every = max(1, int(every))
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.run_async = run_async
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"hudi-spark-{self.kind}")
        self._running: Future[Any] | None = None
        self._busy = False  # a drain is on; it looks for pending plans under the lock before it ends
        self._lock = threading.RLock()  # the synchronous mode drains while maybe_schedule holds it
        self.completed: list[str] = []
        self.errors: list[BaseException] = []

    def _config(self) -> dict[str, str]:
        return {**self.options, "hoodie.engine": "spark"}

    # what a kind of service does: its pending plans (oldest first), scheduling one, running one
    def _pending(self, table: HudiTable) -> list[str]:
        raise NotImplementedError

    def _schedule(self, table: HudiTable) -> str | None:
        raise NotImplementedError

    def _execute(self, table: HudiTable, instant: str) -> None:
        raise NotImplementedError

    def _applies(self, table: HudiTable) -> bool:
        return True

    def maybe_schedule(self) -> str | None:
        """Schedule a plan when the trigger fires, then start the oldest pending plan unless one
        is running; the plans pending after it run next on the same thread. Returns the instant
        scheduled or started now, if any."""
        from hudi_core import HudiTable

        with self._lock:
            table = HudiTable.open(self.base_uri, options=self.options)
            if not self._applies(table):
                return None
            scheduled = self._schedule(table)
            if self._busy:
                return scheduled  # one at a time: a plan scheduled now runs after this one
            pending = self._pending(table.reload())
            if not pending:
                return scheduled
            self._busy = True
            if self.run_async:
                self._running = self._pool.submit(self._drain, pending[0])
            else:
                self._drain(pending[0])
            return scheduled or pending[0]

    def _drain(self, instant: str) -> None:
        """Run ``instant``, then every plan pending after it (one scheduled meanwhile), each once;
        a failure stops here (kept in ``errors``; the next commit's ask retries the plan)."""
        from hudi_core import HudiTable

        tried: set[str] = set()
        nxt: str | None = instant
        try:
            while nxt is not None:
                tried.add(nxt)
                self._execute(HudiTable.open(self.base_uri, options=self.options), nxt)
                self.completed.append(nxt)
                with self._lock:  # a plan scheduled before this look runs here, after it at the next ask
                    pending = self._pending(HudiTable.open(self.base_uri, options=self.options))
                    nxt = next((i for i in pending if i not in tried), None)
                    self._busy = nxt is not None
        except BaseException as e:  # the plan stays requested and is retried
            self.errors.append(task_error(e))
            with self._lock:
                self._busy = False
            if not self.run_async:
                raise

    def wait(self) -> None:
        """Block until the running plan (if any) is finished."""
        running = self._running
        if running is not None:
            try:
                running.result()
            except BaseException:
                pass

    def close(self) -> None:
        self.wait()
        self._pool.shutdown(wait=True)


class AsyncCompactor(AsyncService):
    """Compaction of a MERGE_ON_READ table once ``every`` delta commits completed since the last
    compaction (Hudi's NUM_COMMITS trigger); a copy-on-write table is left alone."""

    kind = "compaction"

    def _config(self) -> dict[str, str]:
        return {
            **super()._config(),
            "hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
            "hoodie.compact.inline.max.delta.commits": str(self.every),
        }

    def _applies(self, table: HudiTable) -> bool:
        return bool(table.config.is_mor)

    def _pending(self, table: HudiTable) -> list[str]:
        from hudi_core.compaction.runner import pending_compactions

        return [i.timestamp for i in pending_compactions(table)]

    def _schedule(self, table: HudiTable) -> str | None:
        from hudi_core.compaction.scheduler import schedule_compaction

        # as Hudi's sink, also while one is pending: the trigger counts the delta commits since the
        # last completed compaction, and the plan leaves out the file groups pending ones hold
        return schedule_compaction(table, config=self._config())

    def _execute(self, table: HudiTable, instant: str) -> None:
        from hudi_core.compaction.runner import run_compaction

        run_compaction(table, instant, config=self._config())


class AsyncClusterer(AsyncService):
    """Clustering (``hoodie.clustering.async.enabled``) once ``every`` commits completed since the
    last clustering, in any state (``hoodie.clustering.async.max.commits``), as Hudi's streaming
    sink schedules it after a commit: a new plan may be queued while another runs, since a plan
    leaves out the file groups pending ones hold."""

    kind = "clustering"

    @classmethod
    def from_options(
        cls, spark: SparkSession, base_uri: str, options: Mapping[str, str]
    ) -> AsyncClusterer | None:
        """The clusterer a streaming writer runs beside itself: with ``hoodie.clustering.async.enabled``
        and not ``hoodie.clustering.inline`` (as Hudi's sink decides), else None."""
        from hudi_core.config.clustering import ClusteringOptions
        from hudi_core.config.property import HoodieConfig

        conf = HoodieConfig(dict(options))
        if not bool(conf.get(ClusteringOptions.ASYNC)) or bool(conf.get(ClusteringOptions.INLINE)):
            return None
        return cls(spark, base_uri, every=int(conf.get(ClusteringOptions.ASYNC_MAX_COMMITS)), options=options)

    def _pending(self, table: HudiTable) -> list[str]:
        from hudi_core.clustering.plan import pending_clusterings

        return [i.timestamp for i in pending_clusterings(table)]

    def _schedule(self, table: HudiTable) -> str | None:
        from hudi_core.clustering.plan import commits_since_last_clustering
        from hudi_core.clustering.runner import schedule_clustering

        if commits_since_last_clustering(table.timeline) < self.every:
            return None
        return schedule_clustering(table, config=self._config())

    def _execute(self, table: HudiTable, instant: str) -> None:
        from hudi_core.clustering.runner import run_clustering

        run_clustering(table, instant, config=self._config())
