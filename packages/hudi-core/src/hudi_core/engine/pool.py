"""The memory pool this process's reads and writes allocate from.

pyarrow's default pool is mimalloc's. On the 2-core machines this project is measured on, it
serves our work poorly:

- a read that returns one table keeps every buffer it decodes, so each file's columns need
  memory the process has not used before, and mimalloc hands that out ever more slowly as the
  result grows: 85 files of a 10M-row table, each result kept, read in 6.9 s against 2.9 s from
  jemalloc's pool (2.3 s when each result is dropped);
- a write's threads each allocate and free their files' buffers, and mimalloc keeps what one
  thread freed for that thread: the first upsert of 100k rows into a 1M-row table peaked at
  478 MB of RSS from mimalloc against 379 MB from jemalloc and 371 MB from the system allocator,
  the same 110-130 MB of Arrow buffers live at most (fresh processes, one each);
- a Spark read task's Python worker peaked at 319-357 MB from mimalloc against 288-300 MB from
  jemalloc on the 1M-row trips table (hudi_spark's ``read_slices``).

While :func:`arrow_pool` is entered (``HudiTable.read``, hudi_spark's read tasks and every writer
and table service, see ``hudi_core.write.transaction.writer_guard``), pyarrow's default pool is
jemalloc's, if this pyarrow has it and the process left the default alone (no
``ARROW_DEFAULT_MEMORY_POOL``, the default still mimalloc); the buffers keep their pool, so the
switch back changes nothing for them. Nested and concurrent callers share one switch.

jemalloc runs with the settings Arrow gives it (freed pages go back to the kernel over about a
second), or with the process's own ``JE_ARROW_MALLOC_CONF``. hudi_core used to keep every freed
page instead (decay off, set on its import). Where a process does one read, that saved page
faults: 80 base files read batch by batch, 2.5-2.7 s against 3.3-3.6 s. But a process that reads
and writes again and again kept much and reused little. jemalloc keeps a freed page in the arena
of the thread that freed it, and each call starts new threads, which need not get the same
arenas. So the next call still took fresh pages from the kernel, and the process grew. (With one
arena, the read after compaction below grew by 0.6-0.8 GB instead of 2.6-2.7 GB.) The speed
benchmark's 10M-row sequence in one process, three runs each, decay off / Arrow's:

- compaction: 7.1-7.3 s against 5.4-5.9 s;
- the read after it: 5.2-5.5 s against 2.4-3.7 s, at a peak RSS of 7.0-7.2 GB against 3.6-3.7 GB;
- the snapshot read: 4.0-5.7 s against 3.5-3.9 s;
- an upsert: 2.8-3.0 s against 3.3-3.4 s (the median of five), the one phase that lost.

At 1M rows the times are the same, and the peak RSS is 0.71-0.80 GB against 0.63-0.70 GB.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa

__all__ = ["arrow_pool"]

_guard = threading.Lock()
_depth = 0
_saved: pa.MemoryPool | None = None


def _jemalloc() -> pa.MemoryPool | None:
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return None  # the process chose its pool
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without it
        return None


@contextmanager
def arrow_pool() -> Iterator[None]:
    """Allocate from jemalloc's pool for the duration (see the module doc)."""
    global _depth, _saved
    with _guard:
        if _depth == 0 and pa.default_memory_pool().backend_name == "mimalloc":
            pool = _jemalloc()
            if pool is not None:
                _saved = pa.default_memory_pool()
                pa.set_memory_pool(pool)
        _depth += 1
    try:
        yield
    finally:
        with _guard:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                pa.set_memory_pool(_saved)
                _saved = None
