"""The Apache Hudi tier: real Apache Hudi 0.15 (Spark 3.5 bundle, its own PySpark 3.5.1 venv)
against our readers and writers. One Hudi JVM per test process (each xdist worker), started on
first use and kept across modules (a start costs ~25 s of a CPU-bound tier); a test that kills
it restarts it. Tests go to whichever worker is free (``--dist worksteal``): no fixture is
bound to a module, so a module's tests may run in both workers. The environment is made on
first use (``harness/oracle.py``) and a failure to make it fails the tests, never skips them."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hudi_spark.testing import collected

sys.path.insert(0, str(Path(__file__).with_name("harness")))

from oracle import HudiOracle, OracleSetupError, ensure_oracle

__all__ = ["collected"]


class OracleHandle:
    """The process's Hudi session; ``restart()`` after a test killed it on purpose."""

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = work_dir
        self.starts = 0
        self.oracle = self._start()

    def _start(self) -> HudiOracle:
        try:
            env = ensure_oracle()
        except OracleSetupError as exc:
            pytest.fail(f"Apache Hudi oracle unavailable: {exc}", pytrace=False)
        self.starts += 1
        return HudiOracle(env, self.work_dir / f"jvm-{self.starts}")

    def restart(self) -> HudiOracle:
        self.oracle.close()
        self.oracle = self._start()
        return self.oracle


@pytest.fixture(scope="session")
def hudi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OracleHandle]:
    handle = OracleHandle(tmp_path_factory.mktemp("oracle"))
    yield handle
    handle.oracle.close()


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The process's PySpark 4 session (``local[2]``) for our Spark engine, beside the Hudi JVM:
    started by the first test that asks for it and kept (a start costs ~10 s; no test here
    changes its settings)."""
    from hudi_spark.session import spark_session

    local_dir = tmp_path_factory.mktemp("spark-local")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = spark_session(
        "local[2]",
        app_name="hudi-interop",
        conf={"spark.local.dir": str(local_dir), "spark.sql.warehouse.dir": str(local_dir / "warehouse")},
    )
    yield session
    session.stop()
