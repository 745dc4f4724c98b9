from __future__ import annotations

import threading

import pytest
from hudi_core.errors import TimelineError
from hudi_core.timeline import Action, Instant, InstantTimeGenerator, State, parse_instant_file_name


def test_instant_times_are_17_digits_and_strictly_increasing_within_a_millisecond() -> None:
    gen = InstantTimeGenerator(utc=True)
    times = [gen.next() for _ in range(50)]
    assert all(len(t) == 17 and t.isdigit() for t in times)
    assert times == sorted(set(times))


def test_instant_times_are_unique_across_threads() -> None:
    gen = InstantTimeGenerator()
    out: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [gen.next() for _ in range(20)]
        with lock:
            out.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 80


def test_new_time_is_greater_than_a_floor_from_the_future() -> None:
    gen = InstantTimeGenerator()
    assert gen.next(floor="29991231235959998") == "29991231235959999"


@pytest.mark.parametrize(
    ("name", "action", "state"),
    [
        ("20240418173213674.commit.requested", "commit", State.REQUESTED),
        ("20240418173213674.inflight", "commit", State.INFLIGHT),
        ("20240418173213674.commit", "commit", State.COMPLETED),
        ("20250117083125837.deltacommit.requested", "deltacommit", State.REQUESTED),
        ("20250117083125837.deltacommit.inflight", "deltacommit", State.INFLIGHT),
        ("20250117083125837.deltacommit", "deltacommit", State.COMPLETED),
        ("20240707001303088.replacecommit.requested", "replacecommit", State.REQUESTED),
        ("20240707001303088.replacecommit.inflight", "replacecommit", State.INFLIGHT),
        ("20240707001303088.replacecommit", "replacecommit", State.COMPLETED),
        ("20250126040936578.compaction.requested", "compaction", State.REQUESTED),
        ("20250126040936578.compaction.inflight", "compaction", State.INFLIGHT),
        ("20250126040936578.logcompaction.requested", "logcompaction", State.REQUESTED),
        ("20250126040936578.clean.requested", "clean", State.REQUESTED),
        ("20250126040936578.clean.inflight", "clean", State.INFLIGHT),
        ("20250126040936578.clean", "clean", State.COMPLETED),
        ("20250126040936578.rollback.requested", "rollback", State.REQUESTED),
        ("20250126040936578.rollback.inflight", "rollback", State.INFLIGHT),
        ("20250126040936578.rollback", "rollback", State.COMPLETED),
        ("20250126040936578.restore.requested", "restore", State.REQUESTED),
        ("20250126040936578.restore", "restore", State.COMPLETED),
        ("20250126040936578.savepoint.inflight", "savepoint", State.INFLIGHT),
        ("20250126040936578.savepoint", "savepoint", State.COMPLETED),
        ("20250126040936578.indexing.requested", "indexing", State.REQUESTED),
        ("20240418173213.commit", "commit", State.COMPLETED),
    ],
)
def test_every_timeline_file_name_parses_and_renders_back(name: str, action: str, state: State) -> None:
    inst = parse_instant_file_name(name)
    assert inst == Instant(name.split(".")[0], action, state)
    assert inst is not None and inst.file_name == name


def test_compactions_complete_under_commit_and_log_compactions_under_deltacommit() -> None:
    assert (
        Instant("20250126040936578", Action.COMPACTION, State.COMPLETED).file_name
        == "20250126040936578.commit"
    )
    assert (
        Instant("20250126040936578", Action.LOG_COMPACTION, State.COMPLETED).file_name
        == "20250126040936578.deltacommit"
    )


@pytest.mark.parametrize(
    "name",
    ["hoodie.properties", ".DS_Store", "20240418173213674.commit.crc", "abc.commit", "2024.commit",
     "20240418173213674.unknown", "20240418173213674.compaction", "20240418173213674.commit.bogus"],
)  # fmt: skip
def test_other_files_are_not_instants(name: str) -> None:
    assert parse_instant_file_name(name) is None


def test_bad_instant_and_action_are_refused() -> None:
    with pytest.raises(TimelineError):
        Instant("2024", "commit", State.COMPLETED)
    with pytest.raises(TimelineError):
        Instant("20240418173213674", "merge", State.COMPLETED)


def test_ordering_is_time_then_action_then_state() -> None:
    a = Instant("20240101000000000", "commit", State.COMPLETED)
    b = Instant("20240101000000001", "commit", State.REQUESTED)
    c = Instant("20240101000000001", "commit", State.INFLIGHT)
    assert sorted([c, b, a]) == [a, b, c]
