"""Where the test tooling keeps what it makes once per machine (venvs, jars, class archives):
``$HUDI_PY_CACHE``, default ``~/.cache/hudi-py``, outside the repository."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("HUDI_PY_CACHE") or Path.home() / ".cache" / "hudi-py")
