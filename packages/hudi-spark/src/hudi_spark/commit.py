"""The driver side of a Spark write: start the instant, reconcile task attempts against markers,
commit with core's ``commit`` (extra metadata added), roll back on failure."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.timeline.commit_metadata import CommitMetadata

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from hudi_core.timeline.instant import Instant
    from hudi_core.write.transaction import WriteTransaction

__all__ = [
    "BATCH_KEY", "QUERY_KEY", "SINK_CHECKPOINT_KEY", "SparkCommit", "SparkWriteResult", "committed_batches",
    "hudi_sink_checkpoint", "sink_checkpoint_value",
]  # fmt: skip

#: extra-metadata keys naming the Structured Streaming micro-batch a commit wrote
QUERY_KEY = "hoodie.spark.streaming.query.id"
BATCH_KEY = "hoodie.spark.streaming.batch.id"
#: Apache Hudi's streaming sink's key: a JSON map of the writer's checkpoint identifier
#: (``hoodie.datasource.write.streaming.checkpoint.identifier``) to its last batch id
SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"


@dataclass
class SparkWriteResult:
    instant: str | None
    operation: str
    num_records: int = 0
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    files: list[str] = field(default_factory=list)
    #: files of failed or duplicate task attempts deleted before the commit
    removed_files: list[str] = field(default_factory=list)
    skipped: bool = False  # the write was a replay already committed


def committed_batches(table: HudiTable, query_id: str, *, archived: bool = False) -> set[int]:
    """Micro-batch ids of ``query_id`` already in completed commits of the active timeline
    (``archived``: of the archived timeline)."""
    out: set[int] = set()
    if archived:
        from hudi_core.archival import archived_instants

        extras = [(a.commit_metadata or {}).get("extraMetadata") or {} for a in archived_instants(table)]
    else:
        tl = table.timeline
        extras = [
            CommitMetadata.from_json(tl.read_details(i)).extra_metadata or {} for i in tl.completed_commits()
        ]
    for extra in extras:
        if extra.get(QUERY_KEY) == query_id and extra.get(BATCH_KEY) is not None:
            out.add(int(extra[BATCH_KEY]))
    return out


def sink_checkpoint_value(identifier: str, batch_id: int) -> str:
    """Hudi's ``CommitUtils.getCheckpointValueAsString``: ``{"<identifier>":"<batch id>"}``."""
    return json.dumps({identifier: str(batch_id)}, separators=(",", ":"))


def hudi_sink_checkpoint(table: HudiTable, identifier: str) -> tuple[int, bool] | None:
    """The batch id the latest completed write holding a checkpoint of ``identifier`` recorded
    (Hudi's ``CommitUtils.getValidCheckpointForCurrentWriter``), and whether Apache Hudi's sink
    wrote it (no query id of ours beside it); None when no write holds one."""
    tl = table.timeline
    for inst in reversed(list(tl.completed_commits())):
        extra = CommitMetadata.from_json(tl.read_details(inst)).extra_metadata or {}
        value = extra.get(SINK_CHECKPOINT_KEY)
        if not value:
            continue
        try:
            batch = json.loads(value).get(identifier)
        except (ValueError, AttributeError):
            continue
        if batch is not None:
            return int(batch), QUERY_KEY not in extra
    return None


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
        self.txn: WriteTransaction

    @property
    def instant(self) -> str:
        assert self.requested is not None
        return self.requested.timestamp

    @property
    def action(self) -> str:
        """The instant's action: commit, deltacommit or replacecommit."""
        assert self.requested is not None
        return str(self.requested.action)

    def already_committed(self) -> bool:
        """A replayed streaming batch (same query id and batch id) is written once only."""
        q, b = self.extra.get(QUERY_KEY), self.extra.get(BATCH_KEY)
        if q is None or b is None:
            return False
        active = committed_batches(self.table, q)
        if active:  # batches commit in order: a later one committed means this one did
            return any(x >= int(b) for x in active)
        # none of the query's commits is active any more: archived, or a new query
        if int(b) in committed_batches(self.table, q, archived=True):
            return True
        # a query Apache Hudi's sink ran until now (the same checkpoint location): its rule, the
        # batch ids its last commit recorded for this writer's identifier are done (not for deletes)
        checkpoint = self.extra.get(SINK_CHECKPOINT_KEY)
        if checkpoint is None or self.operation == "delete":
            return False
        (identifier,) = json.loads(checkpoint)
        last = hudi_sink_checkpoint(self.table, identifier)
        return last is not None and last[1] and last[0] >= int(b)

    def start(self) -> str:
        from hudi_core.write.transaction import WriteTransaction

        self.txn = WriteTransaction(self.table, self.cfg)
        self.requested = self.txn.start(self.operation)
        return self.instant

    def resume(self, instant: Instant, started: Any) -> None:
        """Carry on an instant another process of the driver started (the data source's commit
        runs in a Python worker of its own): ``started`` is what that start saw."""
        from hudi_core.write.transaction import WriteTransaction

        self.txn = WriteTransaction(self.table, self.cfg)
        self.txn.requested, self.txn.started = instant, started
        self.requested = instant

    def inflight(self, profile: Any) -> None:
        from hudi_core.write.commit import write_inflight

        assert self.requested is not None
        write_inflight(self.table, self.requested, profile, self.operation)

    def reconcile(self, statuses: list[Any]) -> list[str]:
        """Delete data files that markers name but no collected status does: files of failed,
        retried or speculative task attempts, log files included (core's reconcile)."""
        from hudi_core.write.markers import reconcile_against_markers

        return reconcile_against_markers(self.table, self.instant, statuses)

    def commit(self, statuses: list[Any]) -> Any:
        from hudi_core.schema.avro_schema import arrow_to_avro

        assert self.requested is not None
        removed = self.reconcile(statuses)
        self.txn.commit(
            self.requested, statuses, operation=self.operation,
            schema=arrow_to_avro(self.schema, self.table.config.name), replaced=self.replaced,
            extra_metadata=self.extra, reconcile=False,
        )  # fmt: skip
        files = [s.stat.path for s in statuses if s.stat.path]
        return SparkWriteResult(
            self.instant, self.operation,
            num_records=sum(s.inserted + s.updated + s.deleted for s in statuses),
            inserted=sum(s.inserted for s in statuses), updated=sum(s.updated for s in statuses),
            deleted=sum(s.deleted for s in statuses), files=files, removed_files=removed,
        )  # fmt: skip

    def abort(self) -> None:
        """Roll the instant back (its files by markers) so the table is as before the write."""
        if self.requested is None:
            return
        try:
            self.txn.abort()
        except Exception:
            pass
