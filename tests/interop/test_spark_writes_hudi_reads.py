"""We write with our Spark engine (``hudi_spark.write`` on PySpark 4, Python in the tasks), Apache
Hudi reads: Hudi Spark's answers equal ours, and our snapshot equals the workload's model."""

from __future__ import annotations

from pathlib import Path

import pytest
from layouts import BASE_SEED, LAYOUTS
from runner import compare_all, model_differences, spark_write
from workloads import generate

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("n", range(len(LAYOUTS)), ids=lambda n: f"layout{n}")
def test_hudis_answers_equal_our_spark_writes(hudi, spark, tmp_path: Path, n: int) -> None:
    w = generate(BASE_SEED + 200 + n, **LAYOUTS[n])
    path = tmp_path / w.name
    for step in w.steps:
        spark_write(spark, path, w, step)
    assert not model_differences(path, w), f"{w.name}: {model_differences(path, w)}"
    found = compare_all(hudi.oracle, path, w)
    assert not found, f"{w.name} (seed {w.seed}, ops {[s.operation for s in w.steps]}): {found}"
