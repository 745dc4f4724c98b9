"""Paths inside a table: every partition and file path is checked to stay below the base path."""

from __future__ import annotations

from hudi_core.errors import UnsafePathError

__all__ = ["check_relative_path", "join_table_path"]


def check_relative_path(rel: str, *, what: str = "path") -> str:
    """Reject a relative path that could leave the base path (``..``, absolute, NUL, backslash)."""
    if rel == "":
        return rel
    if "\x00" in rel or "\\" in rel:
        raise UnsafePathError(f"{what} {rel!r} contains a NUL or backslash character")
    if rel.startswith("/") or "://" in rel:
        raise UnsafePathError(f"{what} {rel!r} is absolute; it must be relative to the table")
    if rel.split("/", 1)[0] == ".hoodie":
        raise UnsafePathError(f"{what} {rel!r} would write into the table's metadata folder .hoodie")
    for segment in rel.split("/"):
        if segment in ("", ".", ".."):
            raise UnsafePathError(
                f"{what} {rel!r} has an empty, '.' or '..' segment and would escape the table's "
                "base path; clean the value (hoodie.datasource.write.partitionpath.urlencode keeps a "
                "'/' inside a value from making such a segment, but leaves a value of '.' or '..')"
            )
    return rel


def join_table_path(base: str, *parts: str) -> str:
    """``base/part1/part2`` with every part checked by :func:`check_relative_path`."""
    out = base.rstrip("/")
    for part in parts:
        if part:
            out = f"{out}/{check_relative_path(part.strip('/') if part.endswith('/') else part)}"
    return out
