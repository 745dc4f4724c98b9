"""``HoodieCompactionPlan``: build, serialise (Avro, plan version 2) and read (spec 9.1).

The plan is written to ``.hoodie/.aux/<t>.compaction.requested`` first and then to
``.hoodie/<t>.compaction.requested`` (HUDI-546: old readers look in ``.aux``); readers try
``.aux`` first, then ``.hoodie``. Version 2 plans hold file names relative to the partition;
version 1 plans held absolute paths, which :func:`plan_from_bytes` reduces to names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.compaction.errors import CompactionError
from hudi_core.errors import TimelineError
from hudi_core.fs_view.model import BaseFile, FileSlice, LogFile, io_metrics
from hudi_core.io.bootstrap_index import source_path
from hudi_core.timeline.avro_files import COMPACTION_PLAN, deserialize, serialize
from hudi_core.timeline.instant import Action, Instant, State

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.timeline.timeline import ActiveTimeline

__all__ = [
    "PLAN_VERSION",
    "CompactionOperation",
    "CompactionPlan",
    "aux_plan_path",
    "operation_for_slice",
    "plan_from_bytes",
    "plan_to_bytes",
    "read_plan",
    "write_plan",
]

PLAN_VERSION = 2


@dataclass(frozen=True)
class CompactionOperation:
    """One file slice to compact (``HoodieCompactionOperation``); picklable, so an engine can
    ship it to a worker."""

    partition_path: str
    file_id: str
    base_instant: str
    data_file_name: str | None
    delta_file_names: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict, hash=False, compare=False)
    bootstrap_file_path: str | None = None

    def to_avro(self) -> dict[str, Any]:
        return {
            "baseInstantTime": self.base_instant,
            "deltaFilePaths": list(self.delta_file_names),
            "dataFilePath": self.data_file_name,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": dict(self.metrics),
            "bootstrapFilePath": self.bootstrap_file_path,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> CompactionOperation:
        data = rec.get("dataFilePath")
        return cls(
            partition_path=rec.get("partitionPath") or "",
            file_id=rec.get("fileId") or "",
            base_instant=rec.get("baseInstantTime") or "",
            data_file_name=_name(data) if data else None,
            delta_file_names=tuple(_name(p) for p in rec.get("deltaFilePaths") or ()),
            metrics={k: float(v) for k, v in (rec.get("metrics") or {}).items()},
            bootstrap_file_path=rec.get("bootstrapFilePath"),
        )

    def file_slice(self, table: MetaClient) -> FileSlice:
        """The slice this operation names, with paths resolved in ``table`` (sizes looked up)."""
        part_uri = table.partition_uri(self.partition_path) if self.partition_path else table.base_uri
        storage = table.storage
        base = None
        if self.data_file_name:
            path = f"{part_uri}/{self.data_file_name}"
            base = BaseFile.from_path(path, storage.size(path))
            if base is None:
                raise CompactionError(
                    f"compaction operation for file group {self.file_id}: {self.data_file_name!r} "
                    "is not a base file name"
                )
        logs = []
        for n in self.delta_file_names:
            path = f"{part_uri}/{n}"
            lf = LogFile.from_path(path, storage.size(path))
            if lf is None:
                raise CompactionError(
                    f"compaction operation for file group {self.file_id}: {n!r} is not a log file name"
                )
            logs.append(lf)
        if base is not None and self.bootstrap_file_path:  # a METADATA_ONLY bootstrap's skeleton
            base = dataclasses.replace(base, bootstrap_source=source_path(self.bootstrap_file_path))
        return FileSlice(self.partition_path, self.file_id, self.base_instant, base).with_logs(tuple(logs))


@dataclass
class CompactionPlan:
    """``HoodieCompactionPlan``: the operations of one compaction instant."""

    operations: list[CompactionOperation] = field(default_factory=list)
    extra_metadata: dict[str, str] | None = None
    version: int = PLAN_VERSION
    strategy_class: str | None = None
    strategy_params: dict[str, str] | None = None

    def to_avro(self) -> dict[str, Any]:
        strategy = None
        if self.strategy_class is not None or self.strategy_params:
            strategy = {"compactorClassName": self.strategy_class,
                        "strategyParams": self.strategy_params, "version": 1}  # fmt: skip
        return {
            "operations": [op.to_avro() for op in self.operations],
            "extraMetadata": self.extra_metadata,
            "version": self.version,
            "strategy": strategy,
            "preserveHoodieMetadata": False,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> CompactionPlan:
        strategy = rec.get("strategy") or {}
        return cls(
            operations=[CompactionOperation.from_avro(o) for o in rec.get("operations") or ()],
            extra_metadata=rec.get("extraMetadata"),
            version=int(rec.get("version") or 1),
            strategy_class=strategy.get("compactorClassName"),
            strategy_params=strategy.get("strategyParams"),
        )


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def operation_for_slice(file_slice: FileSlice, *, default_base_size: int = 125829120) -> CompactionOperation:
    return CompactionOperation(
        partition_path=file_slice.partition_path,
        file_id=file_slice.file_id,
        base_instant=file_slice.base_instant,
        data_file_name=file_slice.base_file.name if file_slice.base_file is not None else None,
        delta_file_names=tuple(lf.name for lf in file_slice.log_files),
        metrics=io_metrics([file_slice], default_base_size=default_base_size),
        bootstrap_file_path=file_slice.base_file.bootstrap_source
        if file_slice.base_file is not None
        else None,
    )


def plan_to_bytes(plan: CompactionPlan) -> bytes:
    return serialize(COMPACTION_PLAN, plan.to_avro())


def plan_from_bytes(data: bytes, *, what: str = "compaction plan") -> CompactionPlan:
    try:
        record = deserialize(COMPACTION_PLAN, data)
    except TimelineError as e:
        raise TimelineError(f"{what}: {e}") from e
    return CompactionPlan.from_avro(record)


def aux_plan_path(table: MetaClient, instant_time: str) -> str:
    return f"{table.meta_path}/.aux/{instant_time}.compaction.requested"


def write_plan(
    table: MetaClient, instant_time: str, plan: CompactionPlan, *, timeline: ActiveTimeline | None = None
) -> Instant:
    """Write the plan to ``.aux`` then create ``<t>.compaction.requested`` with the same bytes."""
    data = plan_to_bytes(plan)
    table.storage.makedirs(f"{table.meta_path}/.aux")
    table.storage.write_bytes(aux_plan_path(table, instant_time), data)
    tl = timeline if timeline is not None else table.timeline
    return tl.create_requested(instant_time, Action.COMPACTION, data)


def read_plan(table: MetaClient, instant_time: str) -> CompactionPlan:
    """The plan of compaction ``instant_time``: ``.aux`` first, then ``.hoodie`` (Java's order)."""
    storage = table.storage
    aux = aux_plan_path(table, instant_time)
    if storage.exists(aux):
        return plan_from_bytes(storage.read_bytes(aux), what=aux)
    main = f"{table.meta_path}/{Instant(instant_time, Action.COMPACTION, State.REQUESTED).file_name}"
    if not storage.exists(main):
        raise CompactionError(
            f"no compaction plan for instant {instant_time} in {table.meta_path}: "
            "list pending plans with `hudi-py compactions BASE_URI`"
        )
    return plan_from_bytes(storage.read_bytes(main), what=main)
