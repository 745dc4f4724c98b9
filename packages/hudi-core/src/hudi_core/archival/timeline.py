"""Reading ``.hoodie/archived`` (Hudi's ``HoodieArchivedTimeline``): the archived instants and
their commit metadata, from our archive files and from Hudi's alike."""

from __future__ import annotations

import io
import json
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hudi_core.config.table import TableOptions
from hudi_core.timeline.instant import Instant, State
from hudi_core.timeline.timeline import Timeline

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["ArchivedInstant", "archived_instants", "read_archived_timeline"]


@dataclass(frozen=True)
class ArchivedInstant:
    instant: Instant
    #: the completed state's commit metadata in the JSON shape of an active commit file (or None)
    commit_metadata: dict[str, Any] | None


def archived_instants(table: MetaClient) -> list[ArchivedInstant]:
    """Completed archived instants, oldest first. An instant (time and action) still (also)
    active is left out: a crash between writing the archive and deleting the active files
    counts it once."""
    import fastavro

    from hudi_core.archival.runner import ARCHIVE_FILE_RE, instant_key
    from hudi_core.log.format import BlockType
    from hudi_core.log.reader import read_log_file

    folder = f"{table.meta_path}/{table.config.get_str(TableOptions.ARCHIVELOG_FOLDER) or 'archived'}"
    files = sorted(
        (
            (int(m.group(1)), f.path)
            for f in table.storage.list(folder)
            if (m := ARCHIVE_FILE_RE.match(f.name))
        ),
    )
    active = {instant_key(i) for i in table.timeline}
    found: dict[tuple[str, str], ArchivedInstant] = {}
    for _version, path in files:
        for block in read_log_file(table.storage, path):
            if block.block_type != BlockType.AVRO_DATA or not block.schema:
                continue
            schema = fastavro.parse_schema(json.loads(block.schema))
            for record in _records(block.content, schema):
                if record.get("actionState") not in (None, "COMPLETED"):
                    continue
                instant = Instant(record["commitTime"], record["actionType"], State.COMPLETED)
                key = instant_key(instant)
                if key in active:
                    continue
                meta = record.get("hoodieCommitMetadata") or record.get("hoodieReplaceCommitMetadata")
                found[key] = ArchivedInstant(instant, _as_json(meta))
    return [found[key] for key in sorted(found)]


def read_archived_timeline(table: MetaClient) -> Timeline:
    return Timeline(a.instant for a in archived_instants(table))


def _records(content: bytes, schema: Any) -> list[dict[str, Any]]:
    import fastavro

    _version, count = struct.unpack_from(">ii", content, 0)
    pos, out = 8, []
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        record = fastavro.schemaless_reader(io.BytesIO(content[pos + 4 : pos + 4 + length]), schema, None)
        if isinstance(record, dict):
            out.append(record)
        pos += 4 + length
    return out


def _as_json(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    if meta is None:
        return None
    out = {k: v for k, v in meta.items() if v is not None}
    extra = dict(out.get("extraMetadata") or {})
    extra.pop("ROLLING_STAT", None)
    out["extraMetadata"] = extra
    return out
