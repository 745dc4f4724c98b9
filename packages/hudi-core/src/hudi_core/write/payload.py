"""Payload classes (spec 8.2) as vectorised decisions over Arrow columns.

Only what the writer decides lives here: which of two versions of a key survives a batch
(``preCombine``) and whether an incoming record replaces the stored one in a COW merge
(``combineAndGetUpdateValue``). The classes and the comparisons readers share are
``hudi_core.config.payload``'s; readers merge with ``hudi_core.read.merge``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.payload import Payload, stored_wins, untoasted
from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError

__all__ = [
    "Payload",
    "coalesce_by_winner",
    "incoming_wins",
    "merged_by_winner",
    "op_deletes",
    "payload_for",
]


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
    return name, Payload.named(name)


def incoming_wins(
    payload: Payload, stored_ordering: pa.Array | None, incoming_ordering: pa.Array | None
) -> pa.Array:
    """Per row, whether the incoming version replaces the stored one, given the values of the
    payload's :meth:`~Payload.update_field` (ties: incoming, but the stored one under
    FirstValueAvroPayload and MySqlDebeziumAvroPayload).

    A null stored value always loses, like Java's ``DefaultHoodieRecordPayload`` and the
    Debezium payloads (a record bootstrapped without a source position).
    """
    n = len(incoming_ordering) if incoming_ordering is not None else len(stored_ordering or [])
    decides = payload.position_field is not None or payload.honours_ordering_on_update
    if not decides or stored_ordering is None or incoming_ordering is None:
        return pa.array([True] * n, pa.bool_())
    return pc.invert(stored_wins(payload, stored_ordering, incoming_ordering))


def op_deletes(config: HoodieConfig, data: pa.Table) -> pa.Array | None:
    """Which rows of ``data`` the payload's change field marks as deletes (AWSDms: ``Op`` is
    ``D``; Debezium: ``_change_operation_type`` is ``d``; any case); None under any other payload
    or without the field."""
    payload = _configured(config)[1]
    marker = payload.delete_op if payload is not None else None
    if marker is None or marker[0] not in data.column_names:
        return None
    op = data.column(marker[0])
    op = op if pa.types.is_string(op.type) or pa.types.is_large_string(op.type) else op.cast(pa.string())
    return pc.fill_null(pc.equal(pc.utf8_lower(op), marker[1]), False)


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
    if payload.keeps_toasted:
        incoming = untoasted(incoming, stored, incoming_won, names)
    out = incoming
    for name in names:
        mine, theirs = incoming.column(name), stored.column(name)
        out = out.set_column(
            out.column_names.index(name), name, pc.if_else(incoming_won, mine, theirs.cast(mine.type))
        )
    return out
