"""Archival options (Hudi's ``HoodieArchivalConfig``): how many completed instants the active
timeline keeps before older ones move to ``.hoodie/archived``."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["ArchivalOptions"]


def _a(key: str, default: object, doc: str, *aliases: str, since: str = "0.5.0") -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, since=since, aliases=aliases, group="archival")


class ArchivalOptions:
    MIN_COMMITS = _a(
        "hoodie.keep.min.commits", 20, "Archival leaves at least this many completed commits active."
    )
    MAX_COMMITS = _a(
        "hoodie.keep.max.commits",
        30,
        "Archival runs once more than this many completed commits are active (also for cleans and "
        "rollbacks, each counted on its own).",
    )
    BATCH = _a("hoodie.commits.archival.batch", 10, "Archived instants written per Avro data block.")
    AUTOMATIC = _a("hoodie.archive.automatic", True, "Archive after every commit of a write client.")
