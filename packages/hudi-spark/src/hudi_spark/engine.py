"""``SparkEngine``: the ``spark`` engine of the plugin registry (``hoodie.engine=spark``).

It runs core's engine-agnostic work (a function over file groups, plan operations...) as Spark
tasks on the active session's SparkContext and collects the results on the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkEngine", "active_session"]

T = TypeVar("T")
R = TypeVar("R")


def active_session() -> SparkSession:
    """The active SparkSession, or a new one from :func:`hudi_spark.session.spark_session`."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        from hudi_spark.session import spark_session

        session = spark_session()
    return session


class SparkEngine:
    """Engine whose ``map`` is one Spark task per item (``sc.parallelize(items).map(fn)``)."""

    name = "spark"

    def __init__(self, options: Any = None, *, session: SparkSession | None = None) -> None:
        self._session = session
        self.options = options

    @property
    def session(self) -> SparkSession:
        if self._session is None:
            self._session = active_session()
        return self._session

    @property
    def parallelism(self) -> int:
        return int(self.session.sparkContext.defaultParallelism)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``[fn(x) for x in items]`` in order, one task per item; a task's error is raised here."""
        items = list(items)
        if not items:
            return []
        sc = self.session.sparkContext
        rdd = sc.parallelize(items, numSlices=len(items))
        return rdd.map(fn).collect()

    def __repr__(self) -> str:
        return f"SparkEngine(parallelism={self.parallelism})"
