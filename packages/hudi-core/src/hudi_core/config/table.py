"""Options persisted in ``.hoodie/hoodie.properties`` (spec section 2.3)."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty, HoodieConfig
from hudi_core.errors import ConfigError

__all__ = ["CDC_LOGGING_MODES", "TableOptions", "cdc_logging_mode"]


def _t(key: str, default: object, doc: str, *aliases: str) -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, aliases=aliases, group="table")


class TableOptions:
    NAME = _t("hoodie.table.name", None, "Table name; required.")
    DATABASE = _t("hoodie.database.name", None, "Database name; part of the checksum.")
    TYPE = _t("hoodie.table.type", "COPY_ON_WRITE", "COPY_ON_WRITE or MERGE_ON_READ.")
    VERSION = _t("hoodie.table.version", 6, "Table version; this library writes 6.")
    TIMELINE_LAYOUT_VERSION = _t("hoodie.timeline.layout.version", 1, "Timeline layout; 1 for v6.")
    CHECKSUM = _t("hoodie.table.checksum", None, "CRC32 of '<database>.<table>'.")
    ARCHIVELOG_FOLDER = _t("hoodie.archivelog.folder", "archived", "Archived timeline folder under .hoodie.")
    RECORDKEY_FIELDS = _t("hoodie.table.recordkey.fields", None, "Comma-separated record key fields.")
    PARTITION_FIELDS = _t("hoodie.table.partition.fields", None, "Comma-separated partition fields.")
    PRECOMBINE_FIELD = _t(
        "hoodie.table.precombine.field", None, "Ordering (precombine) field.", "hoodie.table.ordering.fields"
    )
    KEYGEN_CLASS = _t("hoodie.table.keygenerator.class", None, "Key generator class name.")
    KEYGEN_TYPE = _t("hoodie.table.keygenerator.type", None, "Key generator type (table version 8).")
    HIVE_STYLE_PARTITIONING = _t(
        "hoodie.datasource.write.hive_style_partitioning", False, "Partition folders as field=value."
    )
    URL_ENCODE_PARTITIONING = _t(
        "hoodie.datasource.write.partitionpath.urlencode", False, "Escape partition values like Hive."
    )
    CDC_ENABLED = _t(
        "hoodie.table.cdc.enabled",
        False,
        "Change data capture: a write that rewrites a base file writes what changed in it into a "
        "CDC log file beside it (log.cdc), which Hudi's CDC query reads. Set at creation.",
    )
    CDC_LOGGING_MODE = _t(
        "hoodie.table.cdc.supplemental.logging.mode",
        "DATA_BEFORE_AFTER",
        "What a CDC record holds beside the operation: OP_KEY_ONLY (the record key), DATA_BEFORE "
        "(the key and the record before), DATA_BEFORE_AFTER (the instant and both images).",
    )
    BOOTSTRAP_BASE_PATH = _t(
        "hoodie.bootstrap.base.path",
        None,
        "The source table a bootstrap (Hudi's run_bootstrap) took its data from: a METADATA_ONLY "
        "bootstrap's skeleton files hold the meta columns only, its source files the data columns "
        "(found through Hudi's bootstrap index, io.bootstrap_index).",
    )
    DROP_PARTITION_COLUMNS = _t(
        "hoodie.datasource.write.drop.partition.columns",
        False,
        "Data files leave the partition columns out; readers take their values from the partition path "
        "(as strings). Set at creation; hudi-rs refuses such tables.",
    )
    CREATE_SCHEMA = _t("hoodie.table.create.schema", None, "Avro schema (JSON) at creation, no meta fields.")
    POPULATE_META_FIELDS = _t("hoodie.populate.meta.fields", True, "Write the five _hoodie_* columns.")
    PAYLOAD_CLASS = _t(
        "hoodie.compaction.payload.class",
        "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
        "Payload class used to merge records on read and compaction.",
    )
    MERGER_STRATEGY = _t(
        "hoodie.compaction.record.merger.strategy",
        "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        "Record merger strategy id.",
    )
    BASE_FILE_FORMAT = _t(
        "hoodie.table.base.file.format", "PARQUET", "Base file format.", "hoodie.table.ro.file.format"
    )
    LOG_FILE_FORMAT = _t(
        "hoodie.table.log.file.format", "HOODIE_LOG", "Log file format.", "hoodie.table.rt.file.format"
    )
    TIMELINE_TIMEZONE = _t("hoodie.table.timeline.timezone", "LOCAL", "LOCAL or UTC instant times.")
    METADATA_PARTITIONS = _t("hoodie.table.metadata.partitions", None, "Built metadata-table partitions.")
    METADATA_PARTITIONS_INFLIGHT = _t(
        "hoodie.table.metadata.partitions.inflight", None, "Metadata-table partitions being built."
    )
    TIMELINE_PATH = _t("hoodie.timeline.path", None, "Timeline folder (table version 8).")


#: ``hoodie.table.cdc.supplemental.logging.mode``'s values (:mod:`hudi_core.log.cdc`)
CDC_LOGGING_MODES = ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER")


def cdc_logging_mode(config: HoodieConfig) -> str | None:
    """The table's CDC supplemental logging mode, or None where it keeps no change log."""
    if not config.get(TableOptions.CDC_ENABLED):
        return None
    mode = str(config.get_str(TableOptions.CDC_LOGGING_MODE) or TableOptions.CDC_LOGGING_MODE.default).upper()
    if mode not in CDC_LOGGING_MODES:
        raise ConfigError(
            f"{TableOptions.CDC_LOGGING_MODE.key}={mode!r} is not one of {', '.join(CDC_LOGGING_MODES)}"
        )
    return mode
