"""A whole-table read and a write allocate from jemalloc's pool where pyarrow has it and the
process kept the default (mimalloc), and leave pyarrow's default pool as they found it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hudi_core import HudiTable
from hudi_core.engine import pool as engine_pool
from hudi_core.engine.pool import arrow_pool
from hudi_core.testing.fixtures import needs_jemalloc


@pytest.fixture
def switches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The backends pyarrow's default pool is set to, in order."""
    seen: list[str] = []
    real = engine_pool.pa.set_memory_pool

    def spy(pool: pa.MemoryPool) -> None:
        seen.append(pool.backend_name)
        real(pool)

    monkeypatch.setattr(engine_pool.pa, "set_memory_pool", spy)
    return seen


def _table(base: Path) -> HudiTable:
    """A merge-on-read table of 1,000 rows, ids k0..k999 with ts = i, in partitions a and b."""
    table = HudiTable.create(str(base), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts")  # fmt: skip
    table.bulk_insert(
        pa.table({"id": [f"k{i}" for i in range(1000)], "ts": list(range(1000)), "p": ["a", "b"] * 500})
    )
    return table


@needs_jemalloc
def test_a_read_allocates_from_jemalloc_and_restores_the_default(tmp_path: Path, mimalloc_default: None,
                                                                  switches: list[str]) -> None:  # fmt: skip
    table = _table(tmp_path / "t")
    switches.clear()
    rows = HudiTable.open(table.base_uri).read()
    assert rows.num_rows == 1000
    assert switches == ["jemalloc", "mimalloc"]  # switched for the read, then back
    assert pa.default_memory_pool().backend_name == "mimalloc"


@needs_jemalloc
@pytest.mark.parametrize("mode", ["single_writer", "optimistic_concurrency_control"])
def test_a_write_and_a_table_service_allocate_from_jemalloc(tmp_path: Path, mimalloc_default: None,
                                                             switches: list[str], mode: str) -> None:  # fmt: skip
    table = _table(tmp_path / "t")
    options = {"hoodie.write.concurrency.mode": mode}
    if mode != "single_writer":
        options["hoodie.write.lock.provider"] = (
            "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
        )
    switches.clear()
    table.upsert(pa.table({"id": ["k1", "k2000"], "ts": [5000, 5001], "p": ["b", "a"]}), options=options)
    assert switches == ["jemalloc", "mimalloc"]  # the whole write, its post-commit services too
    switches.clear()
    table.compact(options)
    assert switches == ["jemalloc", "mimalloc"]
    assert pa.default_memory_pool().backend_name == "mimalloc"
    rows = HudiTable.open(table.base_uri).read()
    assert rows.num_rows == 1001
    assert rows.filter(pc.equal(rows["id"], "k1"))["ts"].to_pylist() == [5000]


@needs_jemalloc
def test_nested_and_concurrent_reads_share_one_switch(mimalloc_default: None) -> None:
    inside = threading.Barrier(2)
    names: list[str] = []

    def read() -> None:
        with arrow_pool():
            inside.wait()
            with arrow_pool():
                names.append(pa.default_memory_pool().backend_name)
            inside.wait()

    threads = [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert names == ["jemalloc", "jemalloc"]
    assert pa.default_memory_pool().backend_name == "mimalloc"


def test_a_pool_the_process_chose_is_left_alone(
    mimalloc_default: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    pa.set_memory_pool(pa.system_memory_pool())  # chosen in code
    with arrow_pool():
        assert pa.default_memory_pool().backend_name == "system"
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")  # chosen in the environment
    with arrow_pool():
        assert pa.default_memory_pool().backend_name == "mimalloc"
    assert pa.default_memory_pool().backend_name == "mimalloc"


#: page faults this thread takes for a new 32 MB buffer (the scripts' shared part)
_FAULTS = """
values = pa.array(np.arange(4_000_000))
def faults_of_a_new_buffer():
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    del_me = pc.add(values, 1)
    del del_me
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before
"""
#: in a fresh interpreter: pyarrow and hudi_core in the order given, then 32 MB allocated inside
#: ``arrow_pool``, freed, and allocated again after Arrow's decay time (1 s); prints the jemalloc
#: setting in the environment, the page faults of the second allocation and of the first
_REUSE = (
    """
import os, resource, time
{imports}
import numpy as np, pyarrow.compute as pc
from hudi_core.engine.pool import arrow_pool
"""
    + _FAULTS
    + """
with arrow_pool():
    assert pa.default_memory_pool().backend_name == "jemalloc"
    first = faults_of_a_new_buffer()
    time.sleep(1.5)
    print(os.environ.get("JE_ARROW_MALLOC_CONF"), faults_of_a_new_buffer(), first)
"""
)


@needs_jemalloc
@pytest.mark.parametrize(
    "imports", ["import hudi_core\nimport pyarrow as pa", "import pyarrow as pa\nimport hudi_core"]
)
def test_freed_pages_go_back_to_the_kernel_whatever_the_import_order(imports: str) -> None:
    """hudi_core leaves jemalloc's settings to Arrow: a long-lived process's memory follows what it
    holds, where keeping every freed page grew it call after call (see ``engine.pool``)."""
    clean = {
        k: v for k, v in os.environ.items() if k not in ("JE_ARROW_MALLOC_CONF", "ARROW_DEFAULT_MEMORY_POOL")
    }
    out = subprocess.run([sys.executable, "-c", _REUSE.format(imports=imports)], env=clean, capture_output=True,
                         text=True, check=True).stdout.split()  # fmt: skip
    setting, again, first = out[0], int(out[1]), int(out[2])
    assert setting == "None"  # nothing set on import
    assert first > 4000  # 32 MB of new pages (4 KB each) the first time
    assert again > first // 2  # handed back after the decay time: fresh pages again
