"""Cleaner options (spec 11.1): which old file slices a clean removes."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["CleanOptions"]


def _c(key: str, default: object, doc: str, *aliases: str, since: str = "0.5.0") -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, since=since, aliases=aliases, group="clean")


class CleanOptions:
    POLICY = _c(
        "hoodie.cleaner.policy",
        "KEEP_LATEST_COMMITS",
        "KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS.",
    )
    COMMITS_RETAINED = _c(
        "hoodie.cleaner.commits.retained",
        10,
        "KEEP_LATEST_COMMITS: time travel stays possible to this many latest commits.",
    )
    FILE_VERSIONS_RETAINED = _c(
        "hoodie.cleaner.fileversions.retained",
        3,
        "KEEP_LATEST_FILE_VERSIONS: file slices kept per file group.",
    )
    HOURS_RETAINED = _c(
        "hoodie.cleaner.hours.retained",
        24,
        "KEEP_LATEST_BY_HOURS: time travel stays possible to commits this many hours old.",
        since="0.11.0",
    )
    INCREMENTAL_MODE = _c(
        "hoodie.cleaner.incremental.mode",
        True,
        "KEEP_LATEST_COMMITS / KEEP_LATEST_BY_HOURS: plan from the partitions written since the "
        "last clean's earliest commit to retain instead of listing every partition.",
        since="0.5.1",
    )
    AUTOMATIC = _c("hoodie.clean.automatic", True, "Clean after every commit of a write client.")
    ASYNC = _c("hoodie.clean.async", False, "Clean in a background thread while writing.")
