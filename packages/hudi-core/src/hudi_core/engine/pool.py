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

jemalloc keeps the pages of the buffers it freed for the next buffers (decay off). Arrow's own
settings hand them back after a decay time, and a read that decodes batch after batch then takes
a page fault for each page of every new batch: reading the 80 base files of a 10M-row table batch
by batch (each batch dropped) took 3.3-3.6 s (1.0-1.2 s of it in the kernel, 350-450k page faults)
against 2.5-2.7 s (0.2 s, 1-30k) with decay off, at the same peak RSS (258-282 MB). jemalloc reads
its settings when pyarrow loads: ``hudi_core.arrow_env`` sets them on hudi_core's import for this
process, where pyarrow is not loaded yet, and for the processes it starts.

The price: the pages stay with the process until it exits. With decay off jemalloc does not
purge (its ``arena.<i>.purge`` does nothing at -1), and pyarrow's ``release_unused()`` on
jemalloc's pool names no arena (Arrow's ``ARROW_STRINGIFY(MALLCTL_ARENAS_ALL)`` spells the macro's
name, not 4096), so nothing here can hand them back: a 10M-row read's result, dropped, left the
process at 3.8-4.2 GB of RSS, which the next reads and writes reuse (no fresh pages: the second
read of it took 0.13M page faults against 1.0M). A long-lived process that wants the memory back
between its reads sets its own ``JE_ARROW_MALLOC_CONF`` (Arrow's ``dirty_decay_ms:1000,
muzzy_decay_ms:1000``) or its own pool (``ARROW_DEFAULT_MEMORY_POOL=mimalloc`` with
``MIMALLOC_PURGE_DELAY=100000``, both set before pyarrow loads, keeps freed pages for reuse and
hands them back on ``pa.default_memory_pool().release_unused()``: that 10M-row read took
8.8-10.1 s against 7.2-7.6 s from ours, and left 0.5 GB).

Where pyarrow was loaded before hudi_core (``import pyarrow`` first, as most scripts do:
``hudi_core.arrow_env.LOADED_BEFORE``), jemalloc has read Arrow's settings, which hand freed pages
back after 1 s; the first switch applies ours to every arena but the first
(:func:`_apply_decay_late`). Not in a Spark Python worker, which serves task after task and keeps
the decay its environment gives it (``hudi_core.arrow_env.SPARK_WORKER``). The 10M-row table of
the speed benchmark in fresh processes, pyarrow imported first, page faults before / after this /
with hudi_core imported first: snapshot read 1.56-1.61M / 1.02M / 0.96-0.97M, compaction
1.16-1.17M / 0.14M / 0.08-0.12M.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa

from hudi_core import arrow_env

__all__ = ["arrow_pool"]

_guard = threading.Lock()
_depth = 0
_saved: pa.MemoryPool | None = None
#: our decay applied to a jemalloc that had read Arrow's settings (see the module doc)
_late_setting_applied = False


def _jemalloc() -> pa.MemoryPool | None:
    global _late_setting_applied
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return None  # the process chose its pool
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without it
        return None
    if arrow_env.LOADED_BEFORE and not _late_setting_applied:
        _late_setting_applied = True
        _apply_decay_late(pool)
    return pool


def _apply_decay_late(pool: pa.MemoryPool) -> None:
    """``JE_ARROW_MALLOC_CONF``'s decay for a jemalloc that read Arrow's settings when pyarrow
    loaded. ``pa.jemalloc_set_decay_ms`` sets it for the arenas jemalloc makes from then on, not
    for the first, made when it started. A thread is bound to the arena with the fewest threads
    when it first calls jemalloc (setting the decay is such a call), so a parked thread makes
    that call and holds the first arena: the other threads, this one included, get arenas made
    with our decay (a thread that used jemalloc before keeps its arena and Arrow's decay)."""
    bound = threading.Event()

    def hold() -> None:
        try:
            pa.jemalloc_set_decay_ms(arrow_env.DECAY_MS)  # binds this thread to the first arena
            pa.allocate_buffer(64, memory_pool=pool)  # (an allocation binds it, if that did not)
        except Exception:  # Arrow's settings stay: slower, never wrong
            return
        finally:
            bound.set()  # the caller never waits on a thread that failed
        threading.Event().wait()  # parked until the process ends, holding the arena

    threading.Thread(target=hold, name="hudi-core-jemalloc-first-arena", daemon=True).start()
    bound.wait()


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
                pa.set_memory_pool(_saved)  # jemalloc keeps the freed pages (see the module doc)
                _saved = None
