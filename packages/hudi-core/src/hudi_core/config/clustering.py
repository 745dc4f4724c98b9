"""Clustering options: which file slices a plan groups, how the groups are rewritten, inline runs
and async runs (Apache Hudi 0.15's ``HoodieClusteringConfig`` keys and defaults)."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["ClusteringOptions"]

_PLAN = "hoodie.clustering.plan.strategy."
SIZE_BASED_PLAN = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
SORT_AND_SIZE_EXECUTION = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"


def _c(key: str, default: object, doc: str, *, since: str = "0.7.0") -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, since=since, group="clustering")


class ClusteringOptions:
    INLINE = _c(
        "hoodie.clustering.inline",
        False,
        "Schedule and run a clustering right after a commit, once `inline.max.commits` commits "
        "completed since the last one.",
    )
    INLINE_MAX_COMMITS = _c(
        "hoodie.clustering.inline.max.commits",
        4,
        "Inline clustering: completed commits since the last clustering before scheduling one.",
    )
    SCHEDULE_INLINE = _c(
        "hoodie.clustering.schedule.inline",
        False,
        "Only schedule (not run) a clustering after a commit, on the same count.",
        since="0.10.0",
    )
    ASYNC = _c(
        "hoodie.clustering.async.enabled",
        False,
        "Streaming writers (`hudi_spark.write_stream`, the streamer): schedule a clustering after a "
        "commit once `async.max.commits` commits completed since the last one, and run pending "
        "clusterings in the background while ingestion goes on (ignored when `hoodie.clustering.inline` is on).",
    )
    ASYNC_MAX_COMMITS = _c(
        "hoodie.clustering.async.max.commits",
        4,
        "Async clustering: completed commits since the last clustering before scheduling one.",
        since="0.9.0",
    )
    PLAN_STRATEGY = _c(
        "hoodie.clustering.plan.strategy.class",
        SIZE_BASED_PLAN,
        "Which file slices a plan groups; only Hudi's size-based strategy is implemented.",
    )
    EXECUTION_STRATEGY = _c(
        "hoodie.clustering.execution.strategy.class",
        SORT_AND_SIZE_EXECUTION,
        "How a group is rewritten; only Hudi's sort-and-size strategy is implemented.",
    )
    SMALL_FILE_LIMIT = _c(
        _PLAN + "small.file.limit",
        300 * 1024 * 1024,
        "Only file slices whose base file is smaller than this many bytes are clustered.",
    )
    MAX_BYTES_PER_GROUP = _c(
        _PLAN + "max.bytes.per.group",
        2 * 1024 * 1024 * 1024,
        "Base-file bytes one clustering group takes (a slice without one counts "
        "`hoodie.parquet.max.file.size`).",
    )
    TARGET_FILE_MAX_BYTES = _c(
        _PLAN + "target.file.max.bytes",
        1024 * 1024 * 1024,
        "A group is written as ceil(its bytes / this) new file groups.",
    )
    MAX_NUM_GROUPS = _c(
        _PLAN + "max.num.groups",
        30,
        "Groups one plan holds.",
    )
    SORT_COLUMNS = _c(
        _PLAN + "sort.columns",
        "",
        "Comma-separated columns each group's rows are sorted by before they are written.",
    )
    SINGLE_GROUP = _c(
        _PLAN + "single.group.clustering.enabled",
        True,
        "Also cluster a partition's last group when it holds a single file slice.",
        since="0.14.0",
    )
    PARTITION_SELECTED = _c(
        _PLAN + "partition.selected",
        "",
        "Comma-separated partitions to cluster (all when empty).",
        since="0.11.0",
    )
    PARTITION_REGEX = _c(
        _PLAN + "partition.regex.pattern",
        "",
        "Only partitions whose path matches this regular expression are clustered.",
        since="0.11.0",
    )
    PARTITION_FILTER_MODE = _c(
        "hoodie.clustering.plan.partition.filter.mode",
        "NONE",
        "Partition filter of the plan; only NONE is implemented (select with `partition.selected` "
        "or `partition.regex.pattern`).",
        since="0.11.0",
    )
    LAYOUT_STRATEGY = _c(
        "hoodie.layout.optimize.strategy",
        "LINEAR",
        "How sort columns order rows; only LINEAR (a plain sort) is implemented.",
        since="0.10.0",
    )
