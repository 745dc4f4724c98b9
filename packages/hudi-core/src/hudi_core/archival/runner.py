"""Writing the archive and shrinking the active timeline."""

from __future__ import annotations

import datetime as _dt
import io
import json
import logging
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from hudi_core.archival.planner import archival_due, instants_to_archive
from hudi_core.config.archival import ArchivalOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.errors import CommitConflictError, ConfigError
from hudi_core.lock.providers import table_lock
from hudi_core.timeline.avro_files import deserialize, java_schema_json
from hudi_core.timeline.instant import Action, Instant, State, parse_instant_file_name

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.timeline.timeline import ActiveTimeline

__all__ = ["ARCHIVE_FILE_RE", "ArchiveResult", "archive", "archive_file_name", "instant_key", "maybe_archive"]

log = logging.getLogger(__name__)

ENTRY = "HoodieArchivedMetaEntry"
#: ``.commits_.archive.<version>_<write token>``: a log file of file id "commits", extension "archive"
ARCHIVE_FILE_RE = re.compile(r"^\.commits_\.archive\.(\d+)(_[\w-]+)?$")
_WRITE_TOKEN = "1-0-1"
_AVRO_BLOCK_VERSION = 3


@dataclass
class ArchiveResult:
    archive_file: str
    instants: list[Instant]


def archive_file_name(version: int) -> str:
    return f".commits_.archive.{version}_{_WRITE_TOKEN}"


def maybe_archive(
    table: MetaClient, options: Mapping[str, Any], *, timeline: ActiveTimeline | None = None
) -> ArchiveResult | None:
    """Archival after a commit, when ``hoodie.archive.automatic`` (on by default, as in Hudi).
    ``timeline``: a load the caller holds (the commit's), for the first look only."""
    cfg = table.write_config(options)
    if not bool(cfg.get(ArchivalOptions.AUTOMATIC)):
        return None
    try:
        due = archival_due(timeline if timeline is not None else table.timeline, cfg)
    except ConfigError as e:  # the write has committed: say why nothing was archived, do not fail it
        log.warning("archival skipped: %s", e)
        return None
    # Cheap check first, outside the table lock (as the automatic clean does): most commits have
    # nothing to archive, and under optimistic concurrency control a lock taken for nothing makes
    # the other writers wait. When something is due, archive() plans again under the lock.
    return archive(table, options) if due else None


def archive(table: MetaClient, options: Mapping[str, Any] | None = None) -> ArchiveResult | None:
    """Archive what :func:`~hudi_core.archival.planner.instants_to_archive` selects; None when
    nothing is due. The archive file is complete before any active file goes."""
    cfg = table.write_config(options)
    with table_lock(table, cfg):  # (optimistic concurrency control: Hudi archives under the lock)
        return _archive(table, cfg)


def _archive(table: MetaClient, cfg: HoodieConfig) -> ArchiveResult | None:
    instants = instants_to_archive(table, cfg)
    if not instants:
        return None
    # an instant's files by (time, comparable action): writers of other processes can pick the
    # same instant time for different actions (a clean of one, a commit of another)
    wanted = {instant_key(i) for i in instants}
    files: dict[tuple[str, str], list[tuple[Instant, str, float | None]]] = {}
    for info in table.storage.list(table.meta_path):
        parsed = None if info.is_dir else parse_instant_file_name(info.name)
        if parsed is not None and instant_key(parsed) in wanted:
            files.setdefault(instant_key(parsed), []).append((parsed, info.name, info.mtime))
    entries = []
    for inst in instants:
        for state_file, name, mtime in sorted(files.get(instant_key(inst), []), key=lambda f: f[0].state):
            entries.append(_entry(table, state_file, name, mtime))
    batch = max(1, int(cfg.get(ArchivalOptions.BATCH)))
    content = b"".join(_data_block(entries[i : i + batch]) for i in range(0, len(entries), batch))
    folder = f"{table.meta_path}/{table.config.get_str(TableOptions.ARCHIVELOG_FOLDER) or 'archived'}"
    version = 1 + max((int(m.group(1)) for f in table.storage.list(folder)
                       if (m := ARCHIVE_FILE_RE.match(f.name))), default=0)  # fmt: skip
    path = f"{folder}/{archive_file_name(version)}"
    if not table.storage.create_if_absent(path, content):
        raise CommitConflictError(f"{path} already exists: another archiver got there first")
    # pending states first: a crash in between leaves an instant completed (and archived), never
    # pending, which the next writer would roll back
    doomed = sorted(
        (f for i in instants for f in files.get(instant_key(i), [])), key=lambda f: (f[0].is_completed, f[1])
    )
    for completed in (False, True):  # two multi-object deletes on S3, in that order
        failed = table.storage.delete_files(
            f"{table.meta_path}/{name}"
            for state_file, name, _mtime in doomed
            if state_file.is_completed == completed
        )
        if failed:
            raise next(iter(failed.values()))
    table.reload()
    return ArchiveResult(path, instants)


def instant_key(instant: Instant) -> tuple[str, str]:
    """An instant's identity on the timeline: its time and comparable action."""
    return instant.timestamp, instant.comparable_action


# -- HoodieArchivedMetaEntry records ----------------------------------------------------------------


@cache
def _entry_schema() -> tuple[str, Any]:
    import fastavro

    text = java_schema_json(ENTRY)  # Hudi's writer schema (already carries avro.java.string)
    return text, fastavro.parse_schema(json.loads(text))


def _data_block(entries: list[dict[str, Any]]) -> bytes:
    import fastavro

    from hudi_core.log.format import BlockType, HeaderKey, encode_block

    text, parsed = _entry_schema()
    body = io.BytesIO()
    for entry in entries:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, entry)
        body.write(struct.pack(">i", buf.tell()) + buf.getvalue())
    content = struct.pack(">ii", _AVRO_BLOCK_VERSION, len(entries)) + body.getvalue()
    return encode_block(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: text}, content)


def _entry(table: MetaClient, inst: Instant, name: str, mtime: float | None) -> dict[str, Any]:
    """One state file of an instant as Hudi's ``MetadataConversionUtils.createMetaWrapper``."""
    entry: dict[str, Any] = {
        "commitTime": inst.timestamp,
        "actionType": name.split(".")[1] if inst.state is State.COMPLETED else inst.action,
        "actionState": inst.state.name,
        "version": None,
        "stateTransitionTime": _transition_time(mtime, utc=table.config.utc_timeline),
    }
    raw = table.storage.read_bytes(f"{table.meta_path}/{name}")
    action, state = inst.action, inst.state
    if action in (Action.COMMIT, Action.DELTA_COMMIT) or (
        action == Action.COMPACTION and state is State.COMPLETED
    ):
        entry["hoodieCommitMetadata"] = _commit_metadata(raw)
    elif action == Action.COMPACTION and state is State.REQUESTED:
        entry["hoodieCompactionPlan"] = deserialize("HoodieCompactionPlan", raw)
    elif action == Action.CLEAN:
        if state is State.COMPLETED:
            entry["hoodieCleanMetadata"] = deserialize("HoodieCleanMetadata", raw)
        elif raw:
            entry["hoodieCleanerPlan"] = deserialize("HoodieCleanerPlan", raw)
    elif action == Action.ROLLBACK and state is State.COMPLETED:
        entry["hoodieRollbackMetadata"] = deserialize("HoodieRollbackMetadata", raw)
    elif action == Action.REPLACE_COMMIT:
        if state is State.COMPLETED:
            entry["hoodieReplaceCommitMetadata"] = _commit_metadata(raw, replace=True)
        elif state is State.INFLIGHT and raw:
            entry["HoodieInflightReplaceMetadata"] = _commit_metadata(raw)
        elif state is State.REQUESTED and raw:
            entry["hoodieRequestedReplaceMetadata"] = deserialize("HoodieRequestedReplaceMetadata", raw)
    return entry


def _commit_metadata(raw: bytes, *, replace: bool = False) -> dict[str, Any]:
    """Commit metadata JSON as Hudi's Avro ``HoodieCommitMetadata`` (rolling stats emptied, as
    Hudi does before archiving)."""
    doc = json.loads(raw) if raw.strip() else {}
    stats = {p: list(s) for p, s in (doc.get("partitionToWriteStats") or {}).items() if p is not None}
    out: dict[str, Any] = {
        "partitionToWriteStats": stats,
        "extraMetadata": {**(doc.get("extraMetadata") or {}), "ROLLING_STAT": ""},
        "version": None,
        "operationType": doc.get("operationType") or "UNKNOWN",
    }
    if replace:
        out["partitionToReplaceFileIds"] = doc.get("partitionToReplaceFileIds") or {}
    return out


def _transition_time(mtime: float | None, *, utc: bool) -> str | None:
    if mtime is None:
        return None
    tz = _dt.timezone.utc if utc else None
    stamp = _dt.datetime.fromtimestamp(mtime, tz)
    return stamp.strftime("%Y%m%d%H%M%S") + f"{stamp.microsecond // 1000:03d}"
