"""Listing partitions and parsing partition values out of partition paths (spec 8.1, 12)."""

from __future__ import annotations

import datetime
import decimal
from typing import Any
from urllib.parse import unquote

from hudi_core.storage.base import TEMP_PREFIX, FileInfo, Storage
from hudi_core.table.file_names import PARTITION_METAFILE_PREFIX, BaseFileName, LogFileName

__all__ = ["is_ignored_name", "list_partitions", "partition_listings", "partition_values"]

_IGNORED_SUFFIXES = (".crc",)
_META_FOLDER = ".hoodie"
_IGNORED_NAMES = {".DS_Store", "_SUCCESS"}


def is_ignored_name(name: str) -> bool:
    """Files a reader must skip: OS droppings, checksums, partition metadata, and a create in
    progress (a writer's bytes under the storage's temporary name before they get the file's
    own: a concurrent writer's, seen by the others' listings)."""
    return (
        name in _IGNORED_NAMES
        or name.endswith(_IGNORED_SUFFIXES)
        or name.startswith((PARTITION_METAFILE_PREFIX, TEMP_PREFIX))
    )


def _holds_data(names: list[str]) -> bool:
    return any(
        n.startswith(PARTITION_METAFILE_PREFIX)
        or BaseFileName.parse(n) is not None
        or LogFileName.parse(n) is not None
        for n in names
    )


def list_partitions(storage: Storage, base_uri: str, *, partitioned: bool) -> list[str]:
    """Relative partition paths, sorted; ``[""]`` for a non-partitioned table (no listing)."""
    return sorted(partition_listings(storage, base_uri)) if partitioned else [""]


def partition_listings(storage: Storage, base_uri: str) -> dict[str, list[FileInfo]]:
    """Every partition of a partitioned table (relative path, sorted) with its entries as listed
    while finding it: a caller reading the files lists no partition twice.

    As Hudi's file-system listing: every directory but the ``.hoodie`` metadata folder is
    walked, at any depth (a value with ``/`` in it, not URL-encoded, nests), and one holding a
    ``.hoodie_partition_metadata`` file or Hudi data files is a partition. So is an empty leaf,
    unless it is in a folder whose name starts with ``_`` or ``.`` (``_temporary``): Hive's
    ``__HIVE_DEFAULT_PARTITION__`` holds data like any other partition.
    """
    base = base_uri.rstrip("/")
    out: dict[str, list[FileInfo]] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        entries = storage.list(f"{base}/{rel}" if rel else base)
        dirs = [e.name for e in entries if e.is_dir and (rel or e.name != _META_FOLDER)]
        files = [e.name for e in entries if not e.is_dir]
        if rel and (
            _holds_data(files) or not (dirs or any(p.startswith(("_", ".")) for p in rel.split("/")))
        ):
            out[rel] = entries
            continue
        stack.extend(f"{rel}/{d}" if rel else d for d in dirs)
    return dict(sorted(out.items()))


def partition_values(
    partition_path: str, fields: list[str], *, hive_style: bool, url_encoded: bool
) -> dict[str, str] | None:
    """``{field: raw string value}`` parsed from a partition path, or None when the path
    does not map one segment per field (then a caller cannot prune on it)."""
    if not fields:
        return {}
    segments = partition_path.split("/") if partition_path else []
    values: dict[str, str] = {}
    if hive_style or all("=" in s for s in segments):
        for s in segments:
            if "=" not in s:
                return None
            k, v = s.split("=", 1)
            values[k] = v
    elif len(segments) == len(fields):
        values = dict(zip(fields, segments, strict=False))
    else:
        return None
    if url_encoded:
        values = {k: unquote(v) for k, v in values.items()}
    return values


def path_says(sample: Any) -> bool:
    """Whether a partition path's text converts to the kind of ``sample`` (:func:`coerce_like`)."""
    if isinstance(sample, datetime.datetime):
        return False
    return isinstance(sample, (bool, int, float, str, datetime.date, decimal.Decimal))


def coerce_like(raw: str, sample: Any) -> Any:
    """Convert a partition value string to the Python type of a filter value (for pruning): a
    date is its ISO text in the path, a decimal its digits. A time (rendered as micros or text by
    a write setting) or another kind raises TypeError: the path cannot say."""
    if isinstance(sample, bool):
        return raw.lower() == "true"
    if isinstance(sample, int):
        return int(raw)
    if isinstance(sample, float):
        return float(raw)
    if isinstance(sample, str):
        return raw
    if not path_says(sample):
        raise TypeError(f"a partition path does not say a {type(sample).__name__}")
    if isinstance(sample, datetime.date):
        return datetime.date.fromisoformat(raw)
    try:
        return decimal.Decimal(raw)
    except decimal.InvalidOperation as e:
        raise ValueError(f"{raw!r} is not a decimal") from e
