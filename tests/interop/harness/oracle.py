"""The Apache Hudi oracle's environment and its client.

``ensure_oracle()`` makes, once per machine, what real Apache Hudi needs to run beside our code,
in a cache outside the repository (``$HUDI_PY_CACHE``, default ``~/.cache/hudi-py``):

- ``oracle/pyspark-3.5.1/``: a virtual environment with PySpark 3.5.1 (Hudi 0.15 is built
  against it; 3.5.2+ breaks some of its catalog calls), pyarrow and pandas;
- Hudi's Spark bundle, fetched by Maven's own client into its local repository
  (``tests/tools/maven.py``), and Hadoop's S3A connector with its AWS SDK (``s3a_jars``,
  ``tests/tools/s3a.py``) for the tests of tables on S3.

``HudiOracle`` starts ``oracle_driver.py`` in that environment (one JVM) and sends it requests.
Run as a script (``python tests/interop/harness/oracle.py``) it only prepares the environment;
a failure is one line on stderr and exit status 1.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parents[2] / "tools"))

import jvm_cds
import maven
import s3a
from hudi_py_cache import cache_root

HUDI_VERSION = "0.15.0"
BUNDLE = f"org.apache.hudi:hudi-spark3.5-bundle_2.12:{HUDI_VERSION}"
PYSPARK_VERSION = "3.5.1"
#: the Hadoop PySpark 3.5.1 ships, whose S3A connector Hudi needs for ``s3a://`` tables
HADOOP_VERSION = "3.3.4"
DRIVER = Path(__file__).with_name("oracle_driver.py")
START_TIMEOUT_S = 240
REQUEST_TIMEOUT_S = 600


class OracleSetupError(RuntimeError):
    """The oracle's environment could not be made (a fetch or an install failed)."""


class OracleError(RuntimeError):
    """Apache Hudi refused or failed a request."""


@dataclass(frozen=True)
class OracleEnv:
    python: Path
    bundle: Path


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        last = detail[-1] if detail else f"exit status {done.returncode}"
        raise OracleSetupError(f"{what} failed ({' '.join(cmd[:3])} ...): {last}")


def _jars(*coordinates: str) -> tuple[Path, ...]:
    try:
        return maven.ensure_jars(*coordinates)
    except maven.MavenError as exc:
        raise OracleSetupError(str(exc)) from exc


@contextlib.contextmanager
def _oracle_folder() -> Iterator[Path]:
    """The oracle's cache folder, locked for the block (test workers share what it holds)."""
    root = cache_root() / "oracle"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield root


def _install(venv: Path, python: Path) -> None:
    """The oracle's venv, with uv when make setup put it beside this interpreter: its cache is
    the one tests/tools/spark35.py fills with the same PySpark, built once (a cold machine: 36 s
    against pip's 50 s, 28 s once cached). Bytecode compiled as pip would: with
    PYTHONDONTWRITEBYTECODE set (CI), every Python worker of the JVM would compile pandas."""
    packages = [f"pyspark=={PYSPARK_VERSION}", "pyarrow", "pandas<3"]
    made, what = "creating the oracle's virtual environment", f"installing PySpark {PYSPARK_VERSION} for it"
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        _run([sys.executable, "-m", "venv", str(venv)], made)
        _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages], what)
        return
    _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], made)
    _run([uv, "pip", "install", "-q", "--compile-bytecode", "--python", str(python), *packages], what)


def ensure_oracle() -> OracleEnv:
    """The oracle's python and bundle, made if missing (under a lock: test workers share them)."""
    with _oracle_folder() as root:
        venv = root / f"pyspark-{PYSPARK_VERSION}"
        python = venv / "bin" / "python"
        if not (venv / ".complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            _install(venv, python)
            (venv / ".complete").touch()
    (bundle,) = _jars(BUNDLE)
    return OracleEnv(python, bundle)


#: Hudi's table services on S3 with its metadata table on take the table lock, whose default
#: provider (the file system's) refuses ``s3a://`` ("can not support atomic creation"): a Hudi user
#: on S3 names a provider; the in-process one serves a single session
S3_LOCK = {"hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}


def hudi_uri(uri: str) -> str:
    """A table's URI as Hudi's Hadoop file systems name it: ``s3://`` is the S3A connector's
    ``s3a://`` (other schemes are the same)."""
    return "s3a://" + uri[len("s3://") :] if uri.startswith("s3://") else uri


def s3a_jars() -> tuple[Path, ...]:
    """Hadoop's S3A connector and the AWS SDK it needs, fetched if missing: a session given them
    (``HudiOracle(jars=...)``) reads and writes ``s3a://`` tables."""
    return _jars(*s3a.CONNECTORS[HADOOP_VERSION])


def s3_oracle(env: OracleEnv, work_dir: Path, endpoint_url: str) -> HudiOracle:
    """A Hudi session with the S3A connector, pointed at the S3 server at ``endpoint_url`` (a JVM
    of its own: the tier's shared session keeps Hudi's bundle alone on its class path)."""
    oracle = HudiOracle(env, work_dir, jars=s3a_jars())
    try:
        oracle.hadoop_conf(s3a.s3a_settings(endpoint_url))
    except BaseException:
        oracle.close()
        raise
    return oracle


def class_archive(env: OracleEnv) -> str | None:
    """The JVM options mapping the oracle's class archive (``jvm_cds``), made first if missing."""
    return jvm_cds.java_options(env.python, extra=(env.bundle,), train=functools.partial(_train, env))


def _train(env: OracleEnv, dump_options: str) -> None:
    """The oracle's class archive (``jvm_cds``): a session writes a merge-on-read table twice,
    a copy-on-write table once and reads each, as the tier's tests begin, so the archive holds
    Hudi's classes as well as Spark's."""
    data = pa.table({"id": [f"k{i}" for i in range(100)], "ts": list(range(100)), "p": ["a", "b"] * 50})
    with tempfile.TemporaryDirectory(prefix="hudi-oracle-cds-") as tmp:
        oracle = HudiOracle(env, Path(tmp) / "jvm", java_options=dump_options)
        try:
            for kind, writes in (("MERGE_ON_READ", 2), ("COPY_ON_WRITE", 1)):
                options = {
                    "hoodie.table.name": "cds", "hoodie.datasource.write.table.type": kind,
                    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
                    "hoodie.datasource.write.partitionpath.field": "p",
                }  # fmt: skip
                for _ in range(writes):
                    oracle.write(Path(tmp) / kind, data, options)
                oracle.read(Path(tmp) / kind)
        finally:
            oracle.close()
        jvm_cds.wait_for_group(oracle.proc.pid)


class HudiOracle:
    """One Apache Hudi Spark session in a child process; requests are synchronous."""

    def __init__(
        self, env: OracleEnv, work_dir: Path, *, java_options: str | None = None, jars: tuple[Path, ...] = ()
    ) -> None:
        """``java_options`` replace the class archive's (a training run's options); ``jars`` go on
        ``spark.jars`` beside Hudi's bundle (``s3a_jars``)."""
        self.env = env
        self.work_dir = work_dir
        work_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = work_dir / "oracle.log"
        self._log = open(self.log_path, "ab")
        self._counter = 0
        child_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SPARK_", "PYSPARK"))}
        child_env.update(
            SPARK_LOCAL_IP="127.0.0.1",
            PYSPARK_PYTHON=str(env.python),
            PYSPARK_DRIVER_PYTHON=str(env.python),
            PYTHONUNBUFFERED="1",
        )
        # the class archive (the launcher adds it to the driver's own extraJavaOptions)
        archive = class_archive(env) if java_options is None else java_options
        if archive:
            child_env["SPARK_SUBMIT_OPTS"] = archive
        local_dir = work_dir / "spark-local"
        local_dir.mkdir(exist_ok=True)
        self.proc = subprocess.Popen(
            [str(env.python), str(DRIVER), ",".join(map(str, (env.bundle, *jars))), str(local_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=child_env,
            text=True,
            start_new_session=True,
        )
        ready = self._answer(START_TIMEOUT_S)
        self.spark_version = ready["ready"]

    # -- the protocol ---------------------------------------------------------------------------
    def _read_answer(self) -> tuple[threading.Thread, list[dict[str, Any]]]:
        """A thread reading the session's next answer into the returned list (it ends when the
        session dies)."""
        result: list[dict[str, Any]] = []
        stdout = self.proc.stdout
        assert stdout is not None

        def read() -> None:
            for line in stdout:
                if line.startswith("@@oracle "):
                    result.append(json.loads(line[len("@@oracle ") :]))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        return reader, result

    def _answer(self, timeout_s: float) -> dict[str, Any]:
        reader, result = self._read_answer()
        reader.join(timeout_s)
        if not result:
            alive = self.proc.poll() is None
            self.kill()
            what = f"did not answer within {timeout_s:.0f} s" if alive else "died"
            raise OracleError(f"Apache Hudi's session {what}; its log: {self.log_path}\n{self.log_tail()}")
        return result[0]

    def send(self, op: str, **fields: Any) -> None:
        """Send a request without waiting for its answer (a test that kills Hudi mid-write)."""
        if self.proc.poll() is not None:
            raise OracleError(f"Apache Hudi's session is not running; its log: {self.log_path}")
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()

    def send_watched(self, op: str, **fields: Any) -> Callable[[], dict[str, Any] | None]:
        """Send a request; the returned function tells its answer once Hudi gave one (None until
        then) without waiting: a test that kills Hudi mid-write learns at once that the write
        ended, and why, instead of waiting for files that never come."""
        self.send(op, **fields)
        _, got = self._read_answer()
        return lambda: got[0] if got else None

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.request_later(op, **fields)()

    def request_later(self, op: str, **fields: Any) -> Callable[[], dict[str, Any]]:
        """Send a request now; the returned function waits for its answer (as ``request`` does).
        One request at a time: call it before sending the next."""
        self.send(op, **fields)

        def answer() -> dict[str, Any]:
            got = self._answer(REQUEST_TIMEOUT_S)
            if not got.get("ok"):
                raise OracleError(f"Apache Hudi {op} failed: {got.get('error')}")
            return got

        return answer

    def log_tail(self, lines: int = 30) -> str:
        self._log.flush()
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def _file(self, suffix: str) -> Path:
        self._counter += 1
        return self.work_dir / f"{self._counter:05d}{suffix}"

    # -- what tests call ------------------------------------------------------------------------
    def write(self, path: str | Path, data: pa.Table, options: dict[str, str], mode: str = "append") -> None:
        """``data`` written by Hudi's Spark datasource (``df.write.format("hudi")``)."""
        self.write_later(path, data, options, mode)()

    def write_later(
        self, path: str | Path, data: pa.Table, options: dict[str, str], mode: str = "append"
    ) -> Callable[[], Any]:
        """Start ``write`` and return at once; call the result to wait for Hudi's answer (a test
        acting on the table while Hudi's write is under way)."""
        source = self._file(".in.parquet")
        pq.write_table(data, source)
        return self.request_later("write", path=str(path), input=str(source), options=options, mode=mode)

    def read(self, path: str | Path, options: dict[str, str] | None = None) -> pa.Table:
        """Hudi's answer to ``spark.read.format("hudi").options(...).load(path)``."""
        out = self._file(".out.parquet")
        self.request("read", path=str(path), options=options or {}, output=str(out))
        return pq.read_table(out)

    def stream(
        self, path: str | Path, source: str | Path, schema: str, options: dict[str, str],
        checkpoint: str | Path | None = None,
    ) -> None:  # fmt: skip
        """``source``'s parquet files (oldest first, one micro-batch each) through Hudi's streaming
        sink (``writeStream.format("hudi")``, ``availableNow``) from ``checkpoint`` (a new one when
        None); returns once the async table services the sink started have completed what they
        scheduled."""
        where = checkpoint if checkpoint is not None else self._file(".checkpoint")
        self.request("stream", path=str(path), input=str(source), schema=schema, options=options,
                     checkpoint=str(where))  # fmt: skip

    def read_stream(
        self, path: str | Path, checkpoint: str | Path, options: dict[str, str] | None = None
    ) -> list[pa.Table]:
        """The micro-batches with rows of Hudi's streaming source (``spark.readStream.format("hudi")``,
        ``availableNow``) run from ``checkpoint`` (a query resumed where it stopped, or a new one)."""
        out = self._file(".stream")
        got = self.request("read_stream", path=str(path), checkpoint=str(checkpoint), options=options or {},
                           output=str(out))  # fmt: skip
        return [pq.read_table(out / f"{b}.parquet") for b in got["batches"]]

    def hadoop_conf(self, conf: dict[str, str]) -> None:
        """Settings of the session's Hadoop configuration (for file systems made after them)."""
        self.request("hadoop_conf", conf=conf)

    def sql(self, statement: str) -> list[list[str | None]]:
        return self.request("sql", sql=statement)["rows"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps({"op": "exit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(60)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self._log.close()


@contextlib.contextmanager
def oracle_session(work_dir: Path | None = None) -> Iterator[HudiOracle]:
    env = ensure_oracle()
    with tempfile.TemporaryDirectory(prefix="hudi-oracle-") as tmp:
        oracle = HudiOracle(env, work_dir or Path(tmp))
        try:
            yield oracle
        finally:
            oracle.close()


def main() -> int:
    try:
        env = ensure_oracle()
        jars = s3a_jars()
    except OracleSetupError as exc:
        print(f"Apache Hudi oracle: {exc}", file=sys.stderr)
        return 1
    class_archive(env)  # made here, before the tier's workers start
    print(
        f"Apache Hudi oracle ready: {env.python} with {env.bundle.name} (S3A: {', '.join(j.name for j in jars)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
