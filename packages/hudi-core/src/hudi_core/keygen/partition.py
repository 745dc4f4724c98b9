"""Partition-path pieces shared by the key generators (spec 7.2), vectorised."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.table.paths import check_relative_path

__all__ = [
    "DEFAULT_PARTITION_PATH",
    "EMPTY_RECORDKEY_PLACEHOLDER",
    "NULL_RECORDKEY_PLACEHOLDER",
    "check_partition_paths",
    "escape_path_name",
    "partition_segment",
]

DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"

# Hive's FileUtils.escapePathName character set: control chars, DEL and "#%'*/:=?\[]^{
_ESCAPED = [chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^")


def escape_path_name(values: pa.Array) -> pa.Array:
    """Hive ``escapePathName``: each special character becomes ``%XX`` (upper-case hex)."""
    out = values
    # "%" first so the escapes introduced below are not escaped again.
    for ch in sorted(_ESCAPED, key=lambda c: c != "%"):
        if pc.any(pc.match_substring(out, ch)).as_py():
            out = pc.replace_substring(out, ch, f"%{ord(ch):02X}")
    return out


def partition_segment(values: pa.Array, field: str, *, hive_style: bool, url_encode: bool) -> pa.Array:
    """One field's part of the partition path: default for null/empty, escaping, ``field=``."""
    empty = pc.fill_null(pc.equal(values, ""), True)
    if url_encode:
        values = escape_path_name(values)
    out = pc.if_else(empty, DEFAULT_PARTITION_PATH, values) if pc.any(empty).as_py() else values
    if hive_style:
        out = pc.binary_join_element_wise(f"{field}=", out, "")
    return out


_UNSAFE = r"(^|/)\.{0,2}(/|$)|\\|\x00|://|^\.hoodie(/|$)"


def check_partition_paths(paths: pa.Array) -> pa.Array:
    """Raise :class:`UnsafePathError` for the first path that could leave the base path."""
    if len(paths) == 0:
        return paths
    # partition paths repeat: check the distinct values, look for a row only when one is bad
    distinct = pc.unique(paths)
    bad = pc.fill_null(pc.match_substring_regex(distinct, _UNSAFE), False)
    bad = pc.or_(bad, pc.fill_null(pc.starts_with(distinct, "/"), False))
    # "" is the non-partitioned path and allowed.
    bad = pc.and_(bad, pc.not_equal(distinct, ""))
    if pc.any(bad).as_py():
        first_bad = pc.is_in(paths, value_set=pc.filter(distinct, bad))
        row = int(np.flatnonzero(np.asarray(first_bad.to_numpy(zero_copy_only=False)))[0])
        check_relative_path(paths[row].as_py(), what=f"partition path (row {row})")
    return paths
