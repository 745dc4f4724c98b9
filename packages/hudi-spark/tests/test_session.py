"""``spark_session``'s settings: what every session needs, loopback only on this machine."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hudi_core.arrow_env import JEMALLOC_CONF
from hudi_spark.session import FAST_CONF, REQUIRED_CONF, is_local, session_settings


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]", "local-cluster[2,1,1024]"])
def test_local_masters_keep_the_driver_on_loopback(master: str) -> None:
    settings = session_settings(master)
    assert is_local(master)
    assert settings["spark.driver.host"] == settings["spark.driver.bindAddress"] == "127.0.0.1"


@pytest.mark.parametrize("master", ["yarn", "spark://10.0.0.5:7077", "k8s://https://api:6443", "localhost"])
def test_cluster_masters_let_executors_reach_the_driver(master: str) -> None:
    """A driver bound to loopback is unreachable from executors on other machines."""
    for fast in (True, False):
        settings = session_settings(master, fast=fast)
        assert not is_local(master)
        assert "spark.driver.host" not in settings and "spark.driver.bindAddress" not in settings
        assert all(settings[k] == v for k, v in REQUIRED_CONF.items())


def test_fast_settings_are_optional_and_given_settings_win() -> None:
    quick = session_settings("local[2]")
    assert quick["spark.driver.extraJavaOptions"] == FAST_CONF["spark.driver.extraJavaOptions"]
    full = session_settings("local[2]", {"spark.driver.memory": "6g"}, fast=False)
    assert "spark.driver.extraJavaOptions" not in full  # the JVM's full JIT for real jobs
    assert full["spark.driver.memory"] == "6g"
    assert full["spark.sql.session.timeZone"] == "UTC"
    # a default-parallelism of our own would cap a bigger local machine's write tasks
    assert "spark.default.parallelism" not in quick


@pytest.mark.parametrize("master", ["local[2]", "yarn"])
def test_executors_get_the_jemalloc_setting(master: str) -> None:
    """On a cluster the executors' Python workers start from their own environment, not ours."""
    assert session_settings(master)["spark.executorEnv.JE_ARROW_MALLOC_CONF"] == JEMALLOC_CONF


def test_a_python_worker_gets_the_jemalloc_setting(spark: Any) -> None:
    def task(batches: Any) -> Any:
        import os

        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"conf": [os.environ.get("JE_ARROW_MALLOC_CONF")]})

    (row,) = spark.range(0, 1, 1, 1).mapInArrow(task, "conf string").collect()
    assert row.conf == JEMALLOC_CONF
