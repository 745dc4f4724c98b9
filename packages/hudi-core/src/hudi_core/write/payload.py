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

__all__ = ["Payload", "coalesce_by_winner", "incoming_wins", "merged_by_winner", "payload_for"]


class Payload(enum.Enum):
    OVERWRITE_WITH_LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    EVENT_TIME = "org.apache.hudi.common.model.EventTimeAvroPayload"
    #: field by field: the version with the greater ordering value wins, its null fields are
    #: filled from the other (spec 8.2; ``hudi_core.read.partial`` for readers)
    PARTIAL_UPDATE = "org.apache.hudi.common.model.PartialUpdateAvroPayload"

    @property
    def honours_ordering_on_update(self) -> bool:
        """True when a stored record with a greater ordering value beats an incoming one."""
        return self is not Payload.OVERWRITE_WITH_LATEST


_SHORT = {p.value.rsplit(".", 1)[-1].lower(): p for p in Payload}


def payload_for(config: HoodieConfig) -> Payload:
    """The payload class of a write: the write option, else the table's."""
    name = config.raw(WriteOptions.PAYLOAD_CLASS) or config.get_str(TableOptions.PAYLOAD_CLASS) or ""
    simple = name.rsplit(".", 1)[-1].lower()
    if simple in _SHORT:
        return _SHORT[simple]
    raise ConfigError(
        f"payload class {name!r} is not supported by this writer; use one of "
        f"{', '.join(p.value for p in Payload)}"
    )


def incoming_wins(
    payload: Payload, stored_ordering: pa.Array | None, incoming_ordering: pa.Array | None
) -> pa.Array:
    """Per row, whether the incoming version replaces the stored one (ties: incoming).

    A null stored ordering value always loses, like Java's ``DefaultHoodieRecordPayload``.
    """
    n = len(incoming_ordering) if incoming_ordering is not None else len(stored_ordering or [])
    if not payload.honours_ordering_on_update or stored_ordering is None or incoming_ordering is None:
        return pa.array([True] * n, pa.bool_())
    if not stored_ordering.type.equals(incoming_ordering.type):
        stored_ordering = stored_ordering.cast(incoming_ordering.type)
    keep_stored = pc.fill_null(pc.greater(stored_ordering, incoming_ordering), False)
    return pc.invert(keep_stored)


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
    if payload is Payload.PARTIAL_UPDATE:
        return coalesce_by_winner(incoming, stored, incoming_won, names)
    out = incoming
    for name in names:
        mine, theirs = incoming.column(name), stored.column(name)
        out = out.set_column(
            out.column_names.index(name), name, pc.if_else(incoming_won, mine, theirs.cast(mine.type))
        )
    return out
