from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from hudi_core.config.property import HoodieConfig
from hudi_core.engine import engine_for


def test_plugins_command_lists_spark_engine_from_hudi_spark() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hudi_core.cli.main", "plugins", "--json"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    engines = {e["name"]: e["distribution"] for e in json.loads(out.stdout)["engine"]}
    assert engines.get("SPARK") == "hudi-spark"
    assert engines.get("LOCAL") == "hudi-core"


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_engine_for_spark_maps_in_spark_tasks(spark: Any) -> None:
    engine = engine_for(HoodieConfig({"hoodie.engine": "spark"}))
    assert engine.name == "spark"
    assert engine.parallelism == 2
    # the function runs in Python workers, not in this process; results come back in order
    pids = engine.map(lambda x: (x * x, os.getpid()), list(range(5)))
    assert [sq for sq, _ in pids] == [0, 1, 4, 9, 16]
    assert os.getpid() not in {pid for _, pid in pids}
    assert engine.map(str, []) == []
