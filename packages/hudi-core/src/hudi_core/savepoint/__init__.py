"""Savepoints and restores, as Apache Hudi 0.15 writes them (spec 3.3).

A savepoint (``<commit>.savepoint.inflight``, then ``<commit>.savepoint`` holding
``HoodieSavepointMetadata``) names, per partition, the base and log files of the latest file
slices as of a completed commit. The cleaner keeps those files and archival stops before the
savepoint (``hudi_core.clean``, ``hudi_core.archival``), so the table can be brought back to it.

A restore rolls back every write after the savepoint, newest first: completed and pending
commits, delta commits, replace commits and compactions. ``<r>.restore.requested`` holds the
plan (``HoodieRestorePlan``), ``<r>.restore`` the rollback metadata of each instant
(``HoodieRestoreMetadata``); the rollbacks' own instants are removed once the restore completes,
as Hudi's restore removes them, so the timeline ends with the savepointed commit and the restore.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.clean.metadata import CleanMetadata
from hudi_core.errors import TimelineError
from hudi_core.fs_view import FileSystemView
from hudi_core.timeline.avro_files import ROLLBACK_METADATA, SAVEPOINT_METADATA, deserialize, serialize
from hudi_core.timeline.instant import Action, Instant, State
from hudi_core.write.rollback import discard_pending_compaction, rollback_failed_writes, rollback_instant

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["RestoreResult", "create_savepoint", "delete_savepoint", "restore_to_savepoint", "savepoints"]

RESTORE_PLAN = "HoodieRestorePlan"
RESTORE_METADATA = "HoodieRestoreMetadata"
#: the instants a restore rolls back (Hudi's write timeline)
_WRITES = (
    Action.COMMIT,
    Action.DELTA_COMMIT,
    Action.REPLACE_COMMIT,
    Action.COMPACTION,
    Action.LOG_COMPACTION,
)


@dataclass
class RestoreResult:
    restore_instant: str
    savepoint: str
    #: the instants rolled back, newest first
    rolled_back: list[str] = field(default_factory=list)


def savepoints(table: MetaClient) -> list[str]:
    """The instants of the table's completed savepoints, oldest first."""
    return [i.timestamp for i in table.timeline.filter(actions=[Action.SAVEPOINT]).completed()]


def create_savepoint(
    table: MetaClient, instant: str | None = None, *, user: str = "", comments: str = ""
) -> str:
    """Savepoint the completed commit ``instant`` (default: the latest); returns its instant.

    Refused as Hudi refuses it: a commit that is not completed on the active timeline, one the
    cleaner may already have cleaned (before the latest clean's earliest commit to retain, or
    before the first commit), or one already savepointed."""
    tl = table.timeline
    commits = tl.completed_commits()
    if instant is None:
        last = commits.last()
        if last is None:
            raise TimelineError("nothing to savepoint: the table has no completed commit")
        instant = last.timestamp
    if instant not in {i.timestamp for i in commits}:
        raise TimelineError(
            f"cannot savepoint {instant}: it is not a completed commit on the active timeline"
        )
    if any(i.timestamp == instant for i in tl.filter(actions=[Action.SAVEPOINT])):
        raise TimelineError(f"{instant} is already savepointed")
    retained = _earliest_retained(table)
    if retained and instant < retained:
        raise TimelineError(
            f"cannot savepoint {instant}: the cleaner may have removed its files (commits before "
            f"{retained} are not retained)"
        )
    files: dict[str, list[str]] = {}
    for s in FileSystemView(table).latest_file_slices(as_of=instant):
        names = files.setdefault(s.partition_path, [])
        names.extend([*([s.base_file.name] if s.base_file else []), *(f.name for f in s.log_files)])
    meta = {
        "savepointedBy": user,
        "savepointedAt": int(time.time() * 1000),
        "comments": comments,
        "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": n} for p, n in files.items()},
        "version": 1,
    }
    inflight = tl.transition_to_inflight(Instant(instant, Action.SAVEPOINT, State.REQUESTED), b"")
    tl.complete(inflight, serialize(SAVEPOINT_METADATA, meta))
    return instant


def _earliest_retained(table: MetaClient) -> str | None:
    """The latest completed clean's earliest commit to retain, else the first completed commit."""
    tl = table.timeline
    clean = tl.filter(actions=[Action.CLEAN]).completed().last()
    if clean is not None:
        meta = CleanMetadata.from_bytes(tl.read_details(clean), what=tl.path_of(clean))
        if meta.earliest_commit_to_retain:
            return meta.earliest_commit_to_retain
    first = tl.completed_commits().first()
    return first.timestamp if first else None


def delete_savepoint(table: MetaClient, instant: str) -> None:
    """Remove the savepoint at ``instant``: the cleaner may then remove its files."""
    tl = table.timeline
    found = tl.current(Instant(instant, Action.SAVEPOINT, State.COMPLETED))
    if found is None:
        raise TimelineError(f"no savepoint at {instant}; savepoints: {savepoints(table)}")
    tl.delete_instant(found)


def restore_to_savepoint(
    table: MetaClient, savepoint: str, *, temp_age_s: float | None = None
) -> RestoreResult:
    """Roll back every write instant after the savepoint ``savepoint``, newest first, as one
    restore instant. A pending compaction is removed with the files it began; every other
    instant is rolled back as :func:`hudi_core.write.rollback.rollback_instant` does.

    A restore cut short (a pending restore instant) is resumed by the next restore to the same
    savepoint: the rollback it was in is finished from its plan, the ones it completed are kept
    for its metadata, and the instants left are rolled back under its instant. A restore to
    another savepoint is refused until then. Between, the table reads as of the newest instant
    not yet rolled back."""
    started = time.monotonic()
    tl = table.timeline
    if savepoint not in savepoints(table):
        raise TimelineError(f"no savepoint at {savepoint}; savepoints: {savepoints(table)}")
    rollbacks: dict[str, list[dict[str, Any]]] = {}
    done: list[Instant] = []
    inflight = _resumed(table, savepoint, rollbacks, done, temp_age_s)
    tl = table.timeline
    targets = sorted(
        (i for i in tl.filter(actions=_WRITES) if i.timestamp > savepoint), key=Instant.sort_key, reverse=True
    )
    if inflight is None:
        plan = {
            "instantsToRollback": [{"commitTime": i.timestamp, "action": i.display_action} for i in targets],
            "version": 2,
            "savepointToRestoreTimestamp": savepoint,
        }
        requested = tl.create_requested(tl.new_instant_time(), Action.RESTORE, serialize(RESTORE_PLAN, plan))
        inflight = tl.transition_to_inflight(requested, b"")
    for target in targets:
        rollback = table.timeline.new_instant_time()
        if target.action in (Action.COMPACTION, Action.LOG_COMPACTION) and not target.is_completed:
            rollbacks[target.timestamp] = [_discard_pending(table, target, rollback)]
        else:
            rollback_instant(table, target.timestamp, rollback_time=rollback, temp_age_s=temp_age_s)
            completed = Instant(rollback, Action.ROLLBACK, State.COMPLETED)
            rollbacks[target.timestamp] = [
                deserialize(ROLLBACK_METADATA, table.timeline.read_details(completed))
            ]
            done.append(completed)
    rolled_back = sorted(rollbacks, reverse=True)
    meta = {
        "startRestoreTime": inflight.timestamp,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "instantsToRollback": rolled_back,
        "hoodieRestoreMetadata": rollbacks,
        "version": 1,
        "restoreInstantInfo": [info for t in rolled_back for info in rollbacks[t][0]["instantsRollback"]],
    }
    table.timeline.complete(inflight, serialize(RESTORE_METADATA, meta))
    for rollback_done in done:  # the restore records them; Hudi's restore leaves none on the timeline
        table.timeline.delete_instant(rollback_done)
    return RestoreResult(inflight.timestamp, savepoint, rolled_back)


def _resumed(
    table: MetaClient,
    savepoint: str,
    rollbacks: dict[str, list[dict[str, Any]]],
    done: list[Instant],
    temp_age_s: float | None,
) -> Instant | None:
    """The inflight instant of a restore to ``savepoint`` a crash cut short, made ready to go
    on (its rollback cut short finished, the rollbacks it completed added to ``rollbacks`` and
    ``done``); None when there is none."""
    tl = table.timeline
    pending = tl.filter(actions=[Action.RESTORE]).pending().last()
    if pending is None:
        return None
    plan = deserialize(RESTORE_PLAN, tl.storage.read_bytes(tl.path_of(pending.with_state(State.REQUESTED))))
    if plan.get("savepointToRestoreTimestamp") != savepoint:
        raise TimelineError(
            f"the restore {pending.timestamp} to savepoint {plan.get('savepointToRestoreTimestamp')} was cut "
            "short; restore to that savepoint again first"
        )
    rollback_failed_writes(table, expired=lambda _: False, temp_age_s=temp_age_s)  # pending rollbacks only
    tl = table.timeline
    for rb in tl.filter(actions=[Action.ROLLBACK]).completed():
        if rb.timestamp > pending.timestamp:
            meta = deserialize(ROLLBACK_METADATA, tl.read_details(rb))
            for target in meta.get("commitsRollback") or []:
                rollbacks[target] = [meta]
            done.append(rb)
    return pending if pending.state is State.INFLIGHT else tl.transition_to_inflight(pending, b"")


def _discard_pending(table: MetaClient, compaction: Instant, rollback: str) -> dict[str, Any]:
    """A pending compaction (or log compaction) removed: the files it began and the log files
    of the slices based on it, then its plan. Returns its rollback metadata, as Hudi records it
    in a restore."""
    started = time.monotonic()
    deleted = discard_pending_compaction(table, compaction.timestamp)
    table.timeline.delete_instant(compaction)
    partitions: dict[str, dict[str, Any]] = {}
    for part, path in deleted:
        pm = partitions.setdefault(part, {"partitionPath": part, "successDeleteFiles": [], "failedDeleteFiles": [],
                                          "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}})  # fmt: skip
        pm["successDeleteFiles"].append(path)
    return {
        "startRollbackTime": rollback,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(deleted),
        "commitsRollback": [compaction.timestamp],
        "partitionMetadata": partitions,
        "version": 1,
        "instantsRollback": [{"commitTime": compaction.timestamp, "action": compaction.action}],
    }
