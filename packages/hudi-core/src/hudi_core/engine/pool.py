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

jemalloc keeps the pages of the buffers it freed for the next buffers, and when the outermost
caller leaves, hands them back to the kernel (``release_unused``). Arrow's own settings hand them
back after a decay time, and a read that decodes batch after batch then takes a page fault for
each page of every new batch: reading the 80 base files of a 10M-row table batch by batch (each
batch dropped) took 3.3-3.6 s (1.0-1.2 s of it in the kernel, 350-450k page faults) against
2.5-2.7 s (0.2 s, 1-30k) with decay off, at the same peak RSS (258-282 MB). jemalloc reads its
settings when pyarrow loads: ``hudi_core.arrow_env`` sets them on hudi_core's import for this
process, where pyarrow is not loaded yet, and for the processes it starts. Buffers a caller frees
after the outermost caller left (a read's result, dropped) stay with jemalloc until the next one
leaves, or ``pa.jemalloc_memory_pool().release_unused()``.
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
                pa.default_memory_pool().release_unused()  # the pages kept for reuse, to the kernel
                pa.set_memory_pool(_saved)
                _saved = None
