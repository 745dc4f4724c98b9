"""A write instant among other writers (``hoodie.write.concurrency.mode``).

``single_writer`` (the default): :func:`writer_guard` holds the table's lease around a whole
write and its table services; a second writer is refused at once (:class:`WriterBusyError`).
Failed writes are rolled back EAGERly: whatever is pending when the lease is ours is dead.

``optimistic_concurrency_control``: writers run side by side. Each instant carries a heartbeat
(started before the instant exists, so nobody takes a live instant for a dead one); failed
writes are rolled back LAZYly, once their heartbeat expired. The table lock is held only to
create an instant (so instant times are unique and increasing) and around a commit's conflict
check and timeline transition (:mod:`hudi_core.write.conflicts`); a conflicting write is rolled
back and raises :class:`WriteConflictError`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from hudi_core.config.concurrency import ConcurrencyOptions, ConcurrencySettings
from hudi_core.config.property import HoodieConfig
from hudi_core.engine.pool import arrow_pool
from hudi_core.errors import WriteConflictError
from hudi_core.lock.heartbeat import Heartbeat, delete_heartbeats_of, heartbeat_expired
from hudi_core.lock.lease import WriterLease, check_lease_held, hold_lease
from hudi_core.lock.providers import LockProvider, table_lock
from hudi_core.timeline.avro_files import serialize
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.instant import Action, Instant, State
from hudi_core.write.commit import action_for, commit, remove_stale_metadata_table
from hudi_core.write.conflicts import TimelineSnapshot, check_conflicts
from hudi_core.write.handles.context import WriteStatus

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient
    from hudi_core.timeline.timeline import ActiveTimeline

__all__ = ["WriteTransaction", "check_concurrency_options", "retrying", "rollback_failed_writes_for", "table_lock",
           "writer_guard", "writing"]  # fmt: skip

log = logging.getLogger(__name__)
T = TypeVar("T")


def _config(table: MetaClient, config: HoodieConfig | Mapping[str, Any] | None) -> HoodieConfig:
    return config if isinstance(config, HoodieConfig) else table.write_config(dict(config or {}))


def check_concurrency_options(config: HoodieConfig) -> None:
    """The mode, policy and lock provider are known (checked before a write starts)."""
    settings = ConcurrencySettings.of(config)
    if settings.occ or config.get_str(ConcurrencyOptions.LOCK_PROVIDER):
        from hudi_core.plugins.manager import get_plugin_manager

        get_plugin_manager().component("lock_provider", settings.lock_provider)


@contextmanager
def writer_guard(
    table: MetaClient, config: HoodieConfig | Mapping[str, Any] | None = None, *, adopt: str | None = None
) -> Iterator[WriterLease | None]:
    """Single-writer mode: hold the table's lease for the block (re-entrant in a process;
    ``adopt``: carry on the lease whose epoch file another process of this write took). In any
    mode the block allocates from :func:`~hudi_core.engine.pool.arrow_pool`'s pool."""
    s = ConcurrencySettings.of(_config(table, config))
    with arrow_pool():
        if s.occ:
            yield None
            return
        timing = {"interval_s": s.heartbeat_interval_s, "expiry_s": s.expiry_s}
        with hold_lease(table.storage, table.meta_path, adopt=adopt, **timing) as lease:
            yield lease


@contextmanager
def writing(table: MetaClient, config: HoodieConfig | Mapping[str, Any] | None = None) -> Iterator[None]:
    """A write and its services: :func:`writer_guard`, and while the single-writer lease is held
    (nobody else moves the timeline) one load of the timeline shared by all of it."""
    with writer_guard(table, config) as lease:
        if lease is None:  # optimistic concurrency control: other writers move the timeline
            yield
            return
        with table.pinned_timeline():
            yield


def retrying(write: Callable[[], T], config: HoodieConfig) -> T:
    """Run ``write``, again after a lost conflict (``hoodie.write.num.retries.on.conflict.failures``):
    the loser was rolled back, so each attempt starts from the table as it is then."""
    retries = ConcurrencySettings.of(config).retries_on_conflict
    for attempt in range(retries):
        try:
            return write()
        except WriteConflictError as e:
            log.info("write conflict (attempt %d of %d), retrying: %s", attempt + 1, retries + 1, e)
    return write()


def rollback_failed_writes_for(
    table: MetaClient,
    config: HoodieConfig | Mapping[str, Any] | None = None,
    *,
    seen: ActiveTimeline | None = None,
) -> list[Any]:
    """Roll back failed writes under the configured policy: every pending write instant (EAGER),
    or those whose heartbeat expired (LAZY, under the table lock; then the heartbeat files
    another writer left for instants no longer pending are deleted). ``seen``: a load of the
    timeline the caller just made, for LAZY's first look."""
    from hudi_core.write.rollback import rollback_failed_writes

    cfg = _config(table, config)
    s = ConcurrencySettings.of(cfg)
    if not s.lazy:
        return rollback_failed_writes(table, temp_age_s=s.temp_age_s)

    def expired(inst: Instant) -> bool:
        return heartbeat_expired(table.storage, table.meta_path, inst.timestamp, s.expiry_s)

    rolled_back = rollback_failed_writes(
        table, expired=expired, lock=table_lock(table, cfg), temp_age_s=s.temp_age_s, seen=seen
    )
    delete_heartbeats_of(
        table.storage, table.meta_path, lambda: table.timeline.pending().timestamps(), s.expiry_s
    )
    return rolled_back


class WriteTransaction:
    """One write instant: :meth:`start`, then :meth:`commit` or :meth:`abort`."""

    def __init__(self, table: MetaClient, config: HoodieConfig) -> None:
        self.table = table
        self.config = config
        self.settings = ConcurrencySettings.of(config)
        self.requested: Instant | None = None
        self.started: TimelineSnapshot | None = None
        #: the timeline loaded under the lock as the instant was created (it holds the instant)
        self.timeline: ActiveTimeline | None = None
        #: optimistic concurrency control: the load under the lock that :meth:`commit` checked for
        #: conflicts and completed the instant on (it holds the commit), for the services after it
        self.committed: ActiveTimeline | None = None
        self._heartbeat: Heartbeat | None = None

    def __enter__(self) -> WriteTransaction:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        # a write that raised leaves its instant pending: its heartbeat stops so that the next
        # writer (LAZY: at once, as a missing heartbeat counts as expired) rolls it back
        self._stop_heartbeat()
        if (
            isinstance(exc, Exception)
            and not isinstance(exc, WriteConflictError)
            and self._rolled_back_elsewhere()
        ):
            self._discard()
            raise WriteConflictError(self.rolled_back_message()) from exc

    @property
    def instant(self) -> str:
        assert self.requested is not None
        return self.requested.timestamp

    def lock(self) -> LockProvider:
        return table_lock(self.table, self.config)

    def start(
        self, operation: str, *, instant_time: str | None = None, seen: ActiveTimeline | None = None
    ) -> Instant:
        """Roll back failed writes, drop a stale metadata table, create ``T.<action>.requested``.
        ``seen``: the timeline as the write just loaded it (for its schema), to look for failed
        writes in without listing ``.hoodie`` again; the instant is created on a fresh load."""
        table = self.table
        rollback_failed_writes_for(table, self.config, seen=seen)
        action = action_for(table, operation)
        content = b""
        if action == Action.REPLACE_COMMIT:
            content = serialize(
                "HoodieRequestedReplaceMetadata",
                {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None},
            )
        with self.lock():
            tl = table.timeline
            t = instant_time or tl.new_instant_time()
            if self.settings.lazy:
                self._heartbeat = Heartbeat(
                    table.storage, table.meta_path, t, self.settings.heartbeat_interval_s
                )
                self._heartbeat.start()
            try:
                self.requested = tl.create_requested(t, action, content)
            except BaseException:
                self._stop_heartbeat()
                raise
            # only now, with our instant pending and under the lock, as Hudi's own writer does
            # with the metadata table off: a Hudi writer that keeps one does not rebuild it while
            # an instant is pending, so it can never miss (or re-insert) what we commit
            remove_stale_metadata_table(table)
            self.started = TimelineSnapshot.of(tl)
            self.timeline = tl
        return self.requested

    def commit(
        self,
        instant: Instant,
        statuses: Iterable[WriteStatus],
        *,
        operation: str,
        schema: Mapping[str, Any],
        replaced: Mapping[str, Sequence[str]] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        reconcile: bool = True,
    ) -> CommitMetadata:
        """Check for conflicts (optimistic concurrency control) and complete the instant, under
        the table lock. A conflicting write is rolled back before :class:`WriteConflictError`."""
        statuses = list(statuses)
        try:
            # under the lock the timeline moves only through us: one load for the check and the commit
            with self.lock(), self.table.pinned_timeline() as tl:
                if self._rolled_back_elsewhere():
                    raise WriteConflictError(self.rolled_back_message())
                if self.settings.occ:
                    self._check_conflicts(statuses, replaced)
                else:
                    check_lease_held(self.table.meta_path)
                done = commit(
                    self.table, instant, statuses, operation=operation, schema=schema, replaced=replaced,
                    extra_metadata=extra_metadata, reconcile=reconcile,
                )  # fmt: skip
                if self.settings.occ:  # (a single writer's services share the write's pinned load)
                    self.committed = tl
                return done
        except WriteConflictError:
            self.abort()
            raise
        finally:
            self._stop_heartbeat()

    def _check_conflicts(
        self, statuses: list[WriteStatus], replaced: Mapping[str, Sequence[str]] | None
    ) -> None:
        from hudi_core.write.index import BucketIndex, index_for

        index = index_for(self.config, self.table.config.record_key_fields)
        started = self.started or TimelineSnapshot(frozenset(), frozenset())
        check_conflicts(
            self.table, self.table.timeline, self.instant, started, [s.stat for s in statuses], replaced,
            bucket_index=isinstance(index, BucketIndex), global_keys=index.is_global,
        )  # fmt: skip

    def abort(self) -> bool:
        """Roll the instant back (under the table lock), so the table is as before the write.
        True when another writer had rolled it back already (what this one wrote since is
        deleted: :meth:`_discard`)."""
        from hudi_core.write.rollback import rollback_instant

        if self.requested is None:
            return False
        try:
            with self.lock():
                if self._rolled_back_elsewhere():
                    gone = True
                else:
                    gone = False
                    pending = self.table.timeline.current(self.requested)
                    if pending is not None and not pending.is_completed:
                        rollback_instant(self.table, self.instant, temp_age_s=self.settings.temp_age_s)
        finally:
            self._stop_heartbeat()
        if gone:
            self._discard()
        return gone

    def _rolled_back_elsewhere(self) -> bool:
        """Our instant is gone from the timeline: another writer took us for dead (heartbeat or
        lease expired while this process stalled) and rolled it back. Asked of storage, not of a
        loaded (or pinned) timeline."""
        if self.requested is None:
            return False
        meta, storage = self.table.meta_path, self.table.storage
        # inflight first: where a live write's instant is, so one request answers the usual case
        states = (State.INFLIGHT, State.REQUESTED, State.COMPLETED)
        return not any(storage.exists(f"{meta}/{self.requested.with_state(s).file_name}") for s in states)

    def rolled_back_message(self) -> str:
        return (
            f"instant {self.instant} of {self.table.base_uri} was rolled back by another writer that took this "
            "one for dead (it stalled past hoodie.client.heartbeat.interval_in_ms x "
            "hoodie.client.heartbeat.tolerable.misses); nothing of it was kept: write again"
        )

    def _discard(self) -> None:
        from hudi_core.write.rollback import discard_rolled_back_write

        self._stop_heartbeat()
        deleted = discard_rolled_back_write(self.table, self.instant)
        log.warning("%s; deleted the %d files it wrote after that", self.rolled_back_message(), len(deleted))

    def _stop_heartbeat(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
