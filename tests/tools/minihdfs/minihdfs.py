"""An HDFS mini cluster on loopback for the tests (Hadoop's ``MiniDFSCluster``).

``ensure_minihdfs()`` makes, once per machine and in a cache outside the repository
(``${HUDI_PY_CACHE:-~/.cache/hudi-py}/minihdfs``), the Java classpath of Hadoop's shaded
``hadoop-client-minicluster`` (fetched by Maven's own client) and compiles ``MiniHdfs.java`` with
the JDK's ``javac``. ``MiniHdfs`` starts a cluster on a free port and runs until its stdin closes.
A failure to make any of it is one line (:class:`MiniHdfsError`); the tests fail, never skip.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

HADOOP_VERSION = "3.3.6"
SOURCE = Path(__file__).with_name("MiniHdfs.java")
START_TIMEOUT_S = 180
_POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>hudi-py.tests</groupId><artifactId>minihdfs</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-minicluster</artifactId><version>{HADOOP_VERSION}</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-runtime</artifactId><version>{HADOOP_VERSION}</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-api</artifactId><version>{HADOOP_VERSION}</version></dependency>
    <dependency><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId><version>1.2.22</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
"""


class MiniHdfsError(RuntimeError):
    """The mini cluster could not be built or started."""


def _cache() -> Path:
    return Path(os.environ.get("HUDI_PY_CACHE") or Path.home() / ".cache" / "hudi-py") / "minihdfs"


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise MiniHdfsError(f"{what} failed: {lines[-1] if lines else f'exit status {done.returncode}'}")


def ensure_minihdfs() -> str:
    """The Java classpath (compiled ``MiniHdfs`` first), made if missing."""
    root = _cache()
    root.mkdir(parents=True, exist_ok=True)
    classes = root / "classes"
    cp_file = root / "classpath.txt"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pom = root / "pom.xml"
        if not cp_file.exists() or not pom.exists() or pom.read_text() != _POM:
            for tool in ("mvn", "javac", "java"):
                if shutil.which(tool) is None:
                    raise MiniHdfsError(f"the HDFS mini cluster needs {tool} on PATH")
            pom.write_text(_POM)
            _run(["mvn", "-q", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}"], root,
                 f"fetching hadoop-client-minicluster {HADOOP_VERSION} from Maven Central")  # fmt: skip
        classpath = cp_file.read_text().strip()
        compiled = classes / "MiniHdfs.class"
        if not compiled.exists() or compiled.stat().st_mtime < SOURCE.stat().st_mtime:
            classes.mkdir(exist_ok=True)
            _run(
                ["javac", "-cp", classpath, "-d", str(classes), str(SOURCE)], root, "compiling MiniHdfs.java"
            )
    return f"{classes}{os.pathsep}{classpath}"


@contextlib.contextmanager
def minihdfs(scratch: Path) -> Iterator[str]:
    """A running cluster's URI (``hdfs://127.0.0.1:PORT``), stopped on exit."""
    classpath = ensure_minihdfs()
    log = open(scratch / "minihdfs.log", "wb")  # closed in the finally below
    proc = subprocess.Popen(
        ["java", "-Xmx512m", "-XX:+UseSerialGC", "-cp", classpath, "MiniHdfs", str(scratch / "dfs")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        uri = _ready(proc, scratch / "minihdfs.log")
        yield uri
    finally:
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        log.close()


def _ready(proc: subprocess.Popen[str], log: Path) -> str:
    found: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("READY "):
                found.append(line.split()[1])
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    if not found:
        proc.kill()
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        raise MiniHdfsError(f"the HDFS mini cluster did not start: {' | '.join(tail)}")
    uri = found[0]
    host, port = uri.removeprefix("hdfs://").split(":")
    deadline = time.monotonic() + 30  # hdfs-native retries a refused connection for minutes
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=2).close()
            return uri
        except OSError:
            if time.monotonic() > deadline:
                raise MiniHdfsError(f"the NameNode at {uri} does not answer") from None
            time.sleep(0.2)
