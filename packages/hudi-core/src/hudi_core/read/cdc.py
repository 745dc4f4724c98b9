"""Change data capture queries: Apache Hudi's incremental query with
``hoodie.datasource.query.incremental.format=cdc`` on a table with ``hoodie.table.cdc.enabled``.

The answer has Hudi's four string columns: ``op`` (``i``, ``u``, ``d``), ``ts_ms`` (the instant
of the change), ``before`` and ``after`` (the record as JSON, or null), one row per change of
every data commit in ``(start, end]`` (compactions, clusterings and log compactions change no
data and are skipped). Each write stat of a commit says where its changes are, as in Hudi's
``HoodieCDCExtractor``:

- a CDC log file (``cdcStats``; a COPY_ON_WRITE merge): its records. In the ``DATA_BEFORE_AFTER``
  logging mode they hold both images; the other modes take what they lack from the base files
  before (``prevCommit``) and after the write;
- a new base file written by inserts alone: every row inserted;
- a base file a ``delete`` emptied: every row of the file before it deleted;
- a log file (MERGE_ON_READ): the file slice before the log file, merged, and the log's records
  merged into it as into a base file's rows (``read.merge.merge_log_file``), compared key by
  key: a key only after is inserted, only before deleted, in both and not the same record (meta
  columns included: a record that lost to the stored one is none) updated;
- a replace commit's replaced file groups (``insert_overwrite``, ``delete_partition``): every
  row of their latest slice deleted.

Images from a CDC log file are the records without meta columns, as Hudi writes them, in Avro's
JSON rendering (``{"id": "a", "ts": 1}``, nulls kept); images read from files hold the meta
columns (Hudi's reader renders those of base files compactly, without nulls, its fields in a
Scala hash map's order). Either is Java's text, as Hudi prints it (``read.json_text``).

``images="struct"`` answers the images as typed structs of the table's data fields instead (the
latest schema; meta columns left out, fields an older record lacks null): not Hudi's answer, but
what an Arrow user filters and joins on without parsing text, at a fraction of the JSON's cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core import keymatch
from hudi_core.config.table import cdc_logging_mode
from hudi_core.errors import ConfigError, HudiError
from hudi_core.fs_view import FileSystemView
from hudi_core.fs_view.model import BaseFile, FileSlice, LogFile
from hudi_core.log.cdc import DATA_BEFORE, DATA_BEFORE_AFTER
from hudi_core.log.format import BlockType
from hudi_core.log.reader import read_log_file
from hudi_core.read.align import align_array, align_table, decoded
from hudi_core.read.json_text import images_json, rows_json
from hudi_core.read.keys import record_keys
from hudi_core.read.merge import merge_file_slice, merge_log_file
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.table.file_names import BaseFileName, LogFileName
from hudi_core.table.meta_client import MetaClient
from hudi_core.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_core.timeline.instant import Action, Instant

__all__ = ["CDC_SCHEMA", "IMAGES", "changes_schema", "read_changes"]

#: the answer's columns, as Hudi's Spark CDC relation declares them
CDC_SCHEMA = pa.schema(
    [("op", pa.string()), ("ts_ms", pa.string()), ("before", pa.string()), ("after", pa.string())]
)

#: operations that change data (Hudi's ``WriteOperationType.isDataChange``)
_DATA_CHANGES = frozenset({
    "insert", "insert_prepped", "upsert", "upsert_prepped", "bulk_insert", "bulk_insert_prepped",
    "delete", "delete_prepped", "delete_partition", "insert_overwrite", "insert_overwrite_table", "bootstrap",
})  # fmt: skip
_DELETES = frozenset({"delete", "delete_prepped"})
#: how the images are answered: Hudi's JSON text, or typed structs of the data fields
IMAGES = ("json", "struct")


def read_changes(table: MetaClient, start: str, end: str | None = None, *, images: str = "json") -> pa.Table:
    """The changes of the data commits in ``(start, end]`` (``end``: the latest instant), their
    images as ``images`` says (:data:`IMAGES`)."""
    image = _images(table, images)
    mode = cdc_logging_mode(table.config)
    if mode is None:
        raise ConfigError(
            f"table {table.config.name!r} keeps no change log (hoodie.table.cdc.enabled is not true): "
            "a CDC query needs it set when the table was created"
        )
    timeline = table.timeline
    completed = list(timeline.completed_commits())
    done = [i.timestamp for i in completed]
    commits = [i for i in completed if start < i.timestamp and (end is None or i.timestamp <= end)]
    view = FileSystemView(table, timeline=timeline)
    pieces: list[pa.Table] = []
    for inst in commits:
        meta = CommitMetadata.from_json(timeline.read_details(inst))
        if meta.operation_type.lower() not in _DATA_CHANGES:
            continue
        before = max((t for t in done if t < inst.timestamp), default=None)
        changes = _Changes(table, view, inst, meta.operation_type.lower(), mode, before, image)
        try:
            for part, stats in meta.partition_to_write_stats.items():
                for stat in stats:
                    pieces.extend(changes.of_stat(part, stat))
            if inst.action == Action.REPLACE_COMMIT:
                for part, file_ids in (meta.partition_to_replace_file_ids or {}).items():
                    pieces.extend(changes.of_replaced(part, set(file_ids)))
        except FileNotFoundError as e:
            raise HudiError(
                f"the changes of commit {inst.timestamp} are in files the cleaner deleted ({e}); a CDC "
                "query can start at the commits whose files hoodie.cleaner.commits.retained keeps"
            ) from e
    return pa.concat_tables(pieces) if pieces else image.schema.empty_table()


def changes_schema(table: MetaClient, images: str = "json") -> pa.Schema:
    """The schema of :func:`read_changes`'s answer (with ``images="struct"``, the table's latest)."""
    return _images(table, images).schema


def _images(table: MetaClient, images: str) -> _Images:
    if images not in IMAGES:
        raise ConfigError(f"images={images!r}: use one of {', '.join(IMAGES)}")
    data = table.schema()
    if images == "json":
        return _Images(data, json=True)
    if data is None:
        raise HudiError(f"table {table.config.name!r} has no schema yet to type its change images by")
    return _Images(data)


@dataclass(frozen=True)
class _Images:
    """How an image is answered: JSON text (``json``), or a struct of the fields of ``data``,
    the table's latest data schema. Hudi reads every image by that schema, so a JSON image has
    its fields too (a column added after the record was written: ``null``), in its order."""

    data: pa.Schema | None = None
    json: bool = False

    @property
    def type(self) -> pa.DataType:
        return pa.string() if self.json or self.data is None else pa.struct(list(self.data))

    @property
    def schema(self) -> pa.Schema:
        return pa.schema([("op", pa.string()), ("ts_ms", pa.string()), ("before", self.type),
                          ("after", self.type)])  # fmt: skip

    def rows(self, rows: pa.Table, *, compact: bool = False) -> pa.Array:
        """Each row's image (a table read from files: meta columns dropped from a struct)."""
        if self.data is None:
            return rows_json(rows, compact=compact)
        if self.json:  # the meta columns the rows have, then the latest data fields
            meta = [rows.schema.field(n) for n in META_FIELDS if n in rows.column_names]
            return rows_json(
                align_table(rows, pa.schema(meta + list(self.data)), encoded=True), compact=compact
            )
        aligned = align_table(decoded(rows), self.data)
        return pa.StructArray.from_arrays(
            [c.combine_chunks() for c in aligned.columns], fields=list(self.data)
        )

    def records(self, images: pa.ChunkedArray | pa.Array) -> pa.Array:
        """A CDC log record's images (a struct column, null where absent)."""
        col = images.combine_chunks() if isinstance(images, pa.ChunkedArray) else images
        if self.data is None:
            return images_json(col)
        latest = align_array(col, pa.struct(list(self.data)), "image")
        return images_json(latest) if self.json else latest

    def nulls(self, n: int) -> pa.Array:
        return pa.nulls(n, self.type)


@dataclass(frozen=True)
class _Changes:
    """The changes of one commit, write stat by write stat (``prev``: the completed instant
    before it, whose slices a replace commit's deletes are read from)."""

    table: MetaClient
    view: FileSystemView
    inst: Instant
    operation: str
    mode: str
    prev: str | None
    image: _Images

    def _uri(self, partition: str, name: str) -> str:
        base = self.table.partition_uri(partition) if partition else self.table.base_uri
        return f"{base}/{name.rsplit('/', 1)[-1]}"

    def _answer(self, op: pa.Array, before: pa.Array, after: pa.Array) -> pa.Table:
        ts = pa.repeat(pa.scalar(self.inst.timestamp), len(op))
        return pa.Table.from_arrays([op, ts, before, after], schema=self.image.schema)

    def _all(self, op: str, rows: pa.Table, *, before: bool, compact: bool = True) -> pa.Table:
        n = rows.num_rows
        images, nulls = self.image.rows(rows, compact=compact), self.image.nulls(n)
        return self._answer(
            pa.repeat(pa.scalar(op), n), images if before else nulls, nulls if before else images
        )

    def _base_rows(self, partition: str, name: str, instant: str) -> pa.Table:
        base = BaseFile.from_path(self._uri(partition, name), 0)
        if base is None:
            raise HudiError(f"{name} is not a base file name")
        return merge_file_slice(self.table, FileSlice(partition, base.file_id, instant, base), as_of=instant)

    def _prev_base(self, partition: str, file_id: str, instant: str) -> str:
        # (as of this commit: a later replace commit may have replaced the group since)
        for group in self.view.file_groups(partition, as_of=self.inst.timestamp):
            for s in group.slices:
                if group.file_id == file_id and s.base_instant == instant and s.base_file is not None:
                    return s.base_file.name
        raise FileNotFoundError(f"the base file of file group {file_id} at {instant} in {partition!r}")

    def of_stat(self, partition: str, stat: WriteStat) -> Iterator[pa.Table]:
        name = (stat.path or "").rsplit("/", 1)[-1]
        if stat.cdc_stats:
            yield self._logged(partition, stat)
        elif BaseFileName.parse(name) is not None:
            if self.operation in _DELETES and stat.num_writes == 0 and stat.num_deletes:
                old = self._prev_base(partition, stat.file_id, stat.prev_commit)
                yield self._all("d", self._base_rows(partition, old, stat.prev_commit), before=True)
            elif stat.num_update_writes == 0 and stat.num_writes == stat.num_inserts:
                yield self._all("i", self._base_rows(partition, name, self.inst.timestamp), before=False)
            else:
                raise HudiError(
                    f"{stat.path} of {self.inst.timestamp} rewrote a base file with updates or deletes but "
                    "no CDC log file lists them (Apache Hudi: 'There should be a cdc log file')"
                )
        elif name:
            yield self._log_file(partition, stat, name)

    def of_replaced(self, partition: str, file_ids: set[str]) -> Iterator[pa.Table]:
        if self.prev is None:
            return
        for group in self.view.file_groups(partition, as_of=self.prev):
            latest = group.latest_slice() if group.file_id in file_ids else None
            if latest is not None and not latest.is_empty:
                yield self._all("d", merge_file_slice(self.table, latest, as_of=self.prev), before=True)

    def _logged(self, partition: str, stat: WriteStat) -> pa.Table:
        """AS_IS: the records of the stat's CDC log files (in version order)."""
        storage = self.table.storage
        records = []
        for path in sorted(stat.cdc_stats or (), key=_log_version):
            for block in read_log_file(storage, f"{self.table.base_uri}/{path}"):
                if block.block_type is BlockType.CDC_DATA:
                    records.append(block.records())
        if not records:
            return self.image.schema.empty_table()
        rows = pa.concat_tables(records, promote_options="default")
        op = rows.column("op").combine_chunks()
        if self.mode == DATA_BEFORE_AFTER:
            return self._answer(
                op, self.image.records(rows.column("before")), self.image.records(rows.column("after"))
            )
        keys = rows.column("record_key").combine_chunks()
        new = self._base_rows(partition, stat.path or "", self.inst.timestamp)
        after = self._by_key(keys, new)
        if self.mode == DATA_BEFORE:
            before = self.image.records(rows.column("before"))
        else:  # OP_KEY_ONLY: both images from the files
            old = self._prev_base(partition, stat.file_id, stat.prev_commit)
            before = self._by_key(keys, self._base_rows(partition, old, stat.prev_commit))
        is_delete = pc.equal(op, "d")
        return self._answer(op, before, pc.if_else(is_delete, self.image.nulls(len(op)), after))

    def _by_key(self, keys: pa.Array, rows: pa.Table) -> pa.Array:
        """The image of each key's row in ``rows`` (null where it has none)."""
        stored = pa.chunked_array(record_keys(rows, self.table.config)).combine_chunks().cast(pa.string())
        at = keymatch.index_in(keys.cast(pa.string()), stored)
        found = at >= 0
        if not rows.num_rows:
            return self.image.nulls(len(keys))
        images = self.image.rows(rows.take(pa.array(np.maximum(at, 0))), compact=True)
        return pc.if_else(pa.array(found), images, self.image.nulls(len(keys)))

    def _log_file(self, partition: str, stat: WriteStat, name: str) -> pa.Table:
        """LOG_FILE: the slice before the log file and with it, compared key by key."""
        base = BaseFile.from_path(self._uri(partition, stat.base_file), 0) if stat.base_file else None
        others = [n for n in (stat.log_files or []) if n.rsplit("/", 1)[-1] != name]
        logs = [lf for n in others if (lf := LogFile.from_path(self._uri(partition, n), 0)) is not None]
        this = LogFile.from_path(self._uri(partition, name), 0)
        if this is None:
            return self.image.schema.empty_table()
        at = self.inst.timestamp
        earlier = FileSlice(partition, stat.file_id, stat.prev_commit, base).with_logs(tuple(logs))
        with_this = earlier.with_logs((*logs, this))
        if earlier.is_empty:
            return self._all(
                "i", merge_file_slice(self.table, with_this, as_of=at), before=False, compact=False
            )
        old = merge_file_slice(self.table, earlier, as_of=at)
        # the log's records met with the slice before it as with a base file's rows (Hudi's CDC
        # inference, not its snapshot: docs/interop.md, seed 21039)
        new = merge_log_file(self.table, old, with_this, this.path, as_of=at)
        new_keys = pa.chunked_array(record_keys(new, self.table.config)).combine_chunks().cast(pa.string())
        old_keys = pa.chunked_array(record_keys(old, self.table.config)).combine_chunks().cast(pa.string())
        in_old = keymatch.index_in(new_keys, old_keys)
        matched = in_old >= 0
        old_rows = old.take(pa.array(in_old[matched]))
        new_rows = new.filter(pa.array(matched))
        changed = ~_same_rows(old_rows, new_rows)
        inserted = new.filter(pa.array(~matched))
        deleted = old.filter(pa.array(keymatch.index_in(old_keys, new_keys) < 0))
        updated_old, updated_new = old_rows.filter(pa.array(changed)), new_rows.filter(pa.array(changed))
        updates = self._answer(
            pa.repeat(pa.scalar("u"), updated_new.num_rows),
            self.image.rows(updated_old),
            self.image.rows(updated_new),
        )
        return pa.concat_tables([self._all("i", inserted, before=False, compact=False), updates,
                                 self._all("d", deleted, before=True, compact=False)])  # fmt: skip


def _log_version(path: str) -> tuple[int, str]:
    parsed = LogFileName.parse(path.rsplit("/", 1)[-1])
    return (parsed.version, parsed.write_token or "") if parsed is not None else (0, path)


def _same_rows(a: pa.Table, b: pa.Table) -> np.ndarray:
    """Per row, whether ``a`` and ``b`` (the same columns) hold the same values."""
    a, b = decoded(a), decoded(b)
    same = np.ones(a.num_rows, dtype=bool)
    for name in a.column_names:
        x, y = a.column(name).combine_chunks(), b.column(name).combine_chunks()
        if pa.types.is_nested(x.type) or x.type != y.type:
            same &= np.array([p == q for p, q in zip(x.to_pylist(), y.to_pylist(), strict=True)], dtype=bool)
            continue
        eq = pc.fill_null(pc.equal(x, y), False).to_numpy(zero_copy_only=False)
        both_null = pc.is_null(x).to_numpy(zero_copy_only=False) & pc.is_null(y).to_numpy(
            zero_copy_only=False
        )
        same &= eq | both_null
    return same
