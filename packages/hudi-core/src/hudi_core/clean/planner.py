"""Which files a clean deletes (spec 11.1).

Per file group, slices are kept when any retained query may read them:

* ``KEEP_LATEST_COMMITS`` / ``KEEP_LATEST_BY_HOURS``: the earliest commit to retain (ECTR) is
  the N-th latest completed commit (or the first commit within the last N hours), never later
  than the earliest pending write. Kept: the latest slice, every slice based at or after ECTR,
  and the newest slice before ECTR (time travel to ECTR reads it). Groups replaced before ECTR
  go whole.
* ``KEEP_LATEST_FILE_VERSIONS``: the N newest slices of each group.

Never deleted: any file a pending compaction plan names, and the slice a pending compaction
will replace.

The commit- and hour-based policies look only at partitions written since the last clean's
earliest commit to retain (``hoodie.cleaner.incremental.mode``, see :mod:`.partitions`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_core.clean.errors import CleanError
from hudi_core.clean.metadata import CleanerPlan
from hudi_core.clean.partitions import partitions_to_clean
from hudi_core.config.clean import CleanOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.fs_view.model import BaseFile, FileSlice
from hudi_core.fs_view.partitions import is_ignored_name
from hudi_core.fs_view.view import FileSystemView
from hudi_core.table.file_names import LogFileName
from hudi_core.timeline.instant import Instant
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["POLICIES", "earliest_commit_to_retain", "plan_clean"]

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)


@dataclass(frozen=True)
class _Settings:
    policy: str
    commits: int
    versions: int
    hours: int
    incremental: bool


def _settings(config: HoodieConfig) -> _Settings:
    policy = str(config.get_str(CleanOptions.POLICY) or KEEP_LATEST_COMMITS).upper()
    if policy not in POLICIES:
        raise CleanError(f"hoodie.cleaner.policy={policy!r} is not one of {', '.join(POLICIES)}")
    s = _Settings(policy, int(config.get(CleanOptions.COMMITS_RETAINED)),
                  int(config.get(CleanOptions.FILE_VERSIONS_RETAINED)),
                  int(config.get(CleanOptions.HOURS_RETAINED)),
                  bool(config.get(CleanOptions.INCREMENTAL_MODE)))  # fmt: skip
    if min(s.commits, s.versions) < 1 or s.hours < 0:
        raise CleanError(
            f"cleaner retention must be >= 1 (commits={s.commits}, file versions={s.versions}, "
            f"hours={s.hours})"
        )
    return s


def earliest_commit_to_retain(
    timeline: Timeline, config: HoodieConfig, *, now: _dt.datetime | None = None, utc: bool = False
) -> Instant | None:
    """ECTR for the commit- and hour-based policies; None means "keep everything"."""
    s = _settings(config)
    commits = timeline.commits()
    completed = list(commits.completed())
    ectr: Instant | None = None
    if s.policy == KEEP_LATEST_COMMITS:
        if len(completed) > s.commits:
            ectr = completed[len(completed) - s.commits]
    elif s.policy == KEEP_LATEST_BY_HOURS:
        current = now or (_dt.datetime.now(_dt.timezone.utc) if utc else _dt.datetime.now())
        cutoff = (current - _dt.timedelta(hours=s.hours)).strftime("%Y%m%d%H%M%S%f")[:17]
        later = [i for i in completed if i.timestamp >= cutoff]
        ectr = later[0] if later else None
        if ectr is not None and ectr is completed[0]:
            ectr = None  # nothing before it to clean
    else:
        return None
    if ectr is not None:
        pending = [i for i in commits.pending() if i.timestamp < ectr.timestamp]
        if pending:
            ectr = pending[0]  # a pending write may still need what its readers saw
    return ectr


def _slice_files(s: FileSlice) -> list[str]:
    return ([s.base_file.path] if s.base_file is not None else []) + [lf.path for lf in s.log_files]


def _protected(view: FileSystemView, table: MetaClient) -> set[str]:
    out: set[str] = set()
    for op in view.pending_compaction_operations():
        part_uri = table.partition_uri(op.partition_path) if op.partition_path else table.base_uri
        for name in ([op.data_file_path] if op.data_file_path else []) + list(op.delta_file_paths):
            out.add(f"{part_uri}/{name.rsplit('/', 1)[-1]}")
    return out


def savepointed_files(timeline: ActiveTimeline) -> dict[str, set[str]]:
    """partition -> names of the files every completed savepoint keeps (its
    ``HoodieSavepointMetadata.partitionMetadata[...].savepointDataFile``: the latest slices'
    base and log files at the savepointed commit, as Apache Hudi records them). Hudi's cleaner
    never deletes them, so a restore to the savepoint finds its files."""
    from hudi_core.timeline.avro_files import SAVEPOINT_METADATA, deserialize
    from hudi_core.timeline.instant import Action

    out: dict[str, set[str]] = {}
    for inst in timeline.filter(actions=[Action.SAVEPOINT]).completed():
        meta = deserialize(SAVEPOINT_METADATA, timeline.read_details(inst))
        for part, pm in (meta.get("partitionMetadata") or {}).items():
            names = {name.rsplit("/", 1)[-1] for name in pm.get("savepointDataFile") or []}
            out.setdefault(pm.get("partitionPath") or part or "", set()).update(names)
    return out


def _is_savepointed(s: FileSlice, saved: set[str]) -> bool:
    names = [*([s.base_file.name] if s.base_file is not None else []), *(lf.name for lf in s.log_files)]
    return any(name in saved for name in names)


def _replaced_group_files(table: MetaClient, partition: str, file_ids: set[str]) -> list[str]:
    uri = table.partition_uri(partition) if partition else table.base_uri
    out = []
    for info in table.storage.list(uri):
        if info.is_dir or is_ignored_name(info.name):
            continue
        f = BaseFile.from_path(info.path) or LogFileName.parse(info.name)  # (CDC log files too)
        if f is not None and f.file_id in file_ids:
            out.append(info.path)
    return out


def _to_delete_in_group(slices: list[FileSlice], s: _Settings, ectr: str | None) -> list[FileSlice]:
    real = [x for x in slices if not x.is_empty]
    if len(real) <= 1:
        return []
    if s.policy == KEEP_LATEST_FILE_VERSIONS:
        return real[: max(len(real) - s.versions, 0)]
    if ectr is None:
        return []
    # The newest slice before ECTR serves time travel to ECTR; when nothing was written to the
    # group since, that is its latest slice (Hudi's lastVersionBeforeEarliestCommitToRetain).
    # Incremental planning relies on this: what is deleted changes only with a slice based
    # before ECTR, so only partitions written before ECTR need a look.
    return [x for x in real if x.base_instant < ectr][:-1]


def plan_clean(
    table: MetaClient,
    *,
    config: HoodieConfig | None = None,
    timeline: Timeline | None = None,
    partitions: Iterable[str] | None = None,
    now: _dt.datetime | None = None,
) -> CleanerPlan:
    """The files to delete now under the configured policy (empty plan when nothing is due).

    ``partitions`` limits the plan to those; by default they are chosen as Hudi does (every
    partition for KEEP_LATEST_FILE_VERSIONS, else those written since the last clean)."""
    cfg = config if config is not None else table.write_config()
    s = _settings(cfg)
    tl = timeline if timeline is not None else table.timeline
    view = FileSystemView(table, timeline=tl)
    ectr_inst = earliest_commit_to_retain(tl, cfg, now=now, utc=table.config.utc_timeline)
    ectr = ectr_inst.timestamp if ectr_inst is not None else None
    protected = _protected(view, table)
    # the slice a pending compaction rewrites: its files are named in the plan (protected above)
    last_completed = tl.completed_commits().last()
    plan = CleanerPlan(
        policy=s.policy,
        earliest_instant_to_retain=(ectr_inst.timestamp, ectr_inst.comparable_action) if ectr_inst else None,
        last_completed_commit=last_completed.timestamp if last_completed else "",
    )
    if partitions is not None:
        parts = list(partitions)
    elif s.policy == KEEP_LATEST_FILE_VERSIONS:
        parts = view.partitions()
    else:
        parts = partitions_to_clean(view, ectr_inst, incremental=s.incremental)
    replaced: dict[str, set[str]] = {}
    if ectr is not None:
        for inst_ts, part, fid in view.replaced_file_groups():
            if inst_ts < ectr:
                replaced.setdefault(part, set()).add(fid)
    saved = savepointed_files(table.timeline)  # every savepoint, whatever ``timeline`` shows
    for part in parts:
        doomed: list[str] = []
        kept = saved.get(part, set())
        for group in view.file_groups(part):
            for sl in _to_delete_in_group(group.slices, s, ectr):
                if not _is_savepointed(sl, kept):  # a savepoint's slice stays whole (Hudi)
                    doomed.extend(_slice_files(sl))
                    doomed.extend(view.cdc_files(part, sl.file_id, sl.base_instant))
        if part in replaced:
            doomed.extend(_replaced_group_files(table, part, replaced[part]))
        doomed = sorted({p for p in doomed if p not in protected and p.rsplit("/", 1)[-1] not in kept})
        if doomed:
            plan.files_per_partition[part] = doomed
    return plan
