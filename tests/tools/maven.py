"""Jars for the test tools, fetched by Maven's own client into its local repository (``~/.m2``,
or ``$MAVEN_REPO_LOCAL``) when missing: Apache Hudi's Spark bundle, Hadoop's S3A connector."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

from hudi_py_cache import cache_root


class MavenError(RuntimeError):
    """A jar could not be fetched (no ``mvn``, or Maven's client failed)."""


def jar_path(coordinates: str) -> Path:
    """Where Maven's local repository keeps the jar of ``group:artifact:version``."""
    group, artifact, version = coordinates.split(":")
    repo = Path(os.environ.get("MAVEN_REPO_LOCAL") or Path.home() / ".m2" / "repository")
    return repo.joinpath(*group.split("."), artifact, version, f"{artifact}-{version}.jar")


def ensure_jars(*coordinates: str) -> tuple[Path, ...]:
    """The jars of ``coordinates`` (each alone, not its dependencies), fetched if missing, under
    a lock: test workers share the repository."""
    jars = tuple(jar_path(c) for c in coordinates)
    if all(j.exists() for j in jars):
        return jars
    cache_root().mkdir(parents=True, exist_ok=True)
    with open(cache_root() / "maven.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for c, jar in zip(coordinates, jars, strict=True):
            if not jar.exists():
                _fetch(c, jar)
    return jars


def _fetch(coordinates: str, jar: Path) -> None:
    if shutil.which("mvn") is None:
        raise MavenError(f"fetching {coordinates} needs Maven's client (mvn), which is not on PATH")
    cmd = ["mvn", "-q", "-B", "dependency:get", f"-Dartifact={coordinates}", "-Dtransitive=false"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise MavenError(
            f"fetching {coordinates} from Maven Central failed: {detail[-1] if detail else done.returncode}"
        )
    if not jar.exists():
        raise MavenError(f"Maven reported success but {jar} is missing")
