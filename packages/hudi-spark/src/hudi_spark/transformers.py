"""HoodieStreamer's transformers (``--transformer-class``): what a round's source rows go through
before they are written, as Apache Hudi's utilities define them.

- ``SqlQueryBasedTransformer``: one query, ``hoodie.streamer.transformer.sql``, naming the source
  rows ``<SRC>``;
- ``SqlFileBasedTransformer``: the statements of the file ``hoodie.streamer.transformer.sql.file``
  (separated by ``;``, each may name ``<SRC>``), run in order; the last one's rows are the result.

Several classes (comma-separated) run one after the other. The source rows are a temporary view
of a name made per use (``HOODIE_SRC_TMP_TABLE_<uuid>``), dropped once the query is planned.
Each is checked when the streamer starts, so a missing query or file fails before Spark does.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hudi_core.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["Transform", "transformers"]

#: a round's source rows -> the rows to write
Transform = Callable[["DataFrame"], "DataFrame"]

_PACKAGE = "org.apache.hudi.utilities.transform."
#: the query's key, then its HoodieDeltaStreamer-era name
SQL_KEYS = ("hoodie.streamer.transformer.sql", "hoodie.deltastreamer.transformer.sql")
SQL_FILE_KEYS = ("hoodie.streamer.transformer.sql.file", "hoodie.deltastreamer.transformer.sql.file")
SRC = "<SRC>"


def _option(options: Mapping[str, str], keys: tuple[str, ...], what: str) -> str:
    value = next((options[k] for k in keys if options.get(k)), None)
    if value is None:
        raise ConfigError(f"{what} needs {keys[0]} (--hoodie-conf or --props)")
    return value


def _run(df: DataFrame, statements: list[str]) -> DataFrame:
    view = f"HOODIE_SRC_TMP_TABLE_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(view)
    try:
        out = df
        for statement in statements:
            out = df.sparkSession.sql(statement.replace(SRC, view))
        return out
    finally:
        df.sparkSession.catalog.dropTempView(view)


def _sql_query(options: Mapping[str, str]) -> Transform:
    query = _option(options, SQL_KEYS, "SqlQueryBasedTransformer")
    return lambda df: _run(df, [query])


def _sql_file(options: Mapping[str, str]) -> Transform:
    path = _option(options, SQL_FILE_KEYS, "SqlFileBasedTransformer")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"cannot read the transformer's SQL file {path!r}: {e.strerror or e}") from e
    statements = [s for s in text.split(";") if s.strip()]
    if not statements:
        raise ConfigError(f"the transformer's SQL file {path!r} holds no statement")
    return lambda df: _run(df, statements)


_BUILT_IN: dict[str, Callable[[Mapping[str, str]], Transform]] = {
    "SqlQueryBasedTransformer": _sql_query,
    "SqlFileBasedTransformer": _sql_file,
}


def transformers(class_names: list[str], options: Mapping[str, str]) -> Transform | None:
    """The transform the ``--transformer-class`` values name (short or full class names, each
    value possibly comma-separated), in order; None when there is none."""
    names = [n.strip() for value in class_names for n in value.split(",") if n.strip()]
    steps: list[Transform] = []
    for name in names:
        short = name.removeprefix(_PACKAGE)
        if short not in _BUILT_IN:
            raise ConfigError(f"--transformer-class {name!r} is not one of "
                              f"{', '.join(_PACKAGE + n for n in _BUILT_IN)}")  # fmt: skip
        steps.append(_BUILT_IN[short](options))
    if not steps:
        return None

    def chained(df: DataFrame) -> DataFrame:
        for step in steps:
            df = step(df)
        return df

    return chained
