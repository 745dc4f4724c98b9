"""``format("hudi")`` in any Spark 4 session, with no import of ours.

On the first data-source call of a session, PySpark 4 imports every top-level module whose name
starts with ``pyspark_`` and registers its ``DefaultSource``
(``pyspark/sql/worker/lookup_data_sources.py``): installing hudi-spark is enough for
``spark.read.format("hudi")`` and ``df.write.format("hudi")``. ``hudi_spark.register(spark)``
does the same explicitly.
"""

from __future__ import annotations

from hudi_spark.datasource import HudiDataSource as DefaultSource

__all__ = ["DefaultSource"]
