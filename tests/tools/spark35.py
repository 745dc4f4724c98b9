"""The PySpark 3.5 environment of ``make test-spark35``: a venv with PySpark 3.5 and this
checkout's hudi-core, hudi-spark and hudi-storage-s3 installed editable, cached outside the repository
(``$HUDI_PY_CACHE/spark35``, default ``~/.cache/hudi-py/spark35``; one per checkout) like the
Apache Hudi oracle's.

``python tests/tools/spark35.py`` makes it if missing (or if a pyproject of ours changed) and
prints its interpreter, so ``$(python tests/tools/spark35.py) -m pytest ...`` runs there.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from hudi_py_cache import cache_root

PYSPARK_VERSION = "3.5.1"
REPO = Path(__file__).resolve().parents[2]
#: (hudi-storage-s3: the Spark tier's jobs on S3 run in this venv too)
PACKAGES = ("packages/hudi-core", "packages/hudi-spark", "packages/hudi-storage-s3")
REQUIREMENTS = (f"pyspark=={PYSPARK_VERSION}", "pandas>=2.2,<3", "pyarrow", "pytest>=8", "pytest-xdist>=3.5")
#: uv does not compile bytecode unless asked; with PYTHONDONTWRITEBYTECODE set (CI) every Spark
#: Python worker would then compile pandas and pyarrow from source (~1 s each time)
INSTALL = ("pip", "install", "-q", "--compile-bytecode")


def _stamp() -> str:
    h = hashlib.sha256("\n".join((*REQUIREMENTS, *INSTALL)).encode())
    for pkg in PACKAGES:
        h.update((REPO / pkg / "pyproject.toml").read_bytes())
    return h.hexdigest()


def ensure() -> Path:
    """The venv's python, built (under a lock: test workers may share it) when missing or stale."""
    root = cache_root() / "spark35"
    root.mkdir(parents=True, exist_ok=True)
    # one venv per checkout: the editable installs point into it
    venv = root / f"pyspark-{PYSPARK_VERSION}-{hashlib.sha256(str(REPO).encode()).hexdigest()[:8]}"
    python = venv / "bin" / "python"
    stamp = venv / ".complete"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists() or stamp.read_text() != _stamp():
            uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
            if uv is None:
                raise SystemExit("uv is needed to build the PySpark 3.5 venv (make setup installs it)")
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
            editable = [a for pkg in PACKAGES for a in ("-e", str(REPO / pkg))]
            subprocess.run([uv, *INSTALL, "--python", str(python), *REQUIREMENTS, *editable], check=True)
            stamp.write_text(_stamp())
    return python


if __name__ == "__main__":
    print(ensure())
