from __future__ import annotations

from pathlib import Path

import pytest
from hudi_core.testing.corpus import corpus_root
from hudi_core.testing.fixtures import avro_codec

__all__ = ["avro_codec", "trips_log"]


@pytest.fixture
def trips_log() -> Path:
    """The trips table's Avro-block log file from the compat corpus."""
    root = corpus_root()
    for p in sorted((root / "tables").rglob(".*.log.*")) if root is not None else []:
        if "trips_mor_avro" in str(p):
            return p
    pytest.skip("the compat corpus with the trips table is not available")
