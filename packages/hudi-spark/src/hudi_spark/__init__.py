"""The Spark engine for hudi-py: the write pipeline distributed on PySpark (batch and Structured Streaming), and spark.read.format(hudi)."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
