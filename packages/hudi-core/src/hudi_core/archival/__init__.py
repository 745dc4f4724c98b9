"""Archival (Hudi's ``HoodieTimelineArchiver``, table version 6): completed instants beyond
``hoodie.keep.max.commits`` move from the active timeline into ``.hoodie/archived`` as log files
of ``HoodieArchivedMetaEntry`` Avro records, so the active timeline stays short.

``archive(table)`` plans (:mod:`.planner`, Hudi's guards), writes one new archive log file
version (created exclusively, so a crash leaves either the whole file or none) and only then
deletes the archived instants' files, pending states first: an instant is never lost, and one
left both archived and active is read once (:mod:`.timeline` lets the active copy win).
"""

from hudi_core.archival.planner import instants_to_archive
from hudi_core.archival.runner import ArchiveResult, archive, maybe_archive
from hudi_core.archival.timeline import ArchivedInstant, archived_instants, read_archived_timeline

__all__ = [
    "ArchiveResult",
    "ArchivedInstant",
    "archive",
    "archived_instants",
    "instants_to_archive",
    "maybe_archive",
    "read_archived_timeline",
]
