"""Fixtures shared by the cross-package tests."""

from __future__ import annotations

from hudi_core.testing.fixtures import compat_root, corpus_copy

__all__ = ["compat_root", "corpus_copy"]
