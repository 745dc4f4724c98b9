"""How the rows that Python tasks merge cross into the JVM: four meta columns as small codes.

Spark turns every row a ``mapInArrow`` task returns into an ``UnsafeRow`` of every column it
declares, before anything above can drop a column, and tells a Python task nothing of the
query's columns. So a ``count()`` over merged file slices paid for copying the meta columns'
strings (on the trips table 160 of the row's ~300 bytes; ``_hoodie_file_name`` alone ~70)
although it reads none of them. Here a task hands over, instead of each of
``_hoodie_commit_time``, ``_hoodie_partition_path`` and ``_hoodie_file_name``, its index in a
list of values the driver knows (the timeline's instants, the slices' partitions, their base
file names and file ids: what Hudi writes there), and instead of ``_hoodie_record_key`` whether
it equals the one record key field's text. A value outside the list (an archived instant, a
value some other writer put there) goes over as itself, in a struct that is null on every other
row. The strings are rebuilt in the JVM by expressions that Spark leaves out of a query that
does not read them. Same answers, column for column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from pyspark.sql import DataFrame

__all__ = ["Handover", "handover_for"]

_COMMIT_TIME, _RECORD_KEY = "_hoodie_commit_time", "_hoodie_record_key"
_PARTITION_PATH, _FILE_NAME = "_hoodie_partition_path", "_hoodie_file_name"
#: the hand-over's own columns (no Hudi table's: Hudi reserves the ``_hoodie`` prefix, not this one)
_CODE, _OVERFLOW = "__hudi_spark_code_", "__hudi_spark_overflow"
#: past this many values a column goes over as strings: a longer literal list in every plan
#: costs more than the strings it saves
MAX_VALUES = 1024


@dataclass(frozen=True)
class Handover:
    """What a read's Python tasks hand over for each encoded meta column of ``schema``: its
    index (from 1) in ``values[column]``, or, for ``_hoodie_record_key``, 1 where it equals
    ``key_field``'s text; null where the value itself goes in the overflow struct."""

    schema: pa.Schema
    values: dict[str, tuple[str, ...]]
    key_field: str | None = None

    @property
    def encoded(self) -> list[str]:
        """The encoded columns, in the schema's order."""
        return [n for n in self.schema.names if n in self.values or (n == _RECORD_KEY and self.key_field)]

    def wire_schema(self) -> pa.Schema:
        """The schema the tasks hand over: the others columns as they are, a code per encoded one,
        then the overflow struct."""
        encoded = self.encoded
        overflow = pa.struct([pa.field(n, pa.string()) for n in encoded])
        return pa.schema(
            [f for f in self.schema if f.name not in encoded]
            + [pa.field(_CODE + n, pa.int32()) for n in encoded]
            + [pa.field(_OVERFLOW, overflow)]
        )

    def encode(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """A batch of exactly :attr:`schema` as :meth:`wire_schema` (in a task)."""
        encoded = self.encoded
        codes, overflow = [], []
        spilled = None  # rows where some column goes over as itself (a null value needs no overflow)
        for name in encoded:
            column = batch.column(name)
            if name == _RECORD_KEY:
                same = pc.fill_null(pc.equal(column, batch.column(self.key_field)), False)
                code = pc.if_else(same, pa.scalar(1, pa.int32()), pa.scalar(None, pa.int32()))
            else:
                found = pc.index_in(column, value_set=pa.array(self.values[name], pa.string()))
                code = pc.add(found.cast(pa.int32()), pa.scalar(1, pa.int32()))
            missed = pc.and_(pc.is_null(code), pc.is_valid(column))
            spilled = missed if spilled is None else pc.or_(spilled, missed)
            codes.append(code)
            overflow.append(column)
        others = [batch.column(f.name) for f in self.schema if f.name not in encoded]
        struct_type = pa.struct([pa.field(n, pa.string()) for n in encoded])
        if spilled is None or not pc.any(spilled).as_py():
            over = pa.nulls(batch.num_rows, struct_type)
        else:
            kept = [
                pc.if_else(pc.is_null(c), v, pa.scalar(None, pa.string()))
                for c, v in zip(codes, overflow, strict=True)
            ]
            over = pa.StructArray.from_arrays(kept, fields=list(struct_type), mask=pc.invert(spilled))
        return pa.RecordBatch.from_arrays(others + codes + [over], schema=self.wire_schema())

    def decode(self, frame: DataFrame) -> DataFrame:
        """``frame`` (rows of :meth:`wire_schema`) as :attr:`schema`: each encoded column rebuilt
        from its code, or taken from the overflow struct. One ``selectExpr``: built from column
        objects, the value lists' literals cost a py4j call each (120 ms a frame on the trips
        table)."""
        encoded = set(self.encoded)
        columns = []
        for name in self.schema.names:
            if name not in encoded:
                columns.append(_quoted(name))
                continue
            code = _quoted(_CODE + name)
            if name == _RECORD_KEY:
                value = _quoted(str(self.key_field))
            else:
                value = f"element_at(array({', '.join(_literal(v) for v in self.values[name])}), {code})"
            spilled = f"{_quoted(_OVERFLOW)}.{_quoted(name)}"
            columns.append(f"CASE WHEN {code} IS NULL THEN {spilled} ELSE {value} END AS {_quoted(name)}")
        return frame.selectExpr(*columns)


def handover_for(table: HudiTable, splits: list[Any], schema: pa.Schema) -> Handover | None:
    """The hand-over of ``splits``' merged rows as ``schema`` (None: nothing to encode)."""
    names = set(schema.names)
    values: dict[str, tuple[str, ...]] = {}
    if _COMMIT_TIME in names:
        values[_COMMIT_TIME] = tuple(table.timeline.completed_commits().timestamps()[-MAX_VALUES:])
    if _PARTITION_PATH in names:
        values[_PARTITION_PATH] = tuple(sorted({s.partition_path for s in splits}))
    if _FILE_NAME in names:
        # a base file's rows carry its name, a log record its file group's id (as Hudi writes them)
        files = {s.base_file.name for s in splits if s.base_file is not None} | {s.file_id for s in splits}
        values[_FILE_NAME] = tuple(sorted(files))
    values = {n: v for n, v in values.items() if v and len(v) <= MAX_VALUES and _is_string(schema, n)}
    key_field = None
    fields = table.config.record_key_fields
    if _RECORD_KEY in names and _is_string(schema, _RECORD_KEY) and len(fields) == 1 and fields[0] in names:
        key_field = fields[0] if _is_string(schema, fields[0]) else None
    if not values and key_field is None:
        return None
    return Handover(schema, values, key_field)


def _is_string(schema: pa.Schema, name: str) -> bool:
    return bool(pa.types.is_string(schema.field(name).type))


def _quoted(name: str) -> str:
    """A column name as Spark SQL takes it literally (dots and all)."""
    return "`" + name.replace("`", "``") + "`"


def _literal(value: str) -> str:
    """A string as a Spark SQL literal of its UTF-8 bytes (no escaping rules to depend on, such
    as ``spark.sql.parser.escapedStringLiterals``)."""
    return f"CAST(X'{value.encode().hex()}' AS STRING)"
