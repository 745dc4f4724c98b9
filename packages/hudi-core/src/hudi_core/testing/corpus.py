"""The shared compatibility corpus (``shared/compat``): where it is, what it holds."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

__all__ = ["copy_corpus_table", "corpus_root", "corpus_tables"]


def corpus_root() -> Path | None:
    """``$HUDI_COMPAT_DIR``, else ``shared/compat`` beside the repository checkout."""
    env = os.environ.get("HUDI_COMPAT_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent.parent / "shared" / "compat"
        if (candidate / "manifest.json").exists():
            return candidate
    return None


def corpus_tables() -> list[dict[str, Any]]:
    root = corpus_root()
    if root is None:
        return []
    manifest: dict[str, Any] = json.loads((root / "manifest.json").read_text())
    tables: list[dict[str, Any]] = manifest["tables"]
    return tables


def copy_corpus_table(table_path: str | Path, dest: Path) -> Path:
    """Copy a corpus table somewhere writable (the corpus itself is read-only)."""
    root = corpus_root()
    assert root is not None, "the compat corpus is not available"
    src = root / table_path
    out = dest / src.name
    shutil.copytree(src, out)
    for p in [out, *out.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return out
