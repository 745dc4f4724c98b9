"""What Arrow reads from the environment when it loads, set on hudi_core's import (unless the
process set its own) before anything of ours imports pyarrow. It takes effect where hudi_core is
imported before pyarrow, and in every process started from this one after the import, a Spark
session's JVM among them.

``JE_ARROW_MALLOC_CONF``: jemalloc keeps the pages a freed buffer held for the next buffers
(``hudi_core.engine.pool`` says why, and what it costs). Where pyarrow was loaded
first (``import pyarrow`` before ``import hudi_core``, as most scripts do), jemalloc has read
Arrow's own settings already: ``LOADED_BEFORE`` tells ``hudi_core.engine.pool`` to apply ours
when it first switches to jemalloc.

Not in a Spark Python worker (:data:`SPARK_WORKER`): it serves task after task for its whole
life, and would keep the pages every one of them freed. There hudi_core sets nothing and
applies nothing; the worker runs with what its environment says, which hudi_spark makes Arrow's
own decay (:data:`ARROW_CONF`, ``hudi_spark.session.worker_jemalloc_conf``)."""

from __future__ import annotations

import os
import sys

__all__ = [
    "ARROW_CONF",
    "DECAY_MS",
    "JEMALLOC_CONF",
    "JEMALLOC_VAR",
    "LOADED_BEFORE",
    "OWN_SETTING",
    "SPARK_WORKER",
]

JEMALLOC_VAR = "JE_ARROW_MALLOC_CONF"
#: jemalloc's decay time of freed pages, ms (-1: never handed back; jemalloc does not purge)
DECAY_MS = -1
JEMALLOC_CONF = f"dirty_decay_ms:{DECAY_MS},muzzy_decay_ms:{DECAY_MS}"
#: Arrow's own decay: the pages of freed buffers go back to the kernel over about a second
ARROW_CONF = "dirty_decay_ms:1000,muzzy_decay_ms:1000"

#: the setting the process gave jemalloc itself before hudi_core's import (None: it gave none)
OWN_SETTING = os.environ.get(JEMALLOC_VAR)
#: this process is a Python worker started by Spark (its PythonWorkerFactory gives every worker,
#: a daemon's forks included, the secret it answers the JVM with)
SPARK_WORKER = "PYTHON_WORKER_FACTORY_SECRET" in os.environ

#: pyarrow was loaded before this module, and the process gave jemalloc no setting of its own
LOADED_BEFORE = "pyarrow" in sys.modules and OWN_SETTING is None and not SPARK_WORKER

if not SPARK_WORKER:
    os.environ.setdefault(JEMALLOC_VAR, JEMALLOC_CONF)
