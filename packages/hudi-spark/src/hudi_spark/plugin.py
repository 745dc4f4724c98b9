"""Entry point of the hudi-spark plugin (group ``hudi_py``): the hooks it implements."""

from __future__ import annotations

from hudi_core.plugins.hookspecs import Register, hookimpl

__all__ = ["hudi_register_engines"]


@hookimpl
def hudi_register_engines(register: Register) -> None:
    # Imported lazily: listing plugins must not start a JVM or import pyspark.
    def factory(options: object = None) -> object:
        from hudi_spark.engine import SparkEngine

        return SparkEngine(options)

    register("spark", factory)
