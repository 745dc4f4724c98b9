"""The driver side of a Spark write: start the instant, reconcile task attempts against markers,
commit with core's ``commit`` (extra metadata added), roll back on failure."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_core.config.property import HoodieConfig
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.instant import State

if TYPE_CHECKING:
    from hudi_core.table import HudiTable
    from hudi_core.timeline.instant import Instant

__all__ = ["BATCH_KEY", "QUERY_KEY", "SparkCommit", "recent_commits", "small_files"]

#: extra-metadata keys naming the Structured Streaming micro-batch a commit wrote
QUERY_KEY = "hoodie.spark.streaming.query.id"
BATCH_KEY = "hoodie.spark.streaming.batch.id"


def small_files(table: HudiTable, cfg: HoodieConfig, partitions: list[str] | None = None) -> list[Any]:
    from hudi_core.fs_view import FileSystemView
    from hudi_core.write.client import _small_files

    view = FileSystemView(table)
    return _small_files(view, partitions if partitions is not None else view.partitions(), cfg, is_mor=table.config.is_mor)


def recent_commits(table: HudiTable) -> list[CommitMetadata]:
    from hudi_core.write.client import _recent_commits

    return _recent_commits(table)


def committed_batches(table: HudiTable, query_id: str) -> set[int]:
    """Micro-batch ids of ``query_id`` already in completed commits."""
    tl = table.timeline
    out: set[int] = set()
    for inst in tl.completed_commits():
        extra = CommitMetadata.from_json(tl.read_details(inst)).extra_metadata or {}
        if extra.get(QUERY_KEY) == query_id and extra.get(BATCH_KEY) is not None:
            out.add(int(extra[BATCH_KEY]))
    return out


class SparkCommit:
    """One write instant driven from the Spark driver."""

    def __init__(self, table: HudiTable, cfg: HoodieConfig, operation: str, schema: pa.Schema,
                 extra_metadata: Mapping[str, str]) -> None:  # fmt: skip
        self.table = table
        self.cfg = cfg
        self.operation = operation
        self.schema = schema
        self.extra = dict(extra_metadata)
        self.requested: Instant | None = None
        self.replaced: dict[str, list[str]] = {}

    @property
    def instant(self) -> str:
        assert self.requested is not None
        return self.requested.timestamp

    def already_committed(self) -> bool:
        """A replayed streaming batch (same query id and batch id) is written once only."""
        q, b = self.extra.get(QUERY_KEY), self.extra.get(BATCH_KEY)
        if q is None or b is None:
            return False
        return int(b) in committed_batches(self.table, q)

    def start(self) -> str:
        from hudi_core.write.commit import start_commit

        self.requested = start_commit(self.table, self.operation)
        return self.instant

    def inflight(self, profile: Any) -> None:
        from hudi_core.write.commit import write_inflight

        assert self.requested is not None
        write_inflight(self.table, self.requested, profile, self.operation)

    def reconcile(self, statuses: list[Any]) -> list[str]:
        """Delete data files that markers name but no collected status does: files of failed,
        retried or speculative task attempts (Hudi's reconcileAgainstMarkers)."""
        from hudi_core.write.markers import MarkerFiles

        kept = set()
        for s in statuses:
            path = s.stat.path or ""
            kept.add(path.rsplit("/", 1)[-1])
            for lf in s.stat.log_files or []:
                kept.add(lf.rsplit("/", 1)[-1])
        markers = MarkerFiles(self.table.storage, self.table.meta_path, self.instant)
        deleted = []
        if not markers.exists():
            return deleted
        for m in markers.list():
            if m.io_type == "APPEND":
                continue  # log appends of a dead attempt are rolled back by readers' block checks
            if m.file_name in kept:
                continue
            uri = self.table.partition_uri(m.partition_path) if m.partition_path else self.table.base_uri
            path = f"{uri}/{m.file_name}"
            if self.table.storage.delete(path):
                deleted.append(path)
        return deleted

    def commit(self, statuses: list[Any]) -> Any:
        from hudi_core.schema.avro_schema import arrow_to_avro
        from hudi_core.write import commit as core_commit
        from hudi_spark.writer import SparkWriteResult

        assert self.requested is not None
        removed = self.reconcile(statuses)
        avro = arrow_to_avro(self.schema, self.table.config.name)
        kwargs: dict[str, Any] = {"operation": self.operation, "schema": avro, "replaced": self.replaced}
        if "extra_metadata" in inspect.signature(core_commit.commit).parameters:
            core_commit.commit(self.table, self.requested, statuses, extra_metadata=self.extra, **kwargs)
        else:
            self._commit_with_extra(statuses, avro)
        files = [s.stat.path for s in statuses if s.stat.path]
        return SparkWriteResult(
            self.instant, self.operation,
            num_records=sum(s.inserted + s.updated + s.deleted for s in statuses),
            inserted=sum(s.inserted for s in statuses), updated=sum(s.updated for s in statuses),
            deleted=sum(s.deleted for s in statuses), files=files, removed_files=removed,
        )  # fmt: skip

    def _commit_with_extra(self, statuses: list[Any], avro: dict[str, Any]) -> None:
        # core's commit() has no extra-metadata parameter yet: same steps, plus our keys
        from hudi_core.timeline.instant import Action
        from hudi_core.write.commit import OPERATION_TYPES
        from hudi_core.write.markers import MarkerFiles

        assert self.requested is not None
        meta = CommitMetadata(operation_type=OPERATION_TYPES[self.operation])
        for s in statuses:
            meta.add_write_stat(s.stat)
        meta.extra_metadata["schema"] = json.dumps(avro, separators=(",", ":"))
        meta.extra_metadata.update(self.extra)
        if self.requested.action == Action.REPLACE_COMMIT:
            meta.partition_to_replace_file_ids = {p: list(ids) for p, ids in self.replaced.items()}
        self.table.timeline.complete(self.requested.with_state(State.INFLIGHT), meta.to_bytes())
        MarkerFiles(self.table.storage, self.table.meta_path, self.instant).delete_all()

    def abort(self) -> None:
        """Roll the instant back (its files by markers) so the table is as before the write."""
        if self.requested is None:
            return
        from hudi_core.write.rollback import rollback_instant

        try:
            rollback_instant(self.table, self.instant)
        except Exception:  # noqa: BLE001 - the next writer's EAGER rollback will finish the job
            pass
