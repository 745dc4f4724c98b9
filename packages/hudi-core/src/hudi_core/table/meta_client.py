"""``MetaClient``: the handle on a table that every layer passes around (Apache Hudi's
``HoodieTableMetaClient``): base URI, storage, ``hoodie.properties``, the timeline and the schema.
Creating and opening a table happen here; the user-facing operations are those of
``hudi_core.HudiTable``, which extends it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import pyarrow as pa

from hudi_core.config.property import HoodieConfig
from hudi_core.config.resolution import resolve_table_options
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError
from hudi_core.schema.avro_schema import (
    arrow_to_avro,
    avro_to_arrow,
    refuse_naive_timestamps,
    to_create_schema_json,
)
from hudi_core.schema.internal import LATEST_SCHEMA, SchemaHistory, renamed_fields, versions
from hudi_core.storage import normalize_uri, storage_for
from hudi_core.storage.base import Storage
from hudi_core.table.config import TableConfig
from hudi_core.table.paths import join_table_path
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.completed import CompletedDetails
from hudi_core.timeline.timeline import ActiveTimeline

__all__ = ["META_FOLDER", "MetaClient"]


M = TypeVar("M", bound="MetaClient")

META_FOLDER = ".hoodie"
_SKELETON = (".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids", ".schema")
_TABLE_TYPES = {"COPY_ON_WRITE": "COPY_ON_WRITE", "COW": "COPY_ON_WRITE",
                "MERGE_ON_READ": "MERGE_ON_READ", "MOR": "MERGE_ON_READ"}  # fmt: skip


def _schemas_of(raw: bytes) -> tuple[str | None, str | None]:
    """(schema, latest_schema) a commit's metadata text stores."""
    extra = CommitMetadata.from_json(raw).extra_metadata
    return extra.get("schema") or None, extra.get(LATEST_SCHEMA) or None


#: what each completed commit says of the table's schema: every open of the table (every write
#: of a stream) looks at the latest commit's. A schema's text can be tens of KB, and a stream
#: commits on: the last few dozen are kept
_SCHEMAS = CompletedDetails(_schemas_of, size=64)


class MetaClient:
    """A Hudi table (version 6) at a base URI, as the layers below the facade see it.

    >>> MetaClient.open("/tmp/trips").timeline.completed_commits()  # doctest: +SKIP
    """

    def __init__(
        self, base_uri: str, storage: Storage, config: TableConfig, options: Mapping[str, Any] | None = None
    ) -> None:
        self.base_uri = base_uri
        self.storage = storage
        self.config = config
        #: write/read options given when the table was opened (table config keys win)
        self.options = HoodieConfig(options or {})
        self._timeline: ActiveTimeline | None = None
        self._pinned: ActiveTimeline | None = None
        #: the internal schema (schema on read) and instant last asked for, and their history
        self._history: tuple[tuple[str, str | None], SchemaHistory | None] | None = None

    # -- create / open ---------------------------------------------------------------------------

    @classmethod
    def create(
        cls: type[M],
        base_uri: str,
        *,
        name: str,
        table_type: str = "COPY_ON_WRITE",
        record_key_fields: str | Sequence[str] | None = None,
        partition_fields: str | Sequence[str] | None = None,
        ordering_field: str | None = None,
        options: Mapping[str, Any] | None = None,
        schema: pa.Schema | None = None,
    ) -> M:
        """Create a new, empty table (``hoodie.properties`` and the ``.hoodie`` skeleton). Without
        record key fields its writes make the keys up, as Hudi 0.14+ does (``keygen.auto``)."""
        base = normalize_uri(base_uri)
        opts = dict(options or {})
        ttype = _TABLE_TYPES.get(str(table_type).upper())
        if ttype is None:
            raise ConfigError(f"table_type {table_type!r} is not COPY_ON_WRITE or MERGE_ON_READ")
        if not name or not str(name).strip():
            raise ConfigError("a table needs a name (hoodie.table.name)")
        resolved = resolve_table_options(
            record_key_fields=record_key_fields,
            partition_fields=partition_fields,
            ordering_field=ordering_field,
            options=opts,
            schema=schema,
        )
        if schema is not None and not resolved.get(WriteOptions.TIMESTAMP_NTZ):
            refuse_naive_timestamps(schema, None)
        if schema is not None:
            missing = [f for f in resolved.get_list(TableOptions.RECORDKEY_FIELDS)
                       if f.split(".")[0] not in schema.names]  # fmt: skip
            if missing:
                raise ConfigError(f"record key field(s) {missing} are not in the schema {schema.names}")
        storage = storage_for(base, resolved)
        props: dict[str, str] = {
            TableOptions.NAME.key: name,
            TableOptions.TYPE.key: ttype,
            TableOptions.VERSION.key: "6",
            TableOptions.TIMELINE_LAYOUT_VERSION.key: "1",
            TableOptions.ARCHIVELOG_FOLDER.key: "archived",
            TableOptions.HIVE_STYLE_PARTITIONING.key: "false",
            TableOptions.URL_ENCODE_PARTITIONING.key: "false",
            TableOptions.DROP_PARTITION_COLUMNS.key: "false",
            TableOptions.PAYLOAD_CLASS.key: str(resolved.get_str(WriteOptions.PAYLOAD_CLASS)),
        }
        for prop in (TableOptions.RECORDKEY_FIELDS, TableOptions.PARTITION_FIELDS,
                     TableOptions.PRECOMBINE_FIELD, TableOptions.KEYGEN_CLASS):  # fmt: skip
            value = resolved.raw(prop)
            if value:
                props[prop.key] = value
        # Table-level keys passed as options (hive style, url encoding, database, meta fields...).
        for key, value in resolved.items():
            if key.startswith(("hoodie.table.", "hoodie.datasource.write.hive_style",
                               "hoodie.datasource.write.partitionpath.urlencode",
                               "hoodie.datasource.write.drop.partition.columns",
                               "hoodie.database.", "hoodie.populate.meta.fields",
                               "hoodie.keygen.timebased.", "hoodie.compaction.payload.class")):  # fmt: skip
                props[key] = value
        if not props.get(TableOptions.RECORDKEY_FIELDS.key):
            props.pop(TableOptions.RECORDKEY_FIELDS.key, None)  # no key fields: Hudi writes none
        if HoodieConfig(props).get(TableOptions.POPULATE_META_FIELDS):
            props.pop(TableOptions.POPULATE_META_FIELDS.key, None)  # only written when false
        if ttype == "MERGE_ON_READ":
            props.setdefault(TableOptions.MERGER_STRATEGY.key, str(TableOptions.MERGER_STRATEGY.default))
        if schema is not None:
            props[TableOptions.CREATE_SCHEMA.key] = to_create_schema_json(arrow_to_avro(schema, name))
        props[TableOptions.TYPE.key] = ttype
        props[TableOptions.VERSION.key] = "6"
        if HoodieConfig(props).get(TableOptions.CDC_ENABLED):  # as Apache Hudi writes it
            mode = props.get(TableOptions.CDC_LOGGING_MODE.key, str(TableOptions.CDC_LOGGING_MODE.default))
            props[TableOptions.CDC_LOGGING_MODE.key] = mode.upper()
        TableConfig(props).check_writable()
        meta = f"{base}/{META_FOLDER}"
        config = TableConfig.create(storage, meta, props)
        for sub in _SKELETON:
            storage.makedirs(f"{meta}/{sub}")
        storage.makedirs(f"{meta}/{config.get_str(TableOptions.ARCHIVELOG_FOLDER)}")
        return cls(base, storage, config, resolved)

    @classmethod
    def open(cls: type[M], base_uri: str, *, options: Mapping[str, Any] | None = None) -> M:
        """Open an existing table; raises TableNotFoundError when there is none."""
        base = normalize_uri(base_uri)
        storage = storage_for(base, options or {})
        config = TableConfig.load(storage, f"{base}/{META_FOLDER}")
        return cls(base, storage, config, options)

    @classmethod
    def exists(cls, base_uri: str, *, options: Mapping[str, Any] | None = None) -> bool:
        base = normalize_uri(base_uri)
        storage = storage_for(base, options or {})
        return storage.exists(f"{base}/{META_FOLDER}/hoodie.properties") or storage.exists(
            f"{base}/{META_FOLDER}/hoodie.properties.backup"
        )

    # -- layout ----------------------------------------------------------------------------------

    @property
    def meta_path(self) -> str:
        return f"{self.base_uri}/{META_FOLDER}"

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def table_type(self) -> str:
        return self.config.table_type

    def partition_uri(self, partition_path: str) -> str:
        """Absolute path of a partition, refusing anything that escapes the base path."""
        return join_table_path(self.base_uri, partition_path)

    def write_config(self, options: Mapping[str, Any] | None = None) -> HoodieConfig:
        """Options for a write: the open options, then ``options``, then the table config."""
        merged = self.options.with_options(options or {})
        return merged.with_options(self.config.to_dict())

    def reload(self: M) -> M:
        self.config = TableConfig.load(self.storage, self.meta_path)
        self._timeline = None
        if self._pinned is not None:
            self._pinned = self._load_timeline()
        return self

    # -- timeline and schema ---------------------------------------------------------------------

    @property
    def timeline(self) -> ActiveTimeline:
        """The active timeline, freshly loaded from storage (or the pinned one, see
        :meth:`pinned_timeline`)."""
        if self._pinned is not None:
            return self._pinned
        self._timeline = self._load_timeline()
        return self._timeline

    def _load_timeline(self) -> ActiveTimeline:
        return ActiveTimeline(self.storage, self.meta_path, utc=self.config.utc_timeline)

    @contextmanager
    def pinned_timeline(self, timeline: ActiveTimeline | None = None) -> Iterator[ActiveTimeline]:
        """Load the timeline once (or take ``timeline``, a load the caller holds) and hand out
        that object for the block: for a writer that holds the single-writer lease, whose every
        transition goes through it and keeps it current, so the dozen looks a write and its
        services take cost one listing of ``.hoodie`` (one LIST request on S3) instead of one
        each. Nested pins share the outer one."""
        if self._pinned is not None:
            yield self._pinned
            return
        self._pinned = timeline if timeline is not None else self._load_timeline()
        try:
            yield self._pinned
        finally:
            self._pinned = None

    def commit_metadata(self, timestamp: str) -> CommitMetadata:
        tl = self._timeline or self.timeline
        # a write's instant: a clean or rollback of another writer may carry the same time
        inst = tl.completed_commits().find(timestamp)
        if inst is None:
            raise ConfigError(f"no completed commit {timestamp} on the timeline of {self.base_uri}")
        return CommitMetadata.from_json(tl.read_details(inst))

    def avro_schema(
        self, as_of: str | None = None, *, timeline: ActiveTimeline | None = None
    ) -> dict[str, Any] | None:
        """The table's Avro schema (no meta fields): latest completed commit's, else creation's.

        Pass the ``timeline`` a caller already loaded to avoid listing ``.hoodie`` again."""
        schema, _ = self._schema_commit(as_of, timeline)
        if schema:
            parsed: dict[str, Any] = json.loads(schema)
            return parsed
        if self.config.create_schema:
            parsed = json.loads(self.config.create_schema)
            return parsed
        return None

    def internal_schema(self, *, timeline: ActiveTimeline | None = None) -> str | None:
        """The internal schema (``latest_schema``, Hudi's schema on read) the table's latest
        schema comes with, or None: every write commits it again (:mod:`hudi_core.schema.internal`)."""
        return self._schema_commit(None, timeline)[1]

    def _schema_commit(
        self, as_of: str | None, timeline: ActiveTimeline | None
    ) -> tuple[str | None, str | None]:
        """(schema, latest_schema) of the latest completed commit (up to ``as_of``) that stores a
        schema; what a commit file says is read once by the process (:data:`_SCHEMAS`)."""
        tl = timeline if timeline is not None else self.timeline
        for inst in reversed(list(tl.completed_commits())):
            if as_of is not None and inst.timestamp > as_of:
                continue
            found = _SCHEMAS.get(tl, inst)
            if found[0]:
                return found
        return None, None

    def schema_history(
        self, as_of: str | None = None, *, timeline: ActiveTimeline | None = None
    ) -> SchemaHistory | None:
        """How the files hold the table's columns (as of ``as_of``) where Hudi's schema on read
        renamed one, or dropped one and added it again (then files match by id, not by name:
        :mod:`hudi_core.schema.internal`); None for any other table."""
        tl = timeline if timeline is not None else self.timeline
        _, latest = self._schema_commit(as_of, tl)
        if not latest:
            return None
        if self._history is not None and self._history[0] == (latest, as_of):
            return self._history[1]
        query = json.loads(latest)
        upto = int(query.get("version_id") or 0)
        files = sorted(f.name for f in self.storage.list(f"{self.meta_path}/.schema")
                       if f.name.endswith(".schemacommit"))  # fmt: skip
        history = []
        if files:  # the versions up to the query's (a time travel before a rename reads right)
            text = self.storage.read_text(f"{self.meta_path}/.schema/{files[-1]}")
            history = [v for v in versions(text) if int(v.get("version_id") or 0) <= upto]
        found = None
        if renamed_fields([query, *history]):
            commits = {}
            for inst in tl.completed_commits():
                written = _SCHEMAS.get(tl, inst)[1]
                if written and (as_of is None or inst.timestamp <= as_of):
                    commits[inst.timestamp] = json.loads(written)
            found = SchemaHistory(query, commits, history)
        self._history = ((latest, as_of), found)
        return found

    def schema(self, as_of: str | None = None, *, timeline: ActiveTimeline | None = None) -> pa.Schema | None:
        """The table's Arrow schema without meta fields, or None for a table with no schema yet."""
        avro = self.avro_schema(as_of, timeline=timeline)
        return avro_to_arrow(avro) if avro is not None else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_uri!r}, name={self.name!r}, type={self.table_type})"
