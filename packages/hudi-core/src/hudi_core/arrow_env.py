"""What Arrow reads from the environment when it loads, set on hudi_core's import (unless the
process set its own) before anything of ours imports pyarrow. It takes effect where hudi_core is
imported before pyarrow, and in every process started from this one after the import: a Spark
session's JVM and its Python workers (hudi_spark's sessions also pass it to executors).

``JE_ARROW_MALLOC_CONF``: jemalloc keeps the pages a freed buffer held for the next buffers
(``hudi_core.engine.pool`` says why, and what it costs). Where pyarrow was loaded
first (``import pyarrow`` before ``import hudi_core``, as most scripts do), jemalloc has read
Arrow's own settings already: ``LOADED_BEFORE`` tells ``hudi_core.engine.pool`` to apply ours
when it first switches to jemalloc. A process that lives for many reads and writes of other
people's (a Spark Python worker) wants Arrow's decay instead (:data:`ARROW_CONF`): hudi_spark
gives its workers that one."""

from __future__ import annotations

import os
import sys

__all__ = ["ARROW_CONF", "DECAY_MS", "JEMALLOC_CONF", "JEMALLOC_VAR", "LOADED_BEFORE", "OWN_SETTING"]

JEMALLOC_VAR = "JE_ARROW_MALLOC_CONF"
#: jemalloc's decay time of freed pages, ms (-1: never handed back; jemalloc does not purge)
DECAY_MS = -1
JEMALLOC_CONF = f"dirty_decay_ms:{DECAY_MS},muzzy_decay_ms:{DECAY_MS}"
#: Arrow's own decay: the pages of freed buffers go back to the kernel over about a second
ARROW_CONF = "dirty_decay_ms:1000,muzzy_decay_ms:1000"

#: the setting the process gave jemalloc itself before hudi_core's import (None: it gave none)
OWN_SETTING = os.environ.get(JEMALLOC_VAR)

#: pyarrow was loaded before this module, and the process gave jemalloc no setting of its own
LOADED_BEFORE = "pyarrow" in sys.modules and OWN_SETTING is None

os.environ.setdefault(JEMALLOC_VAR, JEMALLOC_CONF)
