"""``.hoodie/hoodie.properties``: create, load (with backup fallback and checksum check), update."""

from __future__ import annotations

import datetime as _dt
import zlib
from collections.abc import Mapping

from hudi_core.config.properties import dump_properties, load_properties
from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions, cdc_logging_mode
from hudi_core.errors import ConfigError, TableNotFoundError, UnsupportedTableVersionError
from hudi_core.storage.base import Storage

__all__ = ["PROPERTIES_FILE", "TableConfig", "table_checksum"]

PROPERTIES_FILE = "hoodie.properties"
BACKUP_FILE = "hoodie.properties.backup"
SUPPORTED_VERSIONS = (6,)

# Written in this order (Java keeps insertion order in freshly created COW tables).
_ORDER = (
    TableOptions.NAME, TableOptions.TYPE, TableOptions.VERSION, TableOptions.TIMELINE_LAYOUT_VERSION,
    TableOptions.ARCHIVELOG_FOLDER, TableOptions.RECORDKEY_FIELDS, TableOptions.PARTITION_FIELDS,
    TableOptions.PRECOMBINE_FIELD, TableOptions.KEYGEN_CLASS, TableOptions.HIVE_STYLE_PARTITIONING,
    TableOptions.URL_ENCODE_PARTITIONING, TableOptions.DROP_PARTITION_COLUMNS,
    TableOptions.CREATE_SCHEMA, TableOptions.POPULATE_META_FIELDS, TableOptions.PAYLOAD_CLASS,
    TableOptions.MERGER_STRATEGY, TableOptions.BASE_FILE_FORMAT, TableOptions.TIMELINE_TIMEZONE,
    TableOptions.DATABASE,
)  # fmt: skip


def table_checksum(props: Mapping[str, str]) -> int:
    """CRC32 of ``"<database>.<table>"`` (database empty when absent), spec 2.2."""
    db = props.get(TableOptions.DATABASE.key) or ""
    name = props.get(TableOptions.NAME.key)
    if not name:
        raise ConfigError("hoodie.table.name is missing from hoodie.properties")
    return zlib.crc32(f"{db}.{name}".encode()) & 0xFFFFFFFF


def _now_comment(prefix: str) -> str:
    now = _dt.datetime.now(_dt.timezone.utc)
    return f"{prefix} {now.strftime('%Y-%m-%dT%H:%M:%S.')}{now.microsecond // 1000:03d}Z"


class TableConfig(HoodieConfig):
    """The persisted table config: a :class:`HoodieConfig` plus typed accessors."""

    def __init__(self, props: Mapping[str, str], *, meta_path: str = "") -> None:
        super().__init__(props)
        self.meta_path = meta_path

    # -- typed accessors -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return str(self.get_str(TableOptions.NAME))

    @property
    def table_type(self) -> str:
        t = str(self.get_str(TableOptions.TYPE)).upper()
        return {"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}.get(t, t)

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def version(self) -> int:
        return int(self.get(TableOptions.VERSION))

    @property
    def record_key_fields(self) -> list[str]:
        return self.get_list(TableOptions.RECORDKEY_FIELDS)

    @property
    def partition_fields(self) -> list[str]:
        return [p.split(":", 1)[0] for p in self.get_list(TableOptions.PARTITION_FIELDS)]

    @property
    def ordering_field(self) -> str | None:
        return self.get_str(TableOptions.PRECOMBINE_FIELD) or None

    @property
    def keygen_class(self) -> str | None:
        return self.get_str(TableOptions.KEYGEN_CLASS)

    @property
    def hive_style(self) -> bool:
        return bool(self.get(TableOptions.HIVE_STYLE_PARTITIONING))

    @property
    def url_encode(self) -> bool:
        return bool(self.get(TableOptions.URL_ENCODE_PARTITIONING))

    @property
    def drops_partition_columns(self) -> bool:
        """``hoodie.datasource.write.drop.partition.columns``: the data files do not hold the
        partition columns; readers take their values from the partition path."""
        return bool(self.get(TableOptions.DROP_PARTITION_COLUMNS))

    @property
    def dropped_columns(self) -> list[str]:
        """The columns writers leave out of data files and commit schemas: the partition fields of
        a table with ``drop.partition.columns`` (its readers add them from the path), else none."""
        if not self.drops_partition_columns or not self.is_partitioned:
            return []
        return [f for f in self.partition_fields if f]

    def check_writable(self) -> None:
        """Refuse to write data files into a table whose options this writer cannot keep as
        Apache Hudi expects them; such a table is still read."""
        cdc_logging_mode(self)  # an unknown CDC logging mode
        self.check_dropped_columns()

    def check_dropped_columns(self) -> None:
        """Refuse ``drop.partition.columns`` where leaving the partition columns out of the files
        would lose what a merge needs: the ordering field's values, or the record keys of a table
        without meta columns (Apache Hudi writes such tables, and its merges then read nulls)."""
        dropped = set(self.dropped_columns)
        if not dropped:
            return
        key = TableOptions.DROP_PARTITION_COLUMNS.key
        order = self.ordering_field
        if order and order.split(".")[0] in dropped:
            raise ConfigError(
                f"table {self.name!r} has {key}=true and its ordering field {order!r} is a partition field: "
                "the files would not hold the values merges order records by"
            )
        if not self.populate_meta_fields:
            raise ConfigError(
                f"table {self.name!r} has {key}=true and {TableOptions.POPULATE_META_FIELDS.key}=false: "
                "without the meta columns the files would not hold the partition path of a record"
            )

    @property
    def populate_meta_fields(self) -> bool:
        return bool(self.get(TableOptions.POPULATE_META_FIELDS))

    @property
    def payload_class(self) -> str:
        return str(self.get_str(TableOptions.PAYLOAD_CLASS))

    @property
    def create_schema(self) -> str | None:
        return self.get_str(TableOptions.CREATE_SCHEMA)

    @property
    def is_partitioned(self) -> bool:
        kg = (self.keygen_class or "").lower()
        return bool(self.partition_fields) and "nonpartitioned" not in kg

    @property
    def utc_timeline(self) -> bool:
        return str(self.get_str(TableOptions.TIMELINE_TIMEZONE)).upper() == "UTC"

    # -- persistence -----------------------------------------------------------------------------

    @classmethod
    def load(cls, storage: Storage, meta_path: str) -> TableConfig:
        """Load and validate; falls back to ``hoodie.properties.backup`` like Java."""
        main = f"{meta_path}/{PROPERTIES_FILE}"
        backup = f"{meta_path}/{BACKUP_FILE}"
        problems: list[str] = []
        for path in (main, backup):
            try:
                raw = storage.read_bytes(path)
            except FileNotFoundError:
                problems.append(f"{path} does not exist")
                continue
            try:
                props = load_properties(raw.decode("latin-1"))
            except ValueError as e:
                problems.append(f"{path} is not a properties file: {e}")
                continue
            problem = _validate(props)
            if problem:
                problems.append(f"{path}: {problem}")
                continue
            config = cls(props, meta_path=meta_path)
            if config.version not in SUPPORTED_VERSIONS:
                raise UnsupportedTableVersionError(
                    f"table version {config.version} is not supported yet "
                    f"(this library reads and writes table version 6): {meta_path}"
                )
            return config
        base = meta_path.rsplit("/.hoodie", 1)[0]
        if all("does not exist" in p for p in problems):
            raise TableNotFoundError(
                f"no Hudi table at {base}: {main} does not exist (create one with `hudi-py create`)"
            )
        raise ConfigError(f"cannot load the table config of {base}: " + "; ".join(problems))

    @classmethod
    def create(cls, storage: Storage, meta_path: str, props: Mapping[str, str]) -> TableConfig:
        ordered: dict[str, str] = {}
        for prop in _ORDER:
            if prop.key in props:
                ordered[prop.key] = props[prop.key]
        for k, v in props.items():
            ordered.setdefault(k, v)
        ordered[TableOptions.CHECKSUM.key] = str(table_checksum(ordered))
        text = dump_properties(ordered, _now_comment("Properties saved on"))
        if not storage.create_if_absent(f"{meta_path}/{PROPERTIES_FILE}", text.encode("latin-1")):
            raise ConfigError(f"a Hudi table already exists at {meta_path.rsplit('/.hoodie', 1)[0]}")
        return cls(ordered, meta_path=meta_path)

    def update(self, storage: Storage, changes: Mapping[str, str | None]) -> TableConfig:
        """Rewrite with changes (None deletes a key): backup, rewrite, drop backup (Java's way)."""
        props = self.to_dict()
        for k, v in changes.items():
            if v is None:
                props.pop(k, None)
            else:
                props[k] = v
        props[TableOptions.CHECKSUM.key] = str(table_checksum(props))
        main = f"{self.meta_path}/{PROPERTIES_FILE}"
        backup = f"{self.meta_path}/{BACKUP_FILE}"
        storage.write_bytes(backup, storage.read_bytes(main))
        text = dump_properties(props, _now_comment("Updated at"))
        storage.write_bytes(main, text.encode("latin-1"))
        storage.delete(backup)
        return TableConfig(props, meta_path=self.meta_path)


def _validate(props: Mapping[str, str]) -> str | None:
    for key in (TableOptions.NAME.key, TableOptions.TYPE.key, TableOptions.VERSION.key):
        if not props.get(key):
            return f"required key {key} is missing"
    try:
        int(props[TableOptions.VERSION.key])
    except ValueError:
        return f"{TableOptions.VERSION.key}={props[TableOptions.VERSION.key]!r} is not a number"
    checksum = props.get(TableOptions.CHECKSUM.key)
    if checksum is not None:
        try:
            if int(checksum) != table_checksum(props):
                return f"checksum {checksum} does not match the table name (corrupt file)"
        except ValueError:
            return f"checksum {checksum!r} is not a number"
    return None
