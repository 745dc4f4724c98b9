"""What Arrow reads from the environment when it loads, set on hudi_core's import (unless the
process set its own) before anything of ours imports pyarrow. It takes effect where hudi_core is
imported before pyarrow, and in every process started from this one after the import: a Spark
session's JVM and its Python workers (hudi_spark's sessions also pass it to executors).

``JE_ARROW_MALLOC_CONF``: jemalloc keeps the pages a freed buffer held for the next buffers
(``hudi_core.engine.pool`` says why and when it hands them back)."""

from __future__ import annotations

import os

__all__ = ["JEMALLOC_CONF", "JEMALLOC_VAR"]

JEMALLOC_VAR = "JE_ARROW_MALLOC_CONF"
JEMALLOC_CONF = "dirty_decay_ms:-1,muzzy_decay_ms:-1"

os.environ.setdefault(JEMALLOC_VAR, JEMALLOC_CONF)
