"""Rolling back a write instant (spec 10.2): by markers while they exist, else by the commit's
write stats (a completed instant). A pending instant's base files, and empty files its dead
writer left, are also found by listing the partitions (markers can miss them).

New base files of the instant are deleted; log appends to existing slices are cancelled with a
rollback command block (new log version, write token ``1-0-1``); log-only slices the instant
created are deleted. ``R.rollback.requested`` / ``.inflight`` / ``R.rollback`` record it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.errors import TimelineError
from hudi_core.lock.heartbeat import heartbeat_path
from hudi_core.log.blocks import ROLLBACK_COMMAND, encode_command_block
from hudi_core.log.format import BlockType, HeaderKey, encode_block
from hudi_core.log.reader import first_block_instant
from hudi_core.log.writer import LogWriter
from hudi_core.storage.base import FileInfo, stale_temp_files
from hudi_core.table.file_names import UNKNOWN_WRITE_TOKEN, BaseFileName, LogFileName
from hudi_core.timeline.avro_files import deserialize, serialize
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.instant import Action, Instant, State
from hudi_core.write.markers import MarkerFiles

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.timeline.timeline import ActiveTimeline

__all__ = [
    "RollbackResult",
    "discard_pending_compaction",
    "discard_rolled_back_write",
    "rollback_failed_writes",
    "rollback_instant",
]

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


@dataclass
class RollbackResult:
    rollback_instant: str
    rolled_back: str
    deleted_files: list[str] = field(default_factory=list)
    rollback_log_files: dict[str, int] = field(default_factory=dict)


@dataclass
class _Request:
    partition: str
    files_to_delete: list[str] = field(default_factory=list)
    file_id: str | None = None
    base_instant: str | None = None
    log_blocks: dict[str, int] | None = None


def _find(table: MetaClient, instant_time: str) -> Instant:
    for inst in table.timeline.commits():
        # a completed compaction is a commit (a restore rolls it back)
        if inst.timestamp == instant_time and (inst.action in _WRITE_ACTIONS or inst.is_completed):
            return inst
    raise TimelineError(
        f"no commit, deltacommit or replacecommit {instant_time} on the timeline of {table.base_uri}; "
        "`hudi-py timeline` lists the instants"
    )


def rollback_failed_writes(
    table: MetaClient,
    *,
    expired: Callable[[Instant], bool] | None = None,
    lock: AbstractContextManager[Any] | None = None,
    temp_age_s: float | None = None,
    seen: ActiveTimeline | None = None,
) -> list[RollbackResult]:
    """Roll back failed writes: first finish every rollback a crash cut short (from its saved
    plan, under its own instant, as Hudi does), then roll back pending commits/deltacommits/
    replacecommits (not clustering, which has a plan in its requested file), newest first.

    EAGER (``expired`` None): every pending write instant is a failed one. LAZY: only those for
    which ``expired(instant)`` (their heartbeat stopped); the look is repeated under ``lock``,
    which every rollback of concurrent writers runs under, so a pending rollback seen there is
    a dead one and an instant is never rolled back twice. ``temp_age_s``: see
    :func:`rollback_instant`. ``seen``: a load of the timeline the caller just made, for LAZY's
    first look (what it finds is looked at again under the lock)."""

    def failed(tl: Any) -> list[Instant]:
        out = []
        for inst in reversed(list(tl.pending())):
            if inst.action not in _WRITE_ACTIONS:
                continue
            if inst.action == Action.REPLACE_COMMIT and _is_clustering(tl, inst):
                continue
            if expired is None or expired(inst):
                out.append(inst)
        return out

    if expired is not None:
        tl = seen if seen is not None else table.timeline
        if not failed(tl) and not tl.filter(actions=[Action.ROLLBACK]).pending():
            return []  # the common case among concurrent writers: nothing to do, no lock taken
    with lock if lock is not None else nullcontext():
        tl = table.timeline
        out = [_resume(table, inst, temp_age_s) for inst in tl.pending() if inst.action == Action.ROLLBACK]
        for inst in failed(table.timeline if out else tl):
            out.append(rollback_instant(table, inst.timestamp, temp_age_s=temp_age_s))
    return out


def _resume(table: MetaClient, rollback: Instant, temp_age_s: float | None = None) -> RollbackResult:
    """Finish pending rollback ``rollback`` from the plan in its requested file, whether or not
    the instant it rolls back is still on the timeline."""
    tl = table.timeline
    plan = deserialize(
        "HoodieRollbackPlan", tl.storage.read_bytes(tl.path_of(rollback.with_state(State.REQUESTED)))
    )
    target = plan["instantToRollback"]
    reqs = [
        _Request(q["partitionPath"], list(q.get("filesToBeDeleted") or []), q.get("fileId") or None,
                 q.get("latestBaseInstant") or None, dict(q.get("logBlocksToBeDeleted") or {}) or None)
        for q in plan.get("RollbackRequests") or []
    ]  # fmt: skip
    if rollback.state is State.REQUESTED:
        tl.transition_to_inflight(rollback, b"")
    inst = Instant(str(target["commitTime"]), str(target["action"]), State.REQUESTED)
    return _execute(table, rollback.timestamp, inst, reqs, time.monotonic(), temp_age_s)


def _is_clustering(tl: Any, inst: Instant) -> bool:
    try:
        data = tl.storage.read_bytes(tl.path_of(inst.with_state(State.REQUESTED)))
    except FileNotFoundError:
        return False
    try:
        rec = deserialize("HoodieRequestedReplaceMetadata", data)
    except TimelineError:
        return False
    return rec.get("clusteringPlan") is not None


def _partition_uri(table: MetaClient, partition: str) -> str:
    return table.partition_uri(partition) if partition else table.base_uri


def _partition_listings(table: MetaClient) -> Iterator[tuple[str, list[FileInfo]]]:
    """Every partition with its entries, each partition listed once."""
    from hudi_core.fs_view.partitions import partition_listings

    if not table.config.is_partitioned:
        yield "", table.storage.list(table.base_uri)
        return
    yield from partition_listings(table.storage, table.base_uri).items()


def _requests_from_markers(table: MetaClient, x: str, markers: MarkerFiles) -> list[_Request]:
    reqs: list[_Request] = []
    for m in markers.list():
        puri = _partition_uri(table, m.partition_path)
        if m.io_type in ("CREATE", "MERGE"):
            reqs.append(_Request(m.partition_path, files_to_delete=[f"{puri}/{m.file_name}"]))
            continue
        parsed = BaseFileName.parse(m.file_name)
        if parsed is None:
            continue
        logs = _slice_logs(table, m.partition_path, parsed.file_id, parsed.instant_time)
        if parsed.instant_time == x:
            reqs.append(_Request(m.partition_path, files_to_delete=[lf.path for lf in logs]))
        elif written := [lf for lf in logs if lf.size]:  # an empty one is a leftover (_with_leftovers)
            reqs.append(_Request(m.partition_path, file_id=parsed.file_id, base_instant=parsed.instant_time,
                                 log_blocks={written[-1].path: -1}))  # fmt: skip
    return reqs


@dataclass(frozen=True)
class _Log:
    path: str
    name: LogFileName
    size: int


def _slice_logs(table: MetaClient, partition: str, file_id: str, base_instant: str) -> list[_Log]:
    out = []
    for info in table.storage.list(_partition_uri(table, partition)):
        lf = LogFileName.parse(info.name)
        if lf is not None and lf.file_id == file_id and lf.base_instant == base_instant:
            out.append(_Log(info.path, lf, info.size))
    return sorted(out, key=lambda x: x.name.sort_key())


def _requests_from_commit(table: MetaClient, inst: Instant) -> list[_Request]:
    """A completed instant's files from its write stats (a pending one has none: the listing of
    ``_with_leftovers`` finds its files)."""
    reqs: list[_Request] = []
    x = inst.timestamp
    if inst.is_completed:
        meta = CommitMetadata.from_json(table.timeline.read_details(inst))
        for stat in meta.all_write_stats():
            part = stat.partition_path or ""
            puri = _partition_uri(table, part)
            name = (stat.path or "").rsplit("/", 1)[-1]
            if stat.log_version is not None or LogFileName.parse(name) is not None:
                if stat.prev_commit == x:
                    reqs.append(_Request(part, files_to_delete=[f"{puri}/{name}"]))
                else:
                    size = (
                        table.storage.size(f"{puri}/{name}") if table.storage.exists(f"{puri}/{name}") else -1
                    )
                    reqs.append(_Request(part, file_id=stat.file_id, base_instant=stat.prev_commit,
                                         log_blocks={f"{puri}/{name}": size}))  # fmt: skip
            elif name:
                reqs.append(_Request(part, files_to_delete=[f"{puri}/{name}"]))
            for cdc in stat.cdc_stats or ():  # the CDC log file beside a rewritten base file
                reqs.append(_Request(part, files_to_delete=[f"{puri}/{cdc.rsplit('/', 1)[-1]}"]))
    return reqs


def _with_slice_logs(table: MetaClient, x: str, reqs: list[_Request]) -> list[_Request]:
    """``reqs`` and the log files of slices whose base instant is ``x`` (a completed instant), in
    the partitions the rollback touches: the base file ``x`` wrote goes, so every log on it goes
    too (Hudi's rollback deletes files by their base instant). Newer instants appended there were rolled
    back first (a restore): their logs and the rollback command blocks that cancelled them would
    otherwise stay as a log-only slice, which Apache Hudi's cleaner takes for the file group's
    latest and so deletes the slice that holds its records."""
    taken = {path for q in reqs for path in q.files_to_delete}
    found: list[_Request] = []
    for part in sorted({q.partition for q in reqs}):
        for info in table.storage.list(_partition_uri(table, part)):
            name = LogFileName.parse(info.name)
            if name is not None and name.base_instant == x and info.path not in taken:
                found.append(_Request(part, files_to_delete=[info.path]))
    return [*reqs, *found]


def _with_leftovers(
    table: MetaClient, x: str, reqs: list[_Request], temp_age_s: float | None
) -> list[_Request]:
    """A request for each file pending instant ``x``'s dead writer left that no request of
    ``reqs`` deletes, then ``reqs`` (so a rollback command block's new log version is chosen
    after the deletes). Found by listing every partition:
    - its base files. Markers can miss some: Apache Hudi's timeline server rewrites a whole
      ``MARKERS<n>`` file per batch of markers, so a JVM killed mid-rewrite leaves it cut short,
      while a handle of that batch has already created its file. Left in place, such a file is
      taken for committed once archival passes ``x``;
    - with ``temp_age_s``, every empty base or log file last modified before that: a writer
      killed between creating a file and writing its first bytes (no committed file is empty,
      the age spares a live writer's fresh file, as for temporary files), which Apache Hudi's
      metadata table bootstrap refuses."""
    known = {path.rsplit("/", 1)[-1] for q in reqs for path in q.files_to_delete}
    found, now = [], time.time()
    for part, infos in _partition_listings(table):
        for info in infos:
            if info.is_dir or info.name in known:
                continue
            base, log = BaseFileName.parse(info.name), LogFileName.parse(info.name)
            # its base files, and its CDC log files (named by the instant that wrote them)
            ours = (base is not None and base.instant_time == x) or (
                log is not None and log.cdc and log.base_instant == x
            )
            empty = (
                temp_age_s is not None
                and info.size == 0
                and (base is not None or log is not None)
                and info.stale(temp_age_s, now)
            )
            if ours or empty:
                found.append(_Request(part, files_to_delete=[info.path]))
    return [*found, *reqs]


def rollback_instant(
    table: MetaClient,
    instant_time: str,
    *,
    rollback_time: str | None = None,
    temp_age_s: float | None = None,
) -> RollbackResult:
    """Roll back write instant ``instant_time`` (pending, or the latest completed one).

    With ``temp_age_s`` (``ConcurrencySettings.temp_age_s``), the storage's temporary files older
    than that in the partitions it touches and in ``.hoodie`` are deleted too: a killed writer's
    exclusive create (a log file, a timeline file), cut between its bytes and its name; and,
    when the instant is pending, the empty base and log files that old in every partition
    (``_with_leftovers``). None keeps them."""
    started = time.monotonic()
    inst = _find(table, instant_time)
    tl = table.timeline
    if inst.is_completed:
        later = [i for i in tl.completed_commits() if i.timestamp > instant_time]
        if later:
            raise TimelineError(
                f"cannot roll back {instant_time}: later commits {[i.timestamp for i in later]} "
                "depend on it; roll those back first (newest first)"
            )
    markers = MarkerFiles(table.storage, table.meta_path, instant_time)
    reqs = (
        _requests_from_markers(table, instant_time, markers)
        if markers.exists()
        else _requests_from_commit(table, inst)
    )
    if inst.is_completed:
        reqs = _with_slice_logs(table, instant_time, reqs)
    else:
        reqs = _with_leftovers(table, instant_time, reqs, temp_age_s)
    r = rollback_time or tl.new_instant_time()
    plan = {
        "instantToRollback": {"commitTime": instant_time, "action": inst.display_action},
        "RollbackRequests": [
            {
                "partitionPath": q.partition,
                "fileId": q.file_id or "",
                "latestBaseInstant": q.base_instant or "",
                "filesToBeDeleted": q.files_to_delete,
                "logBlocksToBeDeleted": q.log_blocks,
            }
            for q in reqs
        ],
        "version": 1,
    }
    requested = tl.create_requested(r, Action.ROLLBACK, serialize("HoodieRollbackPlan", plan))
    tl.transition_to_inflight(requested, b"")
    return _execute(table, r, inst, reqs, started, temp_age_s)


def _execute(
    table: MetaClient,
    r: str,
    inst: Instant,
    reqs: list[_Request],
    started: float,
    temp_age_s: float | None = None,
) -> RollbackResult:
    """Carry out the plan of inflight rollback ``r`` of ``inst`` and complete it. Every step
    may be repeated (a file already deleted is counted as failed, a second rollback command
    block for the same target changes nothing), so a rollback cut short runs again whole."""
    instant_time, storage = inst.timestamp, table.storage
    markers = MarkerFiles(storage, table.meta_path, instant_time)
    part_meta: dict[str, dict[str, Any]] = {}
    result = RollbackResult(r, instant_time)

    def pm(part: str) -> dict[str, Any]:
        return part_meta.setdefault(part, {"partitionPath": part, "successDeleteFiles": [], "failedDeleteFiles": [],
                                           "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}})  # fmt: skip

    for q in reqs:
        for path in q.files_to_delete:
            (
                pm(q.partition)["successDeleteFiles"]
                if storage.delete(path)
                else pm(q.partition)["failedDeleteFiles"]
            ).append(path)
            result.deleted_files.append(path)
        if q.log_blocks:
            assert q.file_id is not None and q.base_instant is not None
            header = {HeaderKey.INSTANT_TIME: r, HeaderKey.TARGET_INSTANT_TIME: instant_time,
                      HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND}  # fmt: skip
            block = encode_block(BlockType.COMMAND, header, encode_command_block())
            writer = LogWriter(
                storage, _partition_uri(table, q.partition), q.file_id, q.base_instant, UNKNOWN_WRITE_TOKEN
            )
            res = writer.append([block])
            pm(q.partition)["rollbackLogFiles"][res.path] = res.file_size
            result.rollback_log_files[res.path] = res.file_size
            for path, size in q.log_blocks.items():
                pm(q.partition)["logFilesFromFailedCommit"][path] = (
                    size if size >= 0 else (storage.size(path) if storage.exists(path) else 0)
                )

    if temp_age_s is not None:  # where the write went: its markers (a create cut short has one)
        now = time.time()
        parts = sorted({q.partition for q in reqs} | {m.partition_path for m in markers.list()})
        for folder in [table.meta_path, *(_partition_uri(table, part) for part in parts)]:
            for f in stale_temp_files(storage, folder, temp_age_s, now):
                storage.delete(f.path)  # not in the metadata: no Hudi file, no reader listed it
    table.timeline.delete_instant(inst)
    markers.delete_all()
    storage.delete(heartbeat_path(table.meta_path, instant_time))
    meta = {
        "startRollbackTime": r,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(p["successDeleteFiles"]) for p in part_meta.values()),
        "commitsRollback": [instant_time],
        "partitionMetadata": part_meta,
        "version": 1,
        "instantsRollback": [{"commitTime": instant_time, "action": inst.display_action}],
    }
    tl = table.timeline
    tl.complete(Instant(r, Action.ROLLBACK, State.INFLIGHT), serialize("HoodieRollbackMetadata", meta))
    return result


def discard_rolled_back_write(table: MetaClient, instant_time: str) -> list[str]:
    """Delete what a write of ``instant_time`` left behind after another writer rolled it back.

    A writer stalled past its heartbeat (or its lease) is rolled back by the others; when it
    resumes, the handles it had running finish and write files of an instant that is no longer
    on the timeline, and once archival passes that instant every reader would take them for
    committed. So the writer deletes them itself before it raises: base files named with its
    instant, and log files whose first block is its instant's (a log file is never shared: every
    append on storage without append support creates a new version, and appends go only to the
    file the same handle created). Then its markers and heartbeat. Returns the deleted files.
    """
    return [path for _, path in _discard(table, instant_time, based_on=False)]


def discard_pending_compaction(table: MetaClient, instant_time: str) -> list[tuple[str, str]]:
    """Delete what a pending compaction left: the base files it began (named with its instant),
    and every log file of the slices based on it (later writes append there while it is pending;
    a restore cancels them first). Then its markers. Returns (partition, path) of each deleted
    file."""
    return _discard(table, instant_time, based_on=True)


def _discard(table: MetaClient, instant_time: str, *, based_on: bool) -> list[tuple[str, str]]:
    """One listing of every partition: delete the base files named with ``instant_time``, the log
    files whose first block is its (``based_on``: or whose slice is based on it), its markers
    and heartbeat. Returns (partition, path) of each deleted file."""
    storage, deleted = table.storage, []
    for part, infos in _partition_listings(table):
        for info in infos:
            base, log = BaseFileName.parse(info.name), LogFileName.parse(info.name)
            if base is not None:
                ours = base.instant_time == instant_time
            elif log is not None:
                ours = (based_on and log.base_instant == instant_time) or (
                    first_block_instant(storage, info.path) == instant_time
                )
            else:
                ours = False
            if ours and storage.delete(info.path):
                deleted.append((part, info.path))
    MarkerFiles(storage, table.meta_path, instant_time).delete_all()
    storage.delete(heartbeat_path(table.meta_path, instant_time))
    return deleted
