"""The Apache Hudi tier: real Apache Hudi 0.15 (Spark 3.5 bundle, its own PySpark 3.5.1 venv)
against our readers and writers. One Hudi JVM per test module; the environment is made on first
use (``harness/oracle.py``) and a failure to make it fails the tests, never skips them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).with_name("harness")))

from oracle import HudiOracle, OracleSetupError, ensure_oracle


class OracleHandle:
    """The module's Hudi session; ``restart()`` after a test killed it on purpose."""

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


@pytest.fixture(scope="module")
def hudi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OracleHandle]:
    handle = OracleHandle(tmp_path_factory.mktemp("oracle"))
    yield handle
    handle.oracle.close()
