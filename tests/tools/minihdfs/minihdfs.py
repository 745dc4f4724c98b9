"""An HDFS mini cluster on loopback for the tests (Hadoop's ``MiniDFSCluster``).

``ensure_minihdfs()`` makes, once per machine and in a cache outside the repository
(``${HUDI_PY_CACHE:-~/.cache/hudi-py}/hdfs``), the jars of Hadoop's shaded
``hadoop-client-minicluster`` (copied there by Maven's own client) and ``MiniHdfs.class``
(compiled by the JDK's ``javac``). ``MiniHdfs`` starts a cluster on a free port and runs until its
stdin closes, so it never outlives the test process. A failure to make any of it is one line
(:class:`MiniHdfsError`); the tests fail, never skip. ``hdfs_root`` is the tests' fixture (the
repository's root ``conftest.py`` imports it for every tier).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/tools, when imported on its own

from hudi_py_cache import cache_root

HADOOP_VERSION = "3.3.6"
#: a running cluster the tests use instead of starting one (``hdfs://host:port/folder``)
HDFS_URI_ENV = "HUDI_TEST_HDFS_URI"
#: the settings a Hadoop HDFS client (Apache Hudi's) needs for the mini cluster's one DataNode:
#: an append (Hudi's to its log files) must not ask for a replacement of it
ONE_DATANODE = {"dfs.replication": "1", "dfs.client.block.write.replace-datanode-on-failure.policy": "NEVER"}
SOURCE = Path(__file__).with_name("MiniHdfs.java")
START_TIMEOUT_S = 180
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
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
    return cache_root() / "hdfs"


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        # Maven prints its errors on stdout, colour codes included; javac on stderr.
        lines = [_ANSI.sub("", line).strip() for line in (done.stdout + done.stderr).splitlines()]
        errors = [line.removeprefix("[ERROR]").strip() for line in lines if line.startswith("[ERROR]")]
        errors = [e.removesuffix("-> [Help 1]").strip() for e in errors if e] or [
            line for line in lines if line
        ]
        raise MiniHdfsError(
            f"{what} failed: {errors[0][:400] if errors else f'exit status {done.returncode}'}"
        )


def ensure_minihdfs() -> str:
    """The Java classpath (compiled ``MiniHdfs`` first), made if missing."""
    root = _cache()
    root.mkdir(parents=True, exist_ok=True)
    jars, classes = root / "jars", root / "classes"
    done = root / "jars.pom"  # the pom whose jars are all in jars/, written last
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers: one fetches, the others wait
        if not done.exists() or done.read_text() != _POM:
            for tool in ("mvn", "javac", "java"):
                if shutil.which(tool) is None:
                    raise MiniHdfsError(f"the HDFS mini cluster needs {tool} on PATH")
            done.unlink(missing_ok=True)
            shutil.rmtree(jars, ignore_errors=True)
            (root / "pom.xml").write_text(_POM)
            _run(["mvn", "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={jars}"], root,
                 f"fetching hadoop-client-minicluster {HADOOP_VERSION} from Maven Central")  # fmt: skip
            done.write_text(_POM)
        classpath = os.pathsep.join(str(j) for j in sorted(jars.glob("*.jar")))
        compiled_from = classes / "MiniHdfs.java"  # the source the class was compiled from
        if not compiled_from.exists() or compiled_from.read_bytes() != SOURCE.read_bytes():
            shutil.rmtree(classes, ignore_errors=True)
            classes.mkdir()
            _run(
                ["javac", "-cp", classpath, "-d", str(classes), str(SOURCE)], root, "compiling MiniHdfs.java"
            )
            shutil.copyfile(SOURCE, compiled_from)
    return f"{classes}{os.pathsep}{classpath}"


@contextlib.contextmanager
def minihdfs(scratch: Path) -> Iterator[str]:
    """A running cluster's URI (``hdfs://127.0.0.1:PORT``), stopped on exit."""
    classpath = ensure_minihdfs()
    log = open(scratch / "minihdfs.log", "wb")  # closed in the finally below
    # the web servers' work folders (Jetty's, one per node) go under scratch, not the machine's /tmp
    (scratch / "java-tmp").mkdir(exist_ok=True)
    proc = subprocess.Popen(
        ["java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", f"-Djava.io.tmpdir={scratch / 'java-tmp'}",
         "-cp", classpath, "MiniHdfs", str(scratch / "dfs")],
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
    wait_for_namenode(found[0], timeout_s=30)
    return found[0]


def wait_for_namenode(uri: str, *, timeout_s: float) -> None:
    """Return once the NameNode of ``hdfs://host[:port]/...`` accepts connections, else raise.

    hdfs-native retries a refused connection for minutes inside one call; a test session asks the
    TCP port first, so a missing cluster fails in seconds, in one line.
    """
    parsed = urllib.parse.urlsplit(uri)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 8020
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection((host, port), timeout=2).close()
            return
        except OSError as e:
            if time.monotonic() > deadline:
                raise MiniHdfsError(f"the NameNode at {host}:{port} does not answer: {e}") from None
            time.sleep(0.2)


@pytest.fixture(scope="session")
def hdfs_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The HDFS folder the tests use: under the cluster ``HUDI_TEST_HDFS_URI`` names, else on a
    mini cluster on loopback started for this test session (under xdist, one per worker that
    runs an HDFS test). Never skipped: a cluster that cannot be had fails the tests with one
    line."""
    try:
        if named := os.environ.get(HDFS_URI_ENV):
            wait_for_namenode(named, timeout_s=10)
            yield named.rstrip("/")
            return
        with minihdfs(tmp_path_factory.mktemp("minihdfs")) as uri:
            yield f"{uri}/hudi-tests"
            return
    except MiniHdfsError as exc:
        error = str(exc)
    pytest.fail(f"HDFS mini cluster unavailable: {error}", pytrace=False)  # outside the except: one line
