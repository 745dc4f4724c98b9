"""Apache Hudi writes, we read: every query answers exactly as Hudi Spark answers it.

Each workload is a seeded sequence of Hudi Spark datasource writes (operations, payloads, key
generators, indexes, log formats and table services drawn per layout); afterwards snapshot,
read_optimized, incremental and time-travel queries are put to Hudi Spark and to our reader, and
the answers must be equal row for row and value for value, meta columns included.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from layouts import BASE_SEED, LAYOUTS
from runner import compare_all, hudi_write, model_differences
from workloads import generate

pytestmark = [pytest.mark.interop, pytest.mark.slow]


@pytest.mark.parametrize("n", range(len(LAYOUTS)), ids=lambda n: f"layout{n}")
def test_our_answers_equal_hudis(hudi, tmp_path: Path, n: int) -> None:
    w = generate(BASE_SEED + n, **LAYOUTS[n])
    path = tmp_path / w.name
    for step in w.steps:
        hudi_write(hudi.oracle, path, w, step)
    found = compare_all(hudi.oracle, path, w)
    assert not model_differences(path, w), f"{w.name}: {model_differences(path, w)}"
    assert not found, f"{w.name} (seed {w.seed}, ops {[s.operation for s in w.steps]}): {found}"
