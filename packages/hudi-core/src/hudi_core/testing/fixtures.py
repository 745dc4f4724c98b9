"""pytest fixtures over the shared compat corpus, one that runs tests twice over both Avro
codecs, and one with pyarrow's default pool as a process starts; a conftest imports them by
name: ``from hudi_core.testing.fixtures import avro_codec, compat_root, corpus_copy``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core.testing.corpus import copy_corpus_table, corpus_root

__all__ = ["avro_codec", "compat_root", "corpus_copy", "mimalloc_default", "needs_jemalloc"]


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without it
        return False
    return True


#: skips a test of ``hudi_core.engine.pool.arrow_pool``'s switch where pyarrow has no jemalloc pool
needs_jemalloc = pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow has no jemalloc pool")


@pytest.fixture(params=["compiled", "numpy"])
def avro_codec(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A test run with the compiled Avro codec (built by the install: its absence fails) and again
    with the numpy encoder and decoders; a test module takes it for all its tests with
    ``pytestmark = pytest.mark.usefixtures("avro_codec")``."""
    from hudi_core.avro import encoder

    if request.param == "numpy":
        monkeypatch.setattr(encoder, "compiled", None)
    else:
        assert encoder.compiled is not None, "hudi_core.avro._codec is not built (make setup compiles it)"
    return str(request.param)


@pytest.fixture(scope="session")
def compat_root() -> Path:
    root = corpus_root()
    if root is None:
        pytest.fail("shared/compat is missing: the corpus must sit beside the checkout (../shared/compat)")
    return root


@pytest.fixture
def corpus_copy(tmp_path: Path, compat_root: Path) -> Callable[[str], Path]:
    """``corpus_copy("tables/sample_cow/v6_empty")`` -> a writable copy of that table."""

    def make(table_path: str) -> Path:
        return copy_corpus_table(table_path, tmp_path)

    return make


@pytest.fixture
def mimalloc_default(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """pyarrow's default pool mimalloc, as a process starts without ``ARROW_DEFAULT_MEMORY_POOL``
    (what ``hudi_core.engine.pool.arrow_pool`` switches from); the pool before it afterwards."""
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    yield
    pa.set_memory_pool(before)
