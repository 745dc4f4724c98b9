"""Class-data sharing for the tests' Spark JVMs: they start in little more than half the time.

A Spark driver's JVM loads and verifies some ten thousand classes before its first query
answers. Java's class-data sharing (CDS) keeps them, parsed and verified, in an archive that
later JVMs map instead. Measured on these 2-core machines, two or three runs each: a PySpark 4.3
session's start 5.5-5.7 s -> 3.1-3.3 s and its first queries (a shuffle, a DataFrame from
pandas) 3.7 s -> 2.1-2.3 s; Apache Hudi's oracle (PySpark 3.5.1) 5.2-5.8 s -> 2.8-3.6 s to start
and 10.6-12.6 s -> 9.3-9.8 s for its first two writes; the Spark tier's command-line tests (the
streamer's, ``format("hudi")`` without an import, ``spark-submit --archives``; ``-n 2``)
143-149 s -> 113-133 s. A test run starts dozens of such JVMs (the Spark tiers' sessions, the
command-line runs, Apache Hudi's oracle and its restarts).

:func:`java_options` gives the JVM options that map the archive of the PySpark installation of
a given interpreter, for ``SPARK_SUBMIT_OPTS``: Spark's launcher gives those to every driver it
starts (a PySpark session's, ``spark-submit``'s, the ``pyspark`` shell's) beside its
``extraJavaOptions``. The archive is made on first use (a training run of 30-45 s that dumps the
classes it loaded at exit, under a lock, in ``$HUDI_PY_CACHE/cds``, default
``~/.cache/hudi-py/cds``) and named by what it depends on: the JVM and that installation's jars
(paths, sizes, times). A JVM that cannot use the archive runs as without it; the archive's log
lines are off either way. Test tooling only: the product starts its JVMs as Spark does. (Not
through a ``SPARK_CONF_DIR``: Spark's launcher puts that folder on the JVM's class path, and CDS
refuses a class path with a non-empty folder.)

``HUDI_PY_CDS=0`` turns it off. ``python tests/tools/jvm_cds.py`` prints the options for its own
interpreter, making the archive if missing.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from hudi_py_cache import cache_root

#: keep the JVM quiet about the archive: a mismatch (the JVM or jars changed under it) falls back
LOG_OFF = "-Xlog:cds=off -Xlog:cds+dynamic=off"
TRAIN_TIMEOUT_S = 300


def _jars(python: Path) -> Path | None:
    """The jars folder of ``python``'s PySpark (None without one)."""
    if Path(python) == Path(sys.executable):
        spec = importlib.util.find_spec("pyspark")  # not imported: the controller has no use for it
        if spec is None or spec.origin is None:
            return None
        root = Path(spec.origin).parent
    else:  # a venv's (the oracle's): found without starting its interpreter
        found = sorted(python.parent.parent.glob("lib/python*/site-packages/pyspark"))
        if not found:
            return None
        root = found[0]
    jars = root / "jars"
    return jars if jars.is_dir() else None


def _archive_name(jars: Path, extra: Sequence[Path]) -> str | None:
    java = shutil.which("java")
    if java is None:
        return None
    h = hashlib.sha256()
    for path in (Path(os.path.realpath(java)), *sorted(jars.iterdir()), *extra):
        st = path.stat()
        h.update(f"{path} {st.st_size} {st.st_mtime_ns}\n".encode())
    return f"{h.hexdigest()[:20]}.jsa"


#: a training run: given the JVM options that make a driver dump its classes at exit, it runs a
#: driver with them in ``SPARK_SUBMIT_OPTS`` and returns once that driver's JVM has exited
Train = Callable[[str], None]


def java_options(
    python: str | Path = sys.executable, *, extra: tuple[Path, ...] = (), train: Train | None = None
) -> str | None:
    """The JVM options mapping the class archive of ``python``'s PySpark, the archive made
    first if missing (by ``train``, default :func:`_workload` in ``python``; ``extra`` names the
    other files it depends on, such as a jar the training loads); None where there is nothing to
    share (no PySpark, no ``java``) or the training failed (the JVMs then start as before)."""
    if os.environ.get("HUDI_PY_CDS") == "0":  # off, for an A/B of the tests' time
        return None
    python = Path(python)
    jars = _jars(python)
    name = _archive_name(jars, extra) if jars is not None else None
    if name is None:
        return None
    cache = cache_root() / "cds"
    cache.mkdir(parents=True, exist_ok=True)
    archive, failed = cache / name, cache / f"{name}.failed"
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not archive.exists() and not failed.exists():  # not again on every run: delete the marker to retry
            partial = cache / f"{name}.partial"
            partial.unlink(missing_ok=True)
            try:
                (train or functools.partial(_train, python))(f"-XX:ArchiveClassesAtExit={partial} {LOG_OFF}")
                partial.rename(archive)
            except Exception as exc:  # an archive is a speed-up, never a failure
                partial.unlink(missing_ok=True)
                failed.write_text(f"{type(exc).__name__}: {exc}")
    if not archive.exists():
        return None
    return f"-XX:SharedArchiveFile={archive} {LOG_OFF}"


def _train(python: Path, dump_options: str) -> None:
    """Runs :func:`_workload` in ``python``, its driver dumping its classes at exit."""
    with tempfile.TemporaryDirectory(prefix="hudi-cds-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK"))}
        env.update(SPARK_SUBMIT_OPTS=dump_options, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=str(python))
        run = subprocess.Popen(
            [str(python), __file__, "--workload", tmp], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            _, err = run.communicate(timeout=TRAIN_TIMEOUT_S)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
        if run.returncode != 0:
            raise RuntimeError(f"the training run failed:\n{err[-4000:]}")
        wait_for_group(run.pid)


def wait_for_group(pgid: int, timeout_s: float = TRAIN_TIMEOUT_S) -> None:
    """Returns once no process of group ``pgid`` is left (a driver's JVM outlives its Python
    process by the seconds it takes to dump its classes)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    raise TimeoutError(f"process group {pgid} still running after {timeout_s:.0f} s")


def _workload(scratch: str) -> None:
    """What the tests' sessions do first: SQL with a shuffle, parquet out and in, Arrow both ways
    and a Python task (``mapInArrow``), so the archive holds the classes of each."""
    import pyarrow as pa
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.local.dir", scratch)
        .config("spark.sql.warehouse.dir", f"{scratch}/warehouse")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    df = spark.createDataFrame(
        pa.table({"k": list(range(1000)), "s": [str(i % 7) for i in range(1000)]}).to_pandas()
    )
    df.groupBy("s").count().collect()
    df.write.mode("overwrite").parquet(f"{scratch}/t")
    back = spark.read.parquet(f"{scratch}/t")
    back.mapInArrow(lambda batches: batches, back.schema).selectExpr("sum(k)").collect()
    back.filter("k > 10").orderBy("s").toPandas()
    spark.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--workload"]:
        _workload(sys.argv[2])
    else:
        print(java_options() or "")
