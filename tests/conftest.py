"""Fixtures shared by the cross-package tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from hudi_core.testing.corpus import copy_corpus_table, corpus_root


@pytest.fixture(scope="session")
def compat_root() -> Path:
    root = corpus_root()
    if root is None:
        pytest.fail("shared/compat is missing: the corpus must sit beside the checkout (../shared/compat)")
    return root


@pytest.fixture
def corpus_copy(tmp_path: Path, compat_root: Path):
    """``corpus_copy("tables/sample_cow/v6_empty")`` -> a writable copy of that table."""

    def make(table_path: str) -> Path:
        return copy_corpus_table(table_path, tmp_path)

    return make
