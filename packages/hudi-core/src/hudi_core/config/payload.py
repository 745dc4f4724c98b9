"""What each payload class Hudi names decides, as vectorised comparisons over Arrow columns
(spec 8.2): the classes this package knows, the field that decides between an incoming and a
stored record, the field and value that mark a delete, Debezium's source positions and TOASTed
placeholders. Below the readers and the writers, which both merge by it
(``hudi_core.read.merge``, ``hudi_core.write.payload``)."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import InvalidRecordError
from hudi_core.schema.fields import field_values

__all__ = [
    "DEBEZIUM_OP_FIELD",
    "DMS_OP_FIELD",
    "TOASTED_VALUE",
    "Payload",
    "java_order",
    "order_type",
    "ordering_values",
    "position_keys",
    "stored_wins",
    "untoasted",
]


class Payload(enum.Enum):
    OVERWRITE_WITH_LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    EVENT_TIME = "org.apache.hudi.common.model.EventTimeAvroPayload"
    #: field by field: the version with the greater ordering value wins, its null fields are
    #: filled from the other (spec 8.2; ``hudi_core.read.partial`` for readers)
    PARTIAL_UPDATE = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
    #: DefaultHoodieRecordPayload, but a tie of ordering values keeps the earlier record
    FIRST_VALUE = "org.apache.hudi.common.model.FirstValueAvroPayload"
    #: OverwriteWithLatest, but an update's null fields keep the stored record's values
    OVERWRITE_NON_DEFAULTS = "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload"
    #: OverwriteWithLatest, and a record whose ``Op`` field is ``D`` (any case) is a delete
    AWS_DMS = "org.apache.hudi.common.model.AWSDmsAvroPayload"
    #: OverwriteWithLatest in a batch; against the stored record the greater binlog position
    #: (``_event_seq``, ``file.pos``) wins, a tie keeps the stored one; ``_change_operation_type``
    #: ``d`` deletes
    MYSQL_DEBEZIUM = "org.apache.hudi.common.model.debezium.MySqlDebeziumAvroPayload"
    #: as MySqlDebezium with the log sequence number (``_event_lsn``; a tie takes the incoming
    #: record), and a text or bytes field holding Debezium's TOASTed placeholder keeps the stored value
    POSTGRES_DEBEZIUM = "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload"

    @classmethod
    def named(cls, name: str | None) -> Payload | None:
        """The payload a class name names (by its simple name), None for one this package does
        not know."""
        return _BY_NAME.get(str(name or "").rsplit(".", 1)[-1].lower())

    @property
    def honours_ordering_on_update(self) -> bool:
        """True when a stored record with a greater ordering value beats an incoming one."""
        return self in (Payload.DEFAULT, Payload.EVENT_TIME, Payload.PARTIAL_UPDATE, Payload.FIRST_VALUE)

    @property
    def ties_keep_first(self) -> bool:
        """True when a tie of ordering values keeps the earlier version (the stored record, the
        first row of a batch), where the others keep the later."""
        return self is Payload.FIRST_VALUE

    @property
    def fills_nulls(self) -> bool:
        """True when the version that wins takes the other's value for each of its null fields."""
        return self in (Payload.PARTIAL_UPDATE, Payload.OVERWRITE_NON_DEFAULTS)

    @property
    def keeps_toasted(self) -> bool:
        """True when an incoming text or bytes field holding Debezium's TOASTed placeholder takes
        the value of the record it replaces (:func:`untoasted`)."""
        return self is Payload.POSTGRES_DEBEZIUM

    @property
    def position_field(self) -> str | None:
        """The field whose value decides between an incoming and a stored record, in place of
        the ordering field (Debezium's source position); None where the ordering field does."""
        return _POSITION_FIELDS.get(self)

    def update_field(self, ordering_field: str | None) -> str | None:
        """The field compared when an incoming record meets the stored one: the source position
        (Debezium), the ordering field (payloads that honour it on update), else none."""
        if self.position_field:
            return self.position_field
        return ordering_field if self.honours_ordering_on_update else None

    @property
    def delete_op(self) -> tuple[str, str] | None:
        """The field and value (any case) that mark a record a delete, besides ``_hoodie_is_deleted``."""
        return _DELETE_OPS.get(self)


#: AWSDmsAvroPayload's field naming the change: ``D`` (any case) deletes
DMS_OP_FIELD = "Op"
#: Debezium's flattened change type (Hudi's DebeziumConstants): ``d`` (any case) deletes
DEBEZIUM_OP_FIELD = "_change_operation_type"
#: what Debezium's Postgres connector sends for a TOASTed value it did not read
TOASTED_VALUE = "__debezium_unavailable_value"
_DELETE_OPS = {
    Payload.AWS_DMS: (DMS_OP_FIELD, "d"),
    Payload.MYSQL_DEBEZIUM: (DEBEZIUM_OP_FIELD, "d"),
    Payload.POSTGRES_DEBEZIUM: (DEBEZIUM_OP_FIELD, "d"),
}
_POSITION_FIELDS = {Payload.MYSQL_DEBEZIUM: "_event_seq", Payload.POSTGRES_DEBEZIUM: "_event_lsn"}
_BY_NAME = {p.value.rsplit(".", 1)[-1].lower(): p for p in Payload}


def order_type(dtype: pa.DataType) -> pa.DataType:
    """The type :func:`java_order` gives ordering values of ``dtype``."""
    return pa.int64() if pa.types.is_floating(dtype) else dtype


def java_order(values: Any) -> Any:
    """Ordering values as Hudi compares them (``Comparable.compareTo``): a float or a double by
    Java's ``Float.compare``/``Double.compare``, whose order is total (``-0.0`` below ``0.0``,
    NaN above infinity and equal to itself), as int64 keys of that order; nulls stay null. Other
    types are returned as they are (Arrow compares them as Java does)."""
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([java_order(c) for c in values.chunks], type=order_type(values.type))
    if not pa.types.is_floating(values.type):
        return values
    floats = values.to_numpy(zero_copy_only=False)  # nulls come back as NaN: masked again below
    bits_type, flip = (np.int64, 0x7FFFFFFFFFFFFFFF) if floats.dtype == np.float64 else (np.int32, 0x7FFFFFFF)
    bits = np.where(np.isnan(floats), floats.dtype.type(np.nan), floats).view(bits_type)  # one NaN, as Java
    keys = np.where(bits < 0, bits ^ bits_type(flip), bits).astype(np.int64)  # negatives in reverse
    return pa.array(
        keys, pa.int64(), mask=values.is_null().to_numpy(zero_copy_only=False) if values.null_count else None
    )


def ordering_values(data: pa.Table, field: str | None, dtype: pa.DataType) -> Any:
    """``data``'s ordering values as they compare (:func:`java_order`); nulls of that type where
    ``data`` has no ``field`` (``dtype``: the field's type in the table)."""
    values = field_values(data, field)
    return pa.nulls(data.num_rows, order_type(dtype)) if values is None else java_order(values)


def stored_wins(payload: Payload, stored: Any, incoming: Any) -> Any:
    """Per row, whether the stored version beats the incoming one, by the values of the
    payload's :meth:`~Payload.update_field`; false where the stored value is null."""
    if payload is Payload.MYSQL_DEBEZIUM:
        (s_file, s_pos), (i_file, i_pos) = position_keys(stored), position_keys(incoming)
        later_file = pc.greater(s_file, i_file)
        same_file = pc.and_(pc.equal(s_file, i_file), pc.greater_equal(s_pos, i_pos))
        return pc.fill_null(pc.or_(later_file, same_file), False)
    if not stored.type.equals(incoming.type):
        stored = stored.cast(incoming.type)
    stored, incoming = java_order(stored), java_order(incoming)
    older = pc.greater_equal if payload.ties_keep_first else pc.greater
    return pc.fill_null(older(stored, incoming), False)


def position_keys(seq: Any) -> tuple[Any, Any]:
    """MySQL binlog positions as Hudi's MySqlDebeziumAvroPayload reads ``_event_seq``: text
    ``file.pos``, split at the dots, the first two parts compared as longs. Nulls stay null;
    raises ``InvalidRecordError`` for a value that is not two numbers."""
    text = (
        seq if pa.types.is_string(seq.type) or pa.types.is_large_string(seq.type) else seq.cast(pa.string())
    )
    parts = pc.split_pattern(text, ".")
    enough = pc.greater_equal(pc.list_value_length(parts), 2)
    parts = pc.if_else(enough, parts, pa.scalar(["", ""], parts.type))  # (refused below)
    numbers = [pc.list_element(parts, i) for i in (0, 1)]
    good = pc.and_(*(pc.match_substring_regex(n, r"^[+-]?[0-9]{1,18}$") for n in numbers))
    bad = pc.invert(pc.fill_null(good, True))
    if pc.any(bad).as_py():
        row = int(np.flatnonzero(np.asarray(bad.to_numpy(zero_copy_only=False), dtype=bool))[0])
        raise InvalidRecordError(
            f"_event_seq {text[row].as_py()!r} (row {row}) is not a MySQL binlog position 'file.pos' "
            "(two numbers), which MySqlDebeziumAvroPayload compares"
        )
    return pc.cast(numbers[0], pa.int64()), pc.cast(numbers[1], pa.int64())


def untoasted(incoming: pa.Table, stored: pa.Table, replaced: Any, names: list[str]) -> pa.Table:
    """PostgresDebeziumAvroPayload's merge: where the incoming record ``replaced`` the stored
    one, each text or bytes field of ``names`` holding Debezium's TOASTed placeholder takes the
    stored value."""
    out = incoming
    for name in names:
        mine = incoming.column(name)
        value_type = mine.type.value_type if pa.types.is_dictionary(mine.type) else mine.type
        if pa.types.is_string(value_type) or pa.types.is_large_string(value_type):
            placeholder = pa.scalar(TOASTED_VALUE, value_type)
        elif pa.types.is_binary(value_type) or pa.types.is_large_binary(value_type):
            placeholder = pa.scalar(TOASTED_VALUE.encode(), value_type)
        else:
            continue
        toasted = pc.and_(pc.fill_null(pc.equal(mine.cast(value_type), placeholder), False), replaced)
        if not pc.any(toasted).as_py():
            continue
        theirs = stored.column(name)
        merged = pc.if_else(toasted, theirs.cast(value_type), mine.cast(value_type))
        out = out.set_column(out.column_names.index(name), name, merged)
    return out
