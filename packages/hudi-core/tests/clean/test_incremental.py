"""Incremental clean planning (``hoodie.cleaner.incremental.mode``): only partitions written since
the last clean's earliest commit to retain are listed, and the plan is the one a full listing
gives."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.clean import clean, plan_clean

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("part", pa.string())])
NO_SERVICES = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
RETAIN_1 = {"hoodie.cleaner.commits.retained": "1"}
FULL = {**RETAIN_1, "hoodie.cleaner.incremental.mode": "false"}


def rows(parts: str, ts: int) -> pa.Table:
    ids = [f"{p}{i}" for p in parts for i in range(3)]
    return pa.table({"id": ids, "ts": [ts] * len(ids), "part": [i[0] for i in ids]}, schema=SCHEMA)


def create(tmp_path: Path, kind: str = "COPY_ON_WRITE") -> HudiTable:
    return HudiTable.create(str(tmp_path / "t"), name="t", table_type=kind, record_key_fields="id",
                            partition_fields="part", ordering_field="ts", schema=SCHEMA)  # fmt: skip


def files(t: HudiTable, part: str) -> set[str]:
    return {p.name for p in (Path(t.base_uri) / part).iterdir() if not p.name.startswith(".")}


@contextmanager
def listings(t: HudiTable) -> Iterator[list[str]]:
    """The data folders (not ``.hoodie/``) listed meanwhile, relative to the table, "" for it."""
    out: list[str] = []
    inner = t.storage.list
    base = t.base_uri.rstrip("/")

    def counting(path: str):  # type: ignore[no-untyped-def]
        rel = path.rstrip("/")[len(base) :].lstrip("/")
        if not rel.startswith(".hoodie"):
            out.append(rel)
        return inner(path)

    t.storage.list = counting  # type: ignore[method-assign]
    try:
        yield out
    finally:
        del t.storage.list


def plans_agree(t: HudiTable) -> dict[str, list[str]]:
    """The incremental plan, after checking it equals the full one."""
    incremental = plan_clean(t, config=t.write_config(RETAIN_1)).files_per_partition
    assert incremental == plan_clean(t, config=t.write_config(FULL)).files_per_partition
    return incremental


def test_partitions_untouched_since_the_last_clean_are_not_listed(tmp_path: Path) -> None:
    t = create(tmp_path)
    for ts in (1, 2, 3):
        t.upsert(rows("abc", ts), options=NO_SERVICES)
    with listings(t) as listed:
        first = clean(t, config=RETAIN_1)  # no clean before: every partition
    assert first is not None and set(listed) >= {"", "a", "b", "c"}
    assert {p: len(s.success_delete_files) for p, s in first.partitions.items()} == {"a": 1, "b": 1, "c": 1}

    for ts in (4, 5):
        t.upsert(rows("a", ts), options=NO_SERVICES)
    with listings(t) as listed:
        second = clean(t, config=RETAIN_1)  # ECTR 3 -> 5: commit 3 wrote every partition
    assert {"a", "b", "c"} <= set(listed) and "" not in listed  # no partition discovery
    assert second is not None and set(second.partitions) == {"a", "b", "c"}
    kept_b, kept_c = files(t, "b"), files(t, "c")
    assert len(kept_b) == len(kept_c) == 1  # the slice of commit 3: latest, and newest before 5

    for ts in (6, 7):
        t.upsert(rows("a", ts), options=NO_SERVICES)
    assert set(plans_agree(t)) == {"a"}
    before_a = files(t, "a")
    with listings(t) as listed:
        third = clean(t, config=RETAIN_1)  # ECTR 5 -> 7: commits 5 and 6 wrote only "a"
    assert "b" not in listed and "c" not in listed and "" not in listed
    assert third is not None and set(third.partitions) == {"a"}
    deleted = set(third.partitions["a"].success_delete_files)
    assert len(deleted) == 2 and deleted <= before_a and files(t, "a") == before_a - deleted
    assert files(t, "b") == kept_b and files(t, "c") == kept_c
    assert t.read().num_rows == 9


def test_nothing_new_to_retain_lists_nothing(tmp_path: Path) -> None:
    t = create(tmp_path)
    for ts in (1, 2, 3):
        t.upsert(rows("ab", ts), options=NO_SERVICES)
    assert clean(t, config=RETAIN_1) is not None
    with listings(t) as listed:
        assert clean(t, config=RETAIN_1) is None  # same earliest commit to retain as the last clean
    assert listed == []


def test_full_listing_when_the_last_clean_retained_an_archived_commit(tmp_path: Path) -> None:
    t = create(tmp_path)
    for ts in (1, 2, 3):
        t.upsert(rows("ab", ts), options=NO_SERVICES)
    first = clean(t, config=RETAIN_1)
    assert first is not None
    t.upsert(rows("b", 4), options=NO_SERVICES)
    for ts in (5, 6, 7):
        t.upsert(rows("a", ts), options=NO_SERVICES)
    # Commits up to and past the clean's earliest commit to retain leave the active timeline,
    # as a writer that does not guard archival with the last clean would do.
    hoodie = Path(t.meta_path)
    gone = sorted({p.name.split(".")[0] for p in hoodie.glob("*.commit")})[:4]
    assert gone[-1] > first.earliest_commit_to_retain
    for p in hoodie.iterdir():
        if p.is_file() and p.name.split(".")[0] in gone:
            p.unlink()
    with listings(t) as listed:
        plan = plans_agree(t)
    assert {"", "a", "b"} <= set(listed)  # every partition, as without incremental mode
    assert set(plan) == {"a", "b"}  # "b" is only found by listing it: commit 4 is gone


def test_no_earliest_commit_to_retain_lists_nothing(tmp_path: Path) -> None:
    t = create(tmp_path)
    t.upsert(rows("ab", 1), options=NO_SERVICES)
    with listings(t) as listed:
        assert clean(t, config={"hoodie.cleaner.commits.retained": "5"}) is None
    assert listed == []


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_incremental_plans_equal_full_plans_over_a_history(tmp_path: Path, kind: str) -> None:
    """Writes to changing partitions, an overwrite (replaced file groups), compactions: before
    every clean the incremental plan equals the full one, and every retained read is intact."""
    t = create(tmp_path, kind)
    steps = ["abc", "a", "ab", "c", "a", "overwrite b", "a", "bc", "a", "a", "c", "ab", "a", "a"]
    cleaned = 0
    for ts, step in enumerate(steps, start=1):
        if step.startswith("overwrite"):
            t.insert_overwrite(rows(step.split()[1], ts), options=NO_SERVICES)
        else:
            t.upsert(rows(step, ts), options=NO_SERVICES)
        if kind == "MERGE_ON_READ" and ts % 3 == 0:
            t.compact(NO_SERVICES)
        expected = sorted(t.read(columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"])
        plan = plans_agree(t)
        meta = clean(t, config=RETAIN_1)
        assert (meta.total_files_deleted if meta else 0) == sum(len(v) for v in plan.values())
        cleaned += meta.total_files_deleted if meta else 0
        assert sorted(t.read(columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == expected
    assert cleaned > 0
    # what is left is what a full plan leaves: nothing more to clean either way
    assert plan_clean(t, config=t.write_config(FULL)).files_per_partition == {}


def test_a_commit_is_read_once_across_plans(tmp_path: Path) -> None:
    """Between two cleans that delete something every write plans over the same commits: their
    partitions are read once (a completed instant's file never changes)."""
    t = create(tmp_path)
    for ts in (1, 2, 3):
        t.upsert(rows("abc", ts), options=NO_SERVICES)
    assert clean(t, config=RETAIN_1) is not None
    for ts in (4, 5):
        t.upsert(rows("a", ts), options=NO_SERVICES)
    read: list[str] = []
    inner = t.storage.read_bytes

    def counting(path: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(path.rsplit("/", 1)[-1])
        return inner(path, *args, **kwargs)

    t.storage.read_bytes = counting  # type: ignore[method-assign]
    try:
        first = plan_clean(t, config=t.write_config(RETAIN_1))
        commits_read = [n for n in read if n.endswith(".commit")]
        read.clear()
        again = plan_clean(t, config=t.write_config(RETAIN_1))
    finally:
        del t.storage.read_bytes
    # at most commits 3 and 4 (from the last clean's ECTR up to this one's), and not even those
    # when the upserts' own looks at them (schema, record sizes) left their bytes in the process
    third_and_fourth = {i.file_name for i in list(t.timeline.completed_commits())[2:4]}
    assert set(commits_read) <= third_and_fourth and len(set(commits_read)) == len(commits_read), commits_read
    assert [n for n in read if n.endswith(".commit")] == []
    assert set(first.files_per_partition) == {"a", "b", "c"}
    assert again.files_per_partition == first.files_per_partition
