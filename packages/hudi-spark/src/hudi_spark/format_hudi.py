"""``spark.read.format("hudi").load(path)``, ``df.write.format("hudi").save(path)`` and
``df.writeStream.format("hudi").start(path)`` as :func:`hudi_spark.read`, :func:`hudi_spark.write`
and :func:`hudi_spark.write_stream`, in a driver that imported ``hudi_spark``, on PySpark 3.5 and 4.

A Python data source (PySpark 4's ``format("hudi")``, :mod:`hudi_spark.datasource`) can hand
Spark no JVM scan and learns nothing of the columns a query uses, so every file slice is read in
Python tasks and every column crosses into the JVM, for a ``count()`` too; and its writer's tasks
cannot bring rows together, so it refuses an upsert (Hudi's default operation), a delete, the
BUCKET index. ``hudi_spark.read`` gives the same rows for the same options with the slices that
have nothing to merge read by Spark's own parquet reader, and its DataFrame's ``count``,
``filter``/``where``, ``select`` and ``toArrow`` planned into the read (:mod:`hudi_spark.collect`);
``hudi_spark.write`` runs every operation through the whole pipeline.

Importing ``hudi_spark`` wraps PySpark's ``DataFrameReader.load``, ``DataFrameWriter.save`` and
``DataStreamWriter.start`` (:func:`install`). A load of the ``hudi`` format with one path (or a
``path`` option) and no schema of the user's is ``hudi_spark.read`` with the reader's options as
Spark holds them; a save of the ``hudi`` format with a path is ``hudi_spark.write`` under Hudi's
save modes (:func:`hudi_save`); a stream's start is ``hudi_spark.write_stream``'s sink with the
writer's trigger, name and checkpoint location (:func:`hudi_start`; the Python data source has no
streaming writer). Any other call is PySpark's own: other formats, a schema given with
``.schema()``, several paths, ``hoodie.spark.read.format.fast=false`` or
``hoodie.spark.write.format.pipeline=false`` (the data source), a session with Apache Hudi's
own Spark bundle on its class path (whose ``format("hudi")`` it is), and Spark Connect's reader
and writer (other classes). ``spark.readStream`` is not wrapped (PySpark 4's data source reads it).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError

from hudi_spark.compat import scala_items
from hudi_spark.options import ReadOptions, SparkOptions
from hudi_spark.writer import resolve_operation

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["hudi_load", "hudi_save", "hudi_start", "install"]

#: the format name the wrapped calls answer for (as ``format()`` takes it: any case)
FORMAT = "hudi"
#: set on a wrapping function, so that a second install leaves it alone
_MARK = "__hudi_spark_format__"
#: ``hudi_spark.read(spark, path, options)``
Read = Callable[[Any, str, dict[str, str]], "DataFrame"]
#: ``hudi_spark.write(df, path, options=options)``
Write = Callable[..., Any]
#: Spark's save modes, as ``SaveMode.toString`` names them
APPEND, OVERWRITE, ERROR_IF_EXISTS, IGNORE = "Append", "Overwrite", "ErrorIfExists", "Ignore"
#: operations Hudi takes in append mode only
_APPEND_ONLY = ("delete", "delete_partition")
_CUSTOM_KEYGEN = "org.apache.hudi.keygen.CustomKeyGenerator"


def install(read: Read, write: Write) -> None:
    """Wrap PySpark's ``DataFrameReader.load``, ``DataFrameWriter.save`` and
    ``DataStreamWriter.start`` (once per process): a load of the ``hudi`` format returns
    :func:`hudi_load`'s DataFrame, read by ``read`` (``hudi_spark.read``), a save runs
    :func:`hudi_save` with ``write`` (``hudi_spark.write``), and a stream's start is
    :func:`hudi_start`'s query (``hudi_spark.write_stream``), where they apply."""
    from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    # each call's arguments are set on its reader or writer in the order PySpark's own call sets them
    _wrap(DataFrameReader, "load", ("format", "schema", "options"),
          lambda self, path: hudi_load(self, path, read))  # fmt: skip
    _wrap(DataStreamWriter, "start", ("options", "outputMode", "partitionBy", "format", "queryName"),
          hudi_start)  # fmt: skip
    _wrap(DataFrameWriter, "save", ("mode", "options", "partitionBy", "format"),
          lambda self, path: _DONE if hudi_save(self, path, write) else None)  # fmt: skip


#: what a wrapped ``save`` hook answers for a save it ran (PySpark's ``save`` returns None)
_DONE = object()


def _wrap(cls: type, name: str, setters: tuple[str, ...], hook: Callable[[Any, Any], Any]) -> None:
    """Put a call in place of ``cls.name`` (PySpark's ``load``, ``save`` or ``start``) that sets
    its arguments named in ``setters`` on the reader or writer by the methods of the same names
    (``options`` with its keyword arguments), as PySpark's own call does first, then answers
    ``hook(self, path)``, or PySpark's own call's answer where the hook gives None."""
    spark_call = getattr(cls, name)
    if getattr(spark_call, _MARK, False):
        return
    signature = inspect.signature(spark_call)

    @functools.wraps(spark_call)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        given = signature.bind(self, *args, **kwargs).arguments
        for setter in setters:
            value = given.get(setter)
            if setter == "options":
                self.options(**(value or {}))
            elif value is not None:
                getattr(self, setter)(value)
        path = given.get("path")
        answer = hook(self, path)
        if answer is None:
            return spark_call(self, path)
        return None if answer is _DONE else answer

    setattr(call, _MARK, True)
    setattr(cls, name, call)


def hudi_load(reader: Any, path: Any, read: Read) -> DataFrame | None:
    """``read`` (:func:`hudi_spark.read`) of what ``reader`` (a classic ``DataFrameReader`` whose
    format, schema and options are set) was asked to load from ``path``, or None where it does not
    apply (not the ``hudi`` format, a schema of the user's, not one path, or the option off)."""
    jreader = reader._jreader
    if str(jreader.source()).lower() != FORMAT or not jreader.userSpecifiedSchema().isEmpty():
        return None
    if _apache_hudi(reader._spark):
        return None
    options = _options(jreader)
    base = _path(path, options)
    if base is None or not _lower(options).get(ReadOptions.FORMAT_FAST):
        return None
    return read(reader._spark, base, options)


def hudi_save(writer: Any, path: str | None, write: Write) -> bool:
    """Run ``write`` (:func:`hudi_spark.write`) for what ``writer`` (a classic ``DataFrameWriter``
    whose format, mode, partitioning and options are set) was asked to save to ``path``, under
    Hudi's save modes; False where it does not apply (not the ``hudi`` format, no path, or the
    option off). As Apache Hudi's Spark writer: ``append`` adds a commit; ``overwrite`` deletes an
    existing table and writes it anew, except for ``insert_overwrite_table``, which replaces every
    file group and keeps the timeline; ``errorifexists`` (Spark's default) fails on an existing
    table and ``ignore`` leaves it be; ``delete`` and ``delete_partition`` take ``append`` only;
    ``partitionBy(...)`` names the partition path fields."""
    call = _write_call(writer, path)
    if call is None:
        return False
    base, options, op = call
    from hudi_core import HudiTable

    mode = _save_mode(writer._jwrite)
    if mode != APPEND and op in _APPEND_ONLY:
        raise ConfigError(f"mode('append') is the only save mode for operation {op!r}, as in Hudi")
    replaces = mode == OVERWRITE and op != "insert_overwrite_table"
    exists = (mode in (ERROR_IF_EXISTS, IGNORE) or replaces) and HudiTable.exists(base, options=options)
    if exists and mode == IGNORE:
        return True
    if exists and mode == ERROR_IF_EXISTS:
        raise ConfigError(
            f"hoodie table at {base} already exists (mode {mode}: use mode('append') to write to it)"
        )
    if exists and replaces:
        HudiTable.open(base, options=options).storage.delete_dir(base)
    write(writer._df, base, options=options)
    return True


def hudi_start(writer: Any, path: str | None) -> Any:
    """The streaming query of :func:`hudi_spark.write_stream` for what ``writer`` (a classic
    ``DataStreamWriter`` whose format, options, trigger and name are set) was asked to start on
    ``path``, or None where it does not apply (as :func:`hudi_save`). Each micro-batch is one
    commit of ``hoodie.datasource.write.operation`` (upsert by default), as Hudi's streaming sink;
    the ``checkpointLocation`` option is required."""
    call = _write_call(writer, path)
    if call is None:
        return None
    base, options, op = call
    spark_keys = {k for k in options if k.lower() in ("checkpointlocation", "queryname")}
    checkpoint = next((options[k] for k in spark_keys if k.lower() == "checkpointlocation"), None)
    if not checkpoint:
        raise ConfigError(
            f'df.writeStream.format("hudi") needs .option("checkpointLocation", "<folder>") (the table at {base})'
        )
    hoodie = {k: v for k, v in options.items() if k not in spark_keys}
    from hudi_spark.streaming import start_sink

    return start_sink(writer, base, hoodie, checkpoint_location=checkpoint, operation=op)


def _write_call(writer: Any, path: str | None) -> tuple[str, dict[str, str], str] | None:
    """The base path, options (``partitionBy(...)`` among them) and operation of a save or a
    stream's start of the ``hudi`` format by ``writer`` (a classic ``DataFrameWriter`` or
    ``DataStreamWriter``) to ``path``; None where the pipeline does not take it (another format,
    Apache Hudi's bundle on the class path, no path, or the option off)."""
    jwriter = writer._jwrite
    if str(jwriter.source()).lower() != FORMAT or _apache_hudi(writer._spark):
        return None
    options = _options(jwriter)
    base = _path(path, options)
    lowered = _lower(options)
    if base is None or not lowered.get(SparkOptions.WRITE_FORMAT_PIPELINE):
        return None
    options.update(_partition_fields(jwriter, lowered))
    return base, options, resolve_operation(None, lowered)


def _apache_hudi(spark: Any) -> bool:
    """Whether Apache Hudi's own Spark data source is on the session's class path (its bundle
    jar): ``format("hudi")`` is then Apache Hudi's, left alone."""
    from py4j.java_gateway import JavaClass

    return isinstance(spark._jvm.org.apache.hudi.DefaultSource, JavaClass)


def _path(path: Any, options: dict[str, str]) -> str | None:
    """The one base path of a call (given, or the ``path`` option, taken out of ``options``)."""
    given = next((k for k in options if k.lower() == "path"), None)
    option = options.pop(given) if given is not None else None
    if isinstance(path, (list, tuple)) and len(path) == 1:
        path = path[0]
    if path is None:
        path = option
    return path if isinstance(path, str) and path else None


def _lower(options: Mapping[str, str]) -> HoodieConfig:
    """The options with lower-case keys, as Spark looks them up (Hudi's keys are lower case)."""
    return HoodieConfig({k.lower(): v for k, v in options.items()})


def _partition_fields(jwriter: Any, lowered: HoodieConfig) -> dict[str, str]:
    """``partitionBy(...)`` as Hudi's partition path field (it wins over the option, as in Hudi;
    with the CustomKeyGenerator a column without a type is ``column:SIMPLE``); ``lowered``: the
    write's options with lower-case keys (:func:`_lower`)."""
    given = jwriter.partitioningColumns()
    if given.isEmpty():
        return {}
    columns = [str(c) for c in scala_items(given.get().iterator())]
    if str(lowered.get_str(WriteOptions.KEYGEN_CLASS)) == _CUSTOM_KEYGEN:
        columns = [c if ":" in c else f"{c}:SIMPLE" for c in columns]
    return {WriteOptions.PARTITIONPATH_FIELD.key: ",".join(columns)}


def _save_mode(jwriter: Any) -> str:
    """The writer's save mode (``curmode`` on PySpark 4, ``mode`` on 3.5)."""
    from py4j.protocol import Py4JError

    try:
        return str(jwriter.curmode().toString())
    except Py4JError:
        return str(jwriter.mode().toString())


def _options(jobject: Any) -> dict[str, str]:
    """A reader's or writer's options with the keys as the user wrote them (Spark's
    case-insensitive map keeps them in ``originalMap``)."""
    entries = scala_items(jobject.extraOptions().originalMap().iterator())
    return {str(entry._1()): str(entry._2()) for entry in entries}
