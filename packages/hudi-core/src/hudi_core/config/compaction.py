"""Compaction options (spec 9.3): when to schedule, which file slices a plan takes, inline runs."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["CompactionOptions"]


def _c(key: str, default: object, doc: str, *aliases: str, since: str = "0.5.0") -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, since=since, aliases=aliases, group="compaction")


class CompactionOptions:
    INLINE = _c(
        "hoodie.compact.inline",
        False,
        "Schedule and run a compaction right after a delta commit when the trigger fires.",
    )
    SCHEDULE_INLINE = _c(
        "hoodie.compact.schedule.inline",
        False,
        "Only schedule (not run) a compaction after a delta commit when the trigger fires.",
        since="0.10.0",
    )
    MAX_DELTA_COMMITS = _c(
        "hoodie.compact.inline.max.delta.commits",
        5,
        "NUM_COMMITS trigger: delta commits since the last compaction before scheduling one.",
    )
    MAX_DELTA_SECONDS = _c(
        "hoodie.compact.inline.max.delta.seconds",
        3600,
        "TIME_ELAPSED trigger: seconds since the last compaction before scheduling one.",
        since="0.9.0",
    )
    TRIGGER_STRATEGY = _c(
        "hoodie.compact.inline.trigger.strategy",
        "NUM_COMMITS",
        "NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST, TIME_ELAPSED, NUM_AND_TIME or NUM_OR_TIME.",
        since="0.9.0",
    )
    PLAN_STRATEGY = _c(
        "hoodie.compaction.strategy",
        "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
        "Which file slices a plan compacts (a short name or Hudi's Java class name).",
    )
    TARGET_IO_MB = _c(
        "hoodie.compaction.target.io",
        500 * 1024,
        "Bounded IO strategies: MB read + written per compaction (default 500 GB).",
    )
    LOGFILE_SIZE_THRESHOLD = _c(
        "hoodie.compaction.logfile.size.threshold",
        0,
        "Log-file-size strategy: only slices whose log files total at least this many bytes.",
        since="0.13.0",
    )
    LOGFILE_NUM_THRESHOLD = _c(
        "hoodie.compaction.logfile.num.threshold",
        0,
        "Log-file-count strategy: only slices with at least this many log files.",
        since="0.13.0",
    )
    DAYBASED_TARGET_PARTITIONS = _c(
        "hoodie.compaction.daybased.target.partitions",
        10,
        "Day based strategy: the latest N date partitions (yyyy/mm/dd) are compacted.",
    )
