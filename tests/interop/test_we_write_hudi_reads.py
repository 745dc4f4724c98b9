"""We write, Apache Hudi reads: the layouts of ``test_hudi_writes_we_read`` written by our local
engine (with the option dict the Hudi job uses), including our compaction, cleaning and
overwrites; Hudi Spark's snapshot, read_optimized, incremental and time-travel answers equal ours,
and our snapshot equals the workload's model."""

from __future__ import annotations

from pathlib import Path

import pytest
from layouts import BASE_SEED, LAYOUTS
from runner import compare_all, model_differences, our_write
from workloads import generate

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("n", range(len(LAYOUTS)), ids=lambda n: f"layout{n}")
def test_hudis_answers_equal_ours_and_the_model(hudi, tmp_path: Path, n: int) -> None:
    w = generate(BASE_SEED + 100 + n, **LAYOUTS[n])
    path = tmp_path / w.name
    for step in w.steps:
        our_write(path, w, step)
    assert not model_differences(path, w), f"{w.name}: {model_differences(path, w)}"
    found = compare_all(hudi.oracle, path, w)
    assert not found, f"{w.name} (seed {w.seed}, ops {[s.operation for s in w.steps]}): {found}"
