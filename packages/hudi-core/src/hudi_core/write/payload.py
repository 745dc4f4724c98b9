"""Payload classes (spec 8.2) as vectorised decisions over Arrow columns.

Only what the writer decides lives here: which of two versions of a key survives a batch
(``preCombine``) and whether an incoming record replaces the stored one in a COW merge
(``combineAndGetUpdateValue``). Readers merge with ``hudi_core.read.merge``.
"""

from __future__ import annotations

import enum

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError

__all__ = [
    "DMS_OP_FIELD",
    "Payload",
    "coalesce_by_winner",
    "dms_deletes",
    "incoming_wins",
    "merged_by_winner",
    "payload_for",
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


#: AWSDmsAvroPayload's field naming the change: ``D`` (any case) deletes
DMS_OP_FIELD = "Op"


_SHORT = {p.value.rsplit(".", 1)[-1].lower(): p for p in Payload}


def payload_for(config: HoodieConfig) -> Payload:
    """The payload class of a write: the write option, else the table's."""
    name, payload = _configured(config)
    if payload is not None:
        return payload
    raise ConfigError(
        f"payload class {name!r} is not supported by this writer; use one of "
        f"{', '.join(p.value for p in Payload)}"
    )


def _configured(config: HoodieConfig) -> tuple[str, Payload | None]:
    """The payload class a write names (the write option, else the table's) and its
    :class:`Payload`, None when this writer does not know it."""
    name = config.raw(WriteOptions.PAYLOAD_CLASS) or config.get_str(TableOptions.PAYLOAD_CLASS) or ""
    return name, _SHORT.get(name.rsplit(".", 1)[-1].lower())


def incoming_wins(
    payload: Payload, stored_ordering: pa.Array | None, incoming_ordering: pa.Array | None
) -> pa.Array:
    """Per row, whether the incoming version replaces the stored one (ties: incoming, but the
    stored one under FirstValueAvroPayload).

    A null stored ordering value always loses, like Java's ``DefaultHoodieRecordPayload``.
    """
    n = len(incoming_ordering) if incoming_ordering is not None else len(stored_ordering or [])
    if not payload.honours_ordering_on_update or stored_ordering is None or incoming_ordering is None:
        return pa.array([True] * n, pa.bool_())
    if not stored_ordering.type.equals(incoming_ordering.type):
        stored_ordering = stored_ordering.cast(incoming_ordering.type)
    older = pc.greater_equal if payload.ties_keep_first else pc.greater
    keep_stored = pc.fill_null(older(stored_ordering, incoming_ordering), False)
    return pc.invert(keep_stored)


def dms_deletes(config: HoodieConfig, data: pa.Table) -> pa.Array | None:
    """Under AWSDmsAvroPayload, which rows of ``data`` its ``Op`` field marks as deletes (``D``,
    any case); None under any other payload or without the field."""
    if _configured(config)[1] is not Payload.AWS_DMS or DMS_OP_FIELD not in data.column_names:
        return None
    op = data.column(DMS_OP_FIELD)
    op = op if pa.types.is_string(op.type) or pa.types.is_large_string(op.type) else op.cast(pa.string())
    return pc.fill_null(pc.equal(pc.utf8_lower(op), "d"), False)


def coalesce_by_winner(
    incoming: pa.Table, stored: pa.Table, incoming_won: pa.Array, names: list[str]
) -> pa.Table:
    """PartialUpdateAvroPayload's merge of two versions, row by row: each field of ``names`` is
    the winner's value, or the other's where the winner's is null."""
    out = incoming
    for name in names:
        mine, theirs = incoming.column(name), stored.column(name)
        if not theirs.type.equals(mine.type):
            theirs = theirs.cast(mine.type)
        merged = pc.if_else(incoming_won, pc.coalesce(mine, theirs), pc.coalesce(theirs, mine))
        out = out.set_column(out.column_names.index(name), name, merged)
    return out


def merged_by_winner(
    payload: Payload, incoming: pa.Table, stored: pa.Table, incoming_won: pa.Array, names: list[str]
) -> pa.Table:
    """The record each pair of versions merges into, row by row, on ``incoming``'s other columns:
    the winner's fields (PartialUpdate: :func:`coalesce_by_winner`, the winner's nulls filled)."""
    if payload.fills_nulls:
        return coalesce_by_winner(incoming, stored, incoming_won, names)
    out = incoming
    for name in names:
        mine, theirs = incoming.column(name), stored.column(name)
        out = out.set_column(
            out.column_names.index(name), name, pc.if_else(incoming_won, mine, theirs.cast(mine.type))
        )
    return out
