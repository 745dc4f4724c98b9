"""Merging a file slice under ``PartialUpdateAvroPayload`` (spec 8.2), as Hudi 0.15 reads it.

Partial updates carry only the fields they set (the rest null). Two versions of a key merge
field by field: the version with the greater ordering value wins (a tie goes to the later one),
and each of its null fields is filled from the other. Hudi first folds a key's log records in
arrival order (``preCombine``), then merges that with the base row
(``combineAndGetUpdateValue``): so a field takes the log's best non-null value when the log
wins, the base's otherwise. The meta columns always come from the key's latest log record
(Hudi keeps "the metadata fields of the updating record"). A delete resets the fold: the
record after it stands alone, as with every payload.

Checked against Apache Hudi 0.15's Spark reader (``tests/interop``). Vectorised as the rest of
the merge: the state holds, per key and field, the index of the log row whose value counts
(null when no non-null value was seen), so joins only ever carry integers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core import keymatch
from hudi_core.config.payload import order_type, ordering_values
from hudi_core.read.align import align_table
from hudi_core.read.keys import delete_keys, record_keys
from hudi_core.schema.avro_schema import META_FIELDS

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["merge_partial"]

_META = "s_meta"


def _gt(a: Any, b: Any) -> Any:
    return pc.fill_null(pc.greater(a, b), False)


def _col(i: int) -> str:
    return f"f{i}"


def merge_partial(
    table: MetaClient,
    base: pa.Table,
    blocks: list[Any],
    schema: pa.Schema,
    *,
    ord_field: str | None,
    ord_type: pa.DataType,
    apply_deletes: Any,
    drop_deleted: Any,
) -> pa.Table:
    """``base`` merged with the data and delete ``blocks`` (oldest first) of one file slice;
    ``drop_deleted`` takes the rows the log gave that are flagged deleted out (base rows no log
    record met stay as stored)."""
    from hudi_core.log.format import BlockType

    fields = [i for i, name in enumerate(schema.names) if name not in META_FIELDS]
    log_tables: list[pa.Table] = []
    state = _empty_state(fields, ord_type)
    n_log = 0
    for block in blocks:
        if block.block_type == BlockType.DELETE:
            state = apply_deletes(state, delete_keys(block.deletes(), table.config), ord_type)
            continue
        records = align_table(block.records(), schema)
        if records.num_rows == 0:
            continue
        rows = pa.array(np.arange(n_log, n_log + records.num_rows, dtype=np.int64))
        n_log += records.num_rows
        log_tables.append(records)
        keys = pc.cast(record_keys(records, table.config), pa.string())
        ordering = ordering_values(records, ord_field, ord_type)
        state = _fold(state, _precombine_block(keys, ordering, rows, records, fields))
    logs = pa.concat_tables(log_tables) if log_tables else schema.empty_table()
    return _with_base(table, base, logs, state, schema, fields, ord_field, ord_type, drop_deleted)


def _empty_state(fields: list[int], ord_type: pa.DataType) -> pa.Table:
    cols = {"key": pa.array([], pa.string()), "s_del": pa.array([], pa.bool_()), "s_ord": pa.array([], order_type(ord_type)),
            "s_row": pa.array([], pa.int64()), _META: pa.array([], pa.int64())}  # fmt: skip
    cols.update({_col(i): pa.array([], pa.int64()) for i in fields})
    return pa.table(cols)


def _precombine_block(
    keys: pa.Array, ordering: Any, rows: pa.Array, records: pa.Table, fields: list[int]
) -> pa.Table:
    """One row per key of a block: per field the index of its best non-null value (greatest
    ordering, then latest), the greatest ordering and the latest row (for the meta columns)."""
    cols: dict[str, Any] = {"key": keys, "w_ord": ordering, "w_row": rows}
    for i in fields:
        cols[_col(i)] = pc.if_else(pc.is_valid(records.column(i)), rows, pa.scalar(None, pa.int64()))
    t = pa.table(cols)
    t = t.take(pc.sort_indices(t, [("key", "ascending"), ("w_ord", "ascending", "at_start"),
                                   ("w_row", "ascending")]))  # fmt: skip
    aggs = [("w_ord", "last"), ("w_row", "max")] + [(_col(i), "last") for i in fields]
    # "last" keeps the last non-null value: rows are in (ordering, arrival) order within a key;
    # a null ordering sorts first, so w_ord_last is the greatest one
    out = t.group_by("key", use_threads=False).aggregate(aggs)
    rename = {"w_ord_last": "w_ord", "w_row_max": "w_row", **{f"{_col(i)}_last": _col(i) for i in fields}}
    return out.rename_columns([rename.get(n, n) for n in out.column_names])


def _fold(state: pa.Table, block: pa.Table) -> pa.Table:
    """preCombine(state, block): the later block wins ties; after a delete the block stands alone."""
    s = state.rename_columns([n if n == "key" else f"s.{n}" for n in state.column_names])
    j = s.join(block, keys="key", join_type="full outer")
    has_s = pc.is_valid(j.column("s.s_del"))
    has_w = pc.is_valid(j.column("w_row"))
    s_del = pc.fill_null(j.column("s.s_del"), False)
    live_s = pc.and_(has_s, pc.invert(s_del))
    keep_s = pc.and_(live_s, _gt(j.column("s.s_ord"), j.column("w_ord")))
    w_wins = pc.and_(has_w, pc.invert(keep_s))
    null = pa.scalar(None, pa.int64())
    out: dict[str, Any] = {
        "key": j.column("key"),
        "s_del": pc.if_else(has_w, False, s_del),
        "s_ord": pc.if_else(w_wins, j.column("w_ord"), j.column("s.s_ord")),
        "s_row": pc.if_else(has_w, j.column("w_row"), j.column("s.s_row")),
        _META: pc.if_else(has_w, j.column("w_row"), j.column(f"s.{_META}")),
    }
    for name in state.column_names:
        if not name.startswith("f"):
            continue
        mine = pc.if_else(live_s, j.column(f"s.{name}"), null)
        theirs = j.column(name)
        out[name] = pc.if_else(w_wins, pc.coalesce(theirs, mine), pc.coalesce(mine, theirs))
    return pa.table(out)


def _with_base(
    table: MetaClient,
    base: pa.Table,
    logs: pa.Table,
    state: pa.Table,
    schema: pa.Schema,
    fields: list[int],
    ord_field: str | None,
    ord_type: pa.DataType,
    drop_deleted: Any,
) -> pa.Table:
    """combineAndGetUpdateValue(base row, folded log record) per key; log-only keys are inserts."""
    if state.num_rows == 0:
        return base
    s_keys = state.column("key").combine_chunks()
    s_del = pc.fill_null(state.column("s_del"), False).to_numpy(zero_copy_only=False)
    keep_base = np.ones(base.num_rows, dtype=bool)
    has_base = np.zeros(state.num_rows, dtype=bool)
    parts: list[pa.Table] = []
    if base.num_rows:
        b_keys = pc.cast(record_keys(base, table.config), pa.string())
        pos = keymatch.index_in(b_keys, s_keys)
        matched = pos >= 0
        if matched.any():  # a duplicated base key meets its log record once (its first copy)
            rows = np.flatnonzero(matched)
            _, first = np.unique(pos[rows], return_index=True)
            matched = np.zeros_like(matched)
            matched[rows[first]] = True
        if matched.any():
            b_rows = np.flatnonzero(matched)
            m_pos = pos[matched]
            keep_base[matched] = False
            has_base[m_pos] = True
            live = ~s_del[m_pos]
            b_rows, m_pos = b_rows[live], m_pos[live]
            if len(b_rows):
                merged = _merged_rows(base, logs, state, schema, fields, ord_field, ord_type, b_rows, m_pos)
                parts.append(drop_deleted(merged))
    if keep_base.any():
        parts.insert(0, base if keep_base.all() else base.filter(pa.array(keep_base)))
    log_only = np.flatnonzero(~has_base & ~s_del)
    if len(log_only):
        parts.append(drop_deleted(_log_rows(logs, state, schema, fields, log_only)))
    if not parts:
        return base.schema.empty_table()
    return pa.concat_tables(parts)


def _log_rows(
    logs: pa.Table, state: pa.Table, schema: pa.Schema, fields: list[int], at: np.ndarray
) -> pa.Table:
    sub = state.take(pa.array(at))
    meta_rows = sub.column(_META)
    cols = []
    for i, name in enumerate(schema.names):
        idx = sub.column(_col(i)) if i in fields else meta_rows
        cols.append(logs.column(name).take(idx))
    return pa.Table.from_arrays(cols, schema=schema)


def _merged_rows(
    base: pa.Table,
    logs: pa.Table,
    state: pa.Table,
    schema: pa.Schema,
    fields: list[int],
    ord_field: str | None,
    ord_type: pa.DataType,
    b_rows: np.ndarray,
    m_pos: np.ndarray,
) -> pa.Table:
    b = base.take(pa.array(b_rows))
    logged = _log_rows(logs, state, schema, fields, m_pos)
    b_ord = ordering_values(b, ord_field, ord_type)
    log_wins = pc.invert(_gt(b_ord, state.column("s_ord").take(pa.array(m_pos))))
    cols = []
    for i, name in enumerate(schema.names):
        mine, theirs = logged.column(name), b.column(name)
        if i in fields:
            cols.append(pc.if_else(log_wins, pc.coalesce(mine, theirs), pc.coalesce(theirs, mine)))
        else:
            cols.append(mine)  # the meta columns of the latest log record
    return pa.Table.from_arrays(cols, schema=schema)
